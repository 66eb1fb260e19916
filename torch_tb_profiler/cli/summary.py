"""``torch-tb-profiler summary PATH``: the overview, operator and kernel figures without a browser.

PATH is a logdir, a run directory or one trace file (local or any URL the plugin accepts). Exit status:
0 when at least one profile was summarised, 2 on bad arguments (including filters that match nothing),
1 when nothing could be loaded; the reason goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from torch_tb_profiler.analysis.overview.summary import DEFAULT_TOP, failed_summary, profile_summary
from torch_tb_profiler.cli.common import (
    EXIT_NOTHING_LOADED,
    EXIT_OK,
    CliError,
    Helper,
    find_traces,
    limit_flag,
    load_trace,
    non_negative,
    peaks_flag,
    select,
)
from torch_tb_profiler.cli.summary_report import render_text
from torch_tb_profiler.ingest.discovery import TraceFile
from torch_tb_profiler.ingest.names import display
from torch_tb_profiler.ingest.storage import Location
from torch_tb_profiler.trace import limits


def summarise(
    loc: Location, files: list[TraceFile], top: int, comm: list[Any] | None = None
) -> list[dict[str, Any]]:
    """Per-profile summaries; with ``comm``, also collects (run, span, worker summary) for every
    profile of a run/span that has several workers (for the ``distributed`` key)."""
    from torch_tb_profiler.analysis.distributed import job as distributed
    from torch_tb_profiler.ingest.persist import read_current

    group_size: dict[tuple[str, str], int] = {}
    for f in files:
        group_size[(f.run, f.span)] = group_size.get((f.run, f.span), 0) + 1
    out: list[dict[str, Any]] = []
    helper = Helper()
    two_cores = (os.cpu_count() or 1) >= 2  # a big file's tail goes to a second process
    try:
        for f in files:
            if f.info.problem:  # a FIFO, a device, a broken symlink: never opened
                out.append(
                    failed_summary(f.run, f.worker, f.span, f"{display(f.info.path)}: {f.info.problem}")
                )
                continue
            try:
                profile = read_current(loc, f.info, f.captures)  # a current persisted index (docs/scale.md)
                if profile is not None:
                    profile.run, profile.worker, profile.span = f.key
                else:
                    profile = load_trace(loc, f, helper.submit if two_cores else None)
            except Exception as exc:  # a broken file is reported, never fatal
                out.append(
                    failed_summary(f.run, f.worker, f.span, f"cannot load {display(f.info.path)}: {exc}")
                )
                continue
            out.append(profile_summary(profile, top))
            if comm is not None and group_size[(f.run, f.span)] > 1:
                try:
                    comm.append((f.run, f.span, distributed.summarize_worker(f.worker, profile)))
                except Exception as exc:  # reported on the profile, the rest of the summary stands
                    out[-1]["errors"].append(f"distributed: {type(exc).__name__}: {exc}")
    finally:
        helper.close()
    return out


def add_parser(sub: Any) -> None:
    s = sub.add_parser(
        "summary", help="summarise profiles: step breakdown, GPU metrics, top operators/kernels"
    )
    s.add_argument("path", help="a logdir, a run directory or one *.pt.trace.json[.gz] file")
    s.add_argument("--run", help="only this run (its name relative to the logdir)")
    s.add_argument("--worker", help="only this worker")
    s.add_argument("--span", help="only this span (1..n)")
    s.add_argument("--top", type=non_negative, default=DEFAULT_TOP, help="operators and kernels to list")
    s.add_argument("--json", action="store_true", help="print one JSON object instead of a report")
    s.add_argument(
        "--peaks", type=peaks_flag, metavar="FILE", help="a JSON table of device peaks (docs/cli.md)"
    )
    s.add_argument(
        "--limit",
        action="append",
        type=limit_flag,
        default=[],
        metavar="NAME=VALUE",
        help=f"change a limit on what one trace may cost (repeatable; NAME one of {', '.join(limits.LIMITS)})",
    )


def run(args: argparse.Namespace) -> int:
    try:
        loc, files = find_traces(args.path)
        if not files:
            raise CliError(f"no *.pt.trace.json[.gz] files under {args.path!r}", EXIT_NOTHING_LOADED)
        files = select(files, args.run, args.worker, args.span)
    except CliError as exc:
        print(f"torch-tb-profiler: {exc}", file=sys.stderr)
        return exc.status
    comm: list[Any] = []
    profiles = summarise(loc, files, args.top, comm)
    loaded = [p for p in profiles if p["device_type"] is not None]
    for p in profiles:
        where = f"torch-tb-profiler: {p['run']}/{p['worker']}/span {p['span']}"
        for w in p["warnings"]:
            print(f"{where}: warning: {w}", file=sys.stderr)
        for e in p["errors"]:
            print(f"{where}: {e}", file=sys.stderr)
    dist = None
    if comm:
        from torch_tb_profiler.analysis.core.plain import clean
        from torch_tb_profiler.analysis.distributed.job import cli_section

        dist = clean(cli_section(comm))
    if args.json:
        doc: dict[str, Any] = {"profiles": profiles}
        if dist is not None:
            doc["distributed"] = dist
        sys.stdout.write(json.dumps(doc, allow_nan=False) + "\n")
    else:
        sys.stdout.write(render_text(profiles, dist))
    sys.stdout.flush()
    if not loaded:
        print("torch-tb-profiler: nothing could be loaded", file=sys.stderr)
        return EXIT_NOTHING_LOADED
    return EXIT_OK

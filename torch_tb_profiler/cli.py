"""``torch-tb-profiler summary PATH``: the overview, operator and kernel figures without a browser.

PATH is a logdir, a run directory or one trace file (local or any URL the plugin accepts). Exit status:
0 when at least one profile was summarised, 2 on bad arguments (including filters that match nothing),
1 when nothing could be loaded; the reason goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import posixpath
import sys
from collections.abc import Sequence
from typing import Any

from torch_tb_profiler import cli_compare, cli_index
from torch_tb_profiler.analysis.overview.summary import DEFAULT_TOP, failed_summary, profile_summary
from torch_tb_profiler.ingest import limits
from torch_tb_profiler.ingest.discovery import TraceFile, group_files, parse_name
from torch_tb_profiler.ingest.names import display
from torch_tb_profiler.ingest.storage import FileInfo, Location, file_info, local_copy, resolve, walk_files
from torch_tb_profiler.report import render_text

EXIT_OK, EXIT_NOTHING_LOADED, EXIT_BAD_ARGS = 0, 1, 2


class CliError(Exception):
    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="torch-tb-profiler", description="PyTorch profiler trace analysis.")
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser(
        "summary", help="summarise profiles: step breakdown, GPU metrics, top operators/kernels"
    )
    s.add_argument("path", help="a logdir, a run directory or one *.pt.trace.json[.gz] file")
    s.add_argument("--run", help="only this run (its name relative to the logdir)")
    s.add_argument("--worker", help="only this worker")
    s.add_argument("--span", help="only this span (1..n)")
    s.add_argument("--top", type=_non_negative, default=DEFAULT_TOP, help="operators and kernels to list")
    s.add_argument("--json", action="store_true", help="print one JSON object instead of a report")
    s.add_argument(
        "--limit",
        action="append",
        type=_limit,
        default=[],
        metavar="NAME=VALUE",
        help=f"change a limit on what one trace may cost (repeatable; NAME one of {', '.join(limits.LIMITS)})",
    )
    cli_compare.add_parser(sub)
    cli_index.add_parser(sub)
    return parser


def _limit(text: str) -> str:
    try:
        limits.set_from_flag(text)  # sets the environment: the helper process inherits it
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def find_traces(path: str) -> tuple[Location, list[TraceFile]]:
    """The trace files PATH names, with run/worker/span assigned as the plugin assigns them."""
    try:
        loc = resolve(path)
    except Exception as exc:
        raise CliError(f"cannot open {path!r}: {exc}", EXIT_BAD_ARGS) from exc
    try:
        if loc.fs.isfile(loc.root):
            return _single_file(loc)
        if not loc.fs.isdir(loc.root):
            if loc.is_local and os.path.lexists(loc.root):  # a FIFO, a device, a broken symlink
                raise CliError(f"{path!r} is not a regular file or a directory: not read", EXIT_BAD_ARGS)
            raise CliError(f"{path!r} does not exist", EXIT_BAD_ARGS)
        return loc, group_files(loc, walk_files(loc))
    except CliError:
        raise
    except Exception as exc:
        raise CliError(f"cannot list {path!r}: {exc}", EXIT_NOTHING_LOADED) from exc


def _single_file(loc: Location) -> tuple[Location, list[TraceFile]]:
    directory, filename = posixpath.split(loc.root)
    dir_loc = Location(url=directory, fs=loc.fs, root=directory, namespace=loc.namespace)
    siblings = [
        FileInfo(p, 0, 0.0)
        for p in (loc.fs.ls(directory, detail=False) if directory else [])
        if p != loc.root
    ]
    me = file_info(loc, loc.root)  # fresh size/mtime/etag: the download cache is keyed on them
    grouped = [t for t in group_files(dir_loc, [me, *siblings]) if t.info.path == loc.root]
    if grouped:
        return dir_loc, grouped
    # not named like a trace file: summarise it anyway, as worker = its name
    run = posixpath.basename(directory) or "."
    parsed = parse_name(filename)
    worker = parsed[0] if parsed else filename
    return dir_loc, [TraceFile(run, worker, "1", me)]


def select(files: list[TraceFile], run: str | None, worker: str | None, span: str | None) -> list[TraceFile]:
    chosen = files
    for label, value, attr in (("run", run, "run"), ("worker", worker, "worker"), ("span", span, "span")):
        if value is None:
            continue
        narrowed = [f for f in chosen if getattr(f, attr) == value]
        if not narrowed:
            known = sorted({getattr(f, attr) for f in chosen})
            raise CliError(f"no {label} {value!r}; found: {', '.join(known) or 'none'}", EXIT_BAD_ARGS)
        chosen = narrowed
    return chosen


def summarise(
    loc: Location, files: list[TraceFile], top: int, comm: list[Any] | None = None
) -> list[dict[str, Any]]:
    """Per-profile summaries; with ``comm``, also collects (run, span, worker summary) for every
    profile of a run/span that has several workers (for the ``distributed`` key)."""
    from torch_tb_profiler.analysis.distributed import job as distributed
    from torch_tb_profiler.ingest.parse_split import load_split
    from torch_tb_profiler.ingest.persist import read_current

    group_size: dict[tuple[str, str], int] = {}
    for f in files:
        group_size[(f.run, f.span)] = group_size.get((f.run, f.span), 0) + 1
    out: list[dict[str, Any]] = []
    helper = _Helper()
    two_cores = (os.cpu_count() or 1) >= 2  # a big file's tail goes to a second process
    try:
        for f in files:
            if f.info.problem:  # a FIFO, a device, a broken symlink: never opened
                out.append(
                    failed_summary(f.run, f.worker, f.span, f"{display(f.info.path)}: {f.info.problem}")
                )
                continue
            try:
                profile = read_current(loc, f.info)  # a current persisted index (docs/scale.md)
                if profile is not None:
                    profile.run, profile.worker, profile.span = f.key
                else:
                    local = local_copy(loc, f.info)
                    profile = load_split(
                        local, helper.submit if two_cores else None, run=f.run, worker=f.worker, span=f.span
                    )
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


class _Helper:
    """A second process for the tail of big files (parse_split.py), started on first use."""

    def __init__(self) -> None:
        self._pool: Any = None

    def submit(self, fn: Any, *args: Any) -> Any:
        if self._pool is None:
            import concurrent.futures as cf
            import multiprocessing

            self._pool = cf.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
        return self._pool.submit(fn, *args)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse prints the reason; keep its status (2 for bad arguments)
        return int(exc.code or 0)
    if args.command == "compare":
        return cli_compare.run(args)
    if args.command == "index":
        return cli_index.run(args)
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
        for e in p["errors"]:
            print(f"torch-tb-profiler: {p['run']}/{p['worker']}/span {p['span']}: {e}", file=sys.stderr)
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

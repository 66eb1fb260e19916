"""``torch-tb-profiler compare BASELINE EXPERIMENT``: two profiles side by side, and a CI gate.

Each side is a trace file, a run directory or a logdir (local or any URL ``summary`` accepts) and must
come down to one profile (``--run/--worker/--span`` for both, ``--base-*``/``--exp-*`` for one). The
figures come from ``analysis/diff/compare.py`` (the Diff view's implementation); ``--fail-on`` rules from
``analysis/diff/rules.py``. Exit status: 0 no rule failed, 1 a rule failed (each printed with its
figures), 2 bad usage, a bad rule or unreadable input (the reason on stderr). docs/cli.md has it all.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from torch_tb_profiler.analysis.diff import compare as D
from torch_tb_profiler.analysis.diff import rules as R
from torch_tb_profiler.cli.common import (
    CliError,
    Helper,
    find_traces,
    load_trace,
    non_negative,
    peaks_flag,
    select,
)

EXIT_OK, EXIT_FAILED, EXIT_BAD = 0, 1, 2
DEFAULT_TOP = 10


class CompareError(Exception):
    """Bad usage or unreadable input (exit 2)."""


def add_parser(sub: Any) -> None:

    c = sub.add_parser(
        "compare", help="compare a baseline profile with an experiment; gate on --fail-on rules"
    )
    c.add_argument("baseline", help="trace file, run directory or logdir of the baseline")
    c.add_argument("experiment", help="trace file, run directory or logdir of the experiment")
    for side in ("", "base-", "exp-"):
        which = {"": "both sides", "base-": "the baseline", "exp-": "the experiment"}[side]
        for key in ("run", "worker", "span"):
            c.add_argument(f"--{side}{key}", help=f"the {key} of {which}")
    c.add_argument(
        "--group-by", choices=("name", "name_input_shape"), default="name", help="join operators by"
    )
    c.add_argument("--fail-on", action="append", default=[], metavar="RULE", help="e.g. 'step_time>+5%%'")
    c.add_argument("--top", type=non_negative, default=DEFAULT_TOP, help="operators and kernels to list")
    c.add_argument("--json", action="store_true", help="print one JSON object instead of a report")
    c.add_argument(
        "--peaks", type=peaks_flag, metavar="FILE", help="a JSON table of device peaks (docs/cli.md)"
    )


def _pick(args: argparse.Namespace, side: str, key: str) -> str | None:
    own = getattr(args, f"{side}_{key}")
    return own if own is not None else getattr(args, key)


def load_side(path: str, run: str | None, worker: str | None, span: str | None, what: str) -> Any:
    """The one profile PATH (narrowed by run/worker/span) names; CompareError otherwise."""
    try:
        loc, files = find_traces(path)
        if not files:
            raise CompareError(f"{what}: no *.pt.trace.json[.gz] files under {path!r}")
        files = select(files, run, worker, span)
    except CliError as exc:
        raise CompareError(f"{what}: {exc}") from exc
    if len(files) > 1:
        listed = ", ".join(f"{f.run}/{f.worker}/span {f.span}" for f in files[:8])
        raise CompareError(
            f"{what}: {path!r} holds {len(files)} profiles ({listed}{', …' if len(files) > 8 else ''}); "
            f"choose one with --{'base' if what == 'baseline' else 'exp'}-run/-worker/-span"
        )
    f = files[0]
    helper = Helper()
    try:
        return load_trace(loc, f, helper.submit)
    except Exception as exc:
        raise CompareError(f"{what}: cannot load {f.info.path}: {exc}") from exc
    finally:
        helper.close()


def run(args: argparse.Namespace) -> int:
    try:
        rules = [R.parse(text) for text in args.fail_on]
        base = load_side(
            args.baseline, *(_pick(args, "base", k) for k in ("run", "worker", "span")), "baseline"
        )
        exp = load_side(
            args.experiment, *(_pick(args, "exp", k) for k in ("run", "worker", "span")), "experiment"
        )
        result = dict(D.compare(base, exp, args.group_by))
        by_name = result if args.group_by == "name" else D.compare(base, exp, "name")
        result["verdict"] = R.verdict(rules, by_name)  # op rules name an operator, all its shapes
    except (CompareError, R.RuleError) as exc:
        print(f"torch-tb-profiler compare: {exc}", file=sys.stderr)
        return EXIT_BAD
    if args.json:
        doc = {
            **result,
            "operators": result["operators"][: args.top],
            "kernels": result["kernels"][: args.top],
        }
        sys.stdout.write(json.dumps(doc, allow_nan=False) + "\n")
    else:
        from torch_tb_profiler.cli.compare_report import render

        sys.stdout.write(render(result, args.top))
    sys.stdout.flush()
    failed = result["verdict"]["failed"]
    for f in failed:
        print(f"torch-tb-profiler compare: FAILED {_describe(f)}", file=sys.stderr)
    return EXIT_FAILED if failed else EXIT_OK


def _describe(o: dict[str, Any]) -> str:
    rel = "n/a" if o["rel"] is None else f"{100 * o['rel']:+.2f}%"
    noise = "" if o["noise"] is None else f", noise ±{o['noise']:.6g}"
    return (
        f"{o['rule']}: baseline {o['baseline']:.6g}, experiment {o['experiment']:.6g}, "
        f"change {o['delta']:+.6g} ({rel}{noise})"
    )

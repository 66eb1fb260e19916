"""Analysis benchmark: how long the Analysis view's figures (why the device waits) take once a profile
is loaded.

For each trace the profile is loaded once (``load_profile``, timed), then, per round, its cache is
cleared and

- ``all``: every analysis of the family as the ``/analysis`` route computes it — ``summary --json``'s
  ``analyses`` (idle time, temporal breakdown, launches, queue length, sequences, critical path) and the
  view's details (longest idle intervals, interval statistics, launch outliers, launch-bound time,
  bandwidth, sequences of 5 kernels, critical-path segments);
- each analysis alone, from a cleared cache (what it costs by itself, shared work included).

It prints each figure's median (min–max) over --runs and the floor: all analyses <= 2 s on the 322 MB
trace (benchmarks/make_traces.py --only 322mb). The answer from the server once warmed (the warm-up
computes it: views/warmup.py) is measured by bench_server.py's ``analysis`` route with ``--pause``.
This prints figures; it is not a timed test.

Usage:
    python benchmarks/bench_analysis.py .bench/traces/322mb/322mb/*.gz [--runs 3] [--json-out FILE]
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import fmt, loaded_traces, machine, print_table, summary, timed, trace_bench_args, write_json

from torch_tb_profiler.analysis.waits import summary as waits

SEQUENCE_LENGTH = 5  # the view's default


def all_analyses(profile) -> None:
    waits.summary(profile)
    waits.details(profile, SEQUENCE_LENGTH)


def parts() -> dict[str, Callable[[Any], Any]]:
    """One function per analysis: its summary section and its details together."""
    out: dict[str, Callable[[Any], Any]] = {}
    for key, fn in waits.SECTIONS.items():
        out[key] = fn
    for key, fn in waits.DETAILS.items():
        name = key if key not in out else f"{key} (details)"
        out[name] = lambda profile, fn=fn: fn(profile, SEQUENCE_LENGTH)
    return out


def main() -> None:
    args = trace_bench_args(__doc__)
    results: dict[str, Any] = {"machine": machine(), "traces": {}}
    rows = []
    for path, profile, load_s in loaded_traces(args.traces):
        whole: list[float] = []
        each: dict[str, list[float]] = {name: [] for name in parts()}
        for _ in range(args.runs):
            profile.cache.clear()
            whole.append(timed(all_analyses, profile))
            for name, fn in parts().items():
                profile.cache.clear()
                each[name].append(timed(fn, profile))
        name = Path(path).name
        results["traces"][name] = {
            "load_s": load_s,
            "events": len(profile.ops) + len(profile.runtimes) + len(profile.device),
            "device_rows": len(profile.device),
            "all_s": summary(whole),
            "each_s": {k: summary(v) for k, v in each.items()},
        }
        rows.append([name, f"{load_s:.2f} s", f"{len(profile.device):,}", fmt(summary(whole))])
        print_table(["analysis", "alone (s)"], [[k, fmt(summary(v))] for k, v in each.items()])
    print_table(["trace", "load", "device rows", "all analyses (s)"], rows)
    print("floor: all analyses <= 2 s on the 322 MB trace (docs/performance.md, Analysis)")
    if args.json_out:
        write_json(args.json_out, results)


if __name__ == "__main__":
    main()

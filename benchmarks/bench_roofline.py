"""Roofline benchmark: how long the Roofline view's figures take once a profile is loaded.

For each trace: the profile is loaded once (``load_profile``, timed: the roofline adds nothing to it),
then, per round, its cache is cleared and

- ``cold``: the answer of ``/roofline`` computed first thing (work per call, holders, op rows, subtree
  rows, kernel rows, MFU; and everything they build on: name codes, the per-op table);
- ``warm``: the same after the views the server's warm-up computes (views/warmup.py: the operator and
  kernel tables) — what a user who opens the Roofline view after the overview waits for.

It prints each figure's median (min–max) over --runs and the floor: the target is the warm answer
<= 1 s on the 1 GB trace (benchmarks/make_traces.py --only 1gb). This prints figures; it is not a
timed test.

Usage:
    python benchmarks/bench_roofline.py .bench/traces/1gb/1gb/*.gz [--runs 3] [--json-out FILE]
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import fmt, loaded_traces, machine, print_table, summary, timed, trace_bench_args, write_json

from torch_tb_profiler.analysis.ops import kernels as kernel_views
from torch_tb_profiler.analysis.ops import operators
from torch_tb_profiler.analysis.roofline import figures as F
from torch_tb_profiler.analysis.roofline.mfu import mfu


def roofline_answer(profile) -> None:
    """What the first /roofline request and the Overview's MFU compute."""
    F.op_rows(profile)
    F.op_total_rows(profile)
    F.kernel_rows(profile)
    mfu(profile)


def server_warm_up(profile) -> None:
    operators.operator_table(profile, "name")
    kernel_views.kernel_table(profile, "name")


def main() -> None:
    args = trace_bench_args(__doc__)
    results: dict[str, Any] = {"machine": machine(), "traces": {}}
    rows = []
    for path, profile, load_s in loaded_traces(args.traces):
        cold, warm = [], []
        for _ in range(args.runs):
            profile.cache.clear()
            cold.append(timed(roofline_answer, profile))
            profile.cache.clear()
            server_warm_up(profile)
            warm.append(timed(roofline_answer, profile))
        name = Path(path).name
        results["traces"][name] = {
            "load_s": load_s,
            "ops": len(profile.ops),
            "device_rows": len(profile.device),
            "cold_s": summary(cold),
            "warm_s": summary(warm),
        }
        rows.append(
            [name, f"{load_s:.2f} s", f"{len(profile.ops):,}", fmt(summary(cold)), fmt(summary(warm))]
        )
    print_table(["trace", "load", "ops", "roofline cold (s)", "after warm-up (s)"], rows)
    print("floor: the warm answer <= 1 s on the 1 GB trace (docs/performance.md, Roofline)")
    if args.json_out:
        write_json(args.json_out, results)


if __name__ == "__main__":
    main()

"""Scaling benchmark: does each analysis grow like n log n in the number of events?

Builds synthetic traces of n, 2n, 4n, ... events in a few shapes, times loading each (parse and
model build) and every analysis of the overview and operator pages on the loaded profile with its
cache cleared (no answer reused), best of --repeat runs. It prints
the seconds per size and the ratio time(2n) / time(n): about 2 for linear or n log n work, about 4
for quadratic work. This prints figures; it is not a timed test.

Shapes:
    identical  n copies of one cpu_op (same name, start and duration): one chain n deep
    chain      n same-name cpu_ops, each nested in the previous one (distinct starts)
    deep       a chain n/2 deep and n/2 runtime calls that its deepest ops do not hold
    steps      a training-like trace: steps of ops, each op with a runtime launch and a kernel
    pycycle    python_function events whose parent ids form cycles, plus ops under them
    threads    n/2 threads, each with one python frame and one op

Usage:
    python benchmarks/bench_scaling.py [--sizes 12500 25000 50000 100000] [--shapes identical steps]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from torch_tb_profiler.analysis.core import steps
from torch_tb_profiler.analysis.device import breakdown
from torch_tb_profiler.analysis.ops import operators
from torch_tb_profiler.analysis.overview import page as overview
from torch_tb_profiler.analysis.overview import recommendations
from torch_tb_profiler.analysis.waits import summary as waits
from torch_tb_profiler.ingest.parse import load_profile

BASE = 1_700_000_000_000_000.0


def _x(cat: str, name: str, ts: float, dur: float, args: dict[str, Any], tid: int = 1) -> dict[str, Any]:
    return {
        "ph": "X",
        "cat": cat,
        "name": name,
        "pid": 1,
        "tid": tid,
        "ts": BASE + ts,
        "dur": dur,
        "args": args,
    }


def identical(n: int) -> list[dict[str, Any]]:
    return [_x("cpu_op", "aten::add", 0.0, 10.0, {"External id": 1}) for _ in range(n)]


def chain(n: int) -> list[dict[str, Any]]:
    return [_x("cpu_op", "aten::add", i * 0.5, 10.0 * n - i, {"External id": i + 1}) for i in range(n)]


def deep(n: int) -> list[dict[str, Any]]:
    """n/2 nested ops and n/2 runtime calls after the innermost op ended, each held by an op half
    way up the chain (finding it walks up n/4 levels)."""
    m = max(2, n // 2)
    events = [
        _x("cpu_op", f"op{i % 50}", float(i), 10.0 * m - 2 * i, {"External id": i + 1}) for i in range(m)
    ]
    for j in range(m):
        t = 10.0 * m - m // 2 + j / m  # inside op m/2 - 1 and its ancestors only
        events.append(_x("cuda_runtime", "cudaLaunchKernel", t, 0.0001, {"correlation": 10 * m + j}))
    return events


def training(n: int) -> list[dict[str, Any]]:
    """n events: steps of 100 ops; each op launches one kernel (op, runtime, kernel: 3 events)."""
    events: list[dict[str, Any]] = []
    per_step = 100
    ops = max(1, n // 3)
    t = 0.0
    for s in range(0, ops, per_step):
        k = min(per_step, ops - s)
        events.append(_x("user_annotation", f"ProfilerStep#{s // per_step}", t, k * 10.0, {"External id": 0}))
        for i in range(k):
            ext = s + i + 1
            ts = t + i * 10.0
            events.append(_x("cpu_op", f"aten::op{i % 20}", ts + 0.5, 8.0, {"External id": ext}))
            events.append(
                _x("cuda_runtime", "cudaLaunchKernel", ts + 2, 3.0, {"External id": ext, "correlation": ext})
            )
            events.append(
                {
                    "ph": "X",
                    "cat": "kernel",
                    "name": f"kernel{i % 7}",
                    "pid": 0,
                    "tid": 7,
                    "ts": BASE + ts + 6,
                    "dur": 4.0,
                    "args": {"External id": ext, "correlation": ext, "device": 0, "stream": 7},
                }
            )
        t += k * 10.0
    return events


def pycycle(n: int) -> list[dict[str, Any]]:
    """n/3 pairs of python frames whose parent ids point at each other, each pair holding one op."""
    events: list[dict[str, Any]] = []
    for i in range(n // 3):
        a, b, t = 2 * i + 1, 2 * i + 2, i * 10.0
        events.append(_x("python_function", f"f{i % 10}", t, 9.0, {"Python id": a, "Python parent id": b}))
        events.append(
            _x("python_function", f"g{i % 10}", t + 0.5, 8.0, {"Python id": b, "Python parent id": a})
        )
        events.append(_x("cpu_op", "aten::mm", t + 1, 5.0, {"External id": i + 1}))
    return events


def threads(n: int) -> list[dict[str, Any]]:
    """n/2 threads, each with one python frame holding one op."""
    events: list[dict[str, Any]] = []
    for i in range(n // 2):
        events.append(
            _x("python_function", "f", 0.0, 9.0, {"Python id": i + 1, "Python parent id": 0}, tid=i)
        )
        events.append(_x("cpu_op", "aten::mm", 1.0, 5.0, {"External id": i + 1}, tid=i))
    return events


SHAPES: dict[str, Callable[[int], list[dict[str, Any]]]] = {
    "identical": identical,
    "chain": chain,
    "deep": deep,
    "steps": training,
    "pycycle": pycycle,
    "threads": threads,
}

ANALYSES: dict[str, Callable[[Any], Any]] = {
    "op_stats": operators.op_stats,
    "operator_table": lambda p: operators.operator_table(p, "name_input_shape"),
    "stacks(aten::mm)": lambda p: operators.operator_stacks(p, "aten::mm"),
    "steps": steps.steps,
    "breakdown": breakdown.per_step,
    "recommendations": recommendations.recommendations,
    "overview": overview.overview,
    "waits(all analyses)": lambda p: (waits.summary(p), waits.details(p, 5)),
}


def measure(shape: str, n: int, folder: Path, repeat: int) -> dict[str, float]:
    """The best of ``repeat`` runs of each analysis (seconds); ``load`` is parse + model build."""
    path = folder / f"{shape}_{n}.pt.trace.json"
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": SHAPES[shape](n)}))
    out = {"load": float("inf")}
    for _ in range(repeat):
        t0 = time.perf_counter()
        profile = load_profile(str(path))
        out["load"] = min(out["load"], time.perf_counter() - t0)
    for name, fn in ANALYSES.items():
        best = float("inf")
        for _ in range(repeat):
            profile.cache.clear()  # each analysis from scratch, including what it builds on
            t0 = time.perf_counter()
            fn(profile)
            best = min(best, time.perf_counter() - t0)
        out[name] = best
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[12_500, 25_000, 50_000, 100_000])
    ap.add_argument("--shapes", nargs="+", choices=sorted(SHAPES), default=list(SHAPES))
    ap.add_argument("--repeat", type=int, default=3, help="report the best of this many runs")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        for shape in args.shapes:
            rows = {n: measure(shape, n, Path(tmp), args.repeat) for n in args.sizes}
            print(f"\n{shape}: seconds per analysis (ratio to the previous size)")
            print(f"{'analysis':<18}" + "".join(f"{n:>18}" for n in args.sizes))
            for name in ("load", *ANALYSES):
                cells = []
                for i, n in enumerate(args.sizes):
                    t = rows[n][name]
                    prev = rows[args.sizes[i - 1]][name] if i else None
                    cells.append(
                        f"{t:9.3f}" + (f" (x{t / prev:4.1f})" if prev and prev > 1e-4 else "        ")
                    )
                print(f"{name:<18}" + "".join(f"{c:>18}" for c in cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

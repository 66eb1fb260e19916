"""Memory view benchmark: a trace with N `[memory]` records (default 1 M), answered after loading.

Writes a synthetic 2.x trace (one thread; 1 000 steps, each with 100 ops nested 3 deep; N GPU
alloc/free records at distinct addresses, about one third never freed), loads it with
``load_profile``, then times each memory analysis twice: the first call includes the one-off
per-profile preparation (sorting, operator lookup), the second is what later requests cost.

Usage:
    python benchmarks/bench_memory.py [--records 1000000] [--keep FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

import msgspec
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from torch_tb_profiler.analysis.memory import usage as M
from torch_tb_profiler.ingest.loading import load_profile


def write_trace(path: str, records: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    steps, ops_per_step = 1000, 100
    step_len = 10_000.0
    events = []
    for s in range(steps):
        o = s * step_len
        events.append(
            {
                "ph": "X",
                "cat": "user_annotation",
                "name": f"ProfilerStep#{s}",
                "pid": 1,
                "tid": 1,
                "ts": o,
                "dur": step_len,
                "args": {},
            }
        )
        for k in range(ops_per_step):
            t = o + k * 100.0
            events.append(
                {
                    "ph": "X",
                    "cat": "cpu_op",
                    "name": f"aten::op{k % 20}",
                    "pid": 1,
                    "tid": 1,
                    "ts": t + 1,
                    "dur": 98.0,
                    "args": {},
                }
            )
            events.append(
                {
                    "ph": "X",
                    "cat": "cpu_op",
                    "name": "aten::empty",
                    "pid": 1,
                    "tid": 1,
                    "ts": t + 10,
                    "dur": 30.0,
                    "args": {},
                }
            )
    # allocations and their frees: ~2/3 of records pair up, the rest stay allocated
    n_alloc = records * 2 // 3 + 1
    ts_alloc = np.sort(rng.uniform(0, steps * step_len, n_alloc))
    size = rng.integers(512, 1 << 22, n_alloc)
    life = rng.exponential(2_000.0, n_alloc)
    n_free = records - n_alloc
    freed = rng.choice(n_alloc, n_free, replace=False)
    ts_all = np.concatenate([ts_alloc, ts_alloc[freed] + life[freed]])
    delta = np.concatenate([size, -size[freed]])
    addr = np.concatenate([np.arange(n_alloc), freed]) * 4096 + (1 << 40)
    order = np.argsort(ts_all, kind="stable")
    total = np.cumsum(delta[order]) + (1 << 30)
    for t, a, b, tot in zip(
        ts_all[order].tolist(), addr[order].tolist(), delta[order].tolist(), total.tolist(), strict=True
    ):
        events.append(
            {
                "ph": "i",
                "s": "t",
                "cat": "cpu_instant_event",
                "name": "[memory]",
                "pid": 1,
                "tid": 1,
                "ts": t,
                "args": {
                    "Device Type": 1,
                    "Device Id": 0,
                    "Addr": a,
                    "Bytes": b,
                    "Total Allocated": tot,
                    "Total Reserved": tot + (1 << 28),
                },
            }
        )
    with open(path, "wb") as f:
        f.write(msgspec.json.encode({"schemaVersion": 1, "deviceProperties": [], "traceEvents": events}))


def timed(label: str, fn, results: dict) -> None:
    for attempt in ("first", "again"):
        t0 = time.perf_counter()
        out = fn()
        results[f"{label}_{attempt}_s"] = round(time.perf_counter() - t0, 3)
    print(
        f"{label:<16} first {results[f'{label}_first_s']:.3f} s   again {results[f'{label}_again_s']:.3f} s"
        f"   ({_describe(out)})"
    )


def _describe(out) -> str:
    if isinstance(out, dict) and "ts" in out:
        return f"{len(out['ts'])} points of {out['points_in_range']}"
    if isinstance(out, dict) and "total" in out:
        return f"{out['total']} events, {len(out['rows'])} rows"
    if isinstance(out, dict) and "rows" in out:
        return f"{len(out['rows'])} operator rows"
    return ""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--keep", help="write the trace here and keep it")
    args = ap.parse_args()
    path = args.keep or os.path.join(tempfile.mkdtemp(), "mem.pt.trace.json")
    t0 = time.perf_counter()
    write_trace(path, args.records)
    print(f"wrote {path} ({os.path.getsize(path) / 1e6:.0f} MB) in {time.perf_counter() - t0:.1f} s")
    t0 = time.perf_counter()
    profile = load_profile(path)
    print(
        f"load_profile: {time.perf_counter() - t0:.1f} s, {len(profile.memory)} memory records, {len(profile.ops)} ops"
    )
    results: dict = {"records": len(profile.memory)}
    mid = float(profile.memory["ts"].median())
    # the first call prepares the profile (memoized): time it on its own
    timed("devices", lambda: M.devices(profile), results)
    timed("curve", lambda: M.curve(profile, "GPU0"), results)
    timed("curve_zoom", lambda: M.curve(profile, "GPU0", start=mid, end=mid + 50_000), results)
    timed("events", lambda: M.events(profile, "GPU0"), results)
    timed(
        "events_range",
        lambda: M.events(profile, "GPU0", start=mid, end=mid + 50_000, sort="alloc_time"),
        results,
    )
    timed("stats", lambda: M.operator_stats(profile, "GPU0"), results)
    timed("stats_range", lambda: M.operator_stats(profile, "GPU0", start=mid, end=mid + 50_000), results)
    print(json.dumps(results))
    if not args.keep:
        os.remove(path)


if __name__ == "__main__":
    main()

"""Timeline benchmark: building the timeline index and answering windows from it.

For one trace (loaded with ``torch_tb_profiler.ingest.parse.load_profile``, not timed):

- ``build_index``: median of 3 calls of ``analysis.timeline.build_index`` (called directly, so the
  memoized index is never reused), and events indexed per second.
- index memory: ``idx.nbytes()`` next to the profile's own tables (deep ``memory_usage`` summed over
  every DataFrame of the Profile), as a ratio.
- windows: N random windows (seeded), widths log-uniform from the whole profile down to 10 µs, all
  tracks, ``px`` pixels; each timed as ``window()`` plus the binary answer (``views.timeline._binary``,
  which gzips at level 1 any answer over 1 KB, as the server does for a client that accepts gzip).
  Reported: p50/p95/max latency and p50/p95/max answer size in bytes as sent.

Usage:
    python benchmarks/bench_timeline.py [TRACE] [--windows 200] [--px 2000] [--seed 0] [--json OUT]

Without TRACE: the biggest trace that benchmarks/make_traces.py has made (under $BENCH_TRACES or
.bench/traces), else the biggest trace in samples/.
"""

from __future__ import annotations

import argparse
import gc
import math
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REPO, machine, percentile, summary, write_json
from make_traces import DEFAULT_OUT, PRESETS, trace_path

TABLES = (
    "ops",
    "runtimes",
    "device",
    "gpu_annotations",
    "python",
    "comms",
    "memory",
    "syncs",
    "flows",
    "steps",
    "others",
)
TARGETS = {"window_p95_ms": 100.0, "answer_gz_bytes": 2 * 2**20, "index_to_tables": 0.5}
MIN_WIDTH_US = 10.0
BUILD_RUNS = 3


def default_trace() -> Path | None:
    made = [trace_path(DEFAULT_OUT, name) for name in PRESETS]
    made = [p for p in made if p.is_file()]
    if made:
        return max(made, key=lambda p: p.stat().st_size)
    samples = [p for p in (REPO / "samples").rglob("*.json*") if p.name.endswith((".json", ".json.gz"))]
    return max(samples, key=lambda p: p.stat().st_size) if samples else None


def tables_nbytes(profile: Any) -> int:
    return int(sum(getattr(profile, t).memory_usage(deep=True).sum() for t in TABLES))


def bench(path: Path, n_windows: int, px: int, seed: int) -> dict[str, Any]:
    from werkzeug.test import EnvironBuilder

    from torch_tb_profiler.analysis.timeline import index as tl
    from torch_tb_profiler.analysis.timeline import windows
    from torch_tb_profiler.ingest.parse import load_profile
    from torch_tb_profiler.views.timeline import _binary

    t0 = time.perf_counter()
    profile = load_profile(str(path))
    load_s = time.perf_counter() - t0

    build_s = []
    idx = None
    for _ in range(BUILD_RUNS):
        idx = None
        gc.collect()
        t0 = time.perf_counter()
        idx = tl.build_index(profile)
        build_s.append(time.perf_counter() - t0)
    assert idx is not None
    events = idx.event_count
    index_bytes = idx.nbytes()
    table_bytes = tables_nbytes(profile)

    request = EnvironBuilder(headers={"Accept-Encoding": "gzip"}).get_request()
    rng = random.Random(seed)
    span = max(idx.end_us - idx.start_us, MIN_WIDTH_US)
    lat_ms: list[float] = []
    sizes: list[float] = []
    items: list[float] = []
    for _ in range(n_windows):
        width = math.exp(rng.uniform(math.log(MIN_WIDTH_US), math.log(span)))
        start = idx.start_us + rng.uniform(0.0, max(span - width, 0.0))
        t0 = time.perf_counter()
        w = windows.window(idx, start, start + width, px, None)
        counters = {str(k): {"ts": s.ts, "values": s.values} for k, s in w.counters.items()}
        resp = _binary(request, w, counters)
        body = resp.get_data()
        lat_ms.append((time.perf_counter() - t0) * 1e3)
        sizes.append(float(len(body)))
        items.append(float(w.ts.size))

    def pct(xs: list[float]) -> dict[str, float]:
        return {"p50": percentile(xs, 50), "p95": percentile(xs, 95), "max": max(xs) if xs else float("nan")}

    build = summary(build_s)
    return {
        "trace": str(path),
        "trace_bytes": path.stat().st_size,
        "load_s": load_s,
        "events": events,
        "tracks": len(idx.tracks),
        "build_index_s": build,
        "events_per_s": events / build["median"] if build["median"] else float("nan"),
        "index_bytes": index_bytes,
        "tables_bytes": table_bytes,
        "index_to_tables": index_bytes / table_bytes if table_bytes else float("nan"),
        "windows": n_windows,
        "px": px,
        "seed": seed,
        "window_ms": pct(lat_ms),
        "answer_bytes": pct(sizes),
        "answer_items": pct(items),
        "targets": TARGETS,
        "machine": machine(),
    }


def report(r: dict[str, Any]) -> None:
    mb = 2**20
    lat, size, it = r["window_ms"], r["answer_bytes"], r["answer_items"]
    b = r["build_index_s"]
    print(f"trace: {r['trace']} ({r['trace_bytes'] / mb:.1f} MB on disk, loaded in {r['load_s']:.2f} s)")
    print(f"events indexed: {r['events']:,} on {r['tracks']} tracks")
    print(
        f"build_index: {b['median']:.3f} s median of {b['n']} ({b['min']:.3f}-{b['max']:.3f}), "
        f"{r['events_per_s'] / 1e6:.2f} M events/s"
    )
    ok = "ok" if r["index_to_tables"] <= TARGETS["index_to_tables"] else "OVER"
    print(
        f"index memory: {r['index_bytes'] / mb:.1f} MB vs tables {r['tables_bytes'] / mb:.1f} MB "
        f"= {r['index_to_tables']:.3f}x [{ok}]"
    )
    ok = "ok" if lat["p95"] <= TARGETS["window_p95_ms"] else "OVER"
    print(
        f"window+binary ({r['windows']} windows, px={r['px']}): p50 {lat['p50']:.1f} ms, "
        f"p95 {lat['p95']:.1f} ms, max {lat['max']:.1f} ms [{ok}]"
    )
    ok = "ok" if size["max"] <= TARGETS["answer_gz_bytes"] else "OVER"
    print(
        f"answer size gzipped: p50 {size['p50']:,.0f} B, p95 {size['p95']:,.0f} B, max {size['max']:,.0f} B [{ok}]"
    )
    print(f"boxes per answer: p50 {it['p50']:,.0f}, p95 {it['p95']:,.0f}, max {it['max']:,.0f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace", nargs="?", type=Path, help="trace file (default: see above)")
    ap.add_argument("--windows", type=int, default=200, help="random windows to answer (default 200)")
    ap.add_argument("--px", type=int, default=2000, help="window width in pixels (default 2000)")
    ap.add_argument("--seed", type=int, default=0, help="random seed for the windows (default 0)")
    ap.add_argument("--json", type=Path, metavar="OUT", help="also write the results as JSON here")
    a = ap.parse_args(argv)
    path = a.trace or default_trace()
    if path is None or not path.is_file():
        print(f"no trace found ({path})", file=sys.stderr)
        return 2
    print(
        f"targets: window p95 <= {TARGETS['window_p95_ms']:.0f} ms, answer <= 2 MB gzipped, "
        f"index <= {TARGETS['index_to_tables']}x the profile's tables"
    )
    r = bench(path, a.windows, a.px, a.seed)
    report(r)
    if a.json:
        write_json(a.json, r)
        print(f"wrote {a.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

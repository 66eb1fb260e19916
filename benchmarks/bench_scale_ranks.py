"""The Distributed view of a many-ranks job in a real TensorBoard: time to the first answer and memory.

For each case (default ranks64 and ranks1024 from make_traces.py) and mode:
  - parse: TORCH_PROFILER_INDEX_DIR=off, every rank file parsed;
  - index: the index built beforehand by ``torch-tb-profiler index --local-workers N`` (``--workers``,
    default 1; timed apart; or an index built earlier, ``--index-dir``), then TensorBoard started with
    that index (``--modes parse index``; skipped when the build fails).
Figures per round, all from the TensorBoard process start: ``http_up_s`` (the runs route first
answers), ``loaded_s`` (the runs route says every file is done), ``first_answer_s`` (the first
/distributed request, sent once loading is done, answers 200), ``request_s`` (that request alone: the
job analysis, plus each rank's summary when parsed), a second request (the memoized answer), the
answer's size, the ranks in it, the peak RSS of the process tree (TensorBoard + its loading processes,
sampled every 50 ms), how many files came from the index and, per memory state of the runs route
(``resident``: full profile in memory, ``summary``: only its index summary), how many files were in it
once loaded and after the Distributed answer; the load average before and after each round.

Usage:
    python benchmarks/bench_scale_ranks.py [CASE ...] [--modes parse index] [--timeout 1800]
        [--workers N] [--index-dir DIR] [--json-out benchmarks/results/scale-ranks.json]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scale import build_index, start_ours
from bench_server import PREFIX, _stop, get, resolve_case
from common import machine, write_json
from make_traces import DEFAULT_OUT
from proctree import TreeSampler

POLL_S = 0.2


def _wait_loaded(base: str, deadline: float, res: dict[str, Any], t0: float) -> dict[str, Any]:
    while time.perf_counter() < deadline:
        status, runs, _ = get(base, f"{PREFIX}/runs", timeout=10)
        if status and "http_up_s" not in res:
            res["http_up_s"] = time.perf_counter() - t0
        if status == 200 and runs["runs"] and not runs["loading"]:
            return runs["runs"][0]
        time.sleep(POLL_S)
    raise RuntimeError("loading did not finish in time")


def _memory_states(base: str) -> dict[str, int]:
    """How many files of the first run are in each memory state of the runs route."""
    _, runs, _ = get(base, f"{PREFIX}/runs", timeout=30)
    counts: dict[str, int] = {}
    for f in runs["runs"][0]["files"]:
        key = str(f.get("memory"))
        counts[key] = counts.get(key, 0) + 1
    return counts


def one_round(logdir: Path, index_dir: str, timeout: float) -> dict[str, Any]:
    res: dict[str, Any] = {"loadavg_before": os.getloadavg()}
    proc, base, cwd, t0 = start_ours(logdir, index_dir, "bench-ranks-tb-")
    try:
        with TreeSampler(proc.pid) as sampler:
            entry = _wait_loaded(base, t0 + timeout, res, t0)
            run = entry["name"]
            res["loaded_s"] = time.perf_counter() - t0
            res["rss_loaded_mb"] = sampler.peak / 2**20
            res["files_from_index"] = sum(1 for f in entry["files"] if f.get("from_index"))
            res["memory_loaded"] = _memory_states(base)
            status, job, dt = get(base, f"{PREFIX}/distributed?run={run}", timeout=timeout)
            if status != 200:
                raise RuntimeError(f"distributed answered {status}: {str(job)[:300]}")
            res["first_answer_s"] = time.perf_counter() - t0
            res["request_s"] = dt
            res["memory_after_answer"] = _memory_states(base)
            res["ranks"] = len(job["workers"])
            res["heatmap_steps"] = len(job["heatmap"]["steps"])
            res["slowest"] = [r["worker"] for r in job["stragglers"]["ranks"][:3]]
            _, _, res["second_request_s"] = get(base, f"{PREFIX}/distributed?run={run}", timeout=timeout)
            res["answer_kb"] = len(_raw(base, f"{PREFIX}/distributed?run={run}")) / 1024
            res["peak_rss_mb"] = sampler.peak / 2**20
            res["max_processes"] = sampler.max_procs
    finally:
        _stop(proc)
        shutil.rmtree(cwd, ignore_errors=True)
    res["loadavg_after"] = os.getloadavg()
    return res


def _raw(base: str, path: str) -> bytes:
    import urllib.request

    with urllib.request.urlopen(base + path, timeout=600) as r:  # no gzip asked: the plain JSON size
        return r.read()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cases", nargs="*", default=["ranks64", "ranks1024"])
    ap.add_argument("--modes", nargs="*", default=["parse", "index"], choices=["parse", "index"])
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per TensorBoard round")
    ap.add_argument("--workers", type=int, default=1, help="local workers of the index build")
    ap.add_argument("--index-dir", type=Path, help="use this index (built earlier) instead of building one")
    ap.add_argument("--json-out", type=Path)
    a = ap.parse_args(argv)
    results: list[dict[str, Any]] = []
    for name in a.cases:
        case = resolve_case(name, DEFAULT_OUT)
        for mode in a.modes:
            entry: dict[str, Any] = {"case": case.name, "files": len(case.files), "json_bytes": case.bytes}
            entry["mode"] = mode
            index_dir = a.index_dir or Path(tempfile.mkdtemp(prefix="bench-ranks-index-"))
            try:
                if mode == "index" and a.index_dir is None:
                    entry["index_build_s"] = build_index(case.logdir, index_dir, a.workers)
                    entry["index_workers"] = a.workers
                entry.update(one_round(case.logdir, str(index_dir) if mode == "index" else "off", a.timeout))
            except Exception as e:  # report and go on with the other cases
                entry["error"] = f"{type(e).__name__}: {e}"
            finally:
                if a.index_dir is None:
                    shutil.rmtree(index_dir, ignore_errors=True)
            print(entry, flush=True)
            results.append(entry)
    if a.json_out:
        write_json(a.json_out, {"machine": machine(), "results": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())

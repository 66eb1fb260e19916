"""The Distributed view of a many-ranks job in a real TensorBoard: time to the first answer and memory.

For each case (default ranks64 and ranks1024 from make_traces.py) and mode:
  - parse: TORCH_PROFILER_INDEX_DIR=off, every rank file parsed;
  - index: the index built beforehand by ``torch-tb-profiler index --local-workers 1`` (timed apart),
    then TensorBoard started with that index (``--modes parse index``; skipped when the build fails).
Figures per round, all from the TensorBoard process start: ``loaded_s`` (the runs route says every file
is done), ``first_answer_s`` (the first /distributed request, sent once loading is done, answers 200),
``request_s`` (that request alone: the summaries of every rank and the job analysis), a second request
(the memoized answer), the answer's size, the ranks in it, and the peak RSS of the process tree
(TensorBoard + its loading processes, sampled every 50 ms).

Usage:
    python benchmarks/bench_scale_ranks.py [CASE ...] [--modes parse index] [--timeout 1800]
                                           [--json-out benchmarks/results/scale-ranks.json]
"""

from __future__ import annotations

import argparse
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


def _wait_loaded(base: str, deadline: float) -> str:
    while time.perf_counter() < deadline:
        status, runs, _ = get(base, f"{PREFIX}/runs", timeout=10)
        if status == 200 and runs["runs"] and not runs["loading"]:
            return runs["runs"][0]["name"]
        time.sleep(POLL_S)
    raise RuntimeError("loading did not finish in time")


def one_round(logdir: Path, index_dir: str, timeout: float) -> dict[str, Any]:
    proc, base, cwd, t0 = start_ours(logdir, index_dir, "bench-ranks-tb-")
    res: dict[str, Any] = {}
    try:
        with TreeSampler(proc.pid) as sampler:
            run = _wait_loaded(base, t0 + timeout)
            res["loaded_s"] = time.perf_counter() - t0
            res["rss_loaded_mb"] = sampler.peak / 2**20
            status, job, dt = get(base, f"{PREFIX}/distributed?run={run}", timeout=timeout)
            if status != 200:
                raise RuntimeError(f"distributed answered {status}: {str(job)[:300]}")
            res["first_answer_s"] = time.perf_counter() - t0
            res["request_s"] = dt
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
    ap.add_argument("--json-out", type=Path)
    a = ap.parse_args(argv)
    results: list[dict[str, Any]] = []
    for name in a.cases:
        case = resolve_case(name, DEFAULT_OUT)
        for mode in a.modes:
            entry: dict[str, Any] = {"case": case.name, "files": len(case.files), "json_bytes": case.bytes}
            entry["mode"] = mode
            index_dir = Path(tempfile.mkdtemp(prefix="bench-ranks-index-"))
            try:
                if mode == "index":
                    entry["index_build_s"] = build_index(case.logdir, index_dir, 1)
                entry.update(one_round(case.logdir, str(index_dir) if mode == "index" else "off", a.timeout))
            except Exception as e:  # report and go on with the other cases
                entry["error"] = f"{type(e).__name__}: {e}"
            finally:
                shutil.rmtree(index_dir, ignore_errors=True)
            print(entry, flush=True)
            results.append(entry)
    if a.json_out:
        write_json(a.json_out, {"machine": machine(), "results": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())

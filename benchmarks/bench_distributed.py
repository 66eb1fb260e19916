"""Distributed view benchmark: a run directory of N rank traces analysed as one job.

Loads the ranks one at a time (each profile is reduced to its compact worker summary and dropped,
as the CLI does), then runs the job analysis. Prints per-rank load and summary times, the job time
and the process's peak RSS.

Usage:
    python benchmarks/bench_distributed.py RUN_DIR      # e.g. .bench/traces/ranks64/ranks64
"""

from __future__ import annotations

import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from torch_tb_profiler.analysis.distributed import job as D
from torch_tb_profiler.ingest.loading import load_profile


def main() -> None:
    run_dir = Path(sys.argv[1])
    files = sorted(p for p in run_dir.iterdir() if ".pt.trace.json" in p.name)
    load_s = summary_s = 0.0
    workers = []
    for f in files:
        t0 = time.perf_counter()
        profile = load_profile(str(f))
        t1 = time.perf_counter()
        workers.append(D.summarize_worker(f.name.split(".")[0], profile))
        t2 = time.perf_counter()
        load_s += t1 - t0
        summary_s += t2 - t1
        del profile
    t0 = time.perf_counter()
    job = D.analyze_job(workers)
    job_s = time.perf_counter() - t0
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    calls = sum(len(w.calls) for w in workers)
    print(
        f"{len(files)} ranks, {calls} collective calls: load {load_s:.1f} s, worker summaries {summary_s:.2f} s "
        f"({summary_s / max(1, len(files)) * 1000:.0f} ms/rank), job {job_s:.2f} s, peak RSS {rss_mb:.0f} MB, "
        f"{len(job['warnings'])} warnings, {job['stragglers']['round_count']} rounds"
    )


if __name__ == "__main__":
    main()

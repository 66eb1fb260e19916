"""The memory budget under concurrent clients: peak RSS of a real TensorBoard's process tree while
``--clients`` threads ask random views of random workers, with and without a budget.

Logdir: ``--workers`` copies of the two resnet50 Kineto samples (../shared/traces) as one run; the
index is built first (by a server without budget), as a re-opened logdir would have it. Three
servers, each for ``--seconds``: (1) one worker alone, every client on it (the "one-worker server" of
docs/scale.md); (2) every worker, no budget; (3) every worker, ``--budget``. Reported per server: the
peak RSS of the process tree, answers, p50/p95 latency, evictions (from ``runs``); for (3) the bound
docs/scale.md states: peak of (1) + budget + 64 MiB.

Usage:
    python benchmarks/bench_budget_clients.py [--workers 12] [--clients 20] [--budget 50MB]
        [--seconds 40] [--json-out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import percentile
from tests.fixtures.paths import SHARED_TRACES
from tests.fixtures.peak_rss import PeakRss
from tests.fixtures.tensorboard_server import TensorBoard, tensorboard

SOURCES = (
    "kineto_samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
    "kineto_samples/resnet50_num_workers_0/worker0.1623143566756.pt.trace.json.gz",
)
VIEWS = (
    ("overview", {}),
    ("operators", {"group_by": "name"}),
    ("operators", {"group_by": "name_input_shape"}),
    ("kernels", {"group_by": "name"}),
    ("memory/stats", {}),
    ("memory/curve", {}),
    ("timeline/tracks", {}),
)
SLACK = 64 << 20


def make_logdir(root: Path, workers: int) -> Path:
    (root / "job").mkdir(parents=True)
    old = time.time() - 60
    for i in range(workers):
        target = root / "job" / f"worker{i}.pt.trace.json.gz"
        shutil.copyfile(SHARED_TRACES / SOURCES[i % 2], target)
        os.utime(target, (old, old))
    return root


def clients(tb: TensorBoard, workers: list[str], n: int, seconds: float) -> dict[str, Any]:
    latencies: list[float] = []
    errors: list[Any] = []
    stop = time.monotonic() + seconds
    lock = threading.Lock()

    def client(seed: int) -> None:
        rng = random.Random(seed)
        while time.monotonic() < stop:
            route, extra = rng.choice(VIEWS)
            t = time.perf_counter()
            status, body = tb.get(route, run="job", worker=rng.choice(workers), **extra)
            took = time.perf_counter() - t
            with lock:
                latencies.append(took)
                if status >= 400:
                    errors.append((route, status, str(body)[:200]))

    threads = [threading.Thread(target=client, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {
        "answers": len(latencies),
        "errors": len(errors),
        "first_errors": errors[:3],
        "p50_s": percentile(latencies, 50),
        "p95_s": percentile(latencies, 95),
    }


def serve(logdir: Path, index: Path, tmp: Path, budget: str, workers: list[str], args: Any) -> dict[str, Any]:
    env = {"TORCH_PROFILER_INDEX_DIR": str(index), "TORCH_PROFILER_PROCESSES": "1"}
    with tensorboard(logdir, "--profiler_memory_budget", budget, env=env, tmp=tmp) as tb:
        tb.wait_loaded(timeout=300)
        rss = PeakRss(tb.proc.pid)
        out = clients(tb, workers, args.clients, args.seconds)
        out["peak_rss_bytes"] = rss.stop()
        _, runs = tb.get("runs")
        out["evictions"] = sum(f["evictions"] for r in runs["runs"] for f in r["files"])
        out["memory"] = runs["memory"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workers", type=int, default=12)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--budget", default="50MB")
    parser.add_argument("--seconds", type=float, default=40.0)
    parser.add_argument("--json-out")
    args = parser.parse_args()
    from torch_tb_profiler.ingest.budget import parse_budget

    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        logdir = make_logdir(tmp / "logs", args.workers)
        single = make_logdir(tmp / "single", 1)
        workers = [f"worker{i}" for i in range(args.workers)]
        index = tmp / "index"
        results: dict[str, Any] = {}
        # the index first, for both logdirs (a re-opened logdir)
        for folder, names in ((single, ["worker0"]), (logdir, workers)):
            with tensorboard(folder, env={"TORCH_PROFILER_INDEX_DIR": str(index)}, tmp=tmp) as tb:
                tb.wait_loaded(timeout=300)
                for w in names:
                    tb.get("overview", run="job", worker=w)
        results["one_worker"] = serve(single, index, tmp, "off", ["worker0"], args)
        results["no_budget"] = serve(logdir, index, tmp, "off", workers, args)
        results["budget"] = serve(logdir, index, tmp, args.budget, workers, args)
    budget = parse_budget(args.budget)
    bound = results["one_worker"]["peak_rss_bytes"] + (budget or 0) + SLACK
    results["bound_bytes"] = bound
    results["args"] = vars(args)
    for name in ("one_worker", "no_budget", "budget"):
        r = results[name]
        print(
            f"{name:>10}: peak {r['peak_rss_bytes'] / 2**20:.0f} MiB, {r['answers']} answers "
            f"({r['errors']} errors), p50 {r['p50_s']:.2f} s, p95 {r['p95_s']:.2f} s, evictions {r['evictions']}"
        )
    print(f"bound (one-worker peak + budget + 64 MiB): {bound / 2**20:.0f} MiB")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()

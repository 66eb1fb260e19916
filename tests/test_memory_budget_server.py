"""A real TensorBoard with a memory budget smaller than two full profiles serves every view of every worker
in turn: the answers equal those of a TensorBoard without a budget, ``runs`` names the evicted files, and
the process tree's RSS stays within the budget plus a stated overhead.

The overhead (docs/scale.md, "Memory budget") is measured here, not assumed: ``baseline`` is the peak
RSS of the same TensorBoard serving a logdir of ONE of these workers, every view asked (TensorBoard, the
plugin, its warm loading process, one profile and the transient memory of its largest answers). A
budgeted server of six workers may use that, plus the budget (the other profiles it keeps), plus
ALLOCATOR_SLACK for the freed memory the allocator has not handed back yet.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.paths import shared_trace
from tests.fixtures.peak_rss import PeakRss
from tests.fixtures.tensorboard_server import TensorBoard, tensorboard

SOURCES = (
    "kineto_samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
    "kineto_samples/resnet50_num_workers_0/worker0.1623143566756.pt.trace.json.gz",
)
WORKERS = 6
ALLOCATOR_SLACK = 64 << 20


@pytest.fixture(scope="module")
def logdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("budget") / "logs"
    (root / "job").mkdir(parents=True)
    old = time.time() - 60
    for i in range(WORKERS):
        target = root / "job" / f"worker{i}.pt.trace.json.gz"
        shutil.copyfile(shared_trace(SOURCES[i % 2]), target)
        os.utime(target, (old, old))
    return root


def every_view(tb: TensorBoard, worker: str) -> dict[str, Any]:
    """What the frontend asks of one worker's views, answer by answer (status, body)."""
    q = {"run": "job", "worker": worker}
    out: dict[str, Any] = {
        "overview": tb.get("overview", **q),
        "operators": tb.get("operators", **q, group_by="name"),
        "operators_shapes": tb.get("operators", **q, group_by="name_input"),
        "kernels": tb.get("kernels", **q, group_by="name"),
        "memory_stats": tb.get("memory/stats", **q),
        "memory_curve": tb.get("memory/curve", **q),
        "modules": tb.get("modules", **q),
        "tracks": tb.get("timeline/tracks", **q),
        "trace": tb.get("trace", **q),
    }
    status, tracks = out["tracks"]
    assert status == 200, tracks
    window = {"start_us": tracks["start_us"], "end_us": tracks["end_us"]}
    out["timeline"] = tb.get("timeline", **q, **window)
    out["timeline_json"] = tb.get("timeline", **q, **window, format="json")
    for name in ("overview", "operators", "kernels", "memory_stats", "tracks", "trace", "timeline"):
        assert out[name][0] == 200, (name, out[name])
    return out


def files(tb: TensorBoard) -> dict[str, dict[str, Any]]:
    status, runs = tb.get("runs")
    assert status == 200
    return {f["worker"]: f for f in runs["runs"][0]["files"]}


@contextlib.contextmanager
def served(logdir: Path, index: Path, tmp: Path, budget: str) -> Iterator[tuple[TensorBoard, PeakRss]]:
    env = {"TORCH_PROFILER_INDEX_DIR": str(index), "TORCH_PROFILER_PROCESSES": "1"}
    with tensorboard(logdir, "--profiler_memory_budget", budget, env=env, tmp=tmp) as tb:
        rss = PeakRss(tb.proc.pid)
        try:
            tb.wait_loaded(timeout=180)
            yield tb, rss
        finally:
            rss.stop()


def test_budget_smaller_than_two_profiles_serves_every_view_of_every_worker(
    logdir: Path, tmp_path: Path
) -> None:
    index = tmp_path / "index"
    workers = [f"worker{i}" for i in range(WORKERS)]

    # the overhead: the same server on a logdir of one of these workers, every view asked
    single = tmp_path / "single"
    (single / "job").mkdir(parents=True)
    shutil.copy2(logdir / "job" / "worker0.pt.trace.json.gz", single / "job" / "worker0.pt.trace.json.gz")
    for _ in range(2):  # the first run writes the index: the measured one reads it, as the budgeted one will
        with served(single, tmp_path / "single-index", tmp_path, "off") as (tb, rss):
            every_view(tb, "worker0")
            time.sleep(1)
    baseline = rss.peak

    # reference answers without a budget (this also writes the index)
    expected: dict[str, dict[str, Any]] = {}
    with served(logdir, index, tmp_path, "off") as (tb, rss):
        for w in workers:
            expected[w] = every_view(tb, w)
        sizes = {w: f["memory_bytes"] for w, f in files(tb).items()}
        assert all(f["memory"] == "resident" for f in files(tb).values())
    unbounded_peak = rss.peak
    one = max(sizes.values())  # a profile with the caches of every view
    budget = int(one * 1.5)

    with served(logdir, index, tmp_path, str(budget)) as (tb, rss):
        _, runs = tb.get("runs")
        assert runs["memory"]["budget_bytes"] == budget
        for _ in range(2):  # every worker in turn, twice: each one evicted and read again
            for w in workers:
                got = every_view(tb, w)
                for name, answer in expected[w].items():
                    assert got[name] == answer, (w, name)
                state = files(tb)
                assert state[w]["memory"] == "resident"
                _, runs = tb.get("runs")
                # two profiles with every view's caches do not fit: the others were dropped as needed
                assert runs["memory"]["resident_bytes"] <= budget or runs["memory"]["resident_files"] == 1
        assert all(f["evictions"] >= 1 for f in files(tb).values())
        assert all(f["from_index"] for f in files(tb).values())
    peak = rss.peak
    bound = baseline + budget + ALLOCATOR_SLACK
    report = (
        f"one worker served {baseline / 2**20:.0f} MiB, one profile {one / 2**20:.0f} MiB, budget {budget / 2**20:.0f} "
        f"MiB, peak with budget {peak / 2**20:.0f} MiB (bound {bound / 2**20:.0f}), without "
        f"{unbounded_peak / 2**20:.0f} MiB"
    )
    print(report)
    assert peak <= bound, report


CLIENTS = 20


def test_budget_holds_under_20_concurrent_clients(logdir: Path, tmp_path: Path) -> None:
    """Issue 28 item 7: 20 clients asking random views of random workers at once. Profiles held by requests
    in flight count against the budget and are shared (never read twice), reads wait for room: the tree
    stays within the one-client bound (one-worker server + budget + 64 MiB)."""
    import random
    import threading

    index = tmp_path / "index"
    workers = [f"worker{i}" for i in range(WORKERS)]
    single = tmp_path / "single"
    (single / "job").mkdir(parents=True)
    shutil.copy2(logdir / "job" / "worker0.pt.trace.json.gz", single / "job" / "worker0.pt.trace.json.gz")
    for _ in range(2):  # the first run writes the index: the measured one reads it, as the budgeted one will
        with served(single, tmp_path / "single-index", tmp_path, "off") as (tb, rss):
            every_view(tb, "worker0")
            time.sleep(1)
    baseline = rss.peak
    with served(logdir, index, tmp_path, "off") as (tb, rss):  # writes the index; the profiles' sizes
        for w in workers:
            every_view(tb, w)
        one = max(f["memory_bytes"] for f in files(tb).values())
    budget = int(one * 1.5)
    views = [("overview", {}), ("operators", {"group_by": "name"}), ("kernels", {"group_by": "name"})]
    views += [("memory/stats", {}), ("timeline/tracks", {})]
    failures: list[Any] = []
    answers = [0]
    with served(logdir, index, tmp_path, str(budget)) as (tb, rss):

        def client(seed: int) -> None:
            rng = random.Random(seed)
            stop = time.monotonic() + 20
            while time.monotonic() < stop:
                route, extra = rng.choice(views)
                status, body = tb.get(route, run="job", worker=rng.choice(workers), **extra)
                answers[0] += 1
                if status != 200:
                    failures.append((route, status, str(body)[:200]))

        threads = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        evictions = sum(f["evictions"] for f in files(tb).values())
    peak, bound = rss.peak, baseline + budget + ALLOCATOR_SLACK
    report = (
        f"{CLIENTS} clients, {answers[0]} answers, {evictions} evictions: peak {peak / 2**20:.0f} MiB, bound "
        f"{bound / 2**20:.0f} MiB (one worker {baseline / 2**20:.0f} + budget {budget / 2**20:.0f} + 64)"
    )
    print(report)
    assert not failures, failures[:3]
    assert evictions > 0 and peak <= bound, report

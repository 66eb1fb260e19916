"""The Distributed view at scale: the rank × step heatmap, distributions over ranks and the job-wide
collectives table, on a hand-built 16-rank job with planted stragglers, through a RunStore and the
route (tests/fixtures/builders_distributed.py builds the ranks).

Planted: step 1's straggler is rank 11 (100 µs late), step 2's is rank 3 (40 µs late). By hand
(per step of 1000 µs, test_distributed_job.py explains the bystander's figures):
- computation (computation − overlap): bystander 200; a straggler late by d has its NCCL kernel at
  [o+300+d, o+700), so overlap with gemm [o+100, o+400) is 100 − d: rank 11 step 1 → 300, rank 3 step
  2 → 240. Means: rank 11 250, rank 3 220, the 14 others 200.
- synchronizing: a bystander waits d: step 1 100, step 2 40 (mean 70); rank 11: 0, 40 (mean 20);
  rank 3: 100, 0 (mean 50).
- latency per rank (union of its 2 calls): bystander 400 + 400 = 800; rank 11 300 + 400 = 700; rank 3
  400 + 360 = 760.
"""

from __future__ import annotations

import json

import pytest
from werkzeug.test import Client

from tests.fixtures.builders_distributed import BYTES, write_job
from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.analysis.distributed.matrix import quantiles
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.plugin import wsgi_app
from torch_tb_profiler.views import distributed as views

WORLD = 16
PLANTED = {0: (11, 100.0), 1: (3, 40.0)}


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("logdir")
    write_job(root / "job", WORLD, PLANTED)
    store = RunStore(str(root), processes=0, settle_seconds=0)
    store.scan_once()
    assert store.wait_idle(120)
    try:
        status, body = get(store, run="job", top="3")
        assert status == 200, body
        yield body
    finally:
        store.close()


def get(store: RunStore, **params: str) -> tuple[int, dict]:
    r = Client(wsgi_app(views.ROUTES["/distributed"], store)).get("/", query_string=params)
    return r.status_code, json.loads(r.get_data())


def test_quantiles_by_hand() -> None:
    # n = 5: median the 3rd smallest, p95 the ⌈4.75⌉ = 5th
    assert quantiles([5.0, 1.0, 4.0, 2.0, 3.0]) == {"min": 1.0, "median": 3.0, "p95": 5.0, "max": 5.0}
    # n = 20: median (10 + 11) / 2, p95 the ⌈19⌉ = 19th smallest
    assert quantiles([float(i) for i in range(20, 0, -1)]) == {
        "min": 1.0,
        "median": 10.5,
        "p95": 19.0,
        "max": 20.0,
    }
    assert quantiles([]) == {"min": None, "median": None, "p95": None, "max": None}


def test_heatmap_cells(job: dict) -> None:
    heat = job["heatmap"]
    assert heat["steps"] == ["1", "2"]
    assert heat["metrics"] == [
        "computation",
        "overlap",
        "communication",
        "other",
        "synchronizing",
        "transferring",
    ]
    assert [w["rank"] for w in job["workers"]] == list(range(WORLD))  # rows follow workers: by rank
    comp, sync = heat["cells"]["computation"], heat["cells"]["synchronizing"]
    assert len(comp) == WORLD and all(len(row) == 2 for row in comp)
    assert comp[11] == pytest.approx([300, 200])
    assert comp[3] == pytest.approx([200, 240])
    assert comp[0] == pytest.approx([200, 200])
    assert sync[11] == pytest.approx([0, 40]) and sync[3] == pytest.approx([100, 0])
    assert sync[0] == pytest.approx([100, 40])
    assert heat["cells"]["overlap"][11] == pytest.approx([0, 100])
    # the cells are the per-step figures of the bars
    assert heat["cells"]["communication"][5] == pytest.approx(
        [job["overlap"]["rank5"]["steps"][s]["communication"] for s in ("1", "2")]
    )


def test_distribution_names_the_straggler(job: dict) -> None:
    comp = job["distribution"]["computation"]
    # 14 × 200, 220, 250: median the mean of the 8th and 9th (200), p95 the ⌈15.2⌉ = 16th (250)
    assert {k: comp[k] for k in ("min", "median", "p95", "max")} == pytest.approx(
        {"min": 200, "median": 200, "p95": 250, "max": 250}
    )
    assert [(r["worker"], r["value"]) for r in comp["highest"]] == [
        ("rank11", 250),
        ("rank3", 220),
        ("rank0", 200),
    ]
    sync = job["distribution"]["synchronizing"]
    assert {k: sync[k] for k in ("min", "median", "p95", "max")} == pytest.approx(
        {"min": 20, "median": 70, "p95": 70, "max": 70}
    )
    assert [(r["rank"], r["value"]) for r in sync["lowest"]] == [(11, 20), (3, 50), (0, 70)]
    assert [(r["rank"], r["times_last"], r["total_wait_caused_us"]) for r in job["stragglers"]["ranks"]] == [
        (11, 1, 100.0),
        (3, 1, 40.0),
    ]


def test_collectives_over_ranks(job: dict) -> None:
    (row,) = job["collectives"]
    assert row["collective"] == "all_reduce" and row["ranks"] == WORLD
    assert row["calls"] == 2 * WORLD and row["total_bytes"] == 2 * WORLD * BYTES
    # 700, 760, 14 × 800
    assert row["latency_us"] == pytest.approx({"min": 700, "median": 800, "p95": 800, "max": 800})
    assert [(r["rank"], r["value"]) for r in row["lowest"]] == [(11, 700), (3, 760), (0, 800)]
    assert [r["rank"] for r in row["highest"]] == [0, 1, 2]
    # a bystander: 8e6 bytes in 800 µs = 10 GB/s, × 2·15/16 = 18.75 GB/s bus bandwidth
    assert row["busbw_gbps"]["median"] == pytest.approx(18.75)


def test_named_lists_are_bounded_by_top(tmp_path) -> None:
    write_job(tmp_path / "job", 8, {0: (2, 10.0)})
    store = RunStore(str(tmp_path), processes=0, settle_seconds=0)
    store.scan_once()
    assert store.wait_idle(120)
    try:
        for top, expected in (("1", 1), ("5", 5), ("1000", 8)):
            status, body = get(store, run="job", top=top)
            assert status == 200
            assert len(body["distribution"]["computation"]["highest"]) == expected
            assert len(body["collectives"][0]["lowest"]) == expected
        for bad in ("0", "1001", "x"):
            status, body = get(store, run="job", top=bad)
            assert status == 400 and "'top'" in body["error"]
    finally:
        store.close()


def test_summaries_are_prepared_while_loading(tmp_path) -> None:
    """RunStore's on_loaded hook (views.distributed.prepare) computes each rank's summary in the
    background, so the first request only analyses the job; a lone profile without collectives or
    distributedInfo is skipped."""
    write_job(tmp_path / "job", 4, {0: (2, 10.0)})
    single = TraceBuilder()
    single.step(1, 0, 100)
    single.op("aten::mm", 10, 50)
    single.write(tmp_path / "single" / "w0.1.pt.trace.json.gz")
    store = RunStore(str(tmp_path), processes=0, settle_seconds=0, on_loaded=views.prepare)
    store.scan_once()
    assert store.wait_idle(120)
    try:
        assert views.wait_prepared(120)
        ranks = store.profiles_of_run("job")
        assert len(ranks) == 4
        assert all(f"distributed.worker.{p.worker}" in p.cache for p in ranks)
        (lone,) = store.profiles_of_run("single")
        assert not any(str(k).startswith("distributed.") for k in lone.cache)
    finally:
        store.close()


def test_a_job_without_collectives(tmp_path) -> None:
    """Two ranks that never call a collective: the heatmap still has their steps (all computation
    here: 100 µs of host ops in a 1000 µs step on a CPU-only worker), nothing is named slowest."""
    for rank in (0, 1):
        b = TraceBuilder(distributed_info={"backend": "gloo", "rank": rank, "world_size": 2})
        b.step(1, 0, 1000)
        b.op("aten::add", 10, 100)
        b.write(tmp_path / "job" / f"rank{rank}.1.pt.trace.json.gz")
    store = RunStore(str(tmp_path), processes=0, settle_seconds=0)
    store.scan_once()
    assert store.wait_idle(120)
    try:
        status, body = get(store, run="job")
        assert status == 200, body
        assert body["collectives"] == [] and body["stragglers"]["ranks"] == []
        assert body["heatmap"]["steps"] == ["1"]
        assert body["heatmap"]["cells"]["computation"] == [[100.0], [100.0]]
        assert body["heatmap"]["cells"]["synchronizing"] == [[0.0], [0.0]]
        assert body["distribution"]["other"]["max"] == 900.0
    finally:
        store.close()

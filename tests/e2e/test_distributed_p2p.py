"""Distributed view in chromium: send/recv in a point-to-point table of their own (peer, size, time),
no collective-matching warning, a barrier without bandwidth; no Distributed view for a single worker
whose world size is 1. Traces: tests/test_distributed_p2p.py (hand-checked figures there)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.conftest import app_url
from tests.fixtures.tensorboard_server import TensorBoard, tensorboard
from tests.fixtures.trace_builder import TraceBuilder
from tests.test_distributed_p2p import gloo_p2p_rank


@pytest.fixture(scope="module")
def tb_p2p(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    logdir = tmp_path_factory.mktemp("p2p_logdir")
    (logdir / "gloo_p2p").mkdir()
    for r in (0, 1):
        gloo_p2p_rank(r).write(logdir / "gloo_p2p" / f"rank{r}.pt.trace.json")
    (logdir / "serve_world1").mkdir()
    b = TraceBuilder(distributed_info={"backend": "nccl", "rank": 0, "world_size": 1})
    b.step(1, 0, 1000)
    b.op("aten::mm", 10, 100)
    b.write(logdir / "serve_world1" / "rank0.pt.trace.json")
    with tensorboard(logdir, tmp=tmp_path_factory.mktemp("tb")) as tb:
        tb.wait_loaded(timeout=120)
        yield tb


def _col(page, table: str, col: str) -> list[str | None]:
    loc = page.locator(f'[data-testid="{table}"] [role="cell"][data-col="{col}"]')
    return loc.evaluate_all("els => els.map(e => e.dataset.value ?? null)")


def test_p2p_table_and_barrier_without_bandwidth(tb_p2p, page, rec):
    page.goto(app_url(tb_p2p, view="Distributed", run="gloo_p2p"))
    page.wait_for_selector('[data-testid="p2p-table"] [role="cell"]')
    assert _col(page, "p2p-table", "peer") == ["1"]
    assert _col(page, "p2p-table", "total_bytes") == ["4000"]
    assert _col(page, "p2p-table", "total_time") == ["60"]
    assert page.locator('[data-testid="p2p-table"] [data-col="op"][role="cell"]').all_inner_texts() == [
        "send"
    ]
    # the collectives table: no send/recv rows; the barrier's bandwidths are empty, not 0
    names = page.locator('[data-testid="comm-table"] [role="cell"][data-col="collective"]').all_inner_texts()
    assert sorted(names) == ["all_reduce", "barrier"]
    i = names.index("barrier")
    assert _col(page, "comm-table", "algbw")[i] is None and _col(page, "comm-table", "busbw")[i] is None
    bw = page.locator('[data-testid="comm-table"] [role="cell"][data-col="busbw"]').all_inner_texts()
    assert bw[i].strip() in ("–", "")
    assert "different numbers of calls" not in page.locator("body").inner_text()
    # the other rank's table: its recv from rank 0
    page.locator('[data-testid="select-cworker"]').select_option("rank1")
    page.wait_for_function(
        """() => [...document.querySelectorAll('[data-testid="p2p-table"] [role="cell"][data-col="op"]')]
        .map(e => e.textContent).join() === 'recv'"""
    )
    assert _col(page, "p2p-table", "peer") == ["0"]
    assert _col(page, "p2p-table", "total_time") == ["200"]
    assert rec.errors == []


def test_no_distributed_view_for_a_world_of_one(tb_p2p, page, rec):
    assert "Distributed" not in tb_p2p.get("views", run="serve_world1")[1]
    assert "Distributed" in tb_p2p.get("views", run="gloo_p2p")[1]
    page.goto(app_url(tb_p2p, view="Overview", run="serve_world1"))
    page.wait_for_selector('[data-testid="step-count"]')
    views = page.locator('[data-testid="select-view"] option').evaluate_all("os => os.map(o => o.value)")
    assert "Distributed" not in views and "Overview" in views
    assert rec.errors == []

"""The memory budget in the browser: a worker whose profile was dropped from memory is marked in the
Worker selector, and opening it again shows its views as before."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.conftest import app_url
from tests.fixtures.tensorboard_server import TensorBoard, tensorboard
from tests.fixtures.trace_builder import TraceBuilder

OVERVIEW = '[data-testid="view"][data-view="overview"] [data-testid="step-breakdown"]'


@pytest.fixture(scope="module")
def tb_budget(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    root = tmp_path_factory.mktemp("budget-ui")
    for w in ("w0", "w1", "w2"):
        b = TraceBuilder()
        b.step(1, 0, 9_000)
        b.op(f"aten::op_of_{w}", 100, 500)
        b.write(root / "r" / f"{w}.pt.trace.json")
    # one byte: every profile but the one in use is dropped
    with tensorboard(root, "--profiler_memory_budget", "1", tmp=tmp_path_factory.mktemp("tb")) as tb:
        tb.wait_loaded()
        yield tb


def test_evicted_worker_is_marked_and_opens_again(tb_budget, page, rec):
    seen = []
    page.on("request", lambda r: seen.append(r.url.split("pytorch_profiler/")[-1]))
    page.goto(app_url(tb_budget, run="r", view="Overview", worker="w0"))
    page.wait_for_selector(OVERVIEW)
    page.select_option('[data-testid="select-worker"]', "w1")
    page.wait_for_selector(OVERVIEW)
    # the run list is polled: w0, dropped when w1 was read, is marked once it is re-read
    page.wait_for_function(
        """() => [...document.querySelectorAll('[data-testid="select-worker"] option')]
                 .some(o => o.value === "w0" && o.textContent === "w0 (evicted from memory)")""",
        timeout=40_000,
    )
    labels = page.locator('[data-testid="select-worker"] option').evaluate_all(
        "os => os.map(o => o.textContent)"
    )
    assert "w1" in labels, [u for u in seen if "runs" not in u and "assets" not in u]
    page.select_option('[data-testid="select-worker"]', "w0")
    page.wait_for_selector(OVERVIEW)
    page.select_option('[data-testid="select-view"]', "Operator")
    page.wait_for_selector('[data-testid="view"][data-view="operator"] [data-testid="op-table"]')
    assert "aten::op_of_w0" in page.inner_text('[data-testid="op-table"]')
    assert rec.errors == []

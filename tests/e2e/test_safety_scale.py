"""Names from user traces are text, never markup; a 100 000-row table stays virtualized and sorts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import app_url, shot
from tests.fixtures.tensorboard_server import TensorBoard, tensorboard
from tests.fixtures.trace_builder import V100, TraceBuilder

MARK = "XSS-EXECUTED"
IMG = f"<img src=x onerror=\"window.__xss=1;console.log('{MARK}')\">"
SCRIPT = f"<script>window.__xss=2;console.log('{MARK}')</script>"
SVG = f"<svg onload=\"window.__xss=3;console.log('{MARK}')\"></svg>"
RUN = "evil <img src=x onerror=window.__xss=4>"


def evil_trace(path: Path) -> None:
    b = TraceBuilder(device_properties=[V100])
    for step in range(2):
        t = step * 1000.0
        b.step(step + 1, t, 900)
        # python frames whose *file names* are markup: the op's call stack links
        b.python_function(f"{IMG}.py(12): {SVG}", t + 10, 800, py_id=step * 10 + 1, parent_id=None)
        b.python_function(
            f"train{SCRIPT}.py(7): step", t + 20, 700, py_id=step * 10 + 2, parent_id=step * 10 + 1
        )
        ext = b.op(IMG, t + 30, 300, input_dims=[[2, 2]])
        b.launch(IMG, t + 40, 10, t + 100, 50, ext_id=ext, blocks_per_sm=1.0, occupancy=50.0)
        b.op(SCRIPT, t + 400, 200)
        b.op(SVG, t + 650, 100)
        b.memory(t + 35, 4096, 1000 + step, 4096, 8192, device_type=1, device_id=0)
        b.memory(t + 600, -4096, 1000 + step, 0, 8192, device_type=1, device_id=0)
    b.write(path)


@pytest.fixture(scope="module")
def tb_evil(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    logdir = tmp_path_factory.mktemp("evil")
    evil_trace(logdir / RUN / "w0.pt.trace.json")
    with tensorboard(logdir, tmp=tmp_path_factory.mktemp("tb")) as tb:
        tb.wait_loaded(timeout=60)
        yield tb


def test_trace_names_are_text(tb_evil, page, rec):
    _, runs = tb_evil.get("runs")
    assert [r["name"] for r in runs["runs"]] == [RUN]
    _, views = tb_evil.get("views", run=RUN)
    for view in views:
        page.goto(app_url(tb_evil, run=RUN, view=view))
        page.wait_for_selector(
            f'[data-testid="view"][data-view="{view.lower()}"] :is(.section, [data-testid="timeline"])'
        )
        page.wait_for_load_state("networkidle")
        if view == "Operator":
            page.wait_for_selector('[data-testid="op-table"] [role="cell"]')
            assert IMG in page.locator('[data-testid="op-table"]').inner_text()
            for toggle in page.locator('[data-testid="op-table"] .dt-toggle').all():
                toggle.click()
            page.wait_for_selector('[data-testid="stack"] a.frame-link')
            assert f"{IMG}.py(12)" in page.locator('[data-testid="stack"]').first.inner_text()
        if view == "Kernel":
            page.wait_for_selector('[data-testid="kernel-table"] [role="cell"]')
            assert IMG in page.locator('[data-testid="kernel-table"]').inner_text()
        # hover the charts so their tooltips render
        for canvas in page.locator("canvas").all()[:4]:
            canvas.hover()
        page.wait_for_timeout(100)
        assert page.evaluate("window.__xss") is None, view
        assert page.locator("img, script:not([src]), svg[onload]").count() == 0, view
    assert page.locator('[data-testid="select-run"]').inner_text().strip() == RUN
    assert not any(MARK in m for m in rec.console), rec.console
    assert not any(u.rsplit("/", 1)[-1] == "x" for u in rec.requests), "an <img src=x> was rendered"
    assert rec.errors == []


N_ROWS = 100_000


@pytest.fixture(scope="module")
def tb_big(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    """One trace with 100 000 distinct operator names (op_00000 … op_99999, durations 1…100 000 µs)."""
    logdir = tmp_path_factory.mktemp("big")
    b = TraceBuilder()
    durs = [float((i * 7919) % N_ROWS + 1) for i in range(N_ROWS)]  # a permutation of 1..N: no ties
    b.step(1, 0, sum(durs) + N_ROWS + 10)
    t = 1.0
    for i, dur in enumerate(durs):
        b.op(f"op_{i:05d}", t, dur)
        t += dur + 1
    b.write(logdir / "big" / "w0.pt.trace.json.gz")
    with tensorboard(logdir, tmp=tmp_path_factory.mktemp("tb")) as tb:
        tb.wait_loaded(timeout=180)
        yield tb


def test_100k_rows_virtualized_sort_search_scroll(tb_big, page, rec):
    page.goto(app_url(tb_big, run="big", view="Operator"))
    table = page.locator('[data-testid="op-table"]')
    page.wait_for_selector('[data-testid="op-table"] [role="cell"][data-col="name"]', timeout=60_000)

    def count_is(text: str) -> None:
        page.wait_for_function(
            "t => document.querySelector('[data-testid=op-table] [data-testid=row-count]').textContent === t",
            arg=text,
        )

    def first_host_total() -> float:
        return float(table.locator('[role="cell"][data-col="host_total"]').first.get_attribute("data-value"))

    # the answer is one bounded page of 10 000 rows; the table says how many there are in all
    count_is(f"1–10,000 of {N_ROWS:,} rows")
    assert page.locator('[data-testid="op-paged"]').is_visible()
    # only the rows in view are in the DOM
    assert table.locator(".dt-item").count() < 80
    # default sort: host self time descending, so the 100 000 µs op is first
    assert first_host_total() == N_ROWS
    # sort ascending by host total (on the server, over all 100 000 rows): 1 µs first
    header = table.locator('[role="columnheader"][data-col="host_total"]')
    header.click()  # descending first for numbers
    header.click()
    assert header.get_attribute("aria-sort") == "ascending"
    page.wait_for_function(
        "() => Number(document.querySelector('[data-testid=op-table] [role=cell][data-col=host_total]')"
        "?.dataset.value) === 1"
    )
    # scroll to the end of the page: its last row (10 000 µs) is rendered, still few DOM rows
    table.locator(".dt-scroll").evaluate("el => { el.scrollTop = el.scrollHeight; }")
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=op-table] [data-col=host_total][role=cell]')]"
        ".some(e => Number(e.dataset.value) === 10000)"
    )
    assert table.locator(".dt-item").count() < 80
    # the next page continues where this one ended
    table.locator("button", has_text="Next").click()
    count_is(f"10,001–20,000 of {N_ROWS:,} rows")
    page.wait_for_function(
        "() => Number(document.querySelector('[data-testid=op-table] [role=cell][data-col=host_total]')"
        "?.dataset.value) === 10001"
    )
    # search runs on the server over every row: the 19 names containing 9999 (op_X9999 ×10, op_9999Y
    # for Y < 9), from the first page again
    table.locator('input[type="search"]').fill("9999")
    count_is(f"1–19 of 19 rows ({N_ROWS:,} in all)")
    shot(page, "operator_100k.png")
    assert rec.errors == []

"""The Diff view in chromium: pick a baseline, see both sides and the deltas, sort and search the
operator table, switch the baseline, and the comparison survives a reload (deep link)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest

from tests.e2e.conftest import app_url, shot
from tests.fixtures.builders_diff import gpu_trace
from tests.fixtures.tensorboard_server import TensorBoard, tensorboard


@pytest.fixture(scope="module")
def tb_diff(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    logdir = tmp_path_factory.mktemp("diff_logdir")
    for run, experiment in (("base", False), ("exp", True)):
        path = gpu_trace(logdir / run / "w0.1.pt.trace.json.gz", experiment=experiment)
        os.utime(path, (time.time() - 60,) * 2)
    with tensorboard(logdir, tmp=tmp_path_factory.mktemp("tb")) as tb:
        tb.wait_loaded(timeout=60)
        yield tb


def values(page, table: str, col: str) -> list[str | None]:
    loc = page.locator(f'[data-testid="{table}"] [role="cell"][data-col="{col}"]')
    return loc.evaluate_all("els => els.map(e => e.dataset.value ?? e.textContent)")


def test_diff_view(tb_diff, page, rec):
    page.goto(app_url(tb_diff, run="exp", view="Diff"))
    page.wait_for_selector('[data-testid="diff-steps-table"] [role="cell"][data-col="delta"]')
    # the baseline defaults to the other run, and the address says so
    assert "base / w0 / span 1 (GPU, 2 steps)" in page.inner_text('[data-testid="diff-baseline"]')
    assert "exp / w0 / span 1" in page.inner_text('[data-testid="diff-experiment"]')
    assert "base_run=base" in page.url and "base_worker=w0" in page.url
    # step time 1000 → 800 µs per step; Kernel 400 → 200 (the hand-computed figures of test_diff.py)
    steps = dict(
        zip(
            values(page, "diff-steps-table", "figure"), values(page, "diff-steps-table", "delta"), strict=True
        )
    )
    assert float(steps["Step time"]) == -200.0 and float(steps["Kernel"]) == -200.0
    assert page.locator('[data-testid="diff-steps-chart"] canvas').count() == 1
    assert page.locator('[data-testid="diff-waterfall-chart"] canvas').count() == 1
    # operators: sorted by |Δ device self| with the added and removed ones flagged
    assert values(page, "diff-op-table", "name") == ["aten::mm", "aten::gelu", "aten::relu"]
    assert values(page, "diff-op-table", "status") == ["both", "added", "removed"]
    page.click('[data-testid="diff-op-table"] [role="columnheader"][data-col="name"]')
    assert values(page, "diff-op-table", "name")[0] in ("aten::gelu", "aten::relu")
    page.fill('[data-testid="diff-op-table"] input[type="search"]', "relu")
    page.wait_for_function(
        "() => document.querySelectorAll('[data-testid=diff-op-table] [role=cell][data-col=name]').length === 1"
    )
    # the renamed kernel is one row
    assert values(page, "diff-kernel-table", "status") == ["renamed"]
    assert "void gemm_kernel<128, 64>(float*)" in page.inner_text('[data-testid="diff-kernel-table"]')
    # drill down: aten::mm's call stack on both sides, and its longest call in the baseline's timeline
    page.fill('[data-testid="diff-op-table"] input[type="search"]', "")
    page.click('[data-testid="diff-op-table"] [role="columnheader"][data-col="abs"]')
    page.locator('[data-testid="diff-op-table"] button.dt-toggle').first.click()
    for side in ("baseline", "experiment"):
        page.wait_for_selector(f'[data-testid="diff-stack-{side}"] >> text=model.py')
    shot(page, "diff.png")
    # the deep link survives a reload
    url = page.url
    page.reload()
    page.wait_for_selector('[data-testid="diff-steps-table"] [role="cell"][data-col="delta"]')
    assert page.url == url
    assert "base / w0" in page.inner_text('[data-testid="diff-baseline"]')
    assert rec.errors == []


def test_drill_down_to_the_baseline_timeline(tb_diff, page, rec):
    page.goto(app_url(tb_diff, run="exp", worker="w0", view="Diff", base_run="base", base_worker="w0"))
    page.wait_for_selector('[data-testid="diff-op-table"] button.dt-toggle')
    page.fill('[data-testid="diff-op-table"] input[type="search"]', "relu")  # only in the baseline
    page.locator('[data-testid="diff-op-table"] button.dt-toggle').first.click()
    assert "Not in this profile." in page.inner_text('[data-testid="diff-stack-experiment"]')
    page.click('[data-testid="diff-stack-baseline"] button')
    page.wait_for_selector('[data-testid="view"][data-view="trace"]')
    assert "run=base" in page.url and "find=op%3Aaten%3A%3Arelu" in page.url
    # the Trace view finds the longest aten::relu of the baseline and selects it
    page.wait_for_function("() => location.href.includes('sel=') && !location.href.includes('find=')")
    page.wait_for_selector('[data-testid="view"][data-view="trace"] >> text=aten::relu')
    assert rec.errors == []


def test_switching_the_baseline(tb_diff, page, rec):
    page.goto(app_url(tb_diff, run="exp", worker="w0", view="Diff", base_run="base", base_worker="w0"))
    page.wait_for_selector('[data-testid="diff-steps-table"] [role="cell"][data-col="delta"]')
    page.select_option('[data-testid="base-run"]', "exp")  # the experiment against itself: no change
    page.wait_for_function(
        "() => document.querySelector('[data-testid=diff-baseline]')?.textContent.startsWith('exp')"
    )
    page.wait_for_selector('[data-testid="diff-steps-table"] [role="cell"][data-col="delta"]')
    deltas = [float(v) for v in values(page, "diff-steps-table", "delta") if v not in (None, "–")]
    assert deltas and all(d == 0.0 for d in deltas)
    assert "base_run=exp" in page.url
    page.go_back()
    page.wait_for_function(
        "() => document.querySelector('[data-testid=diff-baseline]')?.textContent.startsWith('base')"
    )
    assert rec.errors == []


def _click_bar(page, index: int, bars: int) -> None:
    """Click the middle of waterfall bar ``index`` of ``bars`` (the chart's grid: 70 px left, 20 px
    right, 20 px top, 110 px bottom; both bars of this pair span 0 → −200 µs, the whole value axis
    below 0, so the grid's upper third is inside each)."""
    chart = page.locator('[data-testid="diff-waterfall-chart"]')
    box = chart.bounding_box()
    width = box["width"] - 90
    chart.click(position={"x": 70 + (index + 0.5) * width / bars, "y": 20 + (box["height"] - 130) / 3})


def test_waterfall_bars_drill_down(tb_diff, page, rec):
    page.goto(app_url(tb_diff, run="exp", worker="w0", view="Diff", base_run="base", base_worker="w0"))
    page.wait_for_selector('[data-testid="diff-waterfall-chart"] canvas')
    page.wait_for_load_state("networkidle")
    # bars: aten::mm (device self −200 µs per step) and the step-time change (−200 µs); no rest
    _click_bar(page, 0, 2)
    drill = page.locator('[data-testid="diff-drill"]')
    drill.wait_for()
    assert drill.get_attribute("data-focus") == "op:aten::mm" and "dfocus=op%3Aaten%3A%3Amm" in page.url
    # the operator's row, per step: device self 400 → 200 µs, no spread over the two equal steps
    row = drill.locator('tr[data-figure="device_self_us"]').inner_text().split("\t")
    assert row[0] == "Device self" and row[5] == "yes"
    assert [c.replace("\u2009", " ") for c in row[1:5]] == ["400 µs", "200 µs", "-200 µs", "0 µs"]
    for side in ("baseline", "experiment"):
        page.wait_for_selector(
            f'[data-testid="diff-drill"] [data-testid="diff-stack-{side}"] >> text=model.py'
        )
    shot(page, "diff_drill.png")
    # the deep link keeps the drill-down open
    page.reload()
    page.wait_for_selector('[data-testid="diff-drill"][data-focus="op:aten::mm"]')
    # the experiment's ▸ timeline: the Trace view on aten::mm's longest call in the experiment
    page.locator('[data-testid="diff-drill"] [data-testid="diff-stack-experiment"] button').click()
    page.wait_for_selector('[data-testid="view"][data-view="trace"]')
    # (the Trace view swaps find= for sel= once it has found the call: wait for that)
    page.wait_for_function("() => location.href.includes('sel=') && !location.href.includes('find=')")
    assert "run=exp" in page.url
    page.wait_for_selector('[data-testid="view"][data-view="trace"] >> text=aten::mm')
    page.go_back()
    # the total bar: the step-time figures; a second click on it closes the details
    page.wait_for_selector('[data-testid="diff-waterfall-chart"] canvas')
    page.wait_for_load_state("networkidle")
    _click_bar(page, 1, 2)
    page.wait_for_selector('[data-testid="diff-drill"][data-focus="total"]')
    assert "change -200" in drill.inner_text().replace("\u2009", " ")
    _click_bar(page, 1, 2)
    page.wait_for_selector('[data-testid="diff-drill"]', state="detached")
    assert rec.errors == []


def test_dark_screenshot(tb_diff, browser, rec):
    ctx = browser.new_context(color_scheme="dark", viewport={"width": 1280, "height": 900})
    try:
        pg = ctx.new_page()
        pg.goto(app_url(tb_diff, run="exp", worker="w0", view="Diff", base_run="base", base_worker="w0"))
        pg.wait_for_selector('[data-testid="diff-steps-table"] [role="cell"][data-col="delta"]')
        pg.wait_for_selector('[data-testid="diff-waterfall-chart"] canvas')
        assert pg.evaluate("document.documentElement.dataset.theme") == "dark"
        pg.wait_for_load_state("networkidle")
        shot(pg, "diff_dark.png")
    finally:
        ctx.close()


def test_renamed_kernel_drills_down_to_each_timeline(tb_diff, page, rec):
    page.goto(app_url(tb_diff, run="exp", worker="w0", view="Diff", base_run="base", base_worker="w0"))
    page.wait_for_selector('[data-testid="diff-kernel-table"] button.dt-toggle')
    page.locator('[data-testid="diff-kernel-table"] button.dt-toggle').first.click()
    # a renamed kernel has its own name on each side
    base = page.locator('[data-testid="diff-kernel-baseline"]')
    assert "void gemm_kernel<128, 64>(float*)" in base.inner_text()
    assert "void gemm_kernel<256, 32>(float*)" in page.inner_text('[data-testid="diff-kernel-experiment"]')
    base.locator("button").click()
    page.wait_for_selector('[data-testid="view"][data-view="trace"]')
    # the Trace view finds the baseline's longest launch of it and selects it (find= becomes sel=)
    page.wait_for_function("() => location.href.includes('sel=') && !location.href.includes('find=')")
    assert "run=base" in page.url
    page.wait_for_selector('[data-testid="view"][data-view="trace"] >> text=gemm_kernel<128, 64>')
    assert rec.errors == []

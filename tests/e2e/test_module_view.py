"""The Module view in chromium on samples/: resnet_like_cpu (with_modules) shows its module tree
(expand/collapse, search), the flame graph draws and zooms on click, a selected module lists its
operators and links to the timeline; the Lightning run shows its hooks; dark mode."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import app_url, shot

RESNET = {"run": "resnet_like_cpu", "worker": "worker0", "span": "1"}
LIGHTNING = {"run": "lightning_cpu/lightning_logs/version_0", "worker": "fit.training_step"}


def _rows(page) -> list[str]:
    return page.locator('[data-testid="module-row"]').evaluate_all("rs => rs.map(r => r.dataset.name)")


def _until(page, check, what: str) -> None:
    """Poll a Python check (the page's CSP forbids evaluating strings, so no wait_for_function)."""
    for _ in range(100):
        if check():
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"timed out waiting for {what}")


def _row(page, name: str):
    return page.locator(f'[data-testid="module-row"][data-name="{name}"]')


def test_tree_flame_and_operators(tb_samples, page, rec):
    _, api = tb_samples.get("modules", **RESNET)
    page.goto(app_url(tb_samples, view="Module", **RESNET))
    page.wait_for_selector('[data-testid="module-table"]')
    # the roots and their children are open at first; collapse and expand the root
    assert _rows(page)[:2] == ["SmallResNet_0", "Sequential_0"]
    _row(page, "SmallResNet_0").locator('[data-testid="module-toggle"]').click()
    assert _rows(page) == ["SmallResNet_0"]
    page.click('[data-testid="expand-all"]')
    assert len(_rows(page)) == len(api["nodes"])
    # figures are the API's
    root = next(n for n in api["nodes"] if n["parent"] < 0)
    cell = _row(page, "SmallResNet_0").locator("td[data-value]").nth(1)
    assert float(cell.get_attribute("data-value")) == pytest.approx(root["host_total_us"])
    # search by class keeps the matches and their ancestors
    page.fill('[data-testid="module-search"]', "batchnorm")
    _until(page, lambda: len(_rows(page)) == 6, "the search to filter the rows")
    assert [n for n in _rows(page) if n.startswith("BatchNorm")] == [
        "BatchNorm2d_0",
        "BatchNorm2d_1",
        "BatchNorm2d_2",
    ]
    page.fill('[data-testid="module-search"]', "")

    # the flame graph: one bar per module wide enough to draw, the root full width
    flame = page.locator('[data-testid="flame-graph"]')
    flame.locator('[data-testid="flame-bar"]').first.wait_for()
    root_bar = flame.locator(f'[data-testid="flame-bar"][data-name="{root["name"]}"]')
    assert root_bar.bounding_box()["width"] == pytest.approx(flame.bounding_box()["width"], abs=2)
    block = flame.locator('[data-testid="flame-bar"][data-name="ResidualBlock_0"]')
    before = block.bounding_box()["width"]
    block.hover()
    tip = page.locator('[data-testid="flame-tip"]')
    tip.wait_for()
    assert "ResidualBlock_0" in tip.inner_text() and "host total" in tip.inner_text()
    block.click()  # zoom: the block now spans the whole width, its parents above it
    page.wait_for_selector('[data-testid="flame-graph"]:not([data-zoom=""])')
    zoomed = flame.locator('[data-testid="flame-bar"][data-name="ResidualBlock_0"]')
    assert zoomed.bounding_box()["width"] > before * 1.5
    assert zoomed.bounding_box()["width"] == pytest.approx(flame.bounding_box()["width"], abs=2)
    assert flame.locator('[data-testid="flame-bar"][data-name="Sequential_0"]').count() == 0
    assert "mzoom=" in page.url
    shot(page, "module.png")

    # zooming selected the block: its operators are listed, inside its time
    ops = page.locator('[data-testid="module-ops"]')
    ops.wait_for()
    assert "aten::conv2d" in ops.inner_text()
    page.click('[data-testid="flame-reset"]')
    page.wait_for_selector('[data-testid="flame-graph"][data-zoom=""]')

    # step selection: one step, one occurrence of the root
    page.select_option('[data-testid="select-step"]', "3")
    first_count = page.locator('[data-testid="module-row"] td.num').first
    _until(page, lambda: first_count.get_attribute("data-value") == "1", "step 3's occurrences")

    # Show in timeline opens the Trace view on the module's event
    page.click('[data-testid="module-timeline"]')
    page.wait_for_selector('[data-testid="view"][data-view="trace"]')
    assert "view=Trace" in page.url
    assert rec.errors == []


def test_lightning_hooks(tb_samples, page, rec):
    page.goto(app_url(tb_samples, view="Module", **LIGHTNING))
    page.wait_for_selector('[data-testid="module-table"]')
    assert "encoder" in _rows(page)
    page.select_option('[data-testid="select-tree"]', "hooks")
    page.wait_for_selector('[data-testid="module-row"][data-name="run_training_batch"]')
    page.click('[data-testid="expand-all"]')
    assert "[Strategy]SingleDeviceStrategy.backward" in _rows(page)
    assert "[_TrainingEpochLoop].train_dataloader_next" in _rows(page)
    # hooks per step: the parts of each step add up to its duration, as the API says
    _, api = tb_samples.get("modules", **LIGHTNING, tree="hooks")
    steps = page.locator('[data-testid="hook-step"]')
    assert steps.count() == len(api["hook_steps"]) == 3
    first = steps.first
    duration = float(first.locator("td.num").first.get_attribute("data-value"))
    parts = [
        float(v) for v in first.locator("td[data-part]").evaluate_all("es => es.map(e => e.dataset.value)")
    ]
    assert sum(parts) == pytest.approx(duration) == pytest.approx(api["hook_steps"][0]["duration_us"])
    assert float(first.locator('td[data-part="backward"]').get_attribute("data-value")) > 0
    shot(page, "module_lightning.png")
    assert rec.errors == []


def test_dark_mode(browser, tb_samples, rec):
    ctx = browser.new_context(color_scheme="dark", viewport={"width": 1280, "height": 900})
    try:
        pg = ctx.new_page()
        pg.goto(app_url(tb_samples, view="Module", **RESNET))
        pg.wait_for_selector('[data-testid="flame-bar"]')
        assert pg.evaluate("document.documentElement.dataset.theme") == "dark"
        bg = pg.evaluate("getComputedStyle(document.querySelector('.mt-table th')).backgroundColor")
        assert bg != "rgb(246, 248, 250)"  # the light panel colour
        shot(pg, "module_dark.png")
    finally:
        ctx.close()

"""The Module view in chromium on samples/: resnet_like_cpu (with_modules) shows its module tree
(expand/collapse, search), the flame graph draws and zooms on click, a selected module lists its
operators and links to the timeline; the Lightning run shows its hooks; dark mode."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest

from tests.e2e.conftest import app_url, shot
from tests.fixtures.tensorboard_server import TensorBoard, tensorboard
from tests.fixtures.trace_builder import V100, TraceBuilder

RESNET = {"run": "resnet_like_cpu", "worker": "worker0", "span": "1"}
LIGHTNING = {"run": "lightning_cpu/lightning_logs/version_0", "worker": "perf.fit.training_step"}


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
    assert _rows(page)[:2] == ["SmallResNet_0", "SmallResNet_0.backward"]
    page.click('[data-testid="expand-all"]')
    assert len(_rows(page)) == len(api["nodes"])
    # figures are the API's
    root, back = (n for n in api["nodes"] if n["parent"] < 0)
    cell = _row(page, "SmallResNet_0").locator("td[data-value]").nth(1)
    assert float(cell.get_attribute("data-value")) == pytest.approx(root["host_total_us"])
    # the backward tree follows the forward one: SmallResNet_0.backward and its submodules' backward
    assert back["name"] == "SmallResNet_0.backward" and back["host_total_us"] > 0
    back_row = _row(page, "SmallResNet_0.backward")
    assert back_row.get_attribute("data-kind") == "backward"
    assert float(back_row.locator("td[data-value]").nth(1).get_attribute("data-value")) == pytest.approx(
        back["host_total_us"]
    )
    assert _rows(page).index("SmallResNet_0.backward") > _rows(page).index("Linear_0")
    # search by class keeps the matches and their ancestors (backward nodes keep their class)
    page.fill('[data-testid="module-search"]', "batchnorm")
    _until(page, lambda: len(_rows(page)) == 12, "the search to filter the rows")
    assert [n for n in _rows(page) if n.startswith("BatchNorm")] == [
        "BatchNorm2d_0",
        "BatchNorm2d_1",
        "BatchNorm2d_2",
        "BatchNorm2d_0.backward",
        "BatchNorm2d_1.backward",
        "BatchNorm2d_2.backward",
    ]
    page.fill('[data-testid="module-search"]', "")

    # the flame graph: one bar per module wide enough to draw, the forward and backward roots side by
    # side, each as wide as its share of their host totals
    flame = page.locator('[data-testid="flame-graph"]')
    flame.locator('[data-testid="flame-bar"]').first.wait_for()
    width = flame.bounding_box()["width"]
    root_bar = flame.locator(f'[data-testid="flame-bar"][data-name="{root["name"]}"]')
    back_bar = flame.locator(f'[data-testid="flame-bar"][data-name="{back["name"]}"]')
    share = root["host_total_us"] / (root["host_total_us"] + back["host_total_us"])
    assert root_bar.bounding_box()["width"] == pytest.approx(width * share, abs=2)
    assert back_bar.get_attribute("data-kind") == "backward"
    assert back_bar.bounding_box()["x"] == pytest.approx(root_bar.bounding_box()["x"] + width * share, abs=2)
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
    assert flame.locator('[data-testid="flame-bar"][data-name="SmallResNet_0.backward"]').count() == 0
    assert "mzoom=" in page.url
    shot(page, "module.png")

    # zooming selected the block: its operators are listed, inside its time
    ops = page.locator('[data-testid="module-ops"]')
    ops.wait_for()
    assert "aten::conv2d" in ops.inner_text()
    page.click('[data-testid="flame-reset"]')
    page.wait_for_selector('[data-testid="flame-graph"][data-zoom=""]')

    # a backward node lists its backward functions, and has nothing to find in the timeline
    _row(page, "Conv2d_0.backward").click()
    _until(page, lambda: "ConvolutionBackward0" in ops.inner_text(), "the backward node's operators")
    assert "aten::conv2d" not in ops.inner_text()
    assert page.locator('[data-testid="module-timeline"]').count() == 0
    _row(page, "ResidualBlock_0").click()
    page.locator('[data-testid="module-timeline"]').wait_for()

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


@pytest.fixture(scope="module")
def tb_gpu_modules(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    """A built GPU trace with modules: Net_0 = Encoder_0 (host 600, device 300) + Head_0 (host 100,
    device 500): host and device widths differ."""
    b = TraceBuilder(device_properties=[V100])
    b.step(1, 0, 1000)
    b.python_function("nn.Module: Net_0", 100, 800, py_id=1, parent_id=None, module_id=0)
    b.python_function("nn.Module: Encoder_0", 110, 600, py_id=2, parent_id=1, module_id=0)
    b.launch("enc_kernel", 120, 5, 150, 300)
    b.python_function("nn.Module: Head_0", 750, 100, py_id=3, parent_id=1, module_id=0)
    b.launch("head_kernel", 760, 5, 800, 500)
    root = tmp_path_factory.mktemp("gpu_modules")
    path = b.write(root / "gpu" / "w0.1.pt.trace.json.gz")
    os.utime(path, (time.time() - 60,) * 2)
    with tensorboard(root, tmp=tmp_path_factory.mktemp("tb")) as tb:
        tb.wait_loaded()
        yield tb


def test_device_time_switch(tb_gpu_modules, page, rec):
    page.goto(app_url(tb_gpu_modules, run="gpu", worker="w0", view="Module"))
    page.wait_for_selector('[data-testid="module-row"][data-name="Head_0"]')
    head = _row(page, "Head_0")
    values = [
        float(v) for v in head.locator("td[data-value]").evaluate_all("es => es.map(e => e.dataset.value)")
    ]
    assert values[:5] == [1, 100, 100, 500, 500]  # occurrences, host total/self, device total/self
    flame = page.locator('[data-testid="flame-graph"]')

    def width(name: str) -> float:
        return flame.locator(f'[data-testid="flame-bar"][data-name="{name}"]').bounding_box()["width"]

    full = flame.bounding_box()["width"]
    assert width("Encoder_0") == pytest.approx(full * 600 / 800, abs=2)  # host: 600 of Net_0's 800
    page.select_option('[data-testid="select-metric"]', "device")
    _until(page, lambda: abs(width("Head_0") - full * 500 / 800) < 2, "device widths")
    assert width("Encoder_0") == pytest.approx(full * 300 / 800, abs=2)
    assert "mmetric=device" in page.url
    assert rec.errors == []


def test_overview_says_how_to_record_modules(tb_samples, page, rec):
    page.goto(app_url(tb_samples, run="plain_no_steps", view="Overview"))
    page.wait_for_selector('[data-testid="module-hint"]')
    assert "with_modules=True" in page.locator('[data-testid="module-hint"]').inner_text()
    page.goto(app_url(tb_samples, view="Overview", **RESNET))
    page.wait_for_selector('[data-testid="step-breakdown"]')
    assert page.locator('[data-testid="module-hint"]').count() == 0
    assert rec.errors == []


def test_a_tree_or_step_the_profile_lacks_falls_back(tb_samples, page, rec):
    page.goto(app_url(tb_samples, view="Module", mtree="hooks", mstep="99", **RESNET))
    page.wait_for_selector('[data-testid="module-row"][data-name="SmallResNet_0"]')
    assert "mtree=" not in page.url and "mstep=" not in page.url
    assert rec.errors == []

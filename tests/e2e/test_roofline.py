"""The Roofline view in chromium on the shared bert-small pair (H100, MI300X): it is listed, draws its
points under the device's roofs, a click on a row selects it, ▸ timeline goes to the Trace view, the
Overview's device card shows MFU; light and dark screenshots for docs/user_guide.md."""

from __future__ import annotations

import math
import shutil
from collections.abc import Iterator

import pytest

from tests.e2e.conftest import app_url, shot
from tests.fixtures.paths import SHARED_TRACES
from tests.fixtures.tensorboard_server import TensorBoard, tensorboard

BERT = "gaunernst_bert-small-uncased__1016001.pt.trace.json.gz"
H100 = {"run": "h100", "worker": "gaunernst_bert-small-uncased"}


@pytest.fixture(scope="module")
def tb_bert(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    src = SHARED_TRACES / "tracelens"
    if not (src / "h100_bert_small" / BERT).exists():
        pytest.skip("../shared/traces/tracelens is optional")
    logdir = tmp_path_factory.mktemp("bert")
    for run, folder in (("h100", "h100_bert_small"), ("mi300x", "mi300_bert_small")):
        (logdir / run).mkdir()
        shutil.copy(src / folder / BERT, logdir / run / BERT)
    with tensorboard(logdir, tmp=tmp_path_factory.mktemp("tb")) as tb:
        tb.wait_loaded(timeout=180)
        yield tb


def _params(tb: TensorBoard, run: str) -> dict[str, str]:
    worker = tb.get("workers", run=run)[1][0]
    return {"run": run, "worker": worker}


def test_roofline_draws_selects_and_links(tb_bert, page, rec):
    params = _params(tb_bert, "h100")
    assert "Roofline" in tb_bert.get("views", run="h100")[1]
    _, api = tb_bert.get("roofline", **params, limit=5000)
    assert api["device"]["matched_peak_name"] == "H100 SXM"
    page.goto(app_url(tb_bert, view="Roofline", **params))
    plot = page.wait_for_selector('[data-testid="roofline-plot"]')
    page.wait_for_selector('[data-testid="roofline-chart"] canvas')
    # one roof per dtype with a peak among the rows (bf16 here; the fp32 rows add theirs), points for
    # every row with FLOPs and bytes
    dtypes = {r["peak_dtype"] for r in api["rows"] if r["peak_dtype"] in api["device"]["peaks"]}
    assert int(plot.get_attribute("data-roofs")) == len(dtypes) >= 1
    drawn = [r for r in api["rows"] if r["intensity"] and r["tflops_per_s"]]
    assert int(plot.get_attribute("data-points")) == len(drawn) > 0
    assert page.inner_text('[data-testid="roof-matched"]').startswith("H100 SXM")
    # the table is sorted by time lost; a click selects its row and shows its figures
    first = page.locator('[data-testid="roofline-table"] [role="row"].dt-row').first
    lost = first.locator('[data-col="lost"]').get_attribute("data-value")
    assert float(lost) == pytest.approx(api["rows"][0]["time_lost_us"])
    first.click()
    assert first.get_attribute("aria-selected") == "true"
    assert api["rows"][0]["name"] in page.inner_text('[data-testid="roof-selected"]')
    shot(page, "roofline.png")
    # a click on the chart's largest point selects its row: its pixel from the log axes (x from the
    # view's own bounds, y from ECharts' power-of-ten bounds around the data and the roof)
    big = max(drawn, key=lambda r: r["device_us"])
    xs = [r["intensity"] for r in drawn]
    ridge = max(api["ridge"].values())
    lo, hi = min(0.1, *xs) / 2, max(1000, *xs, ridge) * 2
    y_lo = 10 ** math.floor(math.log10(lo * api["device"]["tb_per_s"]))
    y_hi = 10 ** math.ceil(math.log10(max(api["device"]["peaks"][d] for d in dtypes)))
    box = page.locator('[data-testid="roofline-chart"]').bounding_box()
    left, right, top, bottom = 70, 30, 36, 50
    fx = (math.log10(big["intensity"]) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
    fy = (math.log10(big["tflops_per_s"]) - math.log10(y_lo)) / (math.log10(y_hi) - math.log10(y_lo))
    x = box["x"] + left + fx * (box["width"] - left - right)
    y = box["y"] + top + (1 - fy) * (box["height"] - top - bottom)
    page.mouse.click(x, y)
    selected = page.locator('[data-testid="roof-selected"]')
    for _ in range(50):
        if big["input_dims"] in selected.inner_text():
            break
        page.wait_for_timeout(100)
    assert big["name"] in selected.inner_text() and big["input_dims"] in selected.inner_text()
    # subtree totals: wrappers (aten::linear) show their leaves' work
    page.select_option('[data-testid="select-rby"]', "ops_total")
    page.wait_for_selector('section[data-testid="roofline-rows"] h2 >> text=subtree totals')
    page.wait_for_selector(
        '[data-testid="roofline-table"] [role="cell"][data-col="name"] >> text=aten::linear'
    )
    # kernels, then ▸ timeline to the Trace view
    page.select_option('[data-testid="select-rby"]', "kernels")
    page.wait_for_selector(
        '[data-testid="roofline-table"] [role="columnheader"][data-col="name"] >> text=Kernel'
    )
    page.locator('[data-testid="roofline-table"] [data-testid="show-in-timeline"]').first.click()
    page.wait_for_selector('[data-testid="view"][data-view="trace"]')
    assert rec.errors == []


def test_overview_card_shows_mfu_and_unknown_stays_absolute(tb_bert, page, rec):
    params = _params(tb_bert, "mi300x")
    page.goto(app_url(tb_bert, view="Overview", **params))
    mfu = page.wait_for_selector('[data-testid="gpu-mfu"]')
    _, api = tb_bert.get("roofline", **params, limit=1)
    assert api["device"]["matched_peak_name"] == "MI300X"
    assert float(mfu.get_attribute("data-value")) == pytest.approx(100 * api["mfu"]["mean"])
    assert rec.errors == []


def test_dark_screenshot(tb_bert, browser, rec):
    ctx = browser.new_context(color_scheme="dark", viewport={"width": 1280, "height": 900})
    try:
        pg = ctx.new_page()
        pg.goto(app_url(tb_bert, view="Roofline", **_params(tb_bert, "mi300x")))
        pg.wait_for_selector('[data-testid="roofline-chart"] canvas')
        assert pg.evaluate("document.documentElement.dataset.theme") == "dark"
        pg.wait_for_load_state("networkidle")
        shot(pg, "roofline_dark.png")
    finally:
        ctx.close()

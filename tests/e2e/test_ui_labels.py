"""What a new user trips over (issue 16): colours tied to categories across runs, readable pie legends,
the default worker is one that loaded, the selection survives a reload inside TensorBoard, a link to a
run that does not exist says so, devices are named by their kind, no favicon request."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import app_url
from tests.e2e.test_app_samples import app_frame
from tests.fixtures.tensorboard_server import TensorBoard, tensorboard
from tests.fixtures.trace_builder import TraceBuilder

LONG = [
    "aten::cudnn_convolution_backward_input_nchw_implicit_gemm",
    "aten::cudnn_convolution_backward_weight_nchw_implicit_gemm",
    "aten::cudnn_convolution_backward_bias_nchw_implicit_gemm",
]
GREY = "#9e9e9e"


def _run(path: Path, names: list[str], gpu: bool = False) -> None:
    """Two steps of operators; with gpu=True the first one launches a kernel (a GPU trace, whose
    breakdown has more categories in front of CPU Exec)."""
    b = TraceBuilder()
    for step in (1, 2):
        t = (step - 1) * 10_000.0
        b.step(step, t, 9_000)
        b.op("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", t + 10, 500)
        for i, name in enumerate(names):
            ext = b.op(name, t + 1000 + 600 * i, 100 + 50 * i)
            if gpu and i == 0:
                b.launch("volta_sgemm_128x64_nn", t + 1010, 10, t + 1100, 2000, ext_id=ext)
    b.write(path)


def _mtia_run(path: Path) -> None:
    b = TraceBuilder(device_properties=[{"id": 9, "name": None}])
    b.step(1, 0, 100)
    b.op("aten::mm", 10, 20, ext_id=1)
    b.raw({"ph": "X", "cat": "mtia_runtime", "name": "launch", "pid": b.pid, "tid": b.tid,
           "ts": b.base_ts + 12, "dur": 2, "args": {"correlation": 7, "External id": 1}})  # fmt: skip
    b.raw({"ph": "X", "cat": "mtia_ccp_events", "name": "fused_mm", "pid": 9, "tid": 1,
           "ts": b.base_ts + 40, "dur": 30, "args": {"correlation": 7, "External id": 1, "device": 9}})  # fmt: skip
    b.write(path)


def _rocm_run(path: Path) -> None:
    """MI300: 30 µs of an XDLOPS implicit GEMM (Matrix Cores), 20 µs of Triton (name does not say), 50 µs of
    an ATen elementwise kernel (not)."""
    b = TraceBuilder(device_properties=[{"id": 0, "name": "AMD Instinct MI300X", "totalGlobalMem": 2**36}])
    b.step(1, 0, 200)
    b.op("aten::convolution", 1, 150, ext_id=1)
    start = 10.0
    for i, (name, dur) in enumerate(
        [("igemm_fwd_gtcx2_nhwc_bf16_bx0_ex1_bt128x128x32_wt32x32x8", 30), ("triton_poi_fused_add_0", 20),
         ("void at::native::vectorized_elementwise_kernel<4>(int)", 50)]
    ):  # fmt: skip
        b.launch(name, 2 + i, 1, start, dur, ext_id=1, runtime_name="hipLaunchKernel")
        start += dur
    b.write(path)


def _lost_run(path: Path) -> None:
    """Three kernel launches and not one device record (CUPTI activity lost)."""
    b = TraceBuilder(device_properties=[{"id": 0, "name": "NVIDIA A100-SXM4-80GB"}])
    b.step(1, 0, 1000)
    for i in range(3):
        b.op("aten::add", 10 + 100 * i, 50, ext_id=i + 1)
        b.runtime("cudaLaunchKernel", 20 + 100 * i, 30, ext_id=i + 1)
    b.write(path)


@pytest.fixture(scope="module")
def tb_ui(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    logdir = tmp_path_factory.mktemp("ui")
    _run(logdir / "a_long_names" / "w0.pt.trace.json", [*LONG, *(f"aten::op{i}" for i in range(12))])
    _run(logdir / "b_other" / "w0.pt.trace.json", ["aten::add", "aten::mul"], gpu=True)
    (logdir / "c_mixed").mkdir()
    (logdir / "c_mixed" / "a_broken.pt.trace.json").write_text("this is not a trace")
    _run(logdir / "c_mixed" / "b_good.pt.trace.json", ["aten::add"])
    _mtia_run(logdir / "d_mtia" / "w0.pt.trace.json")
    _rocm_run(logdir / "e_rocm" / "w0.pt.trace.json")
    _lost_run(logdir / "f_lost" / "w0.pt.trace.json")
    with tensorboard(logdir, tmp=tmp_path_factory.mktemp("tb")) as tb:
        tb.wait_loaded(timeout=120)
        yield tb


def legend(page_or_frame, testid: str) -> list[tuple[str, str, str, str]]:
    """(full name, colour, shown text, hover title) of each legend entry of a pie."""
    sel = f'[data-testid="{testid}"] [data-testid="legend-item"]'
    page_or_frame.wait_for_selector(sel)
    return page_or_frame.locator(sel).evaluate_all(
        "els => els.map(e => [e.dataset.name, e.dataset.color, e.querySelector('.pie-name-tail')?.textContent ?? "
        "e.querySelector('.pie-name').textContent, e.title])"
    )


def test_category_colours_are_the_same_in_every_run(tb_ui, page, rec):
    colours: dict[str, dict[str, str]] = {}
    for run in ("a_long_names", "b_other"):
        page.goto(app_url(tb_ui, run=run, view="Overview"))
        entries = legend(page, "summary-pie")
        colours[run] = {name: colour for name, colour, _, _ in entries}
        assert len(set(colours[run].values())) == len(entries), "one colour per slice"
        assert colours[run]["Other"] == GREY
    # the runs show different category sets (Kernel… only in the GPU run), same colour per category
    assert "Kernel" in colours["b_other"] and "Kernel" not in colours["a_long_names"]
    common = set(colours["a_long_names"]) & set(colours["b_other"])
    assert common >= {"CPU Exec", "DataLoader", "Other"}
    for name in common:
        assert colours["a_long_names"][name] == colours["b_other"][name], name
    assert rec.errors == []


def test_pie_legend_tells_long_names_apart(tb_ui, page, rec):
    page.goto(app_url(tb_ui, run="a_long_names", view="Operator", top="20"))
    entries = legend(page, "pie-host_self_us")
    by_name = {name: (colour, shown, title) for name, colour, shown, title in entries}
    for name in LONG:
        _, shown, title = by_name[name]
        assert title.startswith(name)  # the full name on hover
        assert name.endswith(shown)  # the kept tail (tests/e2e/test_overview_labels.py: never cut)
    assert len({by_name[n][1] for n in LONG}) == 3  # the kept tails differ
    colours = [colour for _, colour, _, _ in entries]
    assert len(set(colours)) == len(colours)  # distinct colours, also beyond the 10th slice
    assert rec.errors == []


def test_default_worker_is_one_that_loaded(tb_ui, page, rec):
    page.goto(app_url(tb_ui, run="c_mixed"))
    page.wait_for_selector('[data-testid="view"][data-view="overview"] [data-testid="step-breakdown"]')
    assert page.input_value('[data-testid="select-worker"]') == "b_good"
    labels = page.locator('[data-testid="select-worker"] option').evaluate_all(
        "os => os.map(o => [o.value, o.textContent])"
    )
    assert ["a_broken", "a_broken (failed to load)"] in labels
    assert page.locator('[data-testid="error"]').count() == 0
    assert rec.errors == []


def test_link_to_a_missing_run_says_so(tb_ui, page, rec):
    page.goto(app_url(tb_ui, run="no_such_run", view="Operator"))
    notice = page.locator('[data-testid="link-notice"]')
    notice.wait_for()
    assert "“no_such_run” does not exist" in notice.inner_text()
    assert page.input_value('[data-testid="select-run"]') == "a_long_names"
    page.goto(app_url(tb_ui, run="c_mixed", worker="ghost"))
    page.wait_for_selector('[data-testid="link-notice"]')
    assert "worker “ghost”" in page.inner_text('[data-testid="link-notice"]')
    assert rec.errors == []


def test_reload_inside_tensorboard_keeps_the_selection(tb_ui, page, rec):
    page.goto(f"{tb_ui.url}/#pytorch_profiler")
    frame = app_frame(page)
    frame.wait_for_selector('[data-testid="select-run"]')
    frame.select_option('[data-testid="select-run"]', "b_other")
    frame.wait_for_selector('[data-testid="select-view"]')
    frame.select_option('[data-testid="select-view"]', "Operator")
    frame.wait_for_selector('[data-testid="view"][data-view="operator"] [data-testid="op-table"]')
    page.wait_for_function(
        "() => location.hash.includes('run=b_other') && location.hash.includes('view=Operator')"
    )
    assert page.url.split("#", 1)[1].startswith("pytorch_profiler&")
    old = frame
    page.reload()
    page.wait_for_function("() => document.readyState === 'complete'")
    for _ in range(100):  # the old frame may still be listed for a moment
        frame = app_frame(page)
        if frame is not old and not frame.is_detached():
            break
        page.wait_for_timeout(100)
    frame.wait_for_selector('[data-testid="view"][data-view="operator"] [data-testid="op-table"]')
    assert frame.input_value('[data-testid="select-run"]') == "b_other"
    assert rec.errors == []


def test_mtia_is_named_by_its_kind(tb_ui, page, rec):
    page.goto(app_url(tb_ui, run="d_mtia", view="Overview"))
    page.wait_for_selector('[data-testid="gpu-card"]')
    assert page.inner_text('[data-testid="device-type"]').startswith("MTIA")
    assert page.inner_text('[data-testid="gpu-title"]') == "MTIA 9"
    # SM efficiency and occupancy are CUPTI (CUDA) figures: an MTIA card has no such rows
    assert page.locator('[data-testid="gpu-sm-efficiency"]').count() == 0
    assert page.locator('[data-testid="gpu-occupancy"]').count() == 0
    assert page.locator('[data-testid="gpu-tc"]').count() == 0  # no tensor-core share to claim
    assert page.locator('[data-testid="gpu-cc"]').count() == 0
    assert "GPU" not in page.inner_text('[data-testid="gpu-summary"]')
    views = page.locator('[data-testid="select-view"] option').all_inner_texts()
    assert "Kernel" in views and "GPU Kernel" not in views
    # the operator table has device columns but no tensor-core columns for a device without a rule
    page.goto(app_url(tb_ui, run="d_mtia", view="Operator"))
    page.wait_for_selector(
        '[data-testid="op-table"] [role="columnheader"][data-col="device_self"]', timeout=60_000
    )
    assert page.locator('[data-testid="op-table"] [role="columnheader"][data-col="tc_self"]').count() == 0
    # the standalone page asks nobody for /favicon.ico
    assert not [u for u in rec.requests if u.endswith("/favicon.ico")]
    assert rec.errors == []


def test_rocm_says_matrix_cores_and_gives_a_lower_bound(tb_ui, page, rec):
    page.goto(app_url(tb_ui, run="e_rocm", view="Overview"))
    page.wait_for_selector('[data-testid="gpu-card"]')
    card = page.locator('[data-testid="gpu-card"]').first
    assert float(card.locator('[data-testid="gpu-tc"]').get_attribute("data-value")) == pytest.approx(30.0)
    assert float(card.locator('[data-testid="gpu-tc-unknown"]').get_attribute("data-value")) == pytest.approx(
        20.0
    )
    assert "Matrix Cores (at least)" in card.inner_text()
    assert card.locator('[data-testid="gpu-sm-efficiency"]').count() == 0
    assert not re.search(r"\bSM\b|Tensor", card.inner_text())
    page.goto(app_url(tb_ui, run="e_rocm", view="Operator"))
    header = '[data-testid="op-table"] [role="columnheader"][data-col="tc_self"]'
    page.wait_for_selector(header, timeout=60_000)
    assert page.inner_text(header).startswith("MC")
    assert rec.errors == []


def test_lost_device_activity_is_said(tb_ui, page, rec):
    page.goto(app_url(tb_ui, run="f_lost", view="Overview"))
    note = page.wait_for_selector('[data-testid="lost-device-activity"]')
    assert note.inner_text().startswith("3 launches have no device activity in this trace")
    assert page.locator('[data-testid="recommendation"]').count() == 0
    assert rec.errors == []


def _no_overflow(page, selector: str, axes: str = "xy") -> list[str]:
    """The elements matching selector whose content is cut (scrolls) along the given axes."""
    return page.locator(selector).evaluate_all(
        "(els, axes) => els.filter(e => (axes.includes('x') && e.scrollWidth > e.clientWidth + 1)"
        " || (axes.includes('y') && e.scrollHeight > e.clientHeight + 1))"
        ".map(e => e.closest('[data-testid]')?.dataset.testid + ': ' + e.textContent.slice(0, 40))",
        axes,
    )


def test_kernel_table_fits_1400_px_and_headers_keep_their_words(tb_ui, browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    page = ctx.new_page()
    page.goto(app_url(tb_ui, run="b_other", view="Kernel", kgroup="detailed"))
    page.wait_for_selector('[data-testid="kernel-table"] [role="cell"][data-col="regs"]')
    scroll = page.locator('[data-testid="kernel-table"] .dt-scroll')
    assert scroll.evaluate("e => e.scrollWidth <= e.clientWidth + 1"), "no column hidden sideways"
    # "Regs/thread" and every other header wraps between words only, never inside one
    assert _no_overflow(page, '[data-testid="kernel-table"] [role="columnheader"]') == []
    ctx.close()


def test_small_tables_show_every_row_at_800_px(tb_samples, browser):
    ctx = browser.new_context(viewport={"width": 800, "height": 900})
    page = ctx.new_page()
    page.goto(app_url(tb_samples, run="ddp_gloo_2ranks", view="Distributed"))
    page.wait_for_selector('[data-testid="groups-table"] [role="cell"]')
    page.wait_for_selector('[data-testid="comm-table"] [role="cell"]')
    page.wait_for_timeout(300)  # the virtualizer measures the grown tables
    # headers wrap to several lines at this width: tables of a few rows grow instead of cutting rows
    # (wide tables scroll sideways and long ones down, by design)
    cut = page.locator(".dt").evaluate_all(
        "els => els.filter(t => parseInt(t.querySelector('[data-testid=row-count]').textContent) <= 15)"
        ".map(t => t.querySelector('.dt-scroll'))"
        ".filter(e => e.scrollHeight > e.clientHeight + 1).map(e => e.closest('[data-testid]').dataset.testid)"
    )
    assert page.locator(".dt-scroll").count() >= 2
    assert cut == []
    ctx.close()


def test_recommendation_evidence_is_a_readable_table(tb_ui, page, rec):
    _, api = tb_ui.get("overview", run="b_other", worker="w0")
    assert api["recommendations"], "the GPU run should trigger a recommendation"
    page.goto(app_url(tb_ui, run="b_other", view="Overview"))
    page.wait_for_selector('[data-testid="device-type"]')
    assert page.inner_text('[data-testid="device-type"]').startswith("GPU (CUDA)")
    first = page.locator('[data-testid="recommendation"]').first
    first.locator("summary", has_text="Evidence").click()
    table = first.locator('[data-testid="evidence"]')
    rows = table.locator("tr").evaluate_all(
        "trs => trs.map(t => [t.cells[0].textContent, t.cells[1].textContent])"
    )
    assert rows, "one row per figure"
    text = " ".join(v for _, v in rows)
    assert re.search(r"\d(\.\d{1,2})? ?(%|µs|ms|s)\b", text), text  # numbers with units
    assert not re.search(r"\d\.\d{4,}", text), text  # no raw 16-digit floats
    assert "{" not in text
    assert rec.errors == []

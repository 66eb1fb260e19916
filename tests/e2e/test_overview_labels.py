"""Overview and pies in chromium (issue 24, item 20): configuration keys by human labels, evidence with
units and totals named as totals, operator pies by self time (a parent and its child are not both
counted), legends that keep what tells two long names apart, memory tooltips with units.

Hand-made traces (µs from the profile start):
- ``nested`` (CPU): steps 1 and 2 of 1000; in each, ``outer`` [100, 400) holds ``inner`` [150, 350),
  ``other`` [500, 600), DataLoader [10, 70) (not an operator row). Host self time per step: inner 200,
  outer 100, other 100 → inner 50 %, outer and other 25 % each of the 400 µs of self time. (Total time
  would give outer 300 + inner 200 + other 100: the parent and its child both counted, outer 50 %.)
- ``gpu_cfg`` (GPU): distributedInfo (nccl, rank 0 of 2, 1 group), cupti_version 28; per step a
  pageable copy of 4 MiB taking 300 µs of the 1000 µs step (→ the pageable-copies recommendation).
- ``long_names``: two ops whose long names differ only in the last character.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.conftest import app_url
from tests.fixtures.tensorboard_server import TensorBoard, tensorboard
from tests.fixtures.trace_builder import V100, TraceBuilder

PREFIX = "aten::cudnn_convolution_backward_input_nchw_implicit_gemm_variant_"
TWINS = [PREFIX + "1", PREFIX + "2"]


def _nested(path) -> None:
    b = TraceBuilder()
    for step in (1, 2):
        t = (step - 1) * 1000.0
        b.step(step, t, 1000)
        b.op("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", t + 10, 60)
        b.op("outer", t + 100, 300)
        b.op("inner", t + 150, 200)
        b.op("other", t + 500, 100)
    b.write(path)


def _gpu_cfg(path) -> None:
    info = {"backend": "nccl", "rank": 0, "world_size": 2, "pg_count": 1}
    b = TraceBuilder(device_properties=[V100], distributed_info=info, extra_top={"cupti_version": 28})
    for step in (1, 2):
        t = (step - 1) * 1000.0
        b.step(step, t, 1000)
        ext = b.op("aten::copy_", t + 10, 400)
        corr = b.runtime("cudaMemcpyAsync", t + 20, 5, ext_id=ext)
        b.memcpy("Memcpy HtoD (Pageable -> Device)", t + 100, 300, corr, 4 * 2**20, ext_id=ext)
        b.launch("volta_sgemm_128x64_nn", t + 420, 10, t + 450, 100)
    b.write(path)


def _long_names(path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 1000)
    b.op(TWINS[0], 100, 300)
    b.op(TWINS[1], 500, 200)
    b.op("aten::mm", 800, 100)
    b.write(path)


def _mem(path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 1000)
    b.op("aten::empty", 190, 20)
    b.memory(200, 2**20, 0x1000, 2**20, 2**21)
    b.op("aten::add", 400, 100)
    b.memory(800, -(2**20), 0x1000, 0, 2**21)
    b.write(path)


@pytest.fixture(scope="module")
def tb_ov(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    logdir = tmp_path_factory.mktemp("overview_labels")
    for run, make in (("nested", _nested), ("gpu_cfg", _gpu_cfg), ("long_names", _long_names), ("mem", _mem)):
        (logdir / run).mkdir()
        make(logdir / run / "w0.pt.trace.json")
    with tensorboard(logdir, tmp=tmp_path_factory.mktemp("tb")) as tb:
        tb.wait_loaded(timeout=60)
        yield tb


def _legend(page, testid: str) -> dict[str, str]:
    sel = f'[data-testid="{testid}"] [data-testid="legend-item"]'
    page.wait_for_selector(sel)
    return dict(
        page.locator(sel).evaluate_all(
            "els => els.map(e => [e.dataset.name, e.querySelector('.pie-share').textContent])"
        )
    )


def test_operator_pies_count_self_time_once(tb_ov, page, rec):
    page.goto(app_url(tb_ov, run="nested", view="Operator"))
    shares = _legend(page, "pie-host_self_us")
    assert shares == {"inner": "50.0 %", "outer": "25.0 %", "other": "25.0 %"}
    assert "self time" in page.inner_text('[data-testid="pie-host_self_us"] figcaption').lower()
    # no inclusive-time pie: a parent and its child would both be counted there
    assert page.locator('[data-testid="pie-host_total_us"]').count() == 0
    assert "total time" not in page.inner_text('[data-testid="operator-pies"]').lower()
    assert rec.errors == []


def test_configuration_labels_and_evidence_units(tb_ov, page, rec):
    page.goto(app_url(tb_ov, run="gpu_cfg", view="Overview"))
    page.wait_for_selector('[data-testid="config-cupti_version"]')
    labels = {
        k: page.inner_text(f'[data-testid="config-{k}"] .stat-label')
        for k in ("cupti_version", "schemaVersion", "world_size", "pg_count", "backend")
    }
    assert labels == {
        "cupti_version": "CUPTI version",
        "schemaVersion": "Trace schema version",
        "world_size": "World size",
        "pg_count": "Process groups",
        "backend": "Distributed backend",
    }
    item = page.locator('[data-testid="recommendation"][data-id="pageable_memcpy"]')
    item.locator("summary", has_text="Evidence").click()
    rows = dict(
        item.locator('[data-testid="evidence"] tr').evaluate_all(
            "trs => trs.map(t => [t.cells[0].textContent, t.cells[1].textContent.trim()])"
        )
    )
    # 2 copies of 4 MiB, 300 µs each, in 2 steps of 1000 µs: totals named as totals, with units
    assert rows["Pageable copies (total)"] == "2"
    assert rows["Total size copied"].replace("\u00a0", " ") in ("8.0 MiB", "8.00 MiB", "8 MiB")
    assert rows["Total copy time in steps"] == "600 µs"
    assert rows["Share of step time"] == "30 %"
    assert rec.errors == []


def test_legend_keeps_the_tail_that_tells_names_apart(tb_ov, page, rec):
    page.set_viewport_size({"width": 900, "height": 900})  # a narrow legend column
    page.goto(app_url(tb_ov, run="long_names", view="Operator"))
    sel = '[data-testid="pie-host_self_us"] [data-testid="legend-item"]'
    page.wait_for_selector(sel)
    entries = page.locator(sel).evaluate_all(
        """els => els.map(e => {
            const name = e.querySelector('.pie-name'), head = e.querySelector('.pie-name-head'),
                  tail = e.querySelector('.pie-name-tail');
            return {full: e.dataset.name, title: e.title, tail: tail ? tail.textContent : null,
                    tailWhole: tail ? tail.scrollWidth <= tail.clientWidth + 1 : null,
                    headCut: head.scrollWidth > head.clientWidth + 1,
                    fits: name.scrollWidth <= name.clientWidth + 1};
        })"""
    )
    twins = [e for e in entries if e["full"] in TWINS]
    assert len(twins) == 2
    for e in twins:
        assert e["title"].startswith(e["full"])  # the full name on hover
        assert e["headCut"] and e["tailWhole"]  # cut in the head; the distinguishing tail is whole
        assert e["full"].endswith(e["tail"])
    assert twins[0]["tail"] != twins[1]["tail"]
    assert rec.errors == []


def test_memory_tooltip_says_its_units(tb_ov, page, rec):
    page.goto(app_url(tb_ov, run="mem", view="Memory"))
    chart = page.locator('[data-testid="memory-chart"]')
    chart.wait_for()
    page.wait_for_timeout(300)  # the chart lays out
    box = chart.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.wait_for_function("() => !!document.querySelector('[data-testid=\"memory-chart\"]').dataset.tooltip")
    tip = chart.get_attribute("data-tooltip").replace("\u00a0", " ")
    lines = tip.split("\n")
    # the time with its unit, then each series as a size (1 MiB allocated from 200 µs, freed at 800 µs)
    assert lines[0].startswith("at ") and lines[0].endswith(("µs", "ms", "s")), tip
    assert lines[1].startswith("Allocated: ") and lines[1].endswith(("B", "KiB", "MiB", "GiB")), tip
    assert lines[2].startswith("Reserved: ") and lines[2].endswith(("B", "KiB", "MiB", "GiB")), tip
    assert rec.errors == []

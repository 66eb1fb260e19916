"""Every view on a real GPU trace (V100, PyTorch 1.9) and a 2-rank NCCL job: the numbers shown are the
API's numbers."""

from __future__ import annotations

import gzip
import json
import urllib.error
import urllib.request

import pytest

from tests.e2e.conftest import app_url, shot

RUN = "resnet50_v100"


def cells(page, table: str, col: str) -> list[float]:
    """data-value of one column's rendered cells (only the visible, virtualized rows)."""
    loc = page.locator(f'[data-testid="{table}"] [role="cell"][data-col="{col}"]')
    return [float(v) for v in loc.evaluate_all("els => els.map(e => e.dataset.value)")]


def texts(page, table: str, col: str) -> list[str]:
    return page.locator(f'[data-testid="{table}"] [role="cell"][data-col="{col}"]').all_inner_texts()


def test_overview(tb_gpu, page, rec):
    status, api = tb_gpu.get("overview", run=RUN, worker="worker0")
    assert status == 200
    page.goto(app_url(tb_gpu, run=RUN, view="Overview"))
    page.wait_for_selector('[data-testid="gpu-card"]')
    gpu = api["gpus"][0]
    card = page.locator('[data-testid="gpu-card"]').first
    assert gpu["name"] in card.inner_text()
    for testid, key in [
        ("gpu-utilization", "utilization_pct"),
        ("gpu-sm-efficiency", "sm_efficiency_pct"),
        ("gpu-occupancy", "achieved_occupancy_pct"),
        ("gpu-tc", "tensor_core_pct"),
    ]:
        assert float(card.locator(f'[data-testid="{testid}"]').get_attribute("data-value")) == pytest.approx(
            gpu[key]
        )
    assert float(page.get_attribute('[data-testid="step-time"]', "data-value")) == pytest.approx(
        api["step_time_us"]
    )
    assert int(page.get_attribute('[data-testid="step-count"]', "data-value")) == len(api["steps"])
    # execution summary: per-step mean µs and share of the step, per category, as the API says
    shown_us = dict(
        zip(texts(page, "summary-table", "category"), cells(page, "summary-table", "us"), strict=True)
    )
    shown_pct = dict(
        zip(texts(page, "summary-table", "category"), cells(page, "summary-table", "pct"), strict=True)
    )
    for key in api["categories"]:
        label = api["labels"][key]
        assert shown_us[label] == pytest.approx(api["average"][key]["us"])
        assert shown_pct[label] == pytest.approx(api["average"][key]["pct"], rel=1e-9)
    recs = page.locator('[data-testid="recommendation"]')
    assert recs.count() == len(api["recommendations"])
    assert page.locator('[data-testid="breakdown-chart"] canvas').count() == 1
    shot(page, "overview.png")
    assert rec.errors == []


def test_operator(tb_gpu, page, rec):
    _, api = tb_gpu.get("operators", run=RUN, worker="worker0", group_by="name")
    page.goto(app_url(tb_gpu, run=RUN, view="Operator"))
    page.wait_for_selector('[data-testid="op-table"] [role="cell"][data-col="name"]')
    assert (
        page.inner_text('[data-testid="op-table"] [data-testid="row-count"]') == f"{api['total_rows']:,} rows"
    )
    # sorted by device self time, descending: the first rows are the API's largest
    by_dev = sorted(api["rows"], key=lambda r: -r["device_self_us"])
    assert texts(page, "op-table", "name")[:3] == [r["name"] for r in by_dev[:3]]
    assert cells(page, "op-table", "device_self")[:3] == pytest.approx(
        [r["device_self_us"] for r in by_dev[:3]]
    )
    # sort by host total (click twice: descending first)
    page.click('[data-testid="op-table"] [role="columnheader"][data-col="host_total"]')
    by_host = sorted(api["rows"], key=lambda r: -r["host_total_us"])
    assert cells(page, "op-table", "host_total")[0] == pytest.approx(by_host[0]["host_total_us"])
    # search
    page.fill('[data-testid="op-table"] input[type="search"]', "conv")
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=op-table] [data-col=name][role=cell]')].every(e => e.textContent.toLowerCase().includes('conv'))"
    )
    expected = sum("conv" in r["name"].lower() for r in api["rows"])
    assert (
        page.inner_text('[data-testid="op-table"] [data-testid="row-count"]')
        == f"{expected:,} of {api['total_rows']:,} rows"
    )
    # expand a row with a call stack: frames are links
    page.locator('[data-testid="op-table"] .dt-toggle').first.click()
    page.wait_for_selector('[data-testid="stack"] a.frame-link')
    shot(page, "operator.png")
    # group by name + input shape: the grouped table
    page.select_option('[data-testid="select-group"]', "name_input_shape")
    _, api2 = tb_gpu.get("operators", run=RUN, worker="worker0", group_by="name_input_shape")
    page.wait_for_selector('[data-testid="op-table"] [role="cell"][data-col="input_shape"]')
    # the count follows the grouped answer once it is drawn (the cells may come a frame earlier)
    page.wait_for_function(
        'want => document.querySelector(\'[data-testid="op-table"] [data-testid="row-count"]\')'
        "?.innerText.endsWith(want)",
        arg=f"{api2['total_rows']:,} rows",
        timeout=15000,
    )
    assert "group=name_input_shape" in page.url
    assert rec.errors == []


def test_kernel(tb_gpu, page, rec):
    _, api = tb_gpu.get("kernels", run=RUN, worker="worker0", group_by="name")
    page.goto(app_url(tb_gpu, run=RUN, view="Kernel"))
    page.wait_for_selector('[data-testid="kernel-table"] [role="cell"][data-col="total"]')
    assert (
        page.inner_text('[data-testid="kernel-table"] [data-testid="row-count"]')
        == f"{api['total_rows']:,} rows"
    )
    assert texts(page, "kernel-table", "name")[:5] == [r["name"] for r in api["rows"][:5]]
    assert cells(page, "kernel-table", "total")[:5] == pytest.approx([r["total_us"] for r in api["rows"][:5]])
    assert cells(page, "kernel-table", "mean")[:5] == pytest.approx([r["mean_us"] for r in api["rows"][:5]])
    shot(page, "kernel.png")
    page.select_option('[data-testid="select-kgroup"]', "detailed")
    _, api2 = tb_gpu.get("kernels", run=RUN, worker="worker0", group_by="name_op_launch")
    page.wait_for_selector('[data-testid="kernel-table"] [role="cell"][data-col="operator"]')
    assert texts(page, "kernel-table", "operator")[0] == api2["rows"][0]["op_name"]
    assert rec.errors == []


def test_memory_without_totals(tb_gpu, page, rec):
    """PyTorch 1.9 memory records have no totals and no addresses: a relative curve (running sum of
    Bytes) said to be relative, no events (with the reason), and the per-operator statistics."""
    _, devices = tb_gpu.get("memory/devices", run=RUN, worker="worker0")
    first = devices[0]["device"]
    assert devices[0]["has_totals"] is False
    _, curve = tb_gpu.get("memory/curve", run=RUN, worker="worker0", device=first)
    page.goto(app_url(tb_gpu, run=RUN, view="Memory"))
    page.wait_for_selector('[data-testid="memory-stats-table"] [role="cell"]')
    assert page.input_value('[data-testid="select-device"]') == first
    if curve.get("relative"):
        page.wait_for_selector('[data-testid="memory-relative"]')
        assert (
            float(page.get_attribute('[data-testid="peak-increase"]', "data-value"))
            == curve["peak_increase_bytes"]
        )
        assert page.locator('[data-testid="memory-chart"] canvas').count() == 1
    else:
        assert "No memory curve for this device" in page.inner_text('[data-testid="memory-curve"]')
    assert "carry no addresses" in page.inner_text('[data-testid="memory-events"]')
    _, st = tb_gpu.get("memory/stats", run=RUN, worker="worker0", device=first)
    assert (
        page.inner_text('[data-testid="memory-stats-table"] [data-testid="row-count"]')
        == f"{len(st['rows']):,} rows"
    )
    top = max(st["rows"], key=lambda r: r["size_increase"])
    assert cells(page, "memory-stats-table", "size_increase")[0] == top["size_increase"]
    shot(page, "memory_relative.png")
    # a zoomed range of the downsampled curve is fetched again at full resolution for that range
    if curve["downsampled"]:
        t0, t1 = curve["ts"][10], curve["ts"][40]
        page.goto(app_url(tb_gpu, run=RUN, view="Memory", device=first, mstart=repr(t0), mend=repr(t1)))
        page.wait_for_selector('[data-testid="memory-range"]')
        page.wait_for_load_state("networkidle")
        detail = [u for u in rec.requests if "memory/curve" in u and "start=" in u]
        assert detail, "no detail request for the zoomed range"
        _, d = tb_gpu.get("memory/curve", run=RUN, worker="worker0", device=first, start=t0, end=t1)
        assert d["points_in_range"] > 31  # more points than the overview had in that range
    # another device through the selector
    second = devices[1]["device"]
    page.select_option('[data-testid="select-device"]', second)
    page.wait_for_function("d => new URL(location.href).searchParams.get('device') === d", arg=second)
    _, st2 = tb_gpu.get("memory/stats", run=RUN, worker="worker0", device=second)
    page.wait_for_function(
        "n => document.querySelector('[data-testid=memory-stats-table] [data-testid=row-count]')?.textContent === n",
        arg=f"{len(st2['rows']):,} rows",
    )
    assert rec.errors == []


def test_distributed(tb_gpu, page, rec):
    status, api = tb_gpu.get("distributed", run="nccl_2ranks")
    if status == 404 or not api.get("workers"):
        pytest.skip("no 2-rank NCCL sample in ../shared/traces")
    page.goto(app_url(tb_gpu, run="nccl_2ranks", view="Distributed"))
    page.wait_for_selector('[data-testid="comm-table"] [role="cell"]')
    w0 = api["workers"][0]["worker"]
    rows = sorted(api["comm_ops"][w0], key=lambda r: -r["total_latency_us"])
    assert texts(page, "comm-table", "collective") == [r["collective"] for r in rows]
    assert cells(page, "comm-table", "total_bytes") == pytest.approx([r["total_bytes"] for r in rows])
    assert cells(page, "comm-table", "busbw") == pytest.approx([r["busbw_gbps"] for r in rows])
    assert page.locator('[data-testid="overlap-chart"] canvas').count() == 1
    page.select_option('[data-testid="select-step"]', api["workers"][0]["steps"][0])
    assert "step=" in page.url
    shot(page, "distributed.png")
    assert rec.errors == []


def test_trace_download(tb_gpu, page, rec):
    page.goto(app_url(tb_gpu, run=RUN, view="Trace"))
    link = page.locator('[data-testid="trace-download"]')
    href = link.get_attribute("href")
    assert href.startswith(f"{tb_gpu.url}/data/plugin/pytorch_profiler/trace?run={RUN}&worker=worker0")
    try:
        with urllib.request.urlopen(href, timeout=60) as r:
            assert r.status == 200
    except urllib.error.HTTPError as e:
        if e.code == 404:
            pytest.skip("the /trace route is not served yet")
        raise
    with page.expect_download() as dl:
        link.click()
    path = dl.value.path()
    assert dl.value.suggested_filename.endswith((".json.gz", ".json"))
    with open(path, "rb") as f:
        body = f.read()
    data = json.loads(gzip.decompress(body) if body[:2] == b"\x1f\x8b" else body)
    assert "traceEvents" in data

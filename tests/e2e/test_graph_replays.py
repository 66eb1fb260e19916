"""Inference traces in the browser: SGLang's decode on MI300X, one HIP-graph replay, with and without
its capture trace. With it, the Operator view lists the attention and GEMM ops with their replayed device
time and the Overview says how the capture was merged; without it, the Overview says how much device time
the trace cannot attribute and the time sits on a "graph replay" row (docs/metrics.md, "Graph replays")."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from tests.e2e.conftest import app_url, shot
from tests.fixtures.paths import SHARED_TRACES
from tests.fixtures.tensorboard_server import TensorBoard, tensorboard

SGLANG = SHARED_TRACES / "tracelens" / "sglang_decode"


@pytest.fixture(scope="module")
def tb_inference(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    if not SGLANG.is_dir():
        pytest.skip("shared traces absent")
    logdir = tmp_path_factory.mktemp("inference")
    merged = logdir / "sglang_decode"
    merged.mkdir()
    shutil.copy(SGLANG / "sglang_Qwen3-8B_decode.pt.trace.json.gz", merged)
    shutil.copytree(SGLANG / "capture_traces", merged / "capture_traces")
    bare = logdir / "sglang_no_capture"
    bare.mkdir()
    shutil.copy(SGLANG / "sglang_Qwen3-8B_decode.pt.trace.json.gz", bare)
    with tensorboard(logdir, tmp=tmp_path_factory.mktemp("tb")) as tb:
        tb.wait_loaded(timeout=120)
        yield tb


def _cells(page, col: str) -> dict[str, float]:
    table = page.locator('[data-testid="op-table"]')
    names = table.locator('[role="cell"][data-col="name"] .tl-cell-name').all_inner_texts()
    values = table.locator(f'[role="cell"][data-col="{col}"]').evaluate_all(
        "els => els.map(e => e.dataset.value)"
    )
    return {n.strip(): float(v) for n, v in zip(names, values, strict=True)}


def test_the_capture_folder_is_no_run_and_is_listed_on_its_run(tb_inference: TensorBoard) -> None:
    _, runs = tb_inference.get("runs")
    by_name = {r["name"]: r for r in runs["runs"]}
    assert sorted(by_name) == ["sglang_decode", "sglang_no_capture"]
    assert by_name["sglang_decode"]["captures"]["files"] == ["bs_32_rank0.json.gz"]
    assert by_name["sglang_decode"]["captures"]["batch_sizes"] == [32]
    assert by_name["sglang_no_capture"]["captures"] is None


def test_operator_view_lists_the_captured_ops_with_replayed_time(tb_inference, page, rec) -> None:
    page.goto(app_url(tb_inference, run="sglang_decode", view="Operator"))
    page.wait_for_selector('[data-testid="op-table"] [role="cell"][data-col="replayed"]')
    assert "1 capture trace, batch size 32" in page.inner_text('[data-testid="run-captures"]')
    device = _cells(page, "device_self")
    replayed = _cells(page, "replayed")
    attention = [n for n in device if "attention" in n]
    assert attention and device[attention[0]] == pytest.approx(2127.9, abs=0.5)
    assert device["aten::mm"] == pytest.approx(5782.3, abs=0.5) and replayed["aten::mm"] == device["aten::mm"]
    assert "graph replay" not in device or device["graph replay"] == 0
    shot(page, "graph_replays_operators.png", max_height=1100)
    page.goto(app_url(tb_inference, run="sglang_decode", view="Overview"))
    note = page.locator('[data-testid="graphs-note"]')
    note.wait_for()
    assert "all their device time is attributed to the operators that captured them" in note.inner_text()
    assert "bs_32_rank0.json.gz (batch size 32, FULL): 1 replay matched" in page.inner_text(
        '[data-testid="graph-captures"]'
    )
    steps = page.inner_text('[data-testid="inference-steps"]')
    assert steps.startswith("Inference steps: 1 decode step · 0 context + 32 generation tokens · ")
    shot(page, "graph_replays_overview.png", max_height=1400)
    # the Kernel view: the replayed kernels' time, and the op that captured them in the detailed grouping
    page.goto(app_url(tb_inference, run="sglang_decode", view="Kernel", kgroup="detailed"))
    page.wait_for_selector('[data-testid="kernel-table"] [role="cell"][data-col="replayed"]')
    operators_ = page.locator(
        '[data-testid="kernel-table"] [role="cell"][data-col="operator"]'
    ).all_inner_texts()
    assert "aten::mm" in [o.strip() for o in operators_]
    assert rec.errors == [] and rec.foreign() == []


def test_a_replayed_kernel_opens_the_capture_trace_at_its_launch(tb_inference, page, rec) -> None:
    worker = "sglang_Qwen3-8B_decode"
    status, kernels_ = tb_inference.get("kernels", run="sglang_decode", worker=worker)
    assert status == 200
    top = kernels_["top"][0]["name"]  # a GEMM, run in the replay only
    page.goto(app_url(tb_inference, run="sglang_decode", view="Trace", find=f"kernel:{top}"))
    details = page.locator('[data-testid="timeline-details"]')
    details.locator('[data-testid="timeline-capture-link"]').wait_for()
    captured_by = details.locator('tr:has(th:text-is("captured by")) td').inner_text()
    assert captured_by and "Call stack" in details.inner_text()
    details.locator('[data-testid="timeline-capture-link"]').click()
    banner = page.locator('[data-testid="timeline-capture"]')
    banner.wait_for()
    assert "bs_32_rank0.json.gz" in banner.inner_text()
    page.wait_for_function(
        "() => new URLSearchParams(location.search).get('capture') === 'bs_32_rank0.json.gz'"
    )
    # the launch call that recorded the kernel, selected, inside the op that captured it
    name = page.locator('[data-testid="timeline-details-name"]')
    page.wait_for_function(
        "() => /Launch/.test(document.querySelector('[data-testid=timeline-details-name]')?.textContent ?? '')"
    )
    assert "LaunchKernel" in name.inner_text()
    links = page.locator('[data-testid="timeline-details"] [data-testid="timeline-link"]').all_inner_texts()
    assert captured_by in [x.strip() for x in links]
    shot(page, "graph_replays_capture_timeline.png", max_height=1400)
    page.locator('[data-testid="timeline-capture-back"]').click()
    page.wait_for_function("() => !new URLSearchParams(location.search).get('capture')")
    page.locator('[data-testid="timeline"]').wait_for()
    assert rec.errors == [] and rec.foreign() == []


def test_without_the_capture_the_overview_says_what_it_cannot_attribute(tb_inference, page, rec) -> None:
    page.goto(app_url(tb_inference, run="sglang_no_capture", view="Overview"))
    note = page.locator('[data-testid="graphs-note"]')
    note.wait_for()
    assert (
        "98.8 % of device time ran in 1 graph replay(s) that this trace cannot attribute" in note.inner_text()
    )
    page.goto(app_url(tb_inference, run="sglang_no_capture", view="Operator"))
    page.wait_for_selector('[data-testid="op-table"] [role="cell"][data-col="replayed"]')
    device = _cells(page, "device_self")
    assert device["graph replay"] == pytest.approx(9656.4, abs=0.5)
    assert not any(n.startswith("execute_") and v > 100 for n, v in device.items())  # the step range
    assert rec.errors == []


def test_graph_replay_views_in_dark_mode(browser, tb_inference, rec) -> None:
    ctx = browser.new_context(color_scheme="dark", viewport={"width": 1280, "height": 900})
    try:
        pg = ctx.new_page()
        pg.goto(app_url(tb_inference, run="sglang_decode", view="Overview"))
        pg.locator('[data-testid="graphs-note"]').wait_for()
        assert pg.evaluate("document.documentElement.dataset.theme") == "dark"
        color = pg.evaluate("getComputedStyle(document.querySelector('[data-testid=\"graphs-note\"]')).color")
        assert color != "rgb(0, 0, 0)"  # the note is drawn in the dark theme's text colour
        pg.locator('[data-testid="graph-replays"]').scroll_into_view_if_needed()
        pg.goto(app_url(tb_inference, run="sglang_decode", view="Operator"))
        pg.wait_for_selector('[data-testid="op-table"] [role="cell"][data-col="replayed"]')
        shot(pg, "graph_replays_operators_dark.png", max_height=1100)
    finally:
        ctx.close()

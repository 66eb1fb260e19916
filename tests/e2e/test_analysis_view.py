"""The Analysis view in chromium on a real GPU trace (resnet50 on a V100, PyTorch 1.9): it is listed,
its tables show the route's figures, the longest idle interval's link selects the kernel that ended the
gap in the Trace view; light and dark screenshots for docs/user_guide.md."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest

from tests.e2e.conftest import app_url, shot

DETAILS = '[data-testid="timeline-details-name"]'


def url_key(page, key: str) -> str | None:
    return parse_qs(urlparse(page.url).query).get(key, [None])[0]


def test_analysis_view_tables_and_idle_link(tb_gpu, page, rec):
    run = "resnet50_v100"
    assert "Analysis" in tb_gpu.get("views", run=run)[1]
    worker = tb_gpu.get("workers", run=run)[1][0]
    status, api = tb_gpu.get("analysis", run=run, worker=worker)
    assert status == 200
    idle_rows = api["analyses"]["idle_time"]
    assert idle_rows and api["idle_longest"]
    page.goto(app_url(tb_gpu, run=run, worker=worker, view="Analysis"))
    page.wait_for_selector('[data-testid="analysis-view"]', timeout=60000)
    table = page.locator('[data-testid="idle-table"] [role="row"].dt-row')
    table.first.wait_for(timeout=60000)
    assert table.count() == min(len(idle_rows), table.count()) > 0
    # the biggest idle row first, with the route's figure
    top = max(idle_rows, key=lambda r: r["us"])
    first_us = table.first.locator('[data-col="us"]').get_attribute("data-value")
    assert float(first_us) == pytest.approx(top["us"])
    for part in ("temporal-table", "launch-table", "critical-path-table"):
        page.locator(f'[data-testid="{part}"] [role="row"].dt-row').first.wait_for(timeout=30000)
    # the longest interval's start counts from the profile start, the timeline's origin
    start = page.locator('[data-testid="idle-longest-table"] [role="row"].dt-row').first.locator(
        '[data-col="start"]'
    )
    longest = max(api["idle_longest"], key=lambda r: r["us"])
    assert float(start.get_attribute("data-value")) == pytest.approx(longest["start_us"] - api["origin_us"])
    shot(page, "analysis.png")
    # the longest idle interval → the activity that ended it, selected in the Trace view
    page.locator('[data-testid="idle-longest-table"] [data-testid="show-in-timeline"]').first.click()
    page.wait_for_selector(DETAILS, timeout=60000)
    assert url_key(page, "view") == "Trace"
    _, ev = tb_gpu.get("timeline/longest", run=run, worker=worker, at_us=longest["end_us"], kind="kernel")
    assert url_key(page, "sel") == ev["id"]
    assert ev["start_us"] == pytest.approx(longest["end_us"], abs=0.01)
    assert rec.errors == []


def test_recommendation_links_to_its_analysis(tb_gpu, page, rec):
    run = "resnet50_v100"
    worker = tb_gpu.get("workers", run=run)[1][0]
    _, overview = tb_gpu.get("overview", run=run, worker=worker)
    backed = {"low_gpu_utilization", "host_bound", "launch_bound", "synchronization", "dataloader"}
    backed |= {"pageable_memcpy"}
    assert backed & {r["id"] for r in overview["recommendations"]}
    page.goto(app_url(tb_gpu, run=run, worker=worker, view="Overview"))
    button = page.locator('[data-testid="recommendation-analysis"]').first
    button.wait_for(timeout=60000)
    button.click()
    page.wait_for_selector('[data-testid="analysis-view"]', timeout=60000)
    assert url_key(page, "view") == "Analysis" and url_key(page, "asec") in {
        "idle",
        "launch",
        "critical-path",
    }
    assert rec.errors == []


def test_analysis_dark_screenshot(tb_gpu, browser, rec):
    ctx = browser.new_context(color_scheme="dark", viewport={"width": 1280, "height": 900})
    try:
        pg = ctx.new_page()
        worker = tb_gpu.get("workers", run="resnet50_v100")[1][0]
        pg.goto(app_url(tb_gpu, run="resnet50_v100", worker=worker, view="Analysis"))
        pg.locator('[data-testid="idle-table"] [role="row"].dt-row').first.wait_for(timeout=60000)
        assert pg.evaluate("document.documentElement.dataset.theme") == "dark"
        shot(pg, "analysis_dark.png")
        # a step's critical path over the timeline, dark
        pg.locator('[data-testid="critical-path-table"] [data-testid="critical-path-show"]').first.click()
        pg.wait_for_selector('[data-testid="critical-path-banner"][data-segments]', timeout=60000)
        pg.wait_for_function("window.__timeline && window.__timeline.pathBands() > 0", timeout=30000)
        shot(pg, "critical_path_dark.png")
    finally:
        ctx.close()
    assert rec.errors == []


def test_queue_length_is_a_counter_track_in_the_trace_view(tb_gpu, page, rec):
    run = "resnet50_v100"
    worker = tb_gpu.get("workers", run=run)[1][0]
    _, tracks = tb_gpu.get("timeline/tracks", run=run, worker=worker)
    queue = [t for t in tracks["tracks"] if t["kind"] == "counter" and t["name"].endswith("Queue length")]
    assert queue and all(t["name"].startswith("GPU 0 Stream ") for t in queue)
    assert all(t["unit"] == "queued" and t["max"] >= 1 for t in queue)
    page.goto(app_url(tb_gpu, run=run, worker=worker, view="Trace"))
    page.wait_for_selector('[data-testid="timeline"][data-state="ready"]', timeout=60000)
    # the track is laid out in its device's group, scrolled into view by the label column
    key = f"t:{queue[0]['id']}"
    for _ in range(40):
        if page.evaluate(f"window.__timeline.labelY({key!r})") is not None:
            break
        page.mouse.move(*_centre(page))
        page.mouse.wheel(0, 300)
        page.wait_for_timeout(100)
    assert page.evaluate(f"window.__timeline.labelY({key!r})") is not None
    assert rec.errors == []


def _centre(page) -> tuple[float, float]:
    box = page.locator('[data-testid="timeline"] .tl-main canvas').bounding_box()
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def test_critical_path_is_drawn_in_the_timeline(tb_gpu, page, rec):
    """Analysis → "▸ timeline" on the longest step: the Trace view fits that step, draws the route's
    segments over their rows and says what bounds it; Clear removes it; an unknown step says so."""
    run = "resnet50_v100"
    worker = tb_gpu.get("workers", run=run)[1][0]
    _, api = tb_gpu.get("analysis", run=run, worker=worker)
    longest = max(api["analyses"]["critical_path"], key=lambda r: r["duration_us"])
    status, placed = tb_gpu.get("timeline/critical_path", run=run, worker=worker, step=longest["step"])
    assert status == 200 and placed["bound_by"] == longest["bound_by"]
    on_rows = [s for s in placed["segments"] if s["track"] is not None]
    assert len(on_rows) >= 0.9 * len(placed["segments"]) > 0
    _, tracks = tb_gpu.get("timeline/tracks", run=run, worker=worker)
    kinds = {t["id"]: t["kind"] for t in tracks["tracks"]}
    assert {kinds[s["track"]] for s in on_rows if s["kind"] == "device"} == {"stream"}
    assert {kinds[s["track"]] for s in on_rows if s["kind"] in ("host", "sync")} <= {"thread"}

    page.goto(app_url(tb_gpu, run=run, worker=worker, view="Analysis"))
    rows = page.locator('[data-testid="critical-path-table"] [role="row"].dt-row')
    rows.first.wait_for(timeout=60000)
    assert rows.first.locator('[data-col="step"] .tl-cell-name').inner_text() == str(longest["step"])
    rows.first.locator('[data-testid="critical-path-show"]').click()
    banner = page.locator('[data-testid="critical-path-banner"]')
    banner.wait_for(timeout=60000)
    page.wait_for_selector('[data-testid="timeline"][data-state="ready"]', timeout=60000)
    assert url_key(page, "view") == "Trace" and url_key(page, "cpath") == str(longest["step"])
    assert banner.get_attribute("data-segments") == str(len(placed["segments"]))
    assert longest["bound_by"][:40] in banner.inner_text()
    page.wait_for_function("window.__timeline && window.__timeline.pathBands() > 0", timeout=30000)
    view = page.evaluate("window.__timeline.view()")
    start, end = placed["start_us"] - tracks["start_us"], placed["end_us"] - tracks["start_us"]
    assert view["t0"] <= start + 1e-3 and view["t1"] >= end - 1e-3
    assert view["t1"] - view["t0"] <= 1.1 * (end - start)  # fitted to the step, not the whole profile
    shot(page, "critical_path.png")
    page.locator('[data-testid="critical-path-clear"]').click()
    banner.wait_for(state="detached", timeout=30000)
    page.wait_for_function("window.__timeline.pathBands() === 0", timeout=30000)
    assert url_key(page, "cpath") is None
    # a step that does not exist: the banner says so, the timeline keeps working
    page.goto(app_url(tb_gpu, run=run, worker=worker, view="Trace", cpath="987654"))
    page.wait_for_selector(
        '[data-testid="critical-path-banner"] >> text=/no critical path for step 987654/', timeout=60000
    )
    page.wait_for_selector('[data-testid="timeline"][data-state="ready"]', timeout=60000)
    assert rec.errors == []

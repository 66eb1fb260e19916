"""The app inside TensorBoard and standalone on samples/ (real CPU traces of torch 2.x): every view of
every run renders without an error, selectors and deep links work, the theme follows TensorBoard."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from tests.e2e.conftest import app_url, shot


def app_frame(page):
    """The plugin's frame inside TensorBoard's page."""
    for _ in range(200):
        for f in page.frames:
            if "/pytorch_profiler/index.html" in f.url:
                return f
        page.wait_for_timeout(100)
    raise AssertionError(f"plugin frame not found; frames: {[f.url for f in page.frames]}")


def cells_of(page, table: str, col: str) -> list[float]:
    loc = page.locator(f'[data-testid="{table}"] [role="cell"][data-col="{col}"]')
    return [float(v) for v in loc.evaluate_all("els => els.map(e => e.dataset.value)")]


def query(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(url).query).items()}


def test_plugin_tab_in_tensorboard(tb_samples, page, rec):
    _, runs = tb_samples.get("runs")
    page.goto(f"{tb_samples.url}/#pytorch_profiler")
    frame = app_frame(page)
    frame.wait_for_selector('[data-testid="select-run"]')
    options = frame.locator('[data-testid="select-run"] option').evaluate_all("os => os.map(o => o.value)")
    assert options == [r["name"] for r in runs["runs"]]
    frame.wait_for_selector('[data-testid="view"][data-view="overview"] [data-testid="step-breakdown"]')
    shot(page, "tensorboard_tab.png")
    # the theme follows TensorBoard's dark mode (class on its body)
    assert frame.evaluate("document.documentElement.dataset.theme") == "light"
    page.evaluate("document.body.classList.add('dark-mode')")
    frame.wait_for_function("document.documentElement.dataset.theme === 'dark'")
    shot(page, "tensorboard_tab_dark.png")
    page.evaluate("document.body.classList.remove('dark-mode')")
    frame.wait_for_function("document.documentElement.dataset.theme === 'light'")
    # downloads work from inside TensorBoard's frame: a table as CSV, the trace file
    with page.expect_download() as dl:
        frame.locator('[data-testid="summary-table"] button', has_text="Export CSV").click()
    csv_text = Path(dl.value.path()).read_bytes().decode("utf-8")  # keep the CRLF line ends
    run, worker = (
        frame.input_value('[data-testid="select-run"]'),
        frame.input_value('[data-testid="select-worker"]'),
    )
    _, ov = tb_samples.get("overview", run=run, worker=worker)
    lines = csv_text.strip().split("\r\n")
    assert lines[0] == "Category,Time per step (µs),Share of step (%)"  # CSV headers carry units
    got = {line.split(",")[0]: float(line.split(",")[1]) for line in lines[1:]}
    assert got == {ov["labels"][k]: pytest.approx(ov["average"][k]["us"]) for k in ov["categories"]}
    frame.select_option('[data-testid="select-view"]', "Trace")
    with page.expect_download() as dl:
        frame.click('[data-testid="trace-download"]')
    assert dl.value.suggested_filename.endswith((".json.gz", ".json"))
    assert rec.errors == []


def test_standalone_follows_prefers_color_scheme(tb_samples, browser):
    ctx = browser.new_context(color_scheme="dark")
    try:
        pg = ctx.new_page()
        pg.goto(app_url(tb_samples))
        pg.wait_for_selector('[data-testid="select-run"]')
        assert pg.evaluate("document.documentElement.dataset.theme") == "dark"
    finally:
        ctx.close()


def test_every_view_of_every_run(tb_samples, page, rec):
    _, runs = tb_samples.get("runs")
    visited = []
    for run in runs["runs"]:
        _, views = tb_samples.get("views", run=run["name"])
        for view in views:
            page.goto(app_url(tb_samples, run=run["name"], view=view))
            key = view.lower()
            page.wait_for_selector(
                f'[data-testid="view"][data-view="{key}"] .section, [data-testid="view"][data-view="{key}"] '
                '[data-testid="timeline"], [data-testid="error"], [data-testid="empty"]'
            )
            page.wait_for_load_state("networkidle")
            errors = page.locator('[data-testid="error"]').all_inner_texts()
            assert errors == [], f"{run['name']}/{view}: {errors}"
            assert page.locator(".loading").count() == 0, f"{run['name']}/{view} still loading"
            visited.append((run["name"], view))
    assert len(visited) >= 8
    assert rec.errors == []


def test_selectors_and_deep_links(tb_samples, page, rec):
    _, runs = tb_samples.get("runs")
    names = [r["name"] for r in runs["runs"]]
    two_spans = next(r["name"] for r in runs["runs"] if len({f["span"] for f in r["files"]}) > 1)
    page.goto(app_url(tb_samples))
    page.wait_for_selector('[data-testid="select-run"]')
    # the effective selection is written into the address
    page.wait_for_function("() => new URL(location.href).searchParams.has('worker')")
    q = query(page.url)
    assert q["run"] == names[0] and q["view"] == "Overview"
    # choose a run with two spans: the span selector appears; pick span 2 and the Operator view
    page.select_option('[data-testid="select-run"]', two_spans)
    page.wait_for_selector('[data-testid="select-span"]')
    page.select_option('[data-testid="select-span"]', "2")
    page.select_option('[data-testid="select-view"]', "Operator")
    page.wait_for_selector('[data-testid="op-table"] [role="cell"]')
    q = query(page.url)
    assert (q["run"], q["view"], q["span"]) == (two_spans, "Operator", "2")
    # the table shows span 2's numbers
    _, api = tb_samples.get("operators", run=two_spans, worker=q["worker"], span="2")
    assert (
        page.inner_text('[data-testid="op-table"] [data-testid="row-count"]') == f"{api['total_rows']:,} rows"
    )
    # reload = deep link: same selection
    link = page.url
    page.goto(link)
    page.wait_for_selector('[data-testid="op-table"] [role="cell"]')
    assert page.input_value('[data-testid="select-run"]') == two_spans
    assert page.input_value('[data-testid="select-span"]') == "2"
    assert page.input_value('[data-testid="select-view"]') == "Operator"
    # back goes to the previous selection
    page.go_back()
    page.wait_for_function("() => new URL(location.href).searchParams.get('view') !== 'Operator'")
    # a single-span run hides the span selector
    single = next((r["name"] for r in runs["runs"] if len({f["span"] for f in r["files"]}) == 1), None)
    if single:
        page.goto(app_url(tb_samples, run=single))
        page.wait_for_selector('[data-testid="view"][data-view="overview"] .section')
        assert page.locator('[data-testid="select-span"]').count() == 0
    # an unknown run in a link falls back to the first run instead of failing
    page.goto(app_url(tb_samples, run="no-such-run"))
    page.wait_for_function("n => new URL(location.href).searchParams.get('run') === n", arg=names[0])
    assert rec.errors == []


def test_memory_zoom_selects_range(tb_samples, page, rec):
    run = next(
        (
            r["name"]
            for r in tb_samples.get("runs")[1]["runs"]
            if "Memory" in tb_samples.get("views", run=r["name"])[1]
        ),
        None,
    )
    if run is None:
        pytest.skip("no sample run with memory records")
    worker = tb_samples.get("workers", run=run, view="Memory")[1][0]
    span = tb_samples.get("spans", run=run, worker=worker)[1][0]
    _, curve = tb_samples.get("memory/curve", run=run, worker=worker, span=span)
    page.goto(app_url(tb_samples, run=run, view="Memory", worker=worker, span=span))
    page.wait_for_selector('[data-testid="memory-chart"] canvas')
    assert (
        float(page.get_attribute('[data-testid="peak-allocated"]', "data-value"))
        == curve["peak_allocated_bytes"]
    )
    _, ev = tb_samples.get("memory/events", run=run, worker=worker, span=span, limit=100000)
    page.wait_for_function(
        "n => document.querySelector('[data-testid=memory-events-table] [data-testid=row-count]')?.textContent === n",
        arg=f"{len(ev['rows']):,} rows",
    )
    shot(page, "memory.png")
    # the size filter asks the API for events of at least that size
    page.select_option('[data-testid="select-minsize"]', "1024")
    _, big = tb_samples.get("memory/events", run=run, worker=worker, span=span, min_bytes=1024, limit=100000)
    assert len(big["rows"]) < len(ev["rows"])
    page.wait_for_function(
        "n => document.querySelector('[data-testid=memory-events-table] [data-testid=row-count]')?.textContent === n",
        arg=f"{len(big['rows']):,} rows",
    )
    assert min(cells_of(page, "memory-events-table", "bytes")) >= 1024
    page.select_option('[data-testid="select-minsize"]', "0")
    # zoom with the mouse wheel on the chart: the range goes into the address and filters the tables
    box = page.locator('[data-testid="memory-chart"]').bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.4, box["y"] + box["height"] * 0.4)
    for _ in range(6):
        page.mouse.wheel(0, -400)
        page.wait_for_timeout(50)
    page.wait_for_function("() => new URL(location.href).searchParams.has('mstart')")
    page.wait_for_timeout(400)  # debounce of the zoom
    q = query(page.url)
    start, end = float(q["mstart"]), float(q["mend"])
    assert curve["ts"][0] <= start < end <= curve["ts"][-1]
    _, ev2 = tb_samples.get(
        "memory/events", run=run, worker=worker, span=span, start=start, end=end, limit=100000
    )
    _, st2 = tb_samples.get("memory/stats", run=run, worker=worker, span=span, start=start, end=end)
    assert len(ev2["rows"]) < len(ev["rows"])
    page.wait_for_function(
        "n => document.querySelector('[data-testid=memory-events-table] [data-testid=row-count]')?.textContent === n",
        arg=f"{len(ev2['rows']):,} rows",
    )
    page.wait_for_function(
        "n => document.querySelector('[data-testid=memory-stats-table] [data-testid=row-count]')?.textContent === n",
        arg=f"{len(st2['rows']):,} rows",
    )
    # Reset: the whole time range again, in the address and in the tables
    page.click('[data-testid="memory-curve"] button:has-text("Reset")')
    page.wait_for_function("() => !new URL(location.href).searchParams.has('mstart')")
    page.wait_for_function(
        "n => document.querySelector('[data-testid=memory-events-table] [data-testid=row-count]')?.textContent === n",
        arg=f"{len(ev['rows']):,} rows",
    )
    page.wait_for_timeout(500)
    assert "mstart" not in page.url, "the chart must not re-apply the old zoom"
    assert rec.errors == []

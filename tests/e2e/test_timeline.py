"""The Trace view's timeline against a real TensorBoard: it draws, zooms and pans (the window is in the
address), a click on a kernel opens its details with the launching op linked, search steps through
matches, "Show in timeline" lands on the event, dark mode, and nothing leaves 127.0.0.1."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest

from tests.e2e.conftest import Recorder, _watch, app_url, shot

GPU_RUN = "resnet50_v100"
READY = '[data-testid="timeline"][data-state="ready"]'
MAIN = '[data-testid="timeline"] .tl-main canvas'


def url_view(page) -> tuple[float, float]:
    q = parse_qs(urlparse(page.url).query)
    return float(q["t0"][0]), float(q["t1"][0])


def url_key(page, key: str) -> str | None:
    return parse_qs(urlparse(page.url).query).get(key, [None])[0]


def wait_view_change(page, before: tuple[float, float], timeout_ms: int = 5000) -> tuple[float, float]:
    for _ in range(timeout_ms // 100):
        page.wait_for_timeout(100)
        now = url_view(page)
        if now != before:
            return now
    raise AssertionError(f"the window in the address stayed {before}")


def distinct_colours(page) -> int:
    """How many colours the tracks canvas holds (sampled): a blank canvas has one or two."""
    return page.evaluate(
        """() => {
            const c = document.querySelector('[data-testid="timeline"] .tl-main canvas');
            const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
            const seen = new Set();
            for (let i = 0; i < d.length; i += 4 * 53) seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
            return seen.size;
        }"""
    )


def open_trace(page, tb, **params: str) -> None:
    page.goto(app_url(tb, view="Trace", **params))
    page.wait_for_selector(READY, timeout=60000)


def test_draws_zooms_and_pans(tb_samples, page, rec):
    open_trace(page, tb_samples, run="resnet_like_cpu")
    assert distinct_colours(page) > 10
    assert page.locator('[data-testid="timeline-minimap"]').is_visible()
    t0, t1 = url_view(page)
    assert t1 > t0
    box = page.locator(MAIN).bounding_box()
    cx, cy = box["x"] + box["width"] * 0.6, box["y"] + 60
    page.mouse.move(cx, cy)
    # W zooms in at the mouse position
    page.locator('[data-testid="timeline"]').focus()
    page.keyboard.press("w")
    z0, z1 = wait_view_change(page, (t0, t1))
    assert z1 - z0 < (t1 - t0) * 0.9
    # Ctrl+wheel zooms in further
    page.keyboard.down("Control")
    page.mouse.wheel(0, -200)
    page.keyboard.up("Control")
    w0, w1 = wait_view_change(page, (z0, z1))
    assert w1 - w0 < z1 - z0
    # D pans right, keeping the span
    page.keyboard.press("d")
    d0, d1 = wait_view_change(page, (w0, w1))
    assert d0 > w0
    assert d1 - d0 == pytest.approx(w1 - w0, rel=1e-3)
    # dragging right pans left
    page.mouse.move(cx, cy)
    page.mouse.down()
    page.mouse.move(cx + 200, cy + 1, steps=5)
    page.mouse.up()
    g0, g1 = wait_view_change(page, (d0, d1))
    assert g0 < d0
    assert g1 - g0 == pytest.approx(d1 - d0, rel=1e-3)
    page.wait_for_selector(READY)
    assert distinct_colours(page) > 3
    _, tracks = tb_samples.get("timeline/tracks", run="resnet_like_cpu", worker="worker0", span="1")
    total = tracks["end_us"] - tracks["start_us"]
    # a click in the overview centres the window there
    mini = page.locator('[data-testid="timeline-minimap"]').bounding_box()
    target = total * 0.75 if not g0 <= total * 0.75 <= g1 else total * 0.25
    page.mouse.click(mini["x"] + 210 + (mini["width"] - 210) * target / total, mini["y"] + 20)
    m0, m1 = wait_view_change(page, (g0, g1))
    assert (m0 + m1) / 2 == pytest.approx(target, rel=0.02)
    assert m1 - m0 == pytest.approx(g1 - g0, rel=1e-3)
    g0, g1 = m0, m1
    # Fit shows the whole profile again
    page.click('[data-testid="timeline-fit"]')
    f0, f1 = wait_view_change(page, (g0, g1))
    assert f0 <= 0 and f1 >= total
    # a click on a step of the ruler zooms to it
    step = tracks["steps"][0]
    s0 = step["start_us"] - tracks["start_us"]
    s1 = step["end_us"] - tracks["start_us"]
    ruler = page.locator('[data-testid="timeline-steps"]').bounding_box()
    x = box["x"] + 210 + (box["width"] - 210) * ((s0 + s1) / 2 - f0) / (f1 - f0)
    page.mouse.click(x, ruler["y"] + 8)
    r0, r1 = wait_view_change(page, (f0, f1))
    assert r0 <= s0 <= s1 <= r1
    assert r1 - r0 < (s1 - s0) * 1.1
    # a reload restores the window
    page.reload()
    page.wait_for_selector(READY)
    assert url_view(page) == pytest.approx((r0, r1))
    view = page.evaluate("window.__timeline.view()")
    assert (view["t0"], view["t1"]) == pytest.approx((r0, r1), abs=1e-2)
    assert rec.errors == []


def test_range_selection_aggregates(tb_samples, page, rec):
    open_trace(page, tb_samples, run="resnet_like_cpu")
    box = page.locator(MAIN).bounding_box()
    y = box["y"] + 40
    page.keyboard.down("Shift")
    page.mouse.move(box["x"] + 400, y)
    page.mouse.down()
    page.mouse.move(box["x"] + 700, y, steps=5)
    page.mouse.up()
    page.keyboard.up("Shift")
    table = page.locator('[data-testid="timeline-aggregate"]')
    table.locator('[role="cell"][data-col="name"]').first.wait_for()
    assert "ProfilerStep#" in " ".join(table.locator('[role="cell"][data-col="name"]').all_inner_texts())
    assert rec.errors == []


def _gpu_tracks(tb):
    status, tracks = tb.get("timeline/tracks", run=GPU_RUN, worker="worker0", span="1")
    assert status == 200
    return tracks


def _longest_kernel(tb) -> dict:
    _, kernels = tb.get("kernels", run=GPU_RUN, worker="worker0", span="1", group_by="name")
    rows = kernels["rows"] if isinstance(kernels, dict) else kernels
    name = max(rows, key=lambda r: r["total_us"])["name"]
    status, ev = tb.get("timeline/longest", run=GPU_RUN, worker="worker0", span="1", name=name, kind="kernel")
    assert status == 200
    return ev


def test_click_a_kernel_opens_details_and_links(tb_gpu, page, rec):
    tracks = _gpu_tracks(tb_gpu)
    ev = _longest_kernel(tb_gpu)
    start = ev["start_us"] - tracks["start_us"]
    t0, t1 = start - ev["dur_us"], start + 2 * ev["dur_us"]
    open_trace(page, tb_gpu, run=GPU_RUN, t0=f"{t0:.3f}", t1=f"{t1:.3f}")
    at = page.evaluate(f"window.__timeline.locate({ev['id']!r})")
    assert at is not None, "the kernel is not drawn in its own window"
    page.mouse.click(at["x"], at["y"])
    page.wait_for_selector('[data-testid="timeline-details-name"]')
    assert page.inner_text('[data-testid="timeline-details-name"]') == ev["name"]
    assert url_key(page, "sel") == ev["id"]
    # a double click zooms onto the kernel
    before = url_view(page)
    page.mouse.dblclick(at["x"], at["y"])
    z0, z1 = wait_view_change(page, before)
    assert z0 <= start and start + ev["dur_us"] <= z1
    assert z1 - z0 < 1.5 * ev["dur_us"]
    _, detail = tb_gpu.get("timeline/event", run=GPU_RUN, worker="worker0", span="1", id=ev["id"])
    relations = {link["relation"]: link for link in detail["links"]}
    assert "launched by" in relations and "operator" in relations
    links = page.locator('[data-testid="timeline-link"]')
    assert links.count() == len(detail["links"])
    op = relations["operator"]
    page.locator(f'[data-testid="timeline-link"][data-id="{op["id"]}"]').click()
    page.locator('[data-testid="timeline-details-name"]', has_text=op["name"]).wait_for()
    assert url_key(page, "sel") == op["id"]
    # the operator is in the window now (panned to), drawn where locate says
    page.wait_for_selector(READY)
    at = page.evaluate(f"window.__timeline.locate({op['id']!r})")
    assert at is not None
    hit = page.evaluate(f"window.__timeline.hitTest({at['x']}, {at['y']})")
    assert hit["id"] == op["id"]
    # collapsing the kernel's device group hides it; expanding shows it again
    kernel_track = next(t for t in tracks["tracks"] if t["id"] == ev["track"])
    group = f"g:{kernel_track['group']}"
    box = page.locator(MAIN).bounding_box()
    y = page.evaluate(f"window.__timeline.labelY({group!r})")
    page.mouse.click(box["x"] + 20, y)
    page.wait_for_timeout(200)
    assert page.evaluate(f"window.__timeline.labelY('t:{ev['track']}')") is None
    # going to the kernel from the operator's links opens its group again
    page.locator(f'[data-testid="timeline-link"][data-id="{ev["id"]}"]').click()
    page.locator('[data-testid="timeline-details-name"]', has_text=ev["name"]).wait_for()
    page.wait_for_timeout(200)
    assert page.evaluate(f"window.__timeline.labelY('t:{ev['track']}')") is not None
    page.mouse.click(box["x"] + 20, y)  # and the label collapses it again
    page.wait_for_timeout(200)
    assert page.evaluate(f"window.__timeline.labelY('t:{ev['track']}')") is None
    assert rec.errors == []


def test_search_steps_through_matches(tb_gpu, page, rec):
    tracks = _gpu_tracks(tb_gpu)
    _, found = tb_gpu.get("timeline/search", run=GPU_RUN, worker="worker0", span="1", q="conv2d", limit=1000)
    assert found["total"] > 1
    open_trace(page, tb_gpu, run=GPU_RUN)
    page.fill('[data-testid="timeline-search"]', "conv2d")
    count = page.locator('[data-testid="timeline-search-count"]')
    count.filter(has_text="match").wait_for()
    assert count.inner_text() == f"{found['total']:,} matches"
    page.press('[data-testid="timeline-search"]', "Enter")
    count.filter(has_text="1 of").wait_for()
    first = found["matches"][0]
    page.locator('[data-testid="timeline-details-name"]', has_text=first["name"]).wait_for()
    assert url_key(page, "sel") == first["id"]
    page.wait_for_timeout(300)
    t0, t1 = url_view(page)
    s = first["start_us"] - tracks["start_us"]
    assert t0 <= s and s + first["dur_us"] <= t1
    assert t1 - t0 >= min(5 * first["dur_us"], 1) * 0.99
    page.press('[data-testid="timeline-search"]', "Enter")
    count.filter(has_text="2 of").wait_for()
    second = found["matches"][1]
    for _ in range(50):
        if url_key(page, "sel") == second["id"]:
            break
        page.wait_for_timeout(100)
    assert url_key(page, "sel") == second["id"]
    page.press('[data-testid="timeline-search"]', "Shift+Enter")
    count.filter(has_text="1 of").wait_for()
    page.check('[data-testid="timeline-highlight"]')
    page.wait_for_selector(READY)
    assert rec.errors == []


def test_search_in_view(tb_gpu, page, rec):
    tracks = _gpu_tracks(tb_gpu)
    P = {"run": GPU_RUN, "worker": "worker0", "span": "1"}
    _, everywhere = tb_gpu.get("timeline/search", **P, q="conv2d", limit=1)
    # a window around a middle third of the profile
    total = tracks["end_us"] - tracks["start_us"]
    t0, t1 = total * 0.4, total * 0.45
    open_trace(page, tb_gpu, **P, t0=f"{t0:.3f}", t1=f"{t1:.3f}")
    page.check('[data-testid="timeline-search-in-view"]')
    page.fill('[data-testid="timeline-search"]', "conv2d")
    count = page.locator('[data-testid="timeline-search-count"]')
    count.filter(has_text="in view").wait_for()
    v = page.evaluate("window.__timeline.view()")
    lo, hi = tracks["start_us"] + v["t0"], tracks["start_us"] + v["t1"]
    _, inside = tb_gpu.get("timeline/search", **P, q="conv2d", limit=1, start_us=lo, end_us=hi)
    assert 0 < inside["total"] < everywhere["total"]
    assert count.inner_text() == f"{inside['total']:,} match{'es' if inside['total'] > 1 else ''} in view"
    searches = [
        parse_qs(urlparse(u).query) for u in rec.requests if urlparse(u).path.endswith("/timeline/search")
    ]
    assert float(searches[-1]["start_us"][0]) == pytest.approx(lo) and float(
        searches[-1]["end_us"][0]
    ) == pytest.approx(hi)
    # the first match is inside the window searched
    page.press('[data-testid="timeline-search"]', "Enter")
    count.filter(has_text="1 of").wait_for()
    first = inside["matches"][0]
    assert lo <= first["start_us"] + first["dur_us"] and first["start_us"] <= hi
    page.locator('[data-testid="timeline-details-name"]', has_text=first["name"]).wait_for()
    # unticked: the whole profile again
    page.uncheck('[data-testid="timeline-search-in-view"]')
    count.filter(has_text=f"{everywhere['total']:,} matches").wait_for()
    assert rec.errors == []


def test_show_in_timeline_from_the_kernel_view(tb_gpu, page, rec):
    page.goto(app_url(tb_gpu, run=GPU_RUN, view="Kernel"))
    first = page.locator('[data-testid="kernel-table"] [role="cell"][data-col="name"]').first
    first.wait_for()
    name = first.get_attribute("title") or first.inner_text()
    _, ev = tb_gpu.get("timeline/longest", run=GPU_RUN, worker="worker0", span="1", name=name, kind="kernel")
    first.hover()
    first.locator('[data-testid="show-in-timeline"]').click()
    page.wait_for_selector('[data-testid="timeline-details-name"]', timeout=60000)
    assert page.inner_text('[data-testid="timeline-details-name"]') == name
    assert url_key(page, "view") == "Trace"
    assert url_key(page, "sel") == ev["id"]
    assert url_key(page, "find") is None
    page.wait_for_selector(READY)
    assert page.evaluate(f"window.__timeline.locate({ev['id']!r})") is not None
    shot(page, "timeline.png", max_height=1400)
    assert rec.errors == []


def test_show_in_timeline_from_the_operator_view(tb_gpu, page, rec):
    page.goto(app_url(tb_gpu, run=GPU_RUN, view="Operator"))
    first = page.locator('[data-testid="op-table"] [role="cell"][data-col="name"]').first
    first.wait_for()
    name = first.get_attribute("title") or first.inner_text()
    _, ev = tb_gpu.get("timeline/longest", run=GPU_RUN, worker="worker0", span="1", name=name, kind="op")
    first.locator('[data-testid="show-in-timeline"]').click()
    page.locator('[data-testid="timeline-details-name"]', has_text=name).wait_for(timeout=60000)
    assert url_key(page, "sel") == ev["id"]
    page.wait_for_selector(READY)
    t0, t1 = url_view(page)
    s = ev["start_us"] - _gpu_tracks(tb_gpu)["start_us"]
    assert t0 <= s and s + ev["dur_us"] <= t1
    assert rec.errors == []


def test_dark_mode(tb_gpu, browser):
    rec = Recorder()
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="dark")
    ctx.on("request", lambda r: rec.requests.append(r.url))
    ctx.on("page", lambda pg: _watch(pg, rec))
    try:
        page = ctx.new_page()
        ev = _longest_kernel(tb_gpu)
        page.goto(app_url(tb_gpu, run=GPU_RUN, view="Trace", sel=ev["id"]))
        page.wait_for_selector('[data-testid="timeline-details-name"]', timeout=60000)
        page.wait_for_selector(READY)
        assert page.evaluate("document.documentElement.dataset.theme") == "dark"
        # the tracks canvas's background (bottom-right corner, below the tracks) is dark
        rgb = page.evaluate(
            """() => {
                const c = document.querySelector('[data-testid="timeline"] .tl-main canvas');
                return Array.from(c.getContext('2d').getImageData(c.width - 20, c.height - 3, 1, 1).data.slice(0, 3));
            }"""
        )
        assert sum(rgb) < 3 * 80, rgb
        assert distinct_colours(page) > 10
        shot(page, "timeline_dark.png", max_height=1400)
    finally:
        ctx.close()
    assert rec.foreign() == [], f"requests left 127.0.0.1: {rec.foreign()}"
    assert rec.errors == []


@pytest.fixture(scope="module")
def tb_dense(tmp_path_factory: pytest.TempPathFactory):
    """72 threads of 1 250 ops each (100 µs every 800 µs over 1 s): 90 000 separate boxes when the
    whole profile is shown, none of them merged (the gaps are wider than the resolution)."""
    from tests.fixtures.tensorboard_server import tensorboard
    from tests.fixtures.trace_builder import TraceBuilder

    logdir = tmp_path_factory.mktemp("dense")
    b = TraceBuilder()
    b.step(1, 0, 1_000_000)
    for tid in range(72):
        for i in range(1250):
            b.op(f"op_{i % 50}", 10 + i * 800 + tid, 100, tid=1000 + tid)
    b.write(logdir / "dense" / "w0.pt.trace.json.gz")
    with tensorboard(logdir, tmp=tmp_path_factory.mktemp("tb")) as tb:
        tb.wait_loaded(timeout=300)
        yield tb


def window_requests(rec: Recorder) -> list[dict[str, list[str]]]:
    return [parse_qs(urlparse(u).query) for u in rec.requests if urlparse(u).path.endswith("/timeline")]


def track_ids(param: str) -> list[int]:
    """The ``tracks=`` parameter (ids and ranges a-b) as ids."""
    out = []
    for part in param.split(","):
        lo, _, hi = part.partition("-")
        out += range(int(lo), int(hi or lo) + 1)
    return out


def test_asks_for_the_tracks_on_screen_and_draws_them_fast(tb_dense, page, rec):
    # the track area takes the window's height: a shorter window keeps a good part of the tracks off screen
    page.set_viewport_size({"width": 1280, "height": 760})
    open_trace(page, tb_dense, run="dense")
    _, tracks = tb_dense.get("timeline/tracks", run="dense", worker="w0")
    events = {t["id"]: t.get("events", 0) for t in tracks["tracks"]}
    # the overview strip asks for every track; the window for those on screen and a screen around them
    asked = [track_ids(q["tracks"][0]) for q in window_requests(rec) if "tracks" in q]
    assert asked and 20 < len(asked[-1]) < len(tracks["tracks"]) - 10, asked
    assert any("tracks" not in q for q in window_requests(rec))
    stats = page.evaluate("window.__timeline.stats()")
    assert stats["items"] == sum(events[t] for t in asked[-1]) >= 40_000, stats
    assert stats["boxes"] > 20_000, stats
    assert page.locator('[data-testid="timeline-status"]').inner_text() == ""  # not coarsened
    # scroll through the tracks and time the frames (software rendering in headless chromium)
    box = page.locator(MAIN).bounding_box()
    page.mouse.move(box["x"] + 600, box["y"] + 200)
    times = []
    for _ in range(5):
        page.mouse.wheel(0, 120)
        page.wait_for_timeout(100)
        times.append(page.evaluate("window.__timeline.stats()")["ms"])
    assert sorted(times)[2] < 250, times
    assert distinct_colours(page) > 10
    # to the last tracks: they are asked for (without the first ones) and drawn
    for _ in range(10):
        page.mouse.wheel(0, 400)
    page.wait_for_timeout(300)
    page.wait_for_selector(READY)
    last = max(t["id"] for t in tracks["tracks"] if t["kind"] == "thread")
    later = [track_ids(q["tracks"][0]) for q in window_requests(rec) if "tracks" in q]
    assert last not in later[0] and last in later[-1] and 0 not in later[-1], later
    assert page.evaluate(f"window.__timeline.labelY('t:{last}')") is not None
    assert distinct_colours(page) > 10
    assert rec.errors == []

"""The Trace view's layout (issue 24, item 10) in a real chromium: the track area reaches the window's
bottom and grows with it, the selection's details sit beside the tracks in a panel resized by its
splitter, the label column is resized by dragging its edge (kept across a reload), and a label cut to
the column shows its whole name on hover."""

from __future__ import annotations

import pytest

from tests.e2e.test_timeline import MAIN, READY, open_trace

PROFILE = {"run": "resnet_like_cpu", "worker": "worker0", "span": "1"}
TIMELINE = '[data-testid="timeline"]'


def test_track_area_fills_the_window(tb_samples, page, rec):
    open_trace(page, tb_samples, **PROFILE)
    main = page.locator(MAIN).bounding_box()
    inner = page.evaluate("innerHeight")
    help_box = page.locator(".tl-help").bounding_box()
    assert help_box["y"] + help_box["height"] <= inner
    assert main["y"] + main["height"] >= inner - 120, (main, inner)
    assert page.evaluate("document.documentElement.scrollHeight") <= inner + 1  # the page does not scroll
    page.set_viewport_size({"width": 1280, "height": 1150})
    page.wait_for_function(
        "([sel, h]) => document.querySelector(sel).getBoundingClientRect().height > h",
        arg=[MAIN, main["height"] + 200],
    )
    taller = page.locator(MAIN).bounding_box()
    assert taller["height"] == pytest.approx(main["height"] + 250, abs=3)
    assert rec.errors == []


def test_details_beside_the_tracks_and_resizable(tb_samples, page, rec):
    _, ev = tb_samples.get("timeline/longest", **PROFILE, name="optimizer_step", kind="any")
    open_trace(page, tb_samples, **PROFILE, sel=ev["id"])
    page.wait_for_selector('[data-testid="timeline-details-name"]')
    tl = page.locator(TIMELINE).bounding_box()
    side = page.locator('[data-testid="timeline-side"]').bounding_box()
    details = page.locator('[data-testid="timeline-details"]').bounding_box()
    assert details["x"] >= tl["x"] + tl["width"]
    assert details["y"] < tl["y"] + tl["height"] / 2
    # the splitter: 100 px to the left widens the panel and narrows the tracks by as much
    sp = page.locator('[data-testid="timeline-splitter"]').bounding_box()
    x, y = sp["x"] + sp["width"] / 2, sp["y"] + 100
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x - 100, y, steps=4)
    page.mouse.up()
    page.wait_for_timeout(200)
    side2 = page.locator('[data-testid="timeline-side"]').bounding_box()
    tl2 = page.locator(TIMELINE).bounding_box()
    assert side2["width"] == pytest.approx(side["width"] + 100, abs=3)
    assert tl2["width"] == pytest.approx(tl["width"] - 100, abs=3)
    # the canvas follows the narrower timeline
    page.wait_for_function(
        "([sel, w]) => Math.abs(document.querySelector(sel).getBoundingClientRect().width - w) < 3",
        arg=[MAIN, tl2["width"] - 2],
    )
    assert rec.errors == []


def test_label_column_resizes_and_shows_whole_names(tb_samples, page, rec):
    open_trace(page, tb_samples, **PROFILE)
    assert page.evaluate("window.__timeline.labelW()") == 210
    box = page.locator(MAIN).bounding_box()
    y = box["y"] + box["height"] - 20
    page.mouse.move(box["x"] + 210, y)
    page.mouse.down()
    page.mouse.move(box["x"] + 330, y, steps=4)
    page.mouse.up()
    assert page.evaluate("window.__timeline.labelW()") == pytest.approx(330, abs=1)
    # the tracks start at the new edge: time there is the window's start
    view = page.evaluate("window.__timeline.view()")
    t = page.evaluate(f"window.__timeline.hitTest({box['x'] + 300}, {box['y'] + 40})")
    assert t is None  # inside the label column: no event
    page.reload()
    page.wait_for_selector(READY)
    assert page.evaluate("window.__timeline.labelW()") == pytest.approx(330, abs=1)
    assert page.evaluate("window.__timeline.view()") == pytest.approx(view, abs=1e-2)
    # a narrow column cuts the long names; hovering a label shows the whole name
    page.mouse.move(box["x"] + 330, y)
    page.mouse.down()
    page.mouse.move(box["x"] + 130, y, steps=4)
    page.mouse.up()
    _, tracks = tb_samples.get("timeline/tracks", **PROFILE)
    track = max(tracks["tracks"], key=lambda t: len(t["name"]))
    ly = page.evaluate(f"window.__timeline.labelY('t:{track['id']}')")
    page.mouse.move(box["x"] + 40, ly)
    tip = page.locator(f"{TIMELINE} .tl-tooltip")
    tip.wait_for(state="visible")
    assert tip.inner_text() == track["name"]
    group = tracks["groups"][0]
    gy = page.evaluate(f"window.__timeline.labelY('g:{group['id']}')")
    page.mouse.move(box["x"] + 40, gy)
    page.wait_for_function(
        "([sel, name]) => document.querySelector(sel).textContent === name",
        arg=[f"{TIMELINE} .tl-tooltip", group["name"]],
    )
    assert rec.errors == []

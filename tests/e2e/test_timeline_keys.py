"""The timeline's keys (issue 24, item 13) in a real chromium: ? shows the key help and Esc closes it, F
zooms to the selection, M marks it, holding W zooms smoothly (every animation frame, with a single
keydown: no key repeat), the box-selected range and the mark are kept in the address and restored on
reload."""

from __future__ import annotations

import itertools

import pytest

from tests.e2e.test_timeline import MAIN, READY, open_trace, url_key, url_view, wait_view_change

RUN = "resnet_like_cpu"
PROFILE = {"run": RUN, "worker": "worker0", "span": "1"}
HELP = '[data-testid="timeline-keys"]'


def _select_range(page, x0: float, x1: float) -> None:
    box = page.locator(MAIN).bounding_box()
    y = box["y"] + 40
    page.keyboard.down("Shift")
    page.mouse.move(box["x"] + x0, y)
    page.mouse.down()
    page.mouse.move(box["x"] + x1, y, steps=5)
    page.mouse.up()
    page.keyboard.up("Shift")


def _wait_url_key(page, key: str, present: bool = True) -> str | None:
    for _ in range(50):
        v = url_key(page, key)
        if (v is not None) == present:
            return v
        page.wait_for_timeout(100)
    raise AssertionError(f"{key} {'never came into' if present else 'stayed in'} the address: {page.url}")


def test_help_overlay_toggles_with_question_mark_and_esc(tb_samples, page, rec):
    open_trace(page, tb_samples, **PROFILE)
    assert not page.locator(HELP).is_visible()
    page.locator('[data-testid="timeline"]').focus()
    page.keyboard.press("?")
    assert page.locator(HELP).is_visible()
    text = page.inner_text(HELP)
    for key in ("W / S", "F", "M", "Esc", "?"):
        assert key in text
    page.keyboard.press("Escape")
    assert not page.locator(HELP).is_visible()
    page.keyboard.press("?")
    page.keyboard.press("?")
    assert not page.locator(HELP).is_visible()
    page.click('[data-testid="timeline-keys-button"]')
    assert page.locator(HELP).is_visible()
    # the hint line names Esc
    assert "Esc" in page.inner_text(".tl-help")
    assert rec.errors == []


def test_f_zooms_to_the_range_then_to_the_event(tb_samples, page, rec):
    open_trace(page, tb_samples, **PROFILE)
    _select_range(page, 400, 600)
    page.wait_for_function("window.__timeline.range() !== null")
    r = page.evaluate("window.__timeline.range()")
    before = url_view(page)
    page.keyboard.press("f")
    v0, v1 = wait_view_change(page, before)
    width = r["t1"] - r["t0"]
    assert v0 == pytest.approx(r["t0"] - 0.05 * width, rel=1e-3, abs=1e-2)
    assert v1 == pytest.approx(r["t1"] + 0.05 * width, rel=1e-3, abs=1e-2)
    # an event selected after the range: F zooms to the event
    _, tracks = tb_samples.get("timeline/tracks", **PROFILE)
    status, ev = tb_samples.get("timeline/longest", **PROFILE, name="optimizer_step", kind="any")
    assert status == 200
    page.goto(page.url.split("?")[0] + "?" + page.url.split("?")[1] + f"&sel={ev['id']}")
    page.wait_for_selector(READY)
    page.wait_for_selector('[data-testid="timeline-details-name"]')
    before = url_view(page)
    page.locator('[data-testid="timeline"]').focus()
    page.keyboard.press("f")
    v0, v1 = wait_view_change(page, before)
    start = ev["start_us"] - tracks["start_us"]
    assert v0 == pytest.approx(start - 0.05 * ev["dur_us"], abs=0.05 * ev["dur_us"] * 0.01 + 0.01)
    assert v1 == pytest.approx(start + 1.05 * ev["dur_us"], abs=0.05 * ev["dur_us"] * 0.01 + 0.01)
    assert rec.errors == []


def test_range_and_mark_are_kept_in_the_address(tb_samples, page, rec):
    open_trace(page, tb_samples, **PROFILE)
    _select_range(page, 400, 700)
    r0 = float(_wait_url_key(page, "r0"))
    r1 = float(_wait_url_key(page, "r1"))
    r = page.evaluate("window.__timeline.range()")
    assert (r0, r1) == pytest.approx((r["t0"], r["t1"]), abs=1e-3)
    # M marks it; Esc clears the range but the mark stays
    page.keyboard.press("m")
    m0 = float(_wait_url_key(page, "m0"))
    assert m0 == pytest.approx(r0, abs=1e-3)
    page.keyboard.press("Escape")
    _wait_url_key(page, "r0", present=False)
    assert page.evaluate("window.__timeline.range()") is None
    mark = page.evaluate("window.__timeline.mark()")
    assert (mark["t0"], mark["t1"]) == pytest.approx((r0, r1), abs=1e-3)
    # a new range, reloaded: the range (and its aggregate table) and the mark come back
    _select_range(page, 300, 500)
    page.locator('[data-testid="timeline-aggregate"] [role="cell"][data-col="name"]').first.wait_for()
    s0 = float(_wait_url_key(page, "r0"))
    page.wait_for_timeout(300)
    s1 = float(url_key(page, "r1"))
    page.reload()
    page.wait_for_selector(READY)
    r = page.evaluate("window.__timeline.range()")
    assert (r["t0"], r["t1"]) == pytest.approx((s0, s1), abs=1e-3)
    page.locator('[data-testid="timeline-aggregate"] [role="cell"][data-col="name"]').first.wait_for()
    mark = page.evaluate("window.__timeline.mark()")
    assert (mark["t0"], mark["t1"]) == pytest.approx((r0, r1), abs=1e-3)
    # M marks the current range (replacing the mark); M on the marked range again removes it
    page.keyboard.press("m")
    page.wait_for_function(f"Math.abs(window.__timeline.mark().t0 - {s0}) < 1e-3")
    page.keyboard.press("m")
    page.wait_for_function("window.__timeline.mark() === null")
    _wait_url_key(page, "m0", present=False)
    assert rec.errors == []


# the view's width at every animation frame for `ms` while the test holds a key
SAMPLE_JS = """async (ms) => {
    const spans = [];
    const t0 = performance.now();
    await new Promise((resolve) => {
        const step = () => {
            const v = window.__timeline.view();
            spans.push(v.t1 - v.t0);
            if (performance.now() - t0 >= ms) return resolve();
            requestAnimationFrame(step);
        };
        requestAnimationFrame(step);
    });
    return spans;
}"""


def test_holding_w_zooms_smoothly(tb_samples, page, rec):
    open_trace(page, tb_samples, **PROFILE)
    page.locator('[data-testid="timeline"]').focus()
    start = page.evaluate("(() => { const v = window.__timeline.view(); return v.t1 - v.t0; })()")
    # one keydown (Playwright sends no key repeat): the view keeps narrowing while the key is down
    page.keyboard.down("w")
    spans = page.evaluate(SAMPLE_JS, 600)
    page.keyboard.up("w")
    changes = sum(1 for a, b in itertools.pairwise(spans) if b < a)
    assert changes >= 5, f"the view narrowed on {changes} frames only: {spans}"
    assert all(b <= a for a, b in itertools.pairwise(spans))
    assert spans[-1] < start * 0.8
    # released: it stops
    page.wait_for_timeout(100)
    after = page.evaluate(SAMPLE_JS, 300)
    assert after[0] == pytest.approx(after[-1])
    # S zooms back out the same way
    page.keyboard.down("s")
    spans = page.evaluate(SAMPLE_JS, 400)
    page.keyboard.up("s")
    assert sum(1 for a, b in itertools.pairwise(spans) if b > a) >= 5
    assert rec.errors == []

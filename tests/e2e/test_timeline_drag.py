"""Drag-pan cost (issue 24, item 14) in a real chromium: while the view only pans, the label column is
copied from its own layer instead of drawn again (its text was a quarter of a frame's drawing on a
software canvas), and what is on screen stays right: the same label pixels after the pan, new ones after
a collapse. The frame rate itself is measured by benchmarks/bench_timeline_browser.py, not here."""

from __future__ import annotations

from tests.e2e.test_timeline import MAIN, READY, open_trace, url_view, wait_view_change

PROFILE = {"run": "resnet_like_cpu", "worker": "worker0", "span": "1"}

LABEL_PIXELS_JS = """() => {
    const c = document.querySelector('[data-testid="timeline"] .tl-main canvas');
    const d = c.getContext('2d').getImageData(0, 0, 200, c.height).data;
    let h = 0;
    for (let i = 0; i < d.length; i += 4) h = (h * 31 + d[i] * 7 + d[i + 1] * 3 + d[i + 2]) | 0;
    return h;
}"""


def test_drag_pan_copies_the_label_column(tb_samples, page, rec):
    open_trace(page, tb_samples, **PROFILE, t0="100000", t1="150000")
    page.wait_for_timeout(300)
    before = page.evaluate("window.__timeline.stats()")
    pixels = page.evaluate(LABEL_PIXELS_JS)
    view = url_view(page)
    box = page.locator(MAIN).bounding_box()
    x, y = box["x"] + 700, box["y"] + 40
    page.mouse.move(x, y)
    page.mouse.down()
    for k in range(1, 21):
        page.mouse.move(x - 15 * k, y)
    page.mouse.up()
    wait_view_change(page, view)
    page.wait_for_selector(READY)
    after = page.evaluate("window.__timeline.stats()")
    assert after["frames"] - before["frames"] >= 5
    assert isinstance(before["labelPaints"], int) and before["labelPaints"] >= 1
    assert after["labelPaints"] == before["labelPaints"], (
        "the label column was drawn again while only panning"
    )
    assert page.evaluate(LABEL_PIXELS_JS) == pixels
    # collapsing a group draws it again, with the new labels
    _, tracks = tb_samples.get("timeline/tracks", **PROFILE)
    group = f"g:{tracks['groups'][0]['id']}"
    gy = page.evaluate(f"window.__timeline.labelY({group!r})")
    page.mouse.click(box["x"] + 20, gy)
    page.wait_for_function(f"window.__timeline.stats().labelPaints > {after['labelPaints']}")
    page.wait_for_timeout(100)
    assert page.evaluate(LABEL_PIXELS_JS) != pixels
    assert rec.errors == []

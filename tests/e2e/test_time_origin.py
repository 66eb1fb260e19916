"""One time origin (issue 24, item 6): the Memory view counts its times from the profile start the
timeline uses, so "Allocated at" lies inside the op its "▸ timeline" link selects."""

from __future__ import annotations

from tests.e2e.conftest import app_url
from tests.e2e.test_timeline import url_key

RUN = "resnet_like_cpu"


def test_allocation_times_count_from_the_timeline_start(tb_samples, page, rec):
    _, spans = tb_samples.get("spans", run=RUN, worker="worker0")
    P = {"run": RUN, "worker": "worker0", "span": spans[0]}
    _, tracks = tb_samples.get("timeline/tracks", **P)
    _, curve = tb_samples.get("memory/curve", **P)
    assert curve["origin_ts"] == tracks["start_us"]
    assert curve["first_ts"] > tracks["start_us"]  # the two origins differ in this trace
    page.goto(app_url(tb_samples, view="Memory", **P))
    row = page.locator(
        '[data-testid="memory-events-table"] [role="row"]:has([data-testid="show-in-timeline"])'
    ).first
    row.wait_for(timeout=60_000)
    shown = float(row.locator('[role="cell"][data-col="alloc"]').get_attribute("data-value"))
    row.hover()
    row.locator('[data-testid="show-in-timeline"]').click()
    page.wait_for_selector('[data-testid="timeline-details-name"]', timeout=60_000)
    for _ in range(50):
        if url_key(page, "sel") and url_key(page, "find") is None:
            break
        page.wait_for_timeout(100)
    _, ev = tb_samples.get("timeline/event", **P, id=url_key(page, "sel"))
    start = ev["start_us"] - tracks["start_us"]
    assert start <= shown <= start + ev["dur_us"]  # the allocation lies inside the op it links to
    assert rec.errors == []

"""The timeline's search box (issue 24, item 4): Enter right after typing waits for the answer and goes
to the first match at or after the window's start, selected and centred at the current zoom; stepping
reaches matches past the first 10,000; Shift+Enter from the first wraps to the last match."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.conftest import app_url
from tests.e2e.test_timeline import READY, url_key, url_view
from tests.fixtures.tensorboard_server import TensorBoard, tensorboard
from tests.fixtures.trace_builder import TraceBuilder

N = 12_000  # needles: more than one page of 10,000 matches
BOX = '[data-testid="timeline-search"]'
COUNT = '[data-testid="timeline-search-count"]'


@pytest.fixture(scope="module")
def tb_needles(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    """12,000 `needle` ops of 10 µs every 100 µs (1.2 s), with a `hay` op between each two."""
    logdir = tmp_path_factory.mktemp("needles")
    b = TraceBuilder()
    b.step(1, 0, N * 100 + 100)
    for i in range(N):
        b.op("needle", 50 + i * 100, 10)
        b.op("hay", 80 + i * 100, 10)
    b.write(logdir / "needles" / "w0.pt.trace.json.gz")
    with tensorboard(logdir, tmp=tmp_path_factory.mktemp("tb")) as tb:
        tb.wait_loaded(timeout=300)
        yield tb


def _profile(tb: TensorBoard) -> dict[str, str]:
    _, spans = tb.get("spans", run="needles", worker="w0")
    return {"run": "needles", "worker": "w0", "span": spans[0]}


def _match(tb: TensorBoard, rank: int) -> dict:
    _, page = tb.get("timeline/search", **_profile(tb), q="needle", limit=1, offset=rank)
    assert page["offset"] == rank and page["total"] == N
    return page["matches"][0]


def _open(page, tb: TensorBoard, t0: float, t1: float) -> float:
    page.goto(app_url(tb, view="Trace", **_profile(tb), t0=f"{t0:.3f}", t1=f"{t1:.3f}"))
    page.wait_for_selector(READY, timeout=60_000)
    _, tracks = tb.get("timeline/tracks", **_profile(tb))
    return tracks["start_us"]


def _wait_sel(page, want: str) -> None:
    for _ in range(100):
        if url_key(page, "sel") == want:
            return
        page.wait_for_timeout(100)
    assert url_key(page, "sel") == want


def test_enter_right_away_goes_to_the_first_match_after_the_window_start(tb_needles, page, rec):
    start = _open(page, tb_needles, 500_025, 501_025)  # a 1 ms window, needles every 100 µs
    before = url_view(page)
    page.fill(BOX, "needle")
    page.press(BOX, "Enter")  # at once: the count is still on its way
    page.locator(COUNT, has_text=" of 12,000").wait_for()
    # the needle at 500,050 µs is rank 5,000 (needles start at 50, 150, …)
    want = _match(tb_needles, 5_000)
    assert want["start_us"] - start == pytest.approx(500_050, abs=1)
    assert page.inner_text(COUNT) == "5,001 of 12,000"
    _wait_sel(page, want["id"])
    page.locator('[data-testid="timeline-details-name"]', has_text="needle").wait_for()
    page.wait_for_timeout(300)
    t0, t1 = url_view(page)
    assert t1 - t0 == pytest.approx(before[1] - before[0], rel=1e-3)  # the zoom is kept
    mid = want["start_us"] - start + want["dur_us"] / 2
    assert (t0 + t1) / 2 == pytest.approx(mid, abs=1)  # centred on the match
    assert rec.errors == []


def test_stepping_reaches_past_the_first_10000_and_shift_enter_wraps_to_the_last(tb_needles, page, rec):
    _open(page, tb_needles, 999_925, 1_000_925)  # first needle at or after: 999,950 µs, rank 9,999
    page.fill(BOX, "needle")
    page.locator(COUNT, has_text="12,000 matches").wait_for()
    page.press(BOX, "Enter")
    page.locator(COUNT, has_text="10,000 of 12,000").wait_for()
    _wait_sel(page, _match(tb_needles, 9_999)["id"])
    page.press(BOX, "Enter")
    page.locator(COUNT, has_text="10,001 of 12,000").wait_for()
    _wait_sel(page, _match(tb_needles, 10_000)["id"])
    # from the first match, Shift+Enter wraps to the last one (not the 10,000th)
    _open(page, tb_needles, 0, 1_000)
    page.fill(BOX, "needle")
    page.press(BOX, "Enter")
    page.locator(COUNT, has_text="1 of 12,000").wait_for()
    _wait_sel(page, _match(tb_needles, 0)["id"])
    page.press(BOX, "Shift+Enter")
    page.locator(COUNT, has_text="12,000 of 12,000").wait_for()
    _wait_sel(page, _match(tb_needles, N - 1)["id"])
    assert rec.errors == []

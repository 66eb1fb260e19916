"""The Distributed view of a job of many ranks in chromium: the rank × step heatmap shows a planted
straggler as a row of its own colour, the slowest ranks are named, the per-rank list is virtualized.

1024 small rank files (tests/fixtures/builders_distributed.py) are written into tmp: step 1's straggler
is rank 200 (100 µs late), step 2's is rank 37 (40 µs late). Computation (not overlapped) per step, by
hand: 200 µs on a bystander, 300 on rank 200 in step 1, 240 on rank 37 in step 2, so the heatmap's
colour scale runs 200 → 300 µs (lightest → darkest).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.conftest import app_url, shot
from tests.fixtures.builders_distributed import write_job
from tests.fixtures.tensorboard_server import TensorBoard, tensorboard

WORLD = 1024
LIGHT, DARK = [239, 243, 255], [8, 48, 107]  # components/Heatmap.tsx cellColor's ends


@pytest.fixture(scope="module")
def tb_ranks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    logdir = tmp_path_factory.mktemp("ranks")
    write_job(logdir / "job", WORLD, {0: (200, 100.0), 1: (37, 40.0)})
    with tensorboard(logdir, tmp=tmp_path_factory.mktemp("tb")) as tb:
        tb.wait_loaded(timeout=300)
        yield tb


def pixel(page, row: int, col: int) -> list[int]:
    """The colour at the middle of a heatmap cell (from the canvas itself)."""
    return page.evaluate(
        """([row, col]) => {
            const box = document.querySelector('[data-testid=rank-heatmap]');
            const c = box.querySelector('canvas');
            const rowH = Number(box.dataset.rowHeight);
            const left = Number(box.dataset.labelWidth), top = Number(box.dataset.headerHeight);
            const colW = Number(box.dataset.colWidth), dpr = c.width / c.clientWidth;
            const x = Math.floor((left + (col + 0.5) * colW) * dpr);
            const y = Math.floor((top + (row + 0.5) * rowH) * dpr);
            return Array.from(c.getContext('2d').getImageData(x, y, 1, 1).data.slice(0, 3));
        }""",
        [row, col],
    )


def test_heatmap_and_slowest_ranks_at_1024_ranks(tb_ranks, page, rec):
    page.goto(app_url(tb_ranks, run="job", view="Distributed"))
    heat = page.locator('[data-testid="rank-heatmap"]')
    heat.wait_for(timeout=120_000)
    assert heat.get_attribute("data-rows") == str(WORLD) and heat.get_attribute("data-cols") == "2"
    # the slowest ranks are named: each was last to arrive once; rank 200 caused the longer wait
    slowest = page.locator('[data-testid="slowest-ranks"] .slowest-rank')
    assert [slowest.nth(i).get_attribute("data-worker") for i in range(slowest.count())] == [
        "rank200",
        "rank37",
    ]
    assert "last in 1 round of 2" in slowest.first.inner_text()
    # computation: rank 200's step 1 is the darkest cell, a bystander's the lightest
    page.wait_for_function("() => document.querySelector('[data-testid=rank-heatmap] canvas').width > 0")
    assert pixel(page, 200, 0) == DARK
    assert pixel(page, 0, 0) == LIGHT and pixel(page, WORLD - 1, 1) == LIGHT
    assert pixel(page, 37, 0) == LIGHT and pixel(page, 37, 1) != LIGHT  # 240 µs: in between
    page.evaluate("window.scrollTo(0, 0)")
    shot(page, "distributed_ranks.png", max_height=1400)
    # hovering names the cell
    row_h = float(heat.get_attribute("data-row-height"))
    left, top = float(heat.get_attribute("data-label-width")), float(heat.get_attribute("data-header-height"))
    heat.locator("canvas").hover(position={"x": left + 5, "y": top + (200 + 0.5) * row_h})  # scrolls it in
    hover = page.locator('[data-testid="rank-heatmap-hover"]')
    assert hover.inner_text() == "rank200, step 1: 300 µs"
    # waiting: everyone waited 100 µs in step 1 except the straggler, which waited none
    page.select_option('[data-testid="select-metric"]', "synchronizing")
    page.wait_for_function("() => true")
    assert pixel(page, 200, 0) == LIGHT and pixel(page, 0, 0) == DARK
    # the distribution names the extremes over ranks
    dist = page.locator('[data-testid="distribution-table"]')
    assert "rank200 (250 µs)" in dist.inner_text()  # computation: mean of 300 and 200
    # the per-rank list and the collectives over all ranks
    table = page.locator('[data-testid="rank-table"]')
    assert table.locator(".dt-item").count() < 60  # virtualized: only the rows in view
    assert page.locator('[data-testid="overlap-chart"]').count() == 0  # no bars for 1024 workers
    coll = page.locator('[data-testid="collectives-job-table"]').inner_text()
    assert "all_reduce" in coll and "rank200" in coll
    assert rec.errors == []


def test_heatmap_dark_screenshot(tb_ranks, browser):
    ctx = browser.new_context(color_scheme="dark", viewport={"width": 1280, "height": 900})
    try:
        pg = ctx.new_page()
        pg.goto(app_url(tb_ranks, run="job", view="Distributed"))
        pg.locator('[data-testid="rank-heatmap"]').wait_for(timeout=120_000)
        pg.wait_for_function("() => document.querySelector('[data-testid=rank-heatmap] canvas').width > 0")
        assert pg.evaluate("document.documentElement.dataset.theme") == "dark"
        # the straggler's cell keeps the scale's darkest colour on the dark page
        assert pixel(pg, 200, 0) == DARK
        pg.evaluate("window.scrollTo(0, 0)")
        shot(pg, "distributed_ranks_dark.png", max_height=1400)
    finally:
        ctx.close()

""" "▸ timeline" follows the row's grouping (issue 24, item 5): an Operator row grouped by input shape opens
the longest call of that name and shape, a Kernel row grouped by op and launch shape the longest launch of
that name, op and launch shape, not the longest of the name."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.conftest import app_url
from tests.e2e.test_timeline import url_key
from tests.fixtures.tensorboard_server import TensorBoard, tensorboard
from tests.test_timeline_routes import write_shapes_trace

P = {"run": "shapes", "worker": "w0"}


@pytest.fixture(scope="module")
def tb_shapes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    logdir = tmp_path_factory.mktemp("shapes")
    (logdir / "shapes").mkdir()
    write_shapes_trace(logdir / "shapes" / "w0.pt.trace.json")
    with tensorboard(logdir, tmp=tmp_path_factory.mktemp("tb")) as tb:
        tb.wait_loaded(timeout=120)
        yield tb


def _profile(tb: TensorBoard) -> dict[str, str]:
    _, spans = tb.get("spans", **P)
    return {**P, "span": spans[0]}


def _event(tb: TensorBoard, id_: str) -> dict:
    _, ev = tb.get("timeline/event", **_profile(tb), id=id_)
    return ev


def _wait_sel(page) -> str:
    page.wait_for_selector('[data-testid="timeline-details-name"]', timeout=60_000)
    for _ in range(50):
        if url_key(page, "sel") and url_key(page, "find") is None:
            break
        page.wait_for_timeout(100)
    assert url_key(page, "fwith") is None
    return url_key(page, "sel")


def test_an_operator_row_grouped_by_shape_opens_its_own_longest_call(tb_shapes, page, rec):
    page.goto(app_url(tb_shapes, view="Operator", group="name_input_shape"))
    table = page.locator('[data-testid="op-table"]')
    row = table.locator(
        '[role="row"]', has=page.locator('[role="cell"][data-col="input_shape"]', has_text="2, 3")
    )
    row.first.wait_for(timeout=60_000)
    row.first.locator('[data-testid="show-in-timeline"]').click()
    ev = _event(tb_shapes, _wait_sel(page))
    assert ev["name"] == "aten::mm" and ev["dur_us"] == 120  # not the 500 µs call on [8, 8]
    assert rec.errors == []


def test_a_kernel_row_grouped_by_launch_opens_its_own_longest_launch(tb_shapes, page, rec):
    page.goto(app_url(tb_shapes, view="Kernel", kgroup="detailed"))
    table = page.locator('[data-testid="kernel-table"]')
    row = table.locator(
        '[role="row"]', has=page.locator('[role="cell"][data-col="grid"]', has_text="[1, 1, 1]")
    )
    row.first.wait_for(timeout=60_000)
    row.first.locator('[data-testid="show-in-timeline"]').click()
    ev = _event(tb_shapes, _wait_sel(page))
    assert ev["name"] == "gemm" and ev["dur_us"] == 40  # not the 300 µs launch on grid 4×1×1
    assert rec.errors == []

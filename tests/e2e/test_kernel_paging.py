"""The Kernel view on more kernel names than one page (10 000): the table says how many there are,
searches and sorts on the server and pages; the pies still cover every kernel."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest

from tests.e2e.conftest import app_url
from tests.fixtures.tensorboard_server import TensorBoard, tensorboard
from tests.fixtures.trace_builder import V100, TraceBuilder

N = 10_050  # kern_00000 … kern_10049, kern_i lasting i + 1 µs: kern_10049 is the longest


@pytest.fixture(scope="module")
def tb_kernels(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    logdir = tmp_path_factory.mktemp("kernels")
    b = TraceBuilder(device_properties=[V100])
    total = sum(i + 1 for i in range(N)) + 2 * N
    b.step(1, 0, total + 100)
    t = 0.0
    for i in range(N):
        b.launch(f"kern_{i:05d}", t, 1, t + 1, i + 1)
        t += i + 3
    path = b.write(logdir / "many" / "w0.pt.trace.json.gz")
    os.utime(path, (time.time() - 60,) * 2)
    with tensorboard(logdir, tmp=tmp_path_factory.mktemp("tb")) as tb:
        tb.wait_loaded(timeout=180)
        yield tb


def test_kernel_table_pages_and_searches(tb_kernels, page, rec):
    page.goto(app_url(tb_kernels, run="many", view="Kernel"))
    table = page.locator('[data-testid="kernel-table"]')
    page.wait_for_selector('[data-testid="kernel-table"] [role="cell"][data-col="name"]', timeout=60_000)

    def count_is(text: str) -> None:
        page.wait_for_function(
            "t => document.querySelector('[data-testid=kernel-table] [data-testid=row-count]').textContent === t",
            arg=text,
        )

    def first_name() -> str:
        return table.locator('[role="cell"][data-col="name"]').first.inner_text()

    count_is(f"1–10,000 of {N:,} rows")
    assert first_name() == "kern_10049"  # the longest first, by total time over every kernel
    # the top-kernels pie is drawn from the route's top list and totals
    assert page.locator('[data-testid="pie-kernels"] canvas').count() == 1
    # sorting ascending by total is done by the route over every kernel: the 1 µs one first
    header = table.locator('[role="columnheader"][data-col="total"]')
    header.click()
    page.wait_for_function(
        "() => document.querySelector('[data-testid=kernel-table] [role=cell][data-col=name]')"
        "?.textContent === 'kern_00000'"
    )
    # the next page continues where this one ended
    table.locator("button", has_text="Next").click()
    count_is(f"10,001–{N:,} of {N:,} rows")
    assert first_name() == "kern_10000"
    # search: a name on no page shown so far is found by the route
    table.locator('input[type="search"]').fill("kern_0004")
    count_is(f"1–10 of 10 rows ({N:,} in all)")
    assert table.locator('[role="cell"][data-col="name"]').all_inner_texts()[:2] == [
        "kern_00040",
        "kern_00041",
    ]
    assert rec.errors == []

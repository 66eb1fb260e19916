"""What the logdir scan skipped is shown on the page: a run folder holding symlink loops
(``ln -s . a; ln -s . b``) still loads, and a banner above the view lists the skipped paths."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest

from tests.e2e.conftest import app_url, shot
from tests.fixtures.tensorboard_server import TensorBoard, tensorboard
from tests.fixtures.trace_builder import TraceBuilder


@pytest.fixture(scope="module")
def tb_loops(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    logdir = tmp_path_factory.mktemp("loops")
    b = TraceBuilder()
    b.step(1, 0, 1000)
    b.op("aten::mm", 10, 500)
    path = b.write(logdir / "run" / "w0.pt.trace.json.gz")
    os.utime(path, (time.time() - 60,) * 2)
    os.symlink(".", logdir / "run" / "a")
    os.symlink(".", logdir / "run" / "b")
    with tensorboard(logdir, tmp=tmp_path_factory.mktemp("tb")) as tb:
        tb.wait_loaded(timeout=60)
        yield tb


def test_scan_warnings_banner(tb_loops, page, rec):
    _, runs = tb_loops.get("runs")
    assert [r["name"] for r in runs["runs"]] == ["run"]  # no phantom run/a, run/a/b, …
    warnings = runs["scan_warnings"]
    assert len(warnings) == 2 and all("already scanned" in w for w in warnings)
    page.goto(app_url(tb_loops, run="run", view="Overview"))
    banner = page.locator('[data-testid="scan-warnings"]')
    banner.wait_for()
    summary = banner.locator("summary").inner_text()
    assert "The log directory scan skipped 2 paths" in summary
    # the list opens on a click and names each skipped link and why
    assert not banner.locator("li").first.is_visible()
    banner.locator("summary").click()
    assert banner.locator("li").all_inner_texts() == warnings
    assert any("run/a" in w for w in warnings) and any("run/b" in w for w in warnings)
    # the run itself is there and shows its view
    page.wait_for_selector('[data-testid="view"][data-view="overview"] .section')
    shot(page, "scan_warnings.png", max_height=900)
    assert rec.errors == []

"""What the app says when there is nothing, or something broken, to show."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator

import pytest

from tests.e2e.conftest import app_url, shot
from tests.fixtures.paths import SAMPLES
from tests.fixtures.tensorboard_server import TensorBoard, tensorboard


@pytest.fixture(scope="module")
def tb_broken(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    good = SAMPLES / "plain_no_steps" / "worker0.pt.trace.json"
    if not good.exists():
        pytest.skip("samples/plain_no_steps is missing")
    logdir = tmp_path_factory.mktemp("broken")
    (logdir / "mixed").mkdir()
    shutil.copy(good, logdir / "mixed" / "worker0.pt.trace.json")
    (logdir / "mixed" / "worker1.pt.trace.json").write_text("this is not a trace")
    (logdir / "all_broken").mkdir()
    (logdir / "all_broken" / "worker0.pt.trace.json").write_bytes(b"\x00\x01 binary junk")
    with tensorboard(logdir, tmp=tmp_path_factory.mktemp("tb")) as tb:
        tb.wait_loaded(timeout=60)
        yield tb


def test_file_errors_are_shown(tb_broken, page, rec):
    _, runs = tb_broken.get("runs")
    mixed = next(r for r in runs["runs"] if r["name"] == "mixed")
    assert mixed["errors"], "the plugin should report the broken file"
    page.goto(app_url(tb_broken, run="mixed"))
    box = page.locator('[data-testid="file-errors"]')
    box.wait_for()
    text = box.inner_text()
    assert "1 file of this run could not be loaded" in text
    for e in mixed["errors"]:
        assert e["message"] in text
        assert e["file"] in text
    # the good file is still shown
    page.wait_for_selector('[data-testid="view"][data-view="overview"] .section')
    shot(page, "file_errors.png")
    assert rec.errors == []


def test_run_whose_files_all_failed(tb_broken, page, rec):
    _, runs = tb_broken.get("runs")
    broken = next(r for r in runs["runs"] if r["name"] == "all_broken")
    assert broken["state"] == "error"
    page.goto(app_url(tb_broken, run="all_broken"))
    page.wait_for_selector('[data-testid="file-errors"]')
    assert broken["errors"][0]["message"] in page.inner_text('[data-testid="file-errors"]')
    assert "Every trace file of this run failed to load" in page.inner_text('[data-testid="empty"]')
    assert page.locator('[data-testid="error"]').count() == 0
    assert rec.errors == []


def test_no_runs_says_why(tmp_path, page, rec):
    with tensorboard(tmp_path, tmp=tmp_path) as tb:
        page.goto(app_url(tb))
        page.wait_for_selector('[data-testid="empty"]')
        text = page.inner_text('[data-testid="empty"]')
        assert "No profiler runs found" in text or "Scanning" in text
        page.wait_for_function(
            "() => document.querySelector('[data-testid=empty]').textContent.includes('No profiler runs found')",
            timeout=30_000,
        )
        assert "tensorboard_trace_handler" in page.inner_text('[data-testid="empty"]')
    assert rec.errors == []


def test_loading_progress_then_view(tmp_path, page, rec):
    """A trace still being written: the run shows as loading with its file count, then loads."""
    good = SAMPLES / "plain_no_steps" / "worker0.pt.trace.json"
    if not good.exists():
        pytest.skip("samples/plain_no_steps is missing")
    target = tmp_path / "logdir" / "growing" / "worker0.pt.trace.json"
    target.parent.mkdir(parents=True)
    target.write_bytes(good.read_bytes())
    stop = threading.Event()

    def grow() -> None:  # trailing spaces keep the JSON valid while the size keeps changing
        while not stop.wait(0.15):
            with open(target, "ab") as f:
                f.write(b" ")

    writer = threading.Thread(target=grow, daemon=True)
    writer.start()
    try:
        with tensorboard(tmp_path / "logdir", tmp=tmp_path) as tb:
            page.goto(app_url(tb))
            progress = page.locator('[data-testid="run-progress"]')
            progress.wait_for(timeout=30_000)
            assert "Loading growing: 0 of 1 files" in progress.inner_text()
            assert "(loading)" in page.locator('[data-testid="select-run"] option').first.inner_text()
            stop.set()
            writer.join()
            page.wait_for_selector('[data-testid="view"][data-view="overview"] .section', timeout=60_000)
            assert progress.count() == 0
    finally:
        stop.set()
    assert rec.errors == []

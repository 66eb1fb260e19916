"""Diff's memory note (issue 24, item 8): two runs whose memory records carry no totals (PyTorch < 1.10,
as kineto resnet50 0 vs 4) are told so, not "neither side recorded memory"."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.conftest import app_url
from tests.fixtures.tensorboard_server import TensorBoard, tensorboard
from tests.test_diff import _memory_without_totals


@pytest.fixture(scope="module")
def tb_mem(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    logdir = tmp_path_factory.mktemp("diffmem")
    for run in ("base", "exp"):
        (logdir / run).mkdir()
        _memory_without_totals(logdir / run / "w0.pt.trace.json")
    with tensorboard(logdir, tmp=tmp_path_factory.mktemp("tb")) as tb:
        tb.wait_loaded(timeout=120)
        yield tb


def test_the_memory_note_says_both_sides_recorded_memory(tb_mem, page, rec):
    page.goto(app_url(tb_mem, run="exp", worker="w0", view="Diff", base_run="base", base_worker="w0"))
    notes = page.locator('[data-testid="diff-notes"]')
    notes.wait_for(timeout=60_000)
    text = notes.inner_text()
    assert "neither side recorded memory" not in text
    assert "both sides recorded memory without totals" in text
    assert rec.errors == []

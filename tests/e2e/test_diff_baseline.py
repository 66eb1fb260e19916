"""The Diff view's default baseline in chromium: the same run's other span, else the run with the most
similar name of the same device kind (not the first run by name); a note when both sides are the same
profile. Before: the first other run by name (here a CPU run) and no note."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest

from tests.e2e.conftest import app_url
from tests.fixtures.builders_diff import gpu_trace
from tests.fixtures.tensorboard_server import TensorBoard, tensorboard
from tests.fixtures.trace_builder import TraceBuilder


@pytest.fixture(scope="module")
def tb_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    logdir = tmp_path_factory.mktemp("diff_baseline_logdir")
    paths = [
        gpu_trace(logdir / "model_v1" / "w0.1.pt.trace.json.gz", experiment=False),
        gpu_trace(logdir / "model_v2" / "w0.1.pt.trace.json.gz", experiment=False),
        gpu_trace(logdir / "model_v2" / "w0.2.pt.trace.json.gz", experiment=True),
    ]
    cpu = TraceBuilder()  # first run by name, but a CPU one
    cpu.step(1, 0, 1000)
    cpu.op("aten::mm", 10, 500)
    paths.append(cpu.write(logdir / "aaa_cpu" / "w0.1.pt.trace.json"))
    for path in paths:
        os.utime(path, (time.time() - 60,) * 2)
    with tensorboard(logdir, tmp=tmp_path_factory.mktemp("tb")) as tb:
        tb.wait_loaded(timeout=60)
        yield tb


def _baseline(page) -> str:
    page.wait_for_selector('[data-testid="diff-baseline"]')
    return page.inner_text('[data-testid="diff-baseline"]')


def test_same_runs_other_span_first(tb_runs, page, rec):
    page.goto(app_url(tb_runs, run="model_v2", worker="w0", span="2", view="Diff"))
    assert _baseline(page).startswith("model_v2 / w0 / span 1")
    assert "base_run=model_v2" in page.url and "base_span=1" in page.url
    assert "same profile" not in page.inner_text('[data-testid="diff-sides"]').lower()
    assert rec.errors == []


def test_most_similar_run_of_the_same_device_kind(tb_runs, page, rec):
    page.goto(app_url(tb_runs, run="model_v1", worker="w0", view="Diff"))
    assert _baseline(page).startswith("model_v2 / w0 / span 1")
    assert rec.errors == []


def test_note_when_both_sides_are_the_same_profile(tb_runs, page, rec):
    page.goto(
        app_url(
            tb_runs,
            run="model_v1",
            worker="w0",
            view="Diff",
            base_run="model_v1",
            base_worker="w0",
            base_span="1",
        )
    )
    page.wait_for_selector('[data-testid="diff-notes"]')
    assert "the baseline and the experiment are the same profile" in page.inner_text(
        '[data-testid="diff-notes"]'
    )
    assert (
        tb_runs.get("diff", run="model_v1", worker="w0", base_run="model_v1", base_worker="w0")[1][
            "same_profile"
        ]
        is True
    )
    assert rec.errors == []

"""The Distributed view of a PyTorch Lightning DDP run in chromium: the span holds one job per stage
(two ranks each, tests/test_distributed_jobs.py), the Job selector switches between them and the rank
list shows one worker per rank."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.conftest import app_url
from tests.fixtures.tensorboard_server import TensorBoard, tensorboard
from tests.test_distributed_jobs import _lightning_ddp

RUN = "lightning_logs/version_0"


@pytest.fixture(scope="module")
def tb_ddp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    logdir = _lightning_ddp(tmp_path_factory.mktemp("pl_ddp"))
    with tensorboard(logdir, tmp=tmp_path_factory.mktemp("tb")) as tb:
        tb.wait_loaded(timeout=120)
        yield tb


def _ranks(page) -> list[str]:
    return page.locator('[data-testid="select-cworker"] option').evaluate_all("os => os.map(o => o.value)")


def test_job_selector(tb_ddp, page, rec):
    page.goto(app_url(tb_ddp, view="Distributed", run=RUN))
    select = page.locator('[data-testid="select-job"]')
    select.wait_for()
    assert select.input_value() == "perf.fit.training_step"
    options = select.locator("option").evaluate_all("os => os.map(o => o.textContent)")
    assert options == ["perf.fit.training_step (2 workers)", "perf.test.test_step (2 workers)"]
    page.wait_for_selector('[data-testid="select-cworker"]')
    assert _ranks(page) == ["perf.fit.training_step.rank0", "perf.fit.training_step.rank1"]
    select.select_option("perf.test.test_step")
    for _ in range(100):
        if _ranks(page) == ["perf.test.test_step.rank0", "perf.test.test_step.rank1"]:
            break
        page.wait_for_timeout(100)
    assert _ranks(page) == ["perf.test.test_step.rank0", "perf.test.test_step.rank1"]
    assert "djob=perf.test.test_step" in page.url
    # a job that is not in this run (an address from elsewhere) falls back to the default one
    page.goto(app_url(tb_ddp, view="Distributed", run=RUN, djob="perf.predict.predict_step"))
    page.locator('[data-testid="select-job"]').wait_for()
    assert page.locator('[data-testid="select-job"]').input_value() == "perf.fit.training_step"
    assert rec.errors == []

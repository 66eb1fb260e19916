"""The page from ``torch-tb-profiler serve`` (no TensorBoard): opened at ``/``, it draws the Overview, and
a deep link draws the Trace view; under ``--path-prefix`` every request stays under the prefix."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.paths import SAMPLES
from tests.fixtures.serve_server import serve
from tests.fixtures.tensorboard_server import PREFIX, TensorBoard


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    env = {"TORCH_PROFILER_INDEX_DIR": "off", "TORCH_PROFILER_PROCESSES": "1"}
    with serve(SAMPLES, "--path-prefix", "/nb/proxy", env=env, tmp=tmp_path_factory.mktemp("serve")) as s:
        s.wait_loaded(120)
        yield s


def test_the_page_draws_from_serve(served: TensorBoard, page, rec, tmp_path: Path) -> None:
    page.goto(f"{served.url}/")
    assert page.url.startswith(f"{served.url}{PREFIX}/index.html")
    page.wait_for_selector(
        '[data-testid="view"][data-view="overview"] [data-testid="step-breakdown"]', timeout=60_000
    )
    runs = page.locator('[data-testid="select-run"] option').evaluate_all("os => os.map(o => o.value)")
    assert runs == [r["name"] for r in served.get("runs")[1]["runs"]]
    # a deep link, as the notebook helper makes: the Trace view of one run
    page.goto(f"{served.url}/?view=Trace&run=resnet_like_cpu")
    page.wait_for_selector('[data-testid="view"][data-view="trace"] canvas', timeout=60_000)
    assert page.input_value('[data-testid="select-run"]') == "resnet_like_cpu"
    assert all(u.startswith(served.url) for u in rec.requests if "pytorch_profiler" in u)
    assert rec.errors == []

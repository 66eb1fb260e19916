"""Browser tests: Debian's chromium driven by Python Playwright against a real ``tensorboard``.

Playwright never downloads a browser here: it launches ``/usr/bin/chromium`` (installed by
scripts/setup_e2e.sh when missing and root). Every page records the requests it makes; a test fails
if any went to a host other than 127.0.0.1 (the app must work offline).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tests.fixtures.paths import REPO, SAMPLES, SHARED_TRACES
from tests.fixtures.tensorboard_server import PREFIX, TensorBoard, tensorboard

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
IMAGES = REPO / "docs" / "images"
KINETO_GPU = (
    SHARED_TRACES / "kineto_samples" / "resnet50_num_workers_0" / "worker0.1623143089861.pt.trace.json.gz"
)
HTA_RANKS = SHARED_TRACES / "hta_samples" / "trace_filter"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    if not CHROMIUM.exists():
        pytest.skip(
            "/usr/bin/chromium is missing: run scripts/setup_e2e.sh as root (apt-get install chromium) "
            "to run the browser tests"
        )
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="Python playwright is not installed (pip install -e '.[test]')"
    )
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@dataclass
class Recorder:
    """What a browser context did: every request URL, console text, uncaught page errors."""

    requests: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def foreign(self) -> list[str]:
        out = []
        for url in self.requests:
            u = urlparse(url)
            if u.scheme in ("data", "blob", "about"):
                continue
            if u.hostname != "127.0.0.1":
                out.append(url)
        return out


@pytest.fixture
def rec() -> Recorder:
    return Recorder()


@pytest.fixture
def context(browser, rec: Recorder) -> Iterator[object]:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    ctx.on("request", lambda r: rec.requests.append(r.url))
    ctx.on("page", lambda pg: _watch(pg, rec))
    yield ctx
    ctx.close()
    assert rec.foreign() == [], f"requests left 127.0.0.1: {rec.foreign()}"


def _watch(page, rec: Recorder) -> None:
    page.on("console", lambda m: rec.console.append(m.text))
    page.on("pageerror", lambda e: rec.errors.append(str(e)))


@pytest.fixture
def page(context) -> object:
    return context.new_page()


@pytest.fixture(scope="module")
def tb_samples(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    if not any(SAMPLES.glob("*/*.pt.trace.json*")):
        pytest.skip("samples/ has no traces")
    with tensorboard(SAMPLES, tmp=tmp_path_factory.mktemp("tb")) as tb:
        tb.wait_loaded(timeout=120)
        yield tb


@pytest.fixture(scope="module")
def tb_gpu(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    """A logdir with a real GPU trace (V100, PyTorch 1.9) and two ranks of an NCCL job, copied from
    ../shared/traces at test time."""
    if not KINETO_GPU.exists():
        pytest.skip(f"{KINETO_GPU} not present (../shared/traces is optional)")
    logdir = tmp_path_factory.mktemp("gpu_logdir")
    (logdir / "resnet50_v100").mkdir()
    shutil.copy(KINETO_GPU, logdir / "resnet50_v100" / KINETO_GPU.name)
    if HTA_RANKS.exists():
        shutil.copytree(HTA_RANKS, logdir / "nccl_2ranks")
    with tensorboard(logdir, tmp=tmp_path_factory.mktemp("tb")) as tb:
        tb.wait_loaded(timeout=180)
        yield tb


def app_url(tb: TensorBoard, **params: str) -> str:
    from urllib.parse import urlencode

    q = urlencode(params)
    return f"{tb.url}{PREFIX}/index.html" + (f"?{q}" if q else "")


def shot(page, name: str, max_height: int = 2400) -> None:
    """Save a screenshot of the whole page for docs/user_guide.md. The viewport is stretched to the
    page's height (a full-page capture would paint the sticky header mid-page), then restored."""
    IMAGES.mkdir(parents=True, exist_ok=True)
    size = page.viewport_size
    height = page.evaluate("document.documentElement.scrollHeight")
    page.set_viewport_size({"width": size["width"], "height": max(size["height"], min(height, max_height))})
    page.wait_for_timeout(300)  # charts resize
    page.screenshot(path=str(IMAGES / name))
    page.set_viewport_size(size)

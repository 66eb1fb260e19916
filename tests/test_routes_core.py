"""The core routes through a real TensorBoard process: runs, views, workers, spans, errors."""

from __future__ import annotations

import json
import os
import shutil
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.paths import SAMPLES
from tests.fixtures.tensorboard_server import TensorBoard, tensorboard
from tests.fixtures.trace_builder import TraceBuilder


@pytest.fixture(scope="module")
def logdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("logdir")
    b = TraceBuilder(style="legacy")
    b.step(1, 0, 1000)
    ext = b.op("aten::mm", 10, 500)
    b.launch("volta_sgemm", 20, 5, 600, 50, ext_id=ext)
    b.memory(30, 256, addr=1, total_allocated=256, total_reserved=1024, device_type=1, device_id=0)
    b.write(root / "gpu_run" / "worker0.1.pt.trace.json.gz")
    b.write(root / "gpu_run" / "worker0.20.pt.trace.json.gz")
    b.write(root / "gpu_run" / "worker1.3.pt.trace.json.gz")
    bad = root / "broken_run" / "w.pt.trace.json"
    bad.parent.mkdir()
    bad.write_text("{ this is not json")
    for path in root.rglob("*.json*"):
        os.utime(path, (time.time() - 60,) * 2)
    return root


@pytest.fixture(scope="module")
def tb(logdir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    with tensorboard(logdir, tmp=tmp_path_factory.mktemp("tblog")) as server:
        server.wait_loaded()
        yield server


def test_plugin_is_listed_by_tensorboard(tb: TensorBoard) -> None:
    with urllib.request.urlopen(f"{tb.url}/data/plugins_listing") as r:
        listing = json.loads(r.read())
    entry = listing["pytorch_profiler"]
    assert entry["enabled"] is True
    assert entry["tab_name"] == "PyTorch Profiler"
    assert entry["loading_mechanism"]["module_path"].endswith("/index.js")


def test_runs_report_state_progress_and_errors(tb: TensorBoard) -> None:
    status, body = tb.get("runs")
    assert status == 200 and body["loading"] is False
    runs = {r["name"]: r for r in body["runs"]}
    assert set(runs) == {"gpu_run", "broken_run"}
    assert runs["gpu_run"]["state"] == "ready"
    assert runs["gpu_run"]["progress"]["files_done"] == 3
    assert runs["broken_run"]["state"] == "error"
    assert runs["broken_run"]["errors"][0]["file"] == "broken_run/w.pt.trace.json"


def test_views_workers_spans(tb: TensorBoard) -> None:
    assert tb.get("views", run="gpu_run") == (
        200,
        ["Overview", "Operator", "Kernel", "Trace", "Analysis", "Memory", "Distributed", "Diff"],
    )
    assert tb.get("workers", run="gpu_run") == (200, ["worker0", "worker1"])
    assert tb.get("workers", run="gpu_run", view="Kernel") == (200, ["worker0", "worker1"])
    assert tb.get("spans", run="gpu_run", worker="worker0") == (200, ["1", "2"])


@pytest.mark.parametrize(
    ("route", "params", "status", "fragment"),
    [
        ("views", {}, 400, "missing query parameter 'run'"),
        ("views", {"run": "nope"}, 404, "no run named 'nope'"),
        ("workers", {"run": ""}, 400, "missing query parameter 'run'"),
        ("spans", {"run": "gpu_run"}, 400, "'worker'"),
        ("spans", {"run": "gpu_run", "worker": "ghost"}, 404, "no worker 'ghost'"),
        ("spans", {"run": "<script>", "worker": "x"}, 404, "no run named"),
    ],
)
def test_bad_parameters_are_4xx_with_a_message(
    tb: TensorBoard, route: str, params: dict, status: int, fragment: str
) -> None:
    got_status, body = tb.get(route, **params)
    assert got_status == status
    assert fragment in body["error"]


def test_index_page_is_served(tb: TensorBoard) -> None:
    with urllib.request.urlopen(f"{tb.url}/data/plugin/pytorch_profiler/index.html") as r:
        assert r.status == 200 and r.headers["Content-Type"].startswith("text/html")
        assert "default-src 'self'" in r.headers["Content-Security-Policy"]
    status, _ = tb.get("../../../etc/passwd")
    assert status == 404


def test_new_run_appears_while_running(tb: TensorBoard, logdir: Path) -> None:
    b = TraceBuilder()
    b.op("aten::add", 0, 10)
    path = b.write(logdir / "late_run" / "w.pt.trace.json")
    os.utime(path, (time.time() - 60,) * 2)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        _, body = tb.get("runs")
        late = [r for r in body["runs"] if r["name"] == "late_run"]
        if late and late[0]["state"] == "ready":
            break
        time.sleep(0.2)
    else:
        pytest.fail("late_run never loaded")
    shutil.rmtree(logdir / "late_run")


def test_samples_load_without_errors(tmp_path: Path) -> None:
    if not SAMPLES.is_dir():
        pytest.skip("samples/ missing")
    with tensorboard(SAMPLES, tmp=tmp_path) as server:
        body = server.wait_loaded()
    assert body["runs"], "samples/ should hold runs"
    for run in body["runs"]:
        assert run["state"] == "ready", run
        assert run["errors"] == [], run

"""``torch-tb-profiler serve`` as a real process on 127.0.0.1: the same answers as TensorBoard on the same
logdir (every route docs/api.md documents, plus the binary timeline and the trace download), TensorBoard
never imported, SIGTERM ending it and its parser processes within 5 s, ``--path-prefix``, live reload,
and bad arguments refused before it listens."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.fixtures.paths import SAMPLES, SHARED_TRACES
from tests.fixtures.serve_server import serve, serve_command, serve_env, wait_url
from tests.fixtures.tensorboard_server import PREFIX, TensorBoard, tensorboard
from tests.fixtures.trace_builder import TraceBuilder
from tests.test_api_doc import answers

KINETO_GPU = (
    SHARED_TRACES / "kineto_samples" / "resnet50_num_workers_0" / "worker0.1623143089861.pt.trace.json.gz"
)
ENV = {"TORCH_PROFILER_INDEX_DIR": "off", "TORCH_PROFILER_PROCESSES": "1"}


@pytest.fixture(scope="module")
def logdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("logdir")
    for name in ("ddp_gloo_2ranks", "resnet_like_cpu", "lightning_cpu"):
        shutil.copytree(SAMPLES / name, root / name)
    b = TraceBuilder(style="legacy")  # kernels, memory records, device properties
    b.step(1, 0, 1000)
    ext = b.op("aten::mm", 10, 500)
    b.launch("volta_sgemm_128x64_nn", 20, 5, 600, 50, ext_id=ext)
    b.memory(30, 256, addr=1, total_allocated=256, total_reserved=1024, device_type=1, device_id=0)
    b.memory(400, -256, addr=1, total_allocated=0, total_reserved=1024, device_type=1, device_id=0)
    b.write(root / "gpu_run" / "worker0.pt.trace.json.gz")
    if KINETO_GPU.exists():  # a real V100 trace, when ../shared/traces is there
        (root / "kineto_gpu").mkdir()
        shutil.copy(KINETO_GPU, root / "kineto_gpu" / KINETO_GPU.name)
    for path in root.rglob("*.json*"):
        os.utime(path, (time.time() - 60,) * 2)
    return root


@pytest.fixture(scope="module")
def tb(logdir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    with tensorboard(logdir, env=ENV, tmp=tmp_path_factory.mktemp("tblog")) as server:
        server.wait_loaded(120)
        yield server


@pytest.fixture(scope="module")
def served(logdir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    with serve(logdir, env=ENV, tmp=tmp_path_factory.mktemp("servelog")) as server:
        server.wait_loaded(120)
        yield server


def _stable_runs(runs: dict[str, Any]) -> dict[str, Any]:
    """The runs answer less what depends on the requests served so far (cached answers count in memory)."""
    out = json.loads(json.dumps(runs))
    out["memory"].pop("resident_bytes", None)
    for run in out["runs"]:
        for f in run["files"]:
            f.pop("memory_bytes", None)
    return out


def extra_answers(server: TensorBoard) -> dict[str, Any]:
    """Answers docs/api.md documents without a JSON example: binary timeline, trace download, errors."""
    out: dict[str, Any] = {}
    for run in ("gpu_run", "kineto_gpu", "resnet_like_cpu"):
        status, workers = server.get("workers", run=run)
        if status != 200:
            continue
        spans = server.get("spans", run=run, worker=workers[0])[1]
        p = {"run": run, "worker": workers[0], "span": spans[0]}
        status, tracks = server.get("timeline/tracks", **p)
        assert status == 200, tracks
        window = {**p, "start_us": tracks["start_us"], "end_us": tracks["end_us"]}
        out[f"{run}:timeline.bin"] = server.get("timeline", **window)
        out[f"{run}:trace"] = server.get("trace", **p)
        out[f"{run}:search"] = server.get("timeline/search", **p, q="aten")
        out[f"{run}:operators.top"] = server.get("operators", **p, sort="device_total_us", top=3)
        out[f"{run}:kernels.q"] = server.get("kernels", **p, q="sgemm")
        out[f"{run}:memory.curve"] = server.get("memory/curve", **p, max_points=64)
        out[f"{run}:views"] = server.get("views", run=run)
        out[f"{run}:spans"] = server.get("spans", **p)
    out["distributed.job"] = server.get("distributed", run="ddp_gloo_2ranks", top=2)
    out["bad.top"] = server.get("operators", run="resnet_like_cpu", worker="x", top="-1")
    out["bad.run"] = server.get("overview", run="nope", worker="w")
    out["missing"] = server.get("overview")
    return out


def test_every_route_answers_as_in_tensorboard(tb: TensorBoard, served: TensorBoard) -> None:
    expected, got = answers(tb), answers(served)
    assert set(got) == set(expected) and len(got) >= 16
    expected["runs"], got["runs"] = _stable_runs(expected["runs"]), _stable_runs(got["runs"])
    for route in sorted(expected):
        assert got[route] == expected[route], route
    expected_extra, got_extra = extra_answers(tb), extra_answers(served)
    assert {k for k in got_extra if k.endswith("timeline.bin")}, "no binary timeline was compared"
    for key in sorted(expected_extra):
        assert got_extra[key] == expected_extra[key], key
    assert got_extra["bad.run"][0] == 404 and got_extra["missing"][0] == 400


def test_tensorboard_is_not_imported_by_the_server(served: TensorBoard) -> None:
    answers(served)  # every documented route first: any of them importing TensorBoard shows below
    extra_answers(served)
    with urllib.request.urlopen(f"{served.url}/server", timeout=10) as r:
        facts = json.loads(r.read())
    assert facts["tensorboard_imported"] is False
    assert facts["wsgi_server"].startswith("waitress ")


def test_the_page_is_at_the_root(served: TensorBoard) -> None:
    opener = urllib.request.build_opener(_NoRedirect)
    with pytest.raises(urllib.error.HTTPError) as info:
        opener.open(f"{served.url}/?view=Trace&run=gpu_run", timeout=10)
    assert info.value.code == 302
    assert info.value.headers["Location"] == f"{PREFIX.lstrip('/')}/index.html?view=Trace&run=gpu_run"
    with urllib.request.urlopen(f"{served.url}/", timeout=10) as r:  # followed: the page
        assert r.url.endswith(f"{PREFIX}/index.html") and b'<div id="root">' in r.read()
        assert "self" in r.headers["Content-Security-Policy"]
    status, body = served.get("no/such/route")
    assert status == 404 and "no such route" in body["error"]


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def test_path_prefix_live_reload_without_tensorboard_installed(tmp_path: Path) -> None:
    logdir = tmp_path / "logs"
    shutil.copytree(SAMPLES / "resnet_like_cpu", logdir / "resnet_like_cpu")
    with serve(logdir, "--path-prefix", "proxied/tb/", env=ENV, tmp=tmp_path, no_tensorboard=True) as server:
        assert server.url.endswith("/proxied/tb")
        first = server.wait_loaded(60)
        assert [r["name"] for r in first["runs"]] == ["resnet_like_cpu"]
        worker = server.get("workers", run="resnet_like_cpu")[1][0]
        span = server.get("spans", run="resnet_like_cpu", worker=worker)[1][0]
        status, overview = server.get("overview", run="resnet_like_cpu", worker=worker, span=span)
        assert status == 200 and overview["steps"], overview
        root = server.url.rsplit("/proxied/tb", 1)[0]
        with pytest.raises(urllib.error.HTTPError) as info:  # outside the prefix: nothing
            urllib.request.urlopen(f"{root}{PREFIX}/runs", timeout=10)
        assert info.value.code == 404
        opener = urllib.request.build_opener(_NoRedirect)
        with pytest.raises(urllib.error.HTTPError) as redirect:  # "/proxied/tb" without the slash
            opener.open(server.url, timeout=10)
        assert redirect.value.headers["Location"] == f"tb{PREFIX}/index.html"
        with urllib.request.urlopen(server.url + "/", timeout=10) as r:
            assert r.url == f"{server.url}{PREFIX}/index.html" and r.status == 200
        # live reload: a run copied in while serving shows up
        shutil.copytree(SAMPLES / "ddp_gloo_2ranks", logdir / "ddp_gloo_2ranks")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            names = [r["name"] for r in server.get("runs")[1]["runs"]]
            if "ddp_gloo_2ranks" in names:
                break
            time.sleep(0.3)
        assert sorted(names) == ["ddp_gloo_2ranks", "resnet_like_cpu"]
        with urllib.request.urlopen(f"{server.url}/server", timeout=10) as r:
            assert json.loads(r.read())["tensorboard_imported"] is False


def test_sigterm_ends_the_server_and_its_parsers_within_5_s(tmp_path: Path) -> None:
    logdir = tmp_path / "logs"
    for name in ("ddp_gloo_2ranks", "resnet_like_cpu", "lightning_cpu"):
        shutil.copytree(SAMPLES / name, logdir / name)
    log_path = tmp_path / "serve.log"
    env = serve_env({"TORCH_PROFILER_INDEX_DIR": "off", "TORCH_PROFILER_PROCESSES": "2"})
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            serve_command(logdir), stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    try:
        wait_url(proc, log_path)
        me = psutil.Process(proc.pid)
        deadline = time.monotonic() + 60
        while not me.children(recursive=True) and time.monotonic() < deadline:  # the parser pool is up
            time.sleep(0.05)
        children = me.children(recursive=True)
        assert children, log_path.read_text()
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)  # the server alone, not its group: it must end its children
        proc.wait(timeout=10)
        elapsed = time.monotonic() - started
        _gone, alive = psutil.wait_procs(children, timeout=max(0.1, 5 - elapsed))
        assert elapsed < 5, elapsed
        assert alive == [], alive
        assert proc.returncode == 0, log_path.read_text()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--profiler_memory_budget", "lots"], "--profiler_memory_budget"),
        (["--profiler_scan_interval", "0"], "--profiler_scan_interval must be positive"),
        (["--profiler_storage_options", "[1]"], "--profiler_storage_options must be a JSON object"),
        (["--path-prefix", "a/../b"], "--path-prefix"),
        (["--port", "70000"], "a port is 0..65535"),
        (["--profiler_limit", "nope=1"], "--profiler_limit"),
    ],
)
def test_bad_arguments_are_refused_before_listening(args: list[str], message: str) -> None:
    cmd = [*serve_command(SAMPLES), *args]
    done = subprocess.run(cmd, env=serve_env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr


def test_a_port_in_use_is_refused(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        cmd = [*serve_command(tmp_path), "--port", str(port)]
        done = subprocess.run(cmd, env=serve_env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in done.stderr

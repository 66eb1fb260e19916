"""End to end: a real `tensorboard --logdir s3://...` process against moto, configured by environment only."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from werkzeug.test import Client

from tests.cloud.conftest import make_backend
from tests.cloud.tree import TREE_KEYS, logdir_tree
from tests.fixtures.tensorboard_server import tensorboard
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.plugin import collect_routes, wsgi_app

pytestmark = pytest.mark.cloud


def _in_process(store: RunStore, route: str, **params: str) -> tuple[int, object]:
    """The same route, served in this process from a RunStore over a local copy of the logdir."""
    response = Client(wsgi_app(collect_routes()[route], store)).get("/", query_string=params)
    return response.status_code, json.loads(response.get_data())


def test_tensorboard_serves_an_s3_logdir(request, tmp_path: Path) -> None:
    pytest.importorskip("tensorboard")
    backend = make_backend("s3", request)
    tree = logdir_tree()
    backend.upload(tree)
    # The original plugin's variables: keys plus S3_ENDPOINT (which botocore itself ignores; the plugin
    # maps it, and TensorBoard's own S3 reader uses it too).
    env = {
        "AWS_ACCESS_KEY_ID": backend.env["AWS_ACCESS_KEY_ID"],
        "AWS_SECRET_ACCESS_KEY": backend.env["AWS_SECRET_ACCESS_KEY"],
        "AWS_EC2_METADATA_DISABLED": "true",
        "S3_ENDPOINT": backend.emulator.endpoint,
        "TORCH_PROFILER_CACHE_DIR": str(tmp_path / "tb-cache"),
        "TORCH_PROFILER_PROCESSES": "1",
    }
    local = tmp_path / "logs"
    for rel, data in tree.items():
        (local / rel).parent.mkdir(parents=True, exist_ok=True)
        (local / rel).write_bytes(data)
    store = RunStore(str(local), processes=0, settle_seconds=0)
    try:
        store.scan_once()
        assert store.wait_idle(60)
        with tensorboard(backend.url("logs"), env=env, tmp=tmp_path) as tb:
            runs = tb.wait_loaded(timeout=90)
            assert runs["logdir"] == backend.url("logs")
            assert runs["scan_error"] is None
            assert [(r["name"], r["state"]) for r in runs["runs"]] == [
                ("group/run_b", "ready"),
                ("run_a", "ready"),
            ]
            files = {(r["name"], f["worker"], f["span"]): f["file"] for r in runs["runs"] for f in r["files"]}
            assert files == TREE_KEYS
            assert tb.get("workers", run="run_a") == (200, ["worker0", "worker1"])
            assert tb.get("spans", run="run_a", worker="worker0") == (200, ["1", "2"])
            for run, worker, span in TREE_KEYS:
                params = {"run": run, "worker": worker, "span": span}
                status, remote = tb.get("overview", **params)
                assert status == 200, remote
                assert remote and (status, remote) == _in_process(store, "/overview", **params)
            # Cached downloads: each trace once (the stray notes.txt never).
            cached = [p.name for p in (tmp_path / "tb-cache").rglob("*") if p.is_file()]
            assert sorted(n.split("-", 1)[1] for n in cached) == sorted(
                Path(r).name for r in TREE_KEYS.values()
            )
    finally:
        store.close()


def test_tensorboard_shows_bad_credentials_as_a_scan_error(request, tmp_path: Path) -> None:
    pytest.importorskip("tensorboard")
    backend = make_backend("s3", request)
    backend.upload(logdir_tree())
    env = {
        "AWS_ACCESS_KEY_ID": backend.env["AWS_ACCESS_KEY_ID"],
        "AWS_SECRET_ACCESS_KEY": "wrong",
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_ENDPOINT_URL_S3": backend.emulator.endpoint,
        "TORCH_PROFILER_CACHE_DIR": str(tmp_path / "tb-cache"),
    }
    with tensorboard(backend.url("logs"), env=env, tmp=tmp_path) as tb:
        deadline = time.monotonic() + 30
        while (runs := tb.get("runs")[1])["scan_error"] is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert runs["runs"] == []
        assert "access denied or invalid credentials" in runs["scan_error"]
        assert tb.proc.poll() is None  # still serving


def test_tensorboard_storage_options_flag(request, tmp_path: Path) -> None:
    """Credentials and endpoint only in --profiler_storage_options (explicit options win over any AWS_*)."""
    pytest.importorskip("tensorboard")
    backend = make_backend("s3", request)
    backend.upload(logdir_tree())
    env = {"AWS_EC2_METADATA_DISABLED": "true", "TORCH_PROFILER_CACHE_DIR": str(tmp_path / "tb-cache")}
    flag = f"--profiler_storage_options={json.dumps(backend.options)}"
    with tensorboard(backend.url("logs"), flag, env=env, tmp=tmp_path) as tb:
        runs = tb.wait_loaded(timeout=90)
        assert runs["scan_error"] is None
        assert [r["name"] for r in runs["runs"]] == ["group/run_b", "run_a"]

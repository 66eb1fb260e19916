"""``torch-tb-profiler serve s3://…`` against moto, with TensorBoard unimportable: the runs of a bucket
logdir load, answer as they do in TensorBoard's plugin code in-process, and a run uploaded while the
server runs shows up (live reload on a cloud logdir)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from werkzeug.test import Client

from tests.cloud.conftest import make_backend
from tests.cloud.tree import TREE_KEYS, logdir_tree, trace_bytes
from tests.fixtures.serve_server import serve
from torch_tb_profiler.app.wsgi import collect_routes, wsgi_app
from torch_tb_profiler.ingest.loading import RunStore

pytestmark = pytest.mark.cloud


def test_serve_an_s3_logdir_and_pick_up_new_runs(request, tmp_path: Path) -> None:
    backend = make_backend("s3", request)
    tree = logdir_tree()
    backend.upload(tree)
    env = {
        "AWS_ACCESS_KEY_ID": backend.env["AWS_ACCESS_KEY_ID"],
        "AWS_SECRET_ACCESS_KEY": backend.env["AWS_SECRET_ACCESS_KEY"],
        "AWS_EC2_METADATA_DISABLED": "true",
        "S3_ENDPOINT": backend.emulator.endpoint,
        "TORCH_PROFILER_CACHE_DIR": str(tmp_path / "cache"),
        "TORCH_PROFILER_INDEX_DIR": "off",
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
        with serve(backend.url("logs"), env=env, tmp=tmp_path, no_tensorboard=True) as server:
            runs = server.wait_loaded(timeout=90)
            assert runs["logdir"] == backend.url("logs") and runs["scan_error"] is None
            assert [(r["name"], r["state"]) for r in runs["runs"]] == [
                ("group/run_b", "ready"),
                ("run_a", "ready"),
            ]
            for run, worker, span in TREE_KEYS:
                params = {"run": run, "worker": worker, "span": span}
                status, remote = server.get("overview", **params)
                response = Client(wsgi_app(collect_routes()["/overview"], store)).get(
                    "/", query_string=params
                )
                assert status == 200 and (status, remote) == (
                    response.status_code,
                    json.loads(response.get_data()),
                )
            backend.upload({"run_c/worker0.1700000000009.pt.trace.json": trace_bytes("worker0", 1)})
            deadline = time.monotonic() + 60
            names: list[str] = []
            while time.monotonic() < deadline and "run_c" not in names:
                names = [r["name"] for r in server.get("runs")[1]["runs"] if r["state"] == "ready"]
                time.sleep(0.3)
            assert "run_c" in names
    finally:
        store.close()

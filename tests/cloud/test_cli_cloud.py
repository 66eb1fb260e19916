"""`torch-tb-profiler summary URL` on a cloud logdir (and one remote file) prints what it prints locally."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cloud.conftest import Backend
from tests.cloud.tree import logdir_tree

pytestmark = pytest.mark.cloud
REPO = Path(__file__).resolve().parents[2]


def summary(path: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHONPATH": str(REPO), **env}
    argv = [sys.executable, "-m", "torch_tb_profiler.cli", "summary", path, "--json", *args]
    return subprocess.run(argv, env=full, capture_output=True, text=True, timeout=120)


def test_summary_of_a_cloud_logdir_equals_the_local_one(backend: Backend, tmp_path: Path) -> None:
    tree = logdir_tree()
    backend.upload(tree)
    for rel, data in tree.items():
        (tmp_path / "logs" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "logs" / rel).write_bytes(data)
    env = {**backend.env, "TORCH_PROFILER_CACHE_DIR": str(tmp_path / "cache")}
    remote = summary(backend.url("logs"), env)
    assert remote.returncode == 0, remote.stderr
    local = summary(str(tmp_path / "logs"), {})
    assert local.returncode == 0, local.stderr
    doc = json.loads(remote.stdout)
    assert doc == json.loads(local.stdout)
    assert len(doc["profiles"]) == 4

    # One remote file.
    rel = "run_a/worker1.1700000000001.pt.trace.json.gz"
    one = summary(backend.url(f"logs/{rel}"), env)
    assert one.returncode == 0, one.stderr
    (profile,) = json.loads(one.stdout)["profiles"]
    assert (profile["run"], profile["worker"]) == ("run_a", "worker1")
    assert {k: v for k, v in profile.items() if k != "span"} == {
        k: v for k, v in doc["profiles"][-1].items() if k != "span"
    }


def test_summary_reports_a_missing_bucket(backend: Backend, tmp_path: Path) -> None:
    env = {**backend.env, "TORCH_PROFILER_CACHE_DIR": str(tmp_path / "cache")}
    out = summary(f"{backend.scheme}://no-such-{backend.bucket}/logs", env)
    assert out.returncode != 0
    assert "does not exist" in out.stderr
    assert "Traceback" not in out.stderr


def test_compare_a_cloud_file_with_a_local_one(backend: Backend, tmp_path: Path) -> None:
    tree = logdir_tree()
    backend.upload(tree)
    rel = "run_a/worker1.1700000000001.pt.trace.json.gz"
    local = tmp_path / "logs" / rel
    local.parent.mkdir(parents=True)
    local.write_bytes(tree[rel])
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        **backend.env,
        "TORCH_PROFILER_CACHE_DIR": str(tmp_path / "cache"),
    }
    argv = [sys.executable, "-m", "torch_tb_profiler.cli", "compare", backend.url(f"logs/{rel}"), str(local)]
    out = subprocess.run(
        [*argv, "--json", "--fail-on", "step_time>+0%"], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["baseline"]["worker"] == doc["experiment"]["worker"] == "worker1"
    assert doc["steps"]["delta"] == 0.0 and doc["verdict"]["failed"] == []
    missing = subprocess.run(
        [*argv[:-2], f"{backend.scheme}://no-such-{backend.bucket}/logs", str(local)],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert missing.returncode == 2 and "baseline" in missing.stderr and "Traceback" not in missing.stderr

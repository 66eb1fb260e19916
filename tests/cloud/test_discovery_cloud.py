"""Discovery and loading through the cloud backends give what the same logdir gives on local disk."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pytest

from tests.cloud.conftest import Backend
from tests.cloud.tree import TREE_KEYS, logdir_tree, trace_bytes
from torch_tb_profiler.analysis.overview.page import overview
from torch_tb_profiler.ingest import cloud_cache, storage
from torch_tb_profiler.ingest.discovery import Scanner
from torch_tb_profiler.ingest.loading import RunStore, load_profile

pytestmark = pytest.mark.cloud

TABLES = ("ops", "runtimes", "device", "steps")


def write_local(root: Path, tree: dict[str, bytes]) -> Path:
    for rel, data in tree.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def keys_of(loc: storage.Location) -> dict[tuple[str, str, str], str]:
    return {f.key: loc.relpath(f.info.path) for f in Scanner(loc).scan().files}


def same_numbers(a: object, b: object) -> bool:
    """Equality of JSON-like data where NaN equals NaN."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_numbers(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_numbers(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def test_discovery_finds_the_runs_workers_and_spans(backend: Backend, tmp_path: Path) -> None:
    tree = logdir_tree()
    backend.upload(tree)
    cloud = keys_of(backend.location())
    assert cloud == TREE_KEYS
    assert cloud == keys_of(storage.resolve(str(write_local(tmp_path / "logs", tree))))


def test_a_trace_loaded_from_the_cloud_equals_the_local_one(backend: Backend, tmp_path: Path) -> None:
    tree = logdir_tree()
    backend.upload(tree)
    local_root = write_local(tmp_path / "logs", tree)
    store = RunStore(backend.url("logs"), processes=0, settle_seconds=0, location=backend.location())
    try:
        store.scan_once()
        assert store.wait_idle(60)
        assert store.scan_error is None
        assert [r["state"] for r in store.runs()] == ["ready", "ready"]
        for (run, worker, span), rel in TREE_KEYS.items():
            remote = store.get_profile(run, worker, span)
            local = load_profile(str(local_root / rel))
            for table in TABLES:
                assert getattr(remote, table).equals(getattr(local, table)), (rel, table)
            assert same_numbers(overview(remote), overview(local)), rel
    finally:
        store.close()
    assert cloud_cache.stats.downloads == len(TREE_KEYS)  # the stray notes.txt is never fetched


def test_rescans_pick_up_new_and_changed_traces(backend: Backend) -> None:
    tree = logdir_tree()
    backend.upload(tree)
    store = RunStore(backend.url("logs"), processes=0, settle_seconds=0, location=backend.location())
    try:
        store.scan_once()
        assert store.wait_idle(60)
        before = store.get_profile("group/run_b", "host_123", "1")
        assert len(before.steps) == 3
        time.sleep(1.1)  # S3 and Azure keep mtimes in whole seconds
        backend.upload(
            {
                "group/run_b/host_123.pt.trace.json": trace_bytes("host_123", 0, steps=5),
                "run_a/worker2.1700000000001.pt.trace.json": trace_bytes("worker2", 1),
            }
        )
        store.scan_once()
        assert store.wait_idle(60)
        assert len(store.get_profile("group/run_b", "host_123", "1").steps) == 5
        assert store.workers("run_a") == ["worker0", "worker1", "worker2"]
        assert len(store.get_profile("run_a", "worker2", "1").steps) == 2
    finally:
        store.close()
    assert cloud_cache.stats.downloads == len(TREE_KEYS) + 2


def test_a_listing_failure_is_a_run_level_error_and_retried(backend: Backend) -> None:
    """A missing bucket: the store reports it, keeps running, and recovers when the bucket appears."""
    missing = f"{backend.bucket}-later"
    url = f"{backend.scheme}://{missing}/logs"
    store = RunStore(url, processes=0, settle_seconds=0, location=storage.resolve(url, backend.options))
    try:
        store.scan_once()
        assert store.scan_error is not None
        assert f"{missing}/logs" in store.scan_error and "does not exist" in store.scan_error
        assert store.runs() == []
        storage.resolve(url, backend.options).fs.mkdir(missing)
        backend.bucket = missing
        backend.upload({"r/w.pt.trace.json": trace_bytes("w", 0)})
        store.scan_once()
        assert store.wait_idle(60)
        assert store.scan_error is None
        assert [(r["name"], r["state"]) for r in store.runs()] == [("r", "ready")]
    finally:
        store.close()


def test_overview_json_round_trip_is_identical(backend: Backend, tmp_path: Path) -> None:
    """What a route would send: the overview JSON of a remote gzip trace equals the local one's."""
    rel = "run_a/worker1.1700000000001.pt.trace.json.gz"
    tree = logdir_tree()
    backend.upload({rel: tree[rel]})
    loc = backend.location()
    (info,) = storage.walk_files(loc)
    remote = load_profile(storage.local_copy(loc, info))
    local = load_profile(str(write_local(tmp_path, {rel: tree[rel]}) / rel))
    assert json.dumps(overview(remote), sort_keys=True) == json.dumps(overview(local), sort_keys=True)

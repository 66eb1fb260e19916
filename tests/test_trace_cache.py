"""Issue 12 item 7: the trace download is always the loaded file with its own counters, from a cache
folder private to the user that serves nothing it did not write."""

from __future__ import annotations

import gzip
import json
import os
import stat
import time
from pathlib import Path
from typing import Any

import pytest
from werkzeug.wrappers import Request

from tests.fixtures.trace_builder import V100, TraceBuilder
from torch_tb_profiler.analysis.timeline.counters import counter_events
from torch_tb_profiler.ingest import private_dir
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.views.common import HttpError
from torch_tb_profiler.views.trace import trace


def _write(path: Path, device: int, mtime: float) -> None:
    b = TraceBuilder(device_properties=[V100, {**V100, "id": 1}])
    b.step(1, 0, 1000)
    ext = b.op("aten::mm", 10, 500)
    b.launch("gemm", 20, 5, 600, 300, ext_id=ext, device=device)
    path.parent.mkdir(parents=True, exist_ok=True)
    b.write(path)
    os.utime(path, (mtime, mtime))


def _download(store: RunStore) -> dict[str, Any]:
    request = Request.from_values(path="/trace", query_string={"run": "run", "worker": "w"})
    response = trace(request, store)
    body = b"".join(response.response)
    response.close()
    return json.loads(gzip.decompress(body))


def _gpu_tracks(doc: dict[str, Any]) -> set[str]:
    return {e["name"] for e in doc["traceEvents"] if e.get("ph") == "C"}


def _kernel_devices(doc: dict[str, Any]) -> set[int]:
    return {e["args"]["device"] for e in doc["traceEvents"] if e.get("cat") == "kernel"}


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("TORCH_PROFILER_TRACE_CACHE", str(folder))
    return folder


def test_replaced_file_never_mixes_new_events_with_old_counters(tmp_path: Path, cache: Path) -> None:
    source = tmp_path / "logdir" / "run" / "w.pt.trace.json"
    mtime = time.time() - 60
    _write(source, device=0, mtime=mtime)
    store = RunStore(str(tmp_path / "logdir"), processes=0, settle_seconds=1)
    try:
        store.scan_once()
        store.wait_idle(30)
        first = _download(store)
        assert _kernel_devices(first) == {0} and any("GPU 0" in t for t in _gpu_tracks(first))
        _write(source, device=1, mtime=mtime + 1)  # replaced: same path and size, kernels on GPU 1
        with pytest.raises(HttpError) as refused:
            _download(store)  # loaded profile and file disagree: nothing mixed is served
        assert refused.value.status == 409 and "changed since it was loaded" in refused.value.message
        store.scan_once()
        store.scan_once()  # unchanged since the previous scan: reloaded
        store.wait_idle(30)
        second = _download(store)
        assert _kernel_devices(second) == {1}
        tracks = _gpu_tracks(second)
        assert any("GPU 1" in t for t in tracks) and not any("GPU 0" in t for t in tracks), tracks
        assert {e["name"] for e in counter_events(store.get_profile("run", "w", None))} == tracks
    finally:
        store.close()


def test_cache_folder_is_private(tmp_path: Path, cache: Path) -> None:
    cache.mkdir(mode=0o777)
    cache.chmod(0o777)  # left open by an older version: tightened
    assert private_dir.private_dir(cache, "trace") == cache
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    fresh = tmp_path / "a" / "b"
    assert private_dir.private_dir(fresh, "trace") == fresh
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o700


def test_symlinked_cache_folder_is_not_used(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(real)
    used = private_dir.private_dir(link, "test-symlink")
    assert used != link and private_dir.is_private(used)


@pytest.mark.skipif(
    not hasattr(os, "chown") or os.geteuid() != 0, reason="needs root to hand a folder to another user"
)
def test_folder_of_another_user_is_not_used(tmp_path: Path) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, 65534, 65534)
    used = private_dir.private_dir(theirs, "test-owner")
    assert used != theirs and private_dir.is_private(used)


def test_planted_answer_is_not_served(tmp_path: Path, cache: Path) -> None:
    source = tmp_path / "logdir" / "run" / "w.pt.trace.json"
    _write(source, device=0, mtime=time.time() - 60)
    store = RunStore(str(tmp_path / "logdir"), processes=0, settle_seconds=1)
    try:
        store.scan_once()
        store.wait_idle(30)
        genuine = _download(store)
        (answer,) = cache.glob("*.json.gz")
        planted = tmp_path / "planted.json.gz"
        planted.write_bytes(gzip.compress(b'{"traceEvents": [{"name": "planted"}]}'))
        answer.unlink()
        answer.symlink_to(planted)  # someone else's file under the predictable name
        assert _download(store) == genuine
        assert not answer.is_symlink()
    finally:
        store.close()

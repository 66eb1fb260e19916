"""The RunStore: background loading, progress, per-file errors, rescans."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.ingest.errors import Ambiguous, NotFound
from torch_tb_profiler.ingest.loading import RunStore


def _trace(path: Path, kernels: int = 1) -> Path:
    b = TraceBuilder()
    b.step(1, 0, 1000)
    ext = b.op("aten::mm", 10, 500)
    for i in range(kernels):
        b.launch(f"kernel_{i}", 20 + i, 1, 600 + i * 10, 5, ext_id=ext)
    path = b.write(path)
    old = time.time() - 60
    os.utime(path, (old, old))
    return path


@pytest.fixture(params=[0, 1], ids=["threads", "processes"])
def store_factory(request: pytest.FixtureRequest):
    stores: list[RunStore] = []

    def make(logdir: Path) -> RunStore:
        store = RunStore(str(logdir), processes=request.param, settle_seconds=1)
        stores.append(store)
        return store

    yield make
    for s in stores:
        s.close()


def test_loads_runs_with_progress_and_errors(tmp_path: Path, store_factory) -> None:
    _trace(tmp_path / "good" / "w0.1.pt.trace.json.gz")
    _trace(tmp_path / "good" / "w0.2.pt.trace.json")
    bad = tmp_path / "mixed" / "broken.pt.trace.json"
    bad.parent.mkdir()
    bad.write_text('{"traceEvents": [{"ph": "X", "ts": "yesterday"')
    os.utime(bad, (time.time() - 60,) * 2)
    _trace(tmp_path / "mixed" / "fine.pt.trace.json")
    store = store_factory(tmp_path)
    store.scan_once()
    assert store.wait_idle(60)
    runs = {r["name"]: r for r in store.runs()}
    assert runs["good"]["state"] == "ready"
    assert runs["good"]["progress"]["files_done"] == 2 == runs["good"]["progress"]["files_total"]
    assert runs["good"]["progress"]["bytes_done"] == runs["good"]["progress"]["bytes_total"] > 0
    mixed = runs["mixed"]
    assert mixed["state"] == "ready"  # one file failed, the other serves
    assert [e["file"] for e in mixed["errors"]] == ["mixed/broken.pt.trace.json"]
    assert "not a valid trace" in mixed["errors"][0]["message"]
    assert store.get_profile("mixed", "fine", None).worker == "fine"
    with pytest.raises(NotFound, match="could not be loaded"):
        store.get_profile("mixed", "broken", None)


def test_rescan_sees_added_changed_and_removed_files(tmp_path: Path, store_factory) -> None:
    first = _trace(tmp_path / "run" / "w0.pt.trace.json", kernels=1)
    store = store_factory(tmp_path)
    store.scan_once()
    store.wait_idle(60)
    assert len(store.get_profile("run", "w0", "1").device) == 1

    _trace(tmp_path / "run" / "w1.pt.trace.json")  # added
    _trace(first, kernels=3)  # changed (size and mtime)
    store.scan_once()
    store.wait_idle(60)
    assert len(store.get_profile("run", "w0", "1").device) == 1  # changed since the last scan: waits
    store.scan_once()  # unchanged since the last scan: reloaded
    store.wait_idle(60)
    assert store.workers("run") == ["w0", "w1"]
    assert len(store.get_profile("run", "w0", "1").device) == 3

    first.unlink()  # removed
    store.scan_once()
    assert store.workers("run") == ["w1"]
    with pytest.raises(NotFound):
        store.get_profile("run", "w0", "1")


def _assert_counted(store: RunStore) -> dict[str, int]:
    """The store's kept status counts equal a recount of its files (runs' loading and memory use them)."""
    recount: dict[str, int] = {}
    for state in store._files.values():
        recount[state.status] = recount.get(state.status, 0) + 1
    kept = {k: n for k, n in store._counts.by_status.items() if n}
    assert kept == recount
    assert store.loading() == any(k not in ("ready", "error") for k in recount)
    assert store.memory()["evicted_files"] == recount.get("ready", 0) - store.memory()["resident_files"]
    return recount


def test_status_counts_follow_adds_changes_errors_and_removals(tmp_path: Path, store_factory) -> None:
    first = _trace(tmp_path / "run" / "w0.pt.trace.json")
    bad = tmp_path / "run" / "w9.pt.trace.json"
    bad.write_text("{")
    os.utime(bad, (time.time() - 60,) * 2)
    store = store_factory(tmp_path)
    store.scan_once()
    assert store.wait_idle(60)
    assert _assert_counted(store) == {"ready": 1, "error": 1}
    _trace(tmp_path / "run" / "w1.pt.trace.json")  # added (settled: loads at once)
    _trace(first, kernels=3)  # changed: waits for a scan that sees it unchanged
    store.scan_once()
    assert _assert_counted(store).get("waiting") == 1
    assert store.loading()
    store.scan_once()
    assert store.wait_idle(60)
    assert _assert_counted(store) == {"ready": 2, "error": 1}
    bad.unlink()  # removed
    first.unlink()
    store.scan_once()
    assert _assert_counted(store) == {"ready": 1}
    assert not store.loading()


def test_failed_file_is_retried_when_it_changes(tmp_path: Path, store_factory) -> None:
    path = tmp_path / "run" / "w.pt.trace.json"
    path.parent.mkdir()
    path.write_text("garbage")
    os.utime(path, (time.time() - 60,) * 2)
    store = store_factory(tmp_path)
    store.scan_once()
    store.wait_idle(60)
    assert store.runs()[0]["state"] == "error"
    _trace(path)
    store.scan_once()  # changed since the last scan: waits for one more
    store.scan_once()
    store.wait_idle(60)
    assert store.runs()[0]["state"] == "ready" and store.runs()[0]["errors"] == []


def test_span_is_required_when_a_worker_has_several(tmp_path: Path, store_factory) -> None:
    _trace(tmp_path / "run" / "w.5.pt.trace.json")
    _trace(tmp_path / "run" / "w.40.pt.trace.json")
    store = store_factory(tmp_path)
    store.scan_once()
    store.wait_idle(60)
    assert store.spans("run", "w") == ["1", "2"]
    assert store.get_profile("run", "w", "2").source.endswith("w.40.pt.trace.json")
    with pytest.raises(Ambiguous):
        store.get_profile("run", "w", None)


def test_unusable_logdir_is_a_scan_error_not_a_crash() -> None:
    store = RunStore("http://example.com/not-a-blob-store", processes=0)
    try:
        store.scan_once()
        assert store.runs() == []
        assert "http(s) URLs are accepted only for Azure Blob Storage" in (store.scan_error or "")
        store.scan_once()  # retried every scan, still no exception
    finally:
        store.close()


MAIN_SCRIPT = """
import os, sys, time
if __name__ == "__mp_main__":  # what a spawned child would run if it re-ran this file
    open(os.environ["MARKER"], "w").close()
if __name__ == "__main__":
    from torch_tb_profiler.ingest.loading import RunStore
    store = RunStore(sys.argv[1], processes=1, settle_seconds=0).start()
    store.scan_once()
    assert store.wait_idle(120)
    runs = store.runs()
    store.close()
    assert __file__ == sys.argv[2], "__main__.__file__ is restored"
    print(runs[0]["state"])
"""


def test_pool_processes_do_not_rerun_the_main_script(tmp_path: Path) -> None:
    """Under TensorBoard the main script is the ``tensorboard`` console script: a pool process that
    re-ran it would import TensorBoard (a second and 50 MB) before its first job."""
    _trace(tmp_path / "logdir" / "run" / "w.pt.trace.json")
    script = tmp_path / "main_script.py"
    script.write_text(MAIN_SCRIPT)
    marker = tmp_path / "reran"
    env = dict(os.environ, MARKER=str(marker), PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    out = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "logdir"), str(script)],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ready"
    assert not marker.exists()


def _children() -> set[int]:
    """This process's live children (pool processes)."""
    import psutil

    out = set()
    for child in psutil.Process().children():
        with contextlib.suppress(psutil.Error):
            if child.status() != psutil.STATUS_ZOMBIE:
                out.add(child.pid)
    return out


def test_pool_processes_exit_after_a_big_file_and_new_files_still_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An idle pool process that parsed a big file keeps its heap: once nothing loads, the pool is
    renewed, so those processes exit (the threshold is lowered so a small file counts as big)."""
    from torch_tb_profiler.ingest import pool

    monkeypatch.setattr(pool, "RECYCLE_AFTER_BYTES", 1)
    before = _children()
    _trace(tmp_path / "run" / "w0.pt.trace.json")
    store = RunStore(str(tmp_path), processes=1, settle_seconds=0).start()
    try:
        store.scan_once()
        assert store.wait_idle(120)
        assert store.runs()[0]["state"] == "ready"
        deadline = time.monotonic() + 30
        while _children() - before and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _children() - before, "the pool's processes are still alive after the load"
        _trace(tmp_path / "run" / "w1.pt.trace.json")  # a new file: a fresh pool process parses it
        store.scan_once()
        assert store.wait_idle(120)
        assert [w for w in store.workers("run")] == ["w0", "w1"]
        assert store.get_profile("run", "w1", None).worker == "w1"
    finally:
        store.close()

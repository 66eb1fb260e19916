"""Issue 28: the persisted index is untrusted input like a trace. Hostile index files (a FIFO, files planted
by another user, well-formed files that disagree with the model, dtype bombs) are ignored with a warning
and the trace parsed again; nothing blocks, 5xxs or allocates what the file asks for."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.paths import SAMPLES
from torch_tb_profiler.ingest import persist, storage
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.ingest.storage import resolve

ROOT = Path(__file__).resolve().parents[1]


def _old(path: Path) -> Path:
    os.utime(path, (time.time() - 60,) * 2)
    return path


@pytest.fixture
def logdir(tmp_path: Path) -> Path:
    """Two runs: the two-rank DDP sample and one resnet-like worker."""
    root = tmp_path / "logs"
    shutil.copytree(SAMPLES / "ddp_gloo_2ranks", root / "ddp")
    (root / "cpu").mkdir()
    first = sorted((SAMPLES / "resnet_like_cpu").glob("*.pt.trace.json.gz"))[0]
    shutil.copy(first, root / "cpu" / "worker0.pt.trace.json.gz")
    for p in root.rglob("*.gz"):
        _old(p)
    return root


def _index_path(store: persist.IndexStore, trace: Path) -> Path:
    """Where the index of a trace file lives (named after its URL, not its version)."""
    loc = resolve(str(trace.parent))
    return Path(store.path_for({"namespace": loc.namespace, "url": str(trace)}))


@pytest.fixture
def built(tmp_path: Path, logdir: Path) -> Iterator[tuple[Path, persist.IndexStore]]:
    """The logdir with its index written (by a RunStore, as the plugin does)."""
    index = persist.open_store(str(tmp_path / "index"))
    assert index is not None
    store = RunStore(str(logdir), processes=0, settle_seconds=1, index=index)
    try:
        store.scan_once()
        assert store.wait_idle(60)
    finally:
        store.close()
    yield logdir, index


def _files(runs: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each file of the runs answer by run/worker, with its warnings."""
    out = {f"{r['name']}/{f['worker']}": dict(f, warnings=[]) for r in runs["runs"] for f in r["files"]}
    for r in runs["runs"]:
        for w in r["warnings"]:
            out[f"{r['name']}/{w['worker']}"]["warnings"].append(w["message"])
    return out


# ---- item 1: a FIFO at an index file's path ---------------------------------------------------------
def test_fifo_at_an_index_path_blocks_nothing(tmp_path: Path, built: tuple[Path, persist.IndexStore]) -> None:
    from tests.fixtures.tensorboard_server import tensorboard

    logdir, index = built
    fifos = []
    for trace in sorted(logdir.rglob("*.pt.trace.json.gz")):
        target = _index_path(index, trace)
        assert target.is_file()
        target.unlink()
        os.mkfifo(target)
        fifos.append(target)
    env = {persist.INDEX_DIR_ENV: index.url, "PYTHONPATH": str(ROOT)}
    with tensorboard(logdir, env=env, tmp=tmp_path) as tb:
        files = _files(tb.wait_loaded(60))
        assert len(files) == 3 and all(f["status"] == "ready" for f in files.values()), files
        assert all(not f["from_index"] for f in files.values())
        assert all(any("regular file" in w for w in f["warnings"]) for f in files.values()), files
        started = time.monotonic()
        os.killpg(tb.proc.pid, signal.SIGTERM)
        tb.proc.wait(timeout=15)
        assert time.monotonic() - started < 15
    # the CLI's summary and index read the same files: neither hangs
    cli = [sys.executable, "-m", "torch_tb_profiler.cli"]
    for args in (["summary", str(logdir / "cpu"), "--json"], ["index", str(logdir), "--local-workers", "1"]):
        done = subprocess.run(
            [*cli, *args], capture_output=True, text=True, timeout=120, env={**os.environ, **env}
        )
        assert done.returncode == 0, done.stderr[-2000:]
    assert any(not stat.S_ISFIFO(p.lstat().st_mode) for p in fifos)  # index replaced them with files


# ---- item 2: the default index folder is per user and private ------------------------------------------
needs_root = pytest.mark.skipif(
    not hasattr(os, "chown") or os.geteuid() != 0, reason="needs root to act as another user"
)


def _default_env(tmp_path: Path) -> dict[str, str]:
    return {"TORCH_PROFILER_CACHE_DIR": str(tmp_path / "cache"), persist.INDEX_DIR_ENV: ""}


@needs_root
def test_default_index_folder_of_another_user_is_not_used(
    tmp_path: Path, logdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.fixtures.tensorboard_server import tensorboard

    # another user made the default folder, open to all, and planted a GPU profile for the CPU trace
    cpu_trace = logdir / "cpu" / "worker0.pt.trace.json.gz"
    planted_src = sorted(logdir.rglob("rank0*.gz"))[0]
    for key, value in _default_env(tmp_path).items():
        monkeypatch.setenv(key, value)
    theirs = persist.default_dir()
    theirs.mkdir(parents=True)
    index = persist.IndexStore(resolve(str(theirs)))
    _plant(index, planted_src, cpu_trace)
    for folder in [theirs, *theirs.rglob("*")]:
        os.chown(folder, 65534, 65534)
        folder.chmod(0o777 if folder.is_dir() else 0o666)
    with tensorboard(logdir, env={**_default_env(tmp_path), "PYTHONPATH": str(ROOT)}, tmp=tmp_path) as tb:
        files = _files(tb.wait_loaded(60))
        assert not files["cpu/worker0"]["from_index"]
        status, overview = tb.get("overview", run="cpu", worker="worker0")
        assert status == 200 and overview["device_type"] == "CPU" if "device_type" in overview else True
        log = tb.log_path.read_text()
    assert "cannot use" in log and "index cache" in log
    assert theirs.stat().st_uid == 65534  # left as it was, not used


@needs_root
def test_index_files_others_wrote_in_our_folder_are_not_read(
    tmp_path: Path, logdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in _default_env(tmp_path).items():
        monkeypatch.setenv(key, value)
    store = persist.open_store()
    assert store is not None and store.private
    cpu_trace = logdir / "cpu" / "worker0.pt.trace.json.gz"
    planted = _plant(store, sorted(logdir.rglob("rank0*.gz"))[0], cpu_trace)
    loc = resolve(str(logdir))
    file_info = storage.file_info(loc, str(cpu_trace))
    assert store.load(loc, file_info).profile is not None  # ours: served
    os.chown(planted, 65534, 65534)
    lookup = store.load(loc, file_info)
    assert lookup.profile is None and "not written by this user" in (lookup.problem or "")


def _plant(index: persist.IndexStore, source: Path, victim: Path) -> Path:
    """Write the profile of ``source`` as the index of ``victim`` (with the victim's identity)."""
    from torch_tb_profiler.ingest import index_format
    from torch_tb_profiler.ingest.parse import load_profile

    loc = resolve(str(victim.parent.parent))
    ident = persist.identity(loc, storage.file_info(loc, str(victim)))
    profile = load_profile(str(source), victim.parent.name, "worker0", "")
    target = Path(index.path_for(ident))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(index_format.dumps(profile, ident))
    return target

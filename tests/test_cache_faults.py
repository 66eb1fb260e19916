"""Issue 28 item 9: the trace-download cache on a full or read-only disk, and after a writer was killed
mid-write, through a real TensorBoard: no partial file is left, stale ones are swept, and the error says
what failed (the cache folder, not the trace)."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.fixtures.tensorboard_server import tensorboard
from tests.fixtures.trace_builder import TraceBuilder

ROOT = Path(__file__).resolve().parents[1]


def _big_trace(path: Path) -> None:
    """About 2 MB of gzip: 30 000 ops with random names (gzip cannot shrink them much)."""
    rng = random.Random(28)
    b = TraceBuilder()
    b.step(1, 0, 400_000)
    for i in range(30_000):
        b.op(f"op_{rng.getrandbits(160):040x}", 10 * i, 5)
    path.parent.mkdir(parents=True, exist_ok=True)
    b.write(path)
    os.utime(path, (time.time() - 60,) * 2)


@contextmanager
def _tmpfs(where: Path, options: str) -> Iterator[Path]:
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


@pytest.fixture
def logdir(tmp_path: Path) -> Path:
    _big_trace(tmp_path / "logs" / "run" / "w.pt.trace.json.gz")
    return tmp_path / "logs"


@pytest.mark.skipif(
    sys.platform != "linux" or os.geteuid() != 0, reason="mounting a tmpfs needs root on Linux"
)
@pytest.mark.parametrize("options", ["size=256k,mode=0700", "ro,mode=0700"], ids=["full", "readonly"])
def test_a_full_or_readonly_cache_folder_leaves_nothing_and_says_so(
    tmp_path: Path, logdir: Path, options: str
) -> None:
    with _tmpfs(tmp_path / "small", options) as folder:
        env = {"TORCH_PROFILER_TRACE_CACHE": str(folder), "PYTHONPATH": str(ROOT)}
        with tensorboard(logdir, env=env, tmp=tmp_path) as tb:
            tb.wait_loaded()
            for _ in range(6):
                status, body = tb.get("trace", run="run", worker="w")
                assert status == 507, (status, body)
                message = body["error"]
                assert "cannot write the trace download into the cache folder" in message, message
                assert str(folder) in message and "no longer readable" not in message
                assert sorted(p.name for p in folder.iterdir()) == []  # no .partial left behind
            assert tb.get("overview", run="run", worker="w")[0] == 200  # the rest serves on


def test_partials_of_killed_writers_are_swept(tmp_path: Path, logdir: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # its pid is free: what a TensorBoard killed mid-write leaves
    left = [cache / f"{'ab' * 32}.{dead.pid}.partial", cache / f"{'cd' * 32}.{dead.pid}.partial"]
    for p in left:
        p.write_bytes(b"\x1f\x8b half an answer")
    env = {"TORCH_PROFILER_TRACE_CACHE": str(cache), "PYTHONPATH": str(ROOT)}
    with tensorboard(logdir, env=env, tmp=tmp_path) as tb:
        tb.wait_loaded()
        status, _ = tb.get("trace", run="run", worker="w")
        assert status == 200
    names = sorted(p.name for p in cache.iterdir())
    assert len(names) == 1 and names[0].endswith(".json.gz"), names

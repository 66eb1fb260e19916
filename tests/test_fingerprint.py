"""The content fingerprint (ingest/fingerprint.py): what it notices and what it cannot."""

from __future__ import annotations

import gzip
import os
import time
from pathlib import Path

import pytest

from torch_tb_profiler.ingest import fingerprint as fp
from torch_tb_profiler.ingest.local_walk import walk_local


def _write(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    return fp.content_fingerprint(str(path))


def test_ends_and_size_decide_a_plain_file(tmp_path: Path) -> None:
    body = bytearray(b"x" * 20_000)
    base = _write(tmp_path / "a.json", bytes(body))
    assert len(base) == 16 and base == _write(tmp_path / "b.json", bytes(body))  # same bytes, other file
    body[10] = ord("y")  # the head
    assert _write(tmp_path / "a.json", bytes(body)) != base
    body[10], body[-10] = ord("x"), ord("y")  # the tail
    assert _write(tmp_path / "a.json", bytes(body)) != base
    body[-10], body[10_000] = ord("x"), ord("y")  # only the middle: the documented blind spot
    assert _write(tmp_path / "a.json", bytes(body)) == base
    assert _write(tmp_path / "a.json", bytes(body[:-1])) != base  # the size


def test_a_gzip_trace_is_told_apart_by_any_change(tmp_path: Path) -> None:
    # gzip ends with the CRC-32 of all it holds: a change in the middle reaches the last bytes
    body = bytearray(os.urandom(30_000).hex().encode())
    base = _write(tmp_path / "t.json.gz", gzip.compress(bytes(body), mtime=0))
    body[30_000] ^= 1
    changed = gzip.compress(bytes(body), mtime=0)
    assert _write(tmp_path / "t.json.gz", changed) != base


def test_unreadable_is_empty_and_never_blocks(tmp_path: Path) -> None:
    fifo = tmp_path / "w.pt.trace.json"
    os.mkfifo(fifo)
    assert fp.content_fingerprint(str(fifo)) == ""  # not opened for waiting: not a regular file
    assert fp.content_fingerprint(str(tmp_path / "missing")) == ""


@pytest.mark.parametrize(
    ("value", "mode"), [("content", "content"), ("ctime", "ctime"), ("CONTENT ", "content")]
)
def test_the_scan_version_follows_the_mode(tmp_path: Path, monkeypatch, value: str, mode: str) -> None:
    trace = tmp_path / "w.pt.trace.json"
    trace.write_text("{}")
    monkeypatch.setenv(fp.VERSION_ENV, value)
    assert fp.version_mode() == mode
    (found,) = walk_local(str(tmp_path)).files
    before = found.version
    time.sleep(0.05)  # past the kernel's coarse file-time tick
    os.chmod(trace, 0o600)  # a new ctime, the same bytes
    (found,) = walk_local(str(tmp_path)).files
    assert (found.version == before) == (mode == "content")

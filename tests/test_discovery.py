"""Discovery: runs at any depth, workers and spans from file names, symlinks, settling."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from torch_tb_profiler.ingest.discovery import Scanner, group_files, parse_name
from torch_tb_profiler.ingest.storage import resolve, walk_files


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("worker0.pt.trace.json", ("worker0", None)),
        ("worker0.1623143089861.pt.trace.json.gz", ("worker0", 1623143089861)),
        ("host_1234.9.pt.trace.json", ("host_1234", 9)),
        ("my.host.name_77.pt.trace.json.gz", ("my.host.name_77", None)),
        ("rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", ("rank-0.Apr_03_18_51_38", 1102)),
        ("worker0.pt.trace.json.zip", None),
        ("trace.json", None),
        (".pt.trace.json", None),
    ],
)
def test_file_names(name: str, expected: tuple[str, int | None] | None) -> None:
    assert parse_name(name) == expected


def _touch(path: Path, size: int = 10, age: float = 60.0) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    old = time.time() - age
    os.utime(path, (old, old))


def test_runs_workers_and_numeric_spans(tmp_path: Path) -> None:
    _touch(tmp_path / "a" / "w0.9.pt.trace.json")
    _touch(tmp_path / "a" / "w0.10.pt.trace.json.gz")  # 10 > 9 numerically (the original sorted as strings)
    _touch(tmp_path / "a" / "w0.100.pt.trace.json")
    _touch(tmp_path / "a" / "w1.pt.trace.json")
    _touch(tmp_path / "a" / "notes.txt")
    _touch(tmp_path / "deep" / "er" / "run" / "x.pt.trace.json")
    _touch(tmp_path / "top.pt.trace.json")  # directly in the logdir
    loc = resolve(str(tmp_path))
    files = group_files(loc, walk_files(loc))
    got = sorted((f.run, f.worker, f.span, Path(f.info.path).name) for f in files)
    assert got == [
        ("a", "w0", "1", "w0.9.pt.trace.json"),
        ("a", "w0", "2", "w0.10.pt.trace.json.gz"),
        ("a", "w0", "3", "w0.100.pt.trace.json"),
        ("a", "w1", "1", "w1.pt.trace.json"),
        ("deep/er/run", "x", "1", "x.pt.trace.json"),
        (tmp_path.name, "top", "1", "top.pt.trace.json"),
    ]


def test_symlinked_run_directories_are_followed(tmp_path: Path) -> None:
    real = tmp_path / "elsewhere" / "run"
    _touch(real / "w.pt.trace.json")
    logdir = tmp_path / "logdir"
    logdir.mkdir()
    (logdir / "linked").symlink_to(real, target_is_directory=True)
    loc = resolve(str(logdir))
    assert [(f.run, f.worker) for f in group_files(loc, walk_files(loc))] == [("linked", "w")]


def test_growing_file_settles_after_two_equal_scans(tmp_path: Path) -> None:
    path = tmp_path / "r" / "w.pt.trace.json"
    _touch(path, size=10, age=0)  # just written
    scanner = Scanner(resolve(str(tmp_path)), settle_seconds=3600)
    first = scanner.scan()
    assert len(first.files) == 1 and first.settled == []  # new and fresh: not yet
    with open(path, "ab") as f:
        f.write(b"more")  # still growing
    assert scanner.scan().settled == []
    assert [f.info.size for f in scanner.scan().settled] == [14]  # unchanged since the last scan


def test_old_file_is_settled_at_once(tmp_path: Path) -> None:
    _touch(tmp_path / "r" / "w.pt.trace.json", age=60)
    scanner = Scanner(resolve(str(tmp_path)), settle_seconds=2)
    assert len(scanner.scan().settled) == 1


def test_missing_logdir_is_an_error_not_a_crash(tmp_path: Path) -> None:
    result = Scanner(resolve(str(tmp_path / "nope"))).scan()
    assert (result.files == [] and result.error is None) or "nope" in (result.error or "")

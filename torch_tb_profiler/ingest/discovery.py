"""Discovery: which runs, workers and spans a logdir holds, and what changed since the last scan.

A run is a directory (any depth, symlinks followed) that directly holds ``*.pt.trace.json[.gz]`` files;
its name is its path relative to the logdir (shown escaped where it is not printable UTF-8, ``names.py``). A file ``<worker>[.<digits>].pt.trace.json[.gz]`` belongs
to ``worker``; a worker's files are its spans, numbered 1..n in the numeric order of ``<digits>``
(files without digits come first, in name order). PyTorch Lightning's worker parts get readable names
(``perf.fit.training_step``: model/lightning_names.py).

A folder named ``capture_traces`` (or holding an ``execution_details.json``) below the logdir holds the
traces of its parent run's graph-capture phase (vLLM, SGLang, xDiT write them there): its files are the
*captures* of every trace of the parent run (``TraceFile.captures``), never a run of their own; which of
them are traces and what batch size each captured is read at load time (ingest/captures.py).
"""

from __future__ import annotations

import posixpath
import re
import time
from dataclasses import dataclass, field

from torch_tb_profiler.ingest.names import display
from torch_tb_profiler.ingest.storage import FileInfo, Location, StorageError, walk
from torch_tb_profiler.model.lightning_names import lightning_worker

CAPTURE_DIR = "capture_traces"
EXECUTION_DETAILS = "execution_details.json"
TRACE_FILE = re.compile(r"^(?P<worker>.*?)(?:\.(?P<number>\d+))?\.pt\.trace\.json(?:\.gz)?$", re.DOTALL)


@dataclass(frozen=True)
class TraceFile:
    run: str
    worker: str
    span: str  # "1".."n"
    info: FileInfo
    captures: tuple[FileInfo, ...] = ()  # the files of the run's capture folder (graph captures)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.run, self.worker, self.span)


def parse_name(filename: str) -> tuple[str, int | None] | None:
    """(worker, span number) of a trace file name, or None when it is not a trace file."""
    match = TRACE_FILE.match(filename)
    if not match or not match.group("worker"):
        return None
    number = match.group("number")
    return lightning_worker(match.group("worker")), int(number) if number is not None else None


def group_files(loc: Location, files: list[FileInfo]) -> list[TraceFile]:
    """The trace files among ``files``, with run, worker and span assigned, and their runs' captures."""
    captures, files = _capture_files(loc, files)
    by_worker: dict[tuple[str, str], list[tuple[int, int, str, FileInfo]]] = {}
    run_dir: dict[str, str] = {}
    for info in files:
        directory, filename = posixpath.split(info.path.replace("\\", "/"))
        parsed = parse_name(filename)
        if parsed is None:
            continue
        worker, number = parsed
        worker = display(worker)
        # a trace directly in the logdir makes a run named after the logdir itself
        run = loc.relpath(directory) if directory != loc.root else (posixpath.basename(loc.root) or ".")
        run = display(run)
        run_dir[run] = directory
        # files without a number sort first, then by number, then by name
        order = (0 if number is None else 1, number or 0, filename, info)
        by_worker.setdefault((run, worker), []).append(order)
    out: list[TraceFile] = []
    for (run, worker), entries in sorted(by_worker.items()):
        entries.sort(key=lambda e: (e[0], e[1], e[2]))
        held = tuple(captures.get(run_dir[run], ()))
        for i, (_has, _num, _name, info) in enumerate(entries, start=1):
            out.append(TraceFile(run, worker, str(i), info, held))
    return out


def _capture_files(loc: Location, files: list[FileInfo]) -> tuple[dict[str, list[FileInfo]], list[FileInfo]]:
    """The files of capture folders, by the directory of the run they belong to; and the other files."""
    split = [posixpath.split(info.path.replace("\\", "/")) for info in files]
    folders = {d for d, name in split if name == EXECUTION_DETAILS}
    folders |= {d for d, _ in split if posixpath.basename(d) == CAPTURE_DIR}
    folders.discard(loc.root)  # the logdir itself: no parent run to attach them to
    captures: dict[str, list[FileInfo]] = {}
    rest = []
    for info, (directory, _name) in zip(files, split, strict=True):
        if directory in folders:
            captures.setdefault(posixpath.dirname(directory), []).append(info)
        else:
            rest.append(info)
    for held in captures.values():
        held.sort(key=lambda i: i.path)
    return captures, rest


@dataclass
class ScanResult:
    files: list[TraceFile]  # every trace file now present
    settled: list[TraceFile]  # those whose size and mtime have stopped changing
    error: str | None = None  # the logdir could not be listed (bad credentials, missing bucket...)
    warnings: list[str] = field(default_factory=list)  # what the listing skipped, and why


class Scanner:
    """Repeated scans of one logdir. A file is settled when it looks the same (size, mtime, etag) as on
    the previous scan, or, seen for the first time, when its modification time is older than
    ``settle_seconds``. A file that changed since the previous scan is still being written: it waits,
    however long ago its last write was (a writer may pause longer than ``settle_seconds``).
    ``settle_seconds`` 0 turns settling off: every file is taken as it is."""

    def __init__(self, loc: Location, settle_seconds: float = 2.0) -> None:
        self.loc = loc
        self.settle_seconds = settle_seconds
        self._previous: dict[str, tuple[int, float, str]] = {}

    def scan(self) -> ScanResult:
        try:
            infos, warnings = walk(self.loc)
        except StorageError as e:  # its message already names the URL and the cause
            return ScanResult([], [], error=str(e))
        except Exception as e:
            return ScanResult([], [], error=f"cannot list {self.loc.url}: {type(e).__name__}: {e}")
        files = group_files(self.loc, infos)
        now = time.time()
        settled = []
        current: dict[str, tuple[int, float, str]] = {}
        for f in files:
            sig = (f.info.size, f.info.mtime, f.info.etag)
            current[f.info.path] = sig
            previous = self._previous.get(f.info.path)
            old_enough = f.info.mtime and now - f.info.mtime >= self.settle_seconds
            no_settling = self.settle_seconds <= 0  # tests and one-shot tools: take every file as it is
            if no_settling or previous == sig or (previous is None and old_enough) or f.info.problem:
                settled.append(f)
        self._previous = current
        return ScanResult(files, settled, warnings=warnings)

"""What the commands share: their errors and exit statuses, argument types, finding the trace files a
path names (as the plugin names runs, workers and spans), and the helper process for big files."""

from __future__ import annotations

import argparse
import os
import posixpath
from typing import Any

from torch_tb_profiler.ingest.discovery import TraceFile, group_files, parse_name
from torch_tb_profiler.ingest.storage import FileInfo, Location, file_info, resolve, walk_files
from torch_tb_profiler.trace import limits

EXIT_OK, EXIT_NOTHING_LOADED, EXIT_BAD_ARGS = 0, 1, 2


class CliError(Exception):
    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def limit_flag(text: str) -> str:
    try:
        limits.set_from_flag(text)  # sets the environment: the helper process inherits it
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def peaks_flag(text: str) -> str:
    """``--peaks FILE``: a user table of device peaks (analysis/roofline/peaks.py), checked now and
    passed on through the environment (the helper process and the analyses read it there)."""
    from torch_tb_profiler.analysis.roofline.peaks import PEAKS_ENV, user_peaks

    try:
        user_peaks(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    os.environ[PEAKS_ENV] = text
    return text


def find_traces(path: str) -> tuple[Location, list[TraceFile]]:
    """The trace files PATH names, with run/worker/span assigned as the plugin assigns them."""
    try:
        loc = resolve(path)
    except Exception as exc:
        raise CliError(f"cannot open {path!r}: {exc}", EXIT_BAD_ARGS) from exc
    try:
        if loc.fs.isfile(loc.root):
            return _single_file(loc)
        if not loc.fs.isdir(loc.root):
            if loc.is_local and os.path.lexists(loc.root):  # a FIFO, a device, a broken symlink
                raise CliError(f"{path!r} is not a regular file or a directory: not read", EXIT_BAD_ARGS)
            raise CliError(f"{path!r} does not exist", EXIT_BAD_ARGS)
        return loc, group_files(loc, walk_files(loc))
    except CliError:
        raise
    except Exception as exc:
        raise CliError(f"cannot list {path!r}: {exc}", EXIT_NOTHING_LOADED) from exc


def _single_file(loc: Location) -> tuple[Location, list[TraceFile]]:
    directory, filename = posixpath.split(loc.root)
    dir_loc = Location(url=directory, fs=loc.fs, root=directory, namespace=loc.namespace)
    siblings = [
        FileInfo(p, 0, 0.0)
        for p in (loc.fs.ls(directory, detail=False) if directory else [])
        if p != loc.root
    ]
    me = file_info(loc, loc.root)  # fresh size/mtime/etag: the download cache is keyed on them
    grouped = [t for t in group_files(dir_loc, [me, *siblings]) if t.info.path == loc.root]
    if grouped:
        return dir_loc, grouped
    # not named like a trace file: summarise it anyway, as worker = its name
    run = posixpath.basename(directory) or "."
    parsed = parse_name(filename)
    worker = parsed[0] if parsed else filename
    return dir_loc, [TraceFile(run, worker, "1", me)]


def select(files: list[TraceFile], run: str | None, worker: str | None, span: str | None) -> list[TraceFile]:
    chosen = files
    for label, value, attr in (("run", run, "run"), ("worker", worker, "worker"), ("span", span, "span")):
        if value is None:
            continue
        narrowed = [f for f in chosen if getattr(f, attr) == value]
        if not narrowed:
            known = sorted({getattr(f, attr) for f in chosen})
            raise CliError(f"no {label} {value!r}; found: {', '.join(known) or 'none'}", EXIT_BAD_ARGS)
        chosen = narrowed
    return chosen


class Helper:
    """A second process for the tail of big files (parse_split.py), started on first use."""

    def __init__(self) -> None:
        self._pool: Any = None

    def submit(self, fn: Any, *args: Any) -> Any:
        if self._pool is None:
            import concurrent.futures as cf
            import multiprocessing

            self._pool = cf.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
        return self._pool.submit(fn, *args)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)


def load_trace(loc: Location, f: TraceFile, submit: Any | None) -> Any:
    """One trace file's Profile: merged with its run's graph captures when it has some (one process),
    else parsed with ``submit`` taking the tail of a big file (parse_split.py)."""
    from torch_tb_profiler.ingest.captures import capture_sources
    from torch_tb_profiler.ingest.parse import load_profile
    from torch_tb_profiler.ingest.parse_split import load_split
    from torch_tb_profiler.ingest.storage import local_copy

    local = local_copy(loc, f.info)
    if f.captures:
        sources, notes = capture_sources(loc, f.captures)
        profile = load_profile(local, f.run, f.worker, f.span, captures=sources)
        profile.meta.warnings.extend(notes)
        return profile
    return load_split(local, submit, run=f.run, worker=f.worker, span=f.span)

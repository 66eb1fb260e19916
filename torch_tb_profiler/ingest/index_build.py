"""Building the persisted index of a logdir: one task per trace file, on Dask or a local process pool.

``index_file`` is the task: it runs on a worker (a dask.distributed worker, or a pool process), opens
the trace through storage.py (so a worker reads local paths, S3, GCS or Azure the way the plugin does),
parses it and writes its index to the index location (persist.py: write then rename, or one PUT). It
never raises: a bad file comes back as an error result, so one file never stops the others. A file whose
index is current is skipped. ``Builder`` submits the tasks and reports results as they complete.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import multiprocessing
import os
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from torch_tb_profiler.ingest.discovery import TraceFile
from torch_tb_profiler.ingest.storage import FileInfo, Location, file_info, local_copy, resolve

INDEXED, CURRENT, FAILED = "indexed", "current", "error"


@dataclass(frozen=True)
class Task:
    """What a worker needs to index one file (plain data: it travels to the cluster)."""

    logdir: str  # the logdir URL as given
    storage_options: str | None  # JSON, as TORCH_PROFILER_STORAGE_OPTIONS; None: the worker's own env
    index_dir: str  # the index location URL
    run: str
    worker: str
    span: str
    info: FileInfo  # as listed by the driver: the index is keyed on it, as the plugin's scan keys it
    captures: tuple[FileInfo, ...] = ()  # the run's capture folder: merged, and part of the key


@dataclass
class Result:
    task: Task
    status: str  # indexed | current | error
    message: str = ""
    seconds: float = 0.0
    host: str = ""


_LOCATIONS: dict[tuple[str, str | None], Location] = {}


def _location(url: str, options: str | None) -> Location:
    """One resolved Location per (URL, options) per worker process (fsspec clients are reused)."""
    key = (url, options)
    if key not in _LOCATIONS:
        _LOCATIONS[key] = resolve(url, options)
    return _LOCATIONS[key]


def index_file(task: Task) -> Result:
    """Index one trace file (runs on a worker; never raises)."""
    from torch_tb_profiler.ingest.captures import capture_sources
    from torch_tb_profiler.ingest.parse import load_profile
    from torch_tb_profiler.ingest.persist import IndexStore, max_bytes

    started = time.monotonic()
    host = f"{os.uname().nodename}:{os.getpid()}" if hasattr(os, "uname") else str(os.getpid())
    try:
        loc = _location(task.logdir, task.storage_options)
        index_loc = _location(task.index_dir, task.storage_options)
        store = IndexStore(index_loc, max_bytes() if index_loc.is_local else None)
        if store.is_current(loc, task.info, task.captures):
            return Result(task, CURRENT, seconds=time.monotonic() - started, host=host)
        local = local_copy(loc, task.info)
        sources, notes = capture_sources(loc, task.captures) if task.captures else ([], [])
        profile = load_profile(local, task.run, task.worker, task.span, captures=sources)
        profile.meta.warnings.extend(notes)
        profile.source = task.info.path
        now = file_info(loc, task.info.path)
        if (now.size, now.mtime, now.etag) != (task.info.size, task.info.mtime, task.info.etag):
            raise RuntimeError("the file changed while it was indexed; run index again")
        store.save(loc, task.info, profile, task.captures)
    except MemoryError:
        return Result(task, FAILED, "out of memory while parsing this file", time.monotonic() - started, host)
    except Exception as e:
        message = f"{type(e).__name__}: {e}" if str(e) else traceback.format_exc(limit=2)
        return Result(task, FAILED, message, time.monotonic() - started, host)
    return Result(task, INDEXED, seconds=time.monotonic() - started, host=host)


def tasks_for(logdir: str, files: list[TraceFile], index_dir: str, storage_options: str | None) -> list[Task]:
    """Biggest files first: the last task to finish is then a small one."""
    ordered = sorted(files, key=lambda f: -f.info.size)
    return [
        Task(logdir, storage_options, index_dir, f.run, f.worker, f.span, f.info, f.captures) for f in ordered
    ]


class Engine:
    """Where tasks run: ``map_unordered(fn, tasks)`` submits them all at once and returns an iterator of
    results in completion order (closing it early cancels what has not run)."""

    description = ""

    def map_unordered(self, fn: Callable[[Task], Result], tasks: list[Task]) -> Iterator[Result]:
        raise NotImplementedError

    def close(self) -> None:
        pass


class PoolEngine(Engine):
    """A local process pool (no dask installed)."""

    def __init__(self, processes: int) -> None:
        self.processes = max(1, processes)
        self.description = f"a local pool of {self.processes} process{'es' if self.processes > 1 else ''}"
        ctx = multiprocessing.get_context("spawn")
        self._pool = cf.ProcessPoolExecutor(max_workers=self.processes, mp_context=ctx)

    def map_unordered(self, fn: Callable[[Task], Result], tasks: list[Task]) -> Iterator[Result]:
        futures = {self._pool.submit(fn, t): t for t in tasks}
        return self._results(futures)

    def _results(self, futures: dict[cf.Future[Result], Task]) -> Iterator[Result]:
        try:
            for future in cf.as_completed(futures):
                try:
                    yield future.result()
                except Exception as e:  # a pool process died (killed, out of memory): report the file
                    yield Result(futures[future], FAILED, f"worker process failed: {type(e).__name__}: {e}")
        finally:
            for future in futures:
                future.cancel()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


class DaskEngine(Engine):
    """A dask.distributed cluster: an existing scheduler, or a LocalCluster of worker processes."""

    def __init__(self, scheduler: str | None, local_workers: int | None) -> None:
        from distributed import Client, LocalCluster

        self._cluster: Any = None
        if scheduler:
            self.client = Client(scheduler, timeout="30s")
            workers = len(self.client.scheduler_info().get("workers", {}))
            self.description = f"the Dask scheduler at {scheduler} ({workers} workers now)"
        else:
            n = max(1, local_workers or os.cpu_count() or 1)
            self._cluster = LocalCluster(
                n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
            )
            self.client = Client(self._cluster)
            self.description = f"a local Dask cluster of {n} worker process{'es' if n > 1 else ''}"

    def map_unordered(self, fn: Callable[[Task], Result], tasks: list[Task]) -> Iterator[Result]:
        # pure=False: a re-run must run again (the file may have changed under the same arguments)
        futures = self.client.map(fn, tasks, pure=False)
        return self._results(futures, {f.key: t for f, t in zip(futures, tasks, strict=True)})

    def _results(self, futures: list[Any], by_key: dict[Any, Task]) -> Iterator[Result]:
        from distributed import as_completed

        try:
            for future in as_completed(futures):
                try:
                    yield future.result()
                except Exception as e:  # the task was lost too often (workers killed) or could not run
                    yield Result(by_key[future.key], FAILED, f"{type(e).__name__}: {e}")
        finally:
            with contextlib.suppress(Exception):
                self.client.cancel(futures)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.client.close()
        if self._cluster is not None:
            with contextlib.suppress(Exception):
                self._cluster.close()


def dask_available() -> bool:
    try:
        import distributed  # noqa: F401
    except ImportError:
        return False
    return True

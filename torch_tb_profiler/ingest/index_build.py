"""Building the persisted index of a logdir: one task per trace file, on Dask or a local process pool.

``index_file`` is the task: it runs on a worker (a dask.distributed worker, or a pool process), opens
the trace through storage.py (so a worker reads local paths, S3, GCS or Azure the way the plugin does),
parses it and writes its index to the index location (persist.py: write then rename, or one PUT). It
never raises: a bad file comes back as an error result, so one file never stops the others. A file whose
index is current is skipped. ``Builder`` submits the tasks and reports results as they complete.
"""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import contextlib
import multiprocessing
import os
import threading
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


POLL_S = 5.0  # how often a waiting `index` asks the cluster for its workers
NO_WORKERS_ENV = "TORCH_PROFILER_DASK_NO_WORKERS_S"
DEFAULT_NO_WORKERS_S = 120.0


class NoWorkers(RuntimeError):
    """The cluster lost every worker (or its scheduler) for longer than the bound: `index` gives up."""


def no_workers_timeout() -> float:
    text = os.environ.get(NO_WORKERS_ENV, "").strip()
    try:
        value = float(text) if text else DEFAULT_NO_WORKERS_S
    except ValueError:
        raise ValueError(f"{NO_WORKERS_ENV}={text!r} is not a number of seconds") from None
    if not value > 0 or value == float("inf"):
        raise ValueError(f"{NO_WORKERS_ENV}={text!r} must be a positive number of seconds")
    return value


class DaskEngine(Engine):
    """A dask.distributed cluster: an existing scheduler, or a LocalCluster of worker processes."""

    def __init__(self, scheduler: str | None, local_workers: int | None) -> None:
        from distributed import Client, LocalCluster

        self.no_workers_s = no_workers_timeout()
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
        """Results as they complete. Every wait is bounded: while tasks are pending the cluster is asked
        every POLL_S how many workers it has; none (or no answer from the scheduler) for
        ``no_workers_s`` raises NoWorkers (tasks already done are written and stay)."""
        from distributed import wait

        pending = set(futures)
        without_workers: float | None = None
        try:
            while pending:
                try:
                    done, pending = wait(pending, timeout=POLL_S, return_when="FIRST_COMPLETED")
                except (TimeoutError, asyncio.TimeoutError):
                    done = set()
                for future in done:
                    try:
                        yield future.result()
                    except Exception as e:  # the task was lost too often (workers killed) or could not run
                        yield Result(by_key[future.key], FAILED, f"{type(e).__name__}: {e}")
                if done:
                    without_workers = None
                    continue
                if self._workers() > 0:
                    without_workers = None
                    continue
                now = time.monotonic()
                without_workers = without_workers if without_workers is not None else now
                if now - without_workers >= self.no_workers_s:
                    raise NoWorkers(
                        f"the Dask cluster has had no workers for {now - without_workers:.0f} s "
                        f"({len(pending)} of {len(futures)} files not indexed; what was indexed is kept); "
                        f"start workers and run again, or raise {NO_WORKERS_ENV}"
                    )
        finally:
            with contextlib.suppress(Exception):
                self.client.cancel(futures)

    def _workers(self) -> int:
        """How many workers the scheduler has now; 0 when it does not answer within POLL_S."""
        found: list[int] = []

        def ask() -> None:
            with contextlib.suppress(Exception):
                found.append(len(self.client.scheduler_info().get("workers", {})))

        asker = threading.Thread(target=ask, daemon=True)
        asker.start()
        asker.join(POLL_S)
        return found[0] if found else 0

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

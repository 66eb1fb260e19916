"""``torch-tb-profiler index LOGDIR``: build the persisted index of every trace file, on a Dask cluster
(an existing scheduler, or a local one) or, without dask installed, a local process pool.

Exit status: 0 when every file is indexed (or already was), 1 when any file failed (listed at the end),
2 on bad arguments (an unusable index location, a scheduler that does not answer, --run that matches
nothing), 3 when the Dask cluster has had no worker for TORCH_PROFILER_DASK_NO_WORKERS_S (default 120 s)
while files were left, 130 on Ctrl-C (what was written stays; nothing half-written is ever visible).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any, TextIO

from torch_tb_profiler.cli.common import CliError, find_traces, non_negative
from torch_tb_profiler.ingest import index_build as ib

EXIT_OK, EXIT_FAILED, EXIT_BAD_ARGS, EXIT_NO_WORKERS, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


def add_parser(sub: Any) -> None:

    p = sub.add_parser(
        "index", help="parse every trace of a logdir once and store the index the plugin opens quickly"
    )
    p.add_argument("logdir", help="a logdir (local folder or URL: s3://, gs://, az://...)")
    p.add_argument(
        "--index-dir",
        help="where to write the index: a folder or URL (default: TORCH_PROFILER_INDEX_DIR, else the "
        "per-user cache folder the plugin reads by default)",
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--scheduler", metavar="tcp://HOST:PORT", help="an existing dask.distributed scheduler"
    )
    where.add_argument(
        "--local-workers",
        type=non_negative,
        metavar="N",
        help="worker processes on this machine (default: one per core)",
    )
    p.add_argument("--run", action="append", default=[], metavar="RUN", help="only this run (repeatable)")


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    from torch_tb_profiler.ingest.persist import INDEX_DIR_ENV, OFF, IndexUnavailable, open_store

    out = out or sys.stderr
    index_dir = args.index_dir or os.environ.get(INDEX_DIR_ENV, "").strip() or None
    if index_dir is not None and index_dir.lower() in OFF:
        print("torch-tb-profiler: the index is turned off (--index-dir/TORCH_PROFILER_INDEX_DIR)", file=out)
        return EXIT_BAD_ARGS
    try:
        store = open_store(index_dir)
        loc, files = find_traces(args.logdir)
    except IndexUnavailable as e:
        print(f"torch-tb-profiler: {e}", file=out)
        return EXIT_BAD_ARGS
    except CliError as e:
        print(f"torch-tb-profiler: {e}", file=out)
        return e.status
    assert store is not None
    if args.run:
        known = sorted({f.run for f in files})
        missing = [r for r in args.run if r not in known]
        if missing:
            print(f"torch-tb-profiler: no run {missing[0]!r}; found: {', '.join(known) or 'none'}", file=out)
            return EXIT_BAD_ARGS
        files = [f for f in files if f.run in args.run]
    if not files:
        print(f"torch-tb-profiler: no *.pt.trace.json[.gz] files under {args.logdir!r}", file=out)
        return EXIT_FAILED
    options = os.environ.get("TORCH_PROFILER_STORAGE_OPTIONS") or None
    tasks = ib.tasks_for(loc.url, files, store.url, options)
    try:
        engine = _engine(args, out)
    except Exception as e:
        print(f"torch-tb-profiler: cannot start the workers: {type(e).__name__}: {e}", file=out)
        return EXIT_BAD_ARGS
    print(
        f"indexing {len(tasks)} files ({_size(sum(t.info.size for t in tasks))}) on {engine.description}",
        file=out,
    )
    print(f"index: {store.url}", file=out)
    progress = Progress(tasks, out)
    try:
        for result in engine.map_unordered(ib.index_file, tasks):
            progress.done(result)
    except KeyboardInterrupt:
        progress.line(final=True)
        print("interrupted: files indexed so far are kept; run again to finish", file=out)
        return EXIT_INTERRUPTED
    except ib.NoWorkers as e:
        progress.line(final=True)
        print(f"torch-tb-profiler: {e}", file=out)
        return EXIT_NO_WORKERS
    finally:
        engine.close()
    return progress.report()


def _engine(args: argparse.Namespace, out: TextIO) -> ib.Engine:
    if ib.dask_available():
        return ib.DaskEngine(args.scheduler, args.local_workers)
    if args.scheduler:
        raise RuntimeError("--scheduler needs dask: pip install 'torch-tb-profiler[dask]'")
    n = args.local_workers or os.cpu_count() or 1
    print(
        "dask is not installed (pip install 'torch-tb-profiler[dask]'): using a local process pool", file=out
    )
    return ib.PoolEngine(n)


class Progress:
    """Files and bytes done, throughput and ETA; one line per second at most (plus the last)."""

    def __init__(self, tasks: list[ib.Task], out: TextIO) -> None:
        self.total_files = len(tasks)
        self.total_bytes = sum(t.info.size for t in tasks)
        self.results: list[ib.Result] = []
        self.bytes_done = 0
        self.started = time.monotonic()
        self.out = out
        self._last = 0.0
        self._tty = bool(getattr(out, "isatty", lambda: False)())

    def done(self, result: ib.Result) -> None:
        self.results.append(result)
        self.bytes_done += result.task.info.size
        if time.monotonic() - self._last >= 1.0 or len(self.results) == self.total_files:
            self.line(final=len(self.results) == self.total_files)

    def line(self, final: bool = False) -> None:
        self._last = time.monotonic()
        elapsed = max(self._last - self.started, 1e-9)
        rate = self.bytes_done / elapsed
        left = self.total_bytes - self.bytes_done
        eta = "0s" if left <= 0 else (_duration(left / rate) if rate > 0 else "?")
        text = (
            f"[{len(self.results)}/{self.total_files} files] {_size(self.bytes_done)} of {_size(self.total_bytes)}"
            f"  {_size(rate)}/s  {len(self.results) / elapsed:.2f} files/s  elapsed {_duration(elapsed)}  ETA {eta}"
        )
        end = "\n" if final or not self._tty else ""
        print(("\r" if self._tty else "") + text, end=end, file=self.out, flush=True)

    def report(self) -> int:
        counts = {
            s: sum(1 for r in self.results if r.status == s) for s in (ib.INDEXED, ib.CURRENT, ib.FAILED)
        }
        print(
            f"indexed {counts[ib.INDEXED]}, already current {counts[ib.CURRENT]}, failed {counts[ib.FAILED]}",
            file=self.out,
        )
        failed = sorted((r for r in self.results if r.status == ib.FAILED), key=lambda r: r.task.info.path)
        for r in failed:
            print(f"  {r.task.info.path}: {r.message}", file=self.out)
        return EXIT_FAILED if failed else EXIT_OK


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000:
            return f"{n:.1f} {unit}" if unit != "B" else f"{n:.0f} B"
        n /= 1000
    return f"{n:.1f} TB"


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds}s"
    minutes, s = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{s:02d}s"
    hours, m = divmod(minutes, 60)
    return f"{hours}h{m:02d}m"

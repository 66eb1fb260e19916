"""The parser processes: a bounded ``spawn`` pool (or one thread with ``processes=0``), warmed while the
server starts, big files split between two processes (parse_split.py), and renewed after a big parse so
that idle processes do not keep its heap."""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import multiprocessing
import shutil
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from torch_tb_profiler.ingest.parse import CaptureSource, load_job, load_profile, warm_up
from torch_tb_profiler.ingest.parse_split import head_job, new_jobdir, tail_job, tail_start
from torch_tb_profiler.model import Profile
from torch_tb_profiler.trace import chunks

RECYCLE_AFTER_BYTES = 64 << 20  # JSON text of a file after which the pool's processes are renewed


class ParserPool:
    """``workers`` processes (0: one thread in this process) that parse trace files."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._warm: cf.Future[None] | None = None
        self._lock = threading.Lock()
        self.executor = self._new_executor()
        self._dirty = False  # it parsed a big file since it started (see renew)

    def _new_executor(self) -> cf.Executor:
        if self.workers == 0:
            return cf.ThreadPoolExecutor(max_workers=1, thread_name_prefix="profiler-load")
        ctx = multiprocessing.get_context("spawn")  # TensorBoard is multi-threaded: never fork it
        return cf.ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx)

    def warm(self) -> None:
        """One process imports while the server starts; loads wait for it, so a lone file does not start
        a second process (~100 MB) - more start on demand when several files wait."""
        if self.workers:
            self._warm = self.submit(warm_up)

    def renew(self) -> None:
        """After a big file, let the processes exit: an idle process that parsed 500 MB of JSON keeps
        ~250 MB resident (freed objects stay in its heap). The next parse starts a fresh process (~1 s of
        imports), which only happens when new files arrive. The caller checks that nothing (else) loads."""
        with self._lock:
            if not self._dirty or self.workers == 0:
                return
            old, self.executor, self._dirty = self.executor, self._new_executor(), False
        old.shutdown(wait=False)  # what was submitted still runs; the processes exit when done

    def close(self, terminate: bool = False) -> None:
        """``terminate`` also kills the processes, so that a parse in progress cannot hold up the
        interpreter's exit (it joins executors' workers)."""
        if terminate:
            for process in list((getattr(self.executor, "_processes", None) or {}).values()):
                with contextlib.suppress(Exception):
                    process.terminate()
        self.executor.shutdown(wait=False, cancel_futures=True)

    def submit(self, fn: Any, *args: Any) -> cf.Future[Any]:
        """Submit a job; a process started meanwhile does not re-run TensorBoard's main script."""
        with _main_script_hidden(), self._lock:
            return self.executor.submit(fn, *args)

    def parse(self, local: str, captures: Sequence[CaptureSource] = ()) -> Profile | str:
        """A big file is split between two processes (parse_split.py); others take one, as does a file
        merged with its run's graph captures. Waits for the result: call it from a dispatch thread."""
        chunk = chunks.CHUNK_BYTES
        if (chunks.text_size(local) or 0) >= RECYCLE_AFTER_BYTES:
            self._dirty = True
        if captures:
            return self.submit(load_job, local, load_profile, list(captures)).result()
        first_tail = tail_start(local, chunk) if self.workers >= 2 else None
        if first_tail is None:
            if self._warm is not None:
                self._warm.result()  # a lone file does not start a second process while the first warms
            return self.submit(load_job, local).result()
        # a split file wants two processes anyway: submitting now starts the second one at once
        jobdir = new_jobdir()
        try:
            head = self.submit(head_job, local, jobdir, first_tail, chunk)
            self.submit(tail_job, local, jobdir, first_tail, chunk)
            return head.result()
        finally:
            shutil.rmtree(jobdir, ignore_errors=True)


_MAIN_LOCK = threading.Lock()


@contextlib.contextmanager
def _main_script_hidden() -> Iterator[None]:
    """A ``spawn`` child runs the parent's ``__main__`` file again (as ``__mp_main__``) before its job.
    Under TensorBoard that file is the ``tensorboard`` console script, whose imports cost a pool process
    about a second and 50 MB; our jobs need nothing from it. Processes start synchronously inside
    ``submit``, so hiding ``__main__.__file__`` around it is enough (the lock makes it safe across our
    dispatch threads; nothing else reads it at run time)."""
    main = sys.modules.get("__main__")
    with _MAIN_LOCK:
        path = getattr(main, "__file__", None)
        if main is None or path is None or getattr(main, "__spec__", None) is not None:
            yield
            return
        del main.__file__
        try:
            yield
        finally:
            main.__file__ = path

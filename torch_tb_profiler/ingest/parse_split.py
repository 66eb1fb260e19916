"""One big trace file parsed by two processes: a head process and a tail process.

The head reads chunks ``0 .. first_tail - 1`` (``trace/chunks.py``) while the tail reads the rest and
leaves its tables in a job folder; the head then joins both into one Profile. Whoever gets there first
claims the tail (an exclusive file create), so a tail job that has not started when the head is done is
skipped and the head reads the tail itself: nothing waits on a busy pool. Anything unusual (the tail
failing, a file the chunked reader refuses) ends in the one-process reading, which gives the same
Profile.
"""

from __future__ import annotations

import logging
import os
import pickle
import shutil
import tempfile
import time
import traceback
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from torch_tb_profiler.ingest.parse import TablesPart, load_job, load_profile, load_whole, read_chunks
from torch_tb_profiler.model import Profile
from torch_tb_profiler.trace.chunks import CHUNK_BYTES, NotChunkable, text_size

log = logging.getLogger(__name__)

MIN_CHUNKS = 3  # files of fewer chunks are read by one process
_CLAIM, _TABLES, _FAILED = "claim", "tail.pickle", "tail.failed"
_POLL_S = 0.01


def tail_start(path: str, chunk_bytes: int) -> int | None:
    """The chunk where the tail process starts, or None when the file is read by one process.

    The head gets a little more than half: the tail first inflates everything before its part."""
    size = text_size(path)
    if size is None:
        return None
    chunks = -(-size // chunk_bytes)
    if chunks < MIN_CHUNKS:
        return None
    return min(chunks - 1, (chunks * 11 + 19) // 20)


def _claim(jobdir: str, who: str) -> bool:
    try:
        fd = os.open(os.path.join(jobdir, _CLAIM), os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w") as f:
        f.write(who)
    return True


def tail_job(path: str, jobdir: str, first: int, chunk_bytes: int = CHUNK_BYTES) -> None:
    """Runs in the tail process: the tables of chunks ``first`` .. end, left in ``jobdir``."""
    try:
        if not _claim(jobdir, "tail"):
            return  # the head got there first
        try:
            part = read_chunks(path, chunk_bytes, first=first)
        except Exception as e:  # the head reads the tail itself and reports any real error
            log.debug("tail of %s failed: %s", path, traceback.format_exc())
            _write_atomic(jobdir, _FAILED, f"{type(e).__name__}: {e}".encode())
            return
        _write_atomic(jobdir, _TABLES, pickle.dumps(part, protocol=pickle.HIGHEST_PROTOCOL))
    except OSError:  # the job folder is gone: the head finished without us
        pass


def _write_atomic(jobdir: str, name: str, data: bytes) -> None:
    tmp = os.path.join(jobdir, name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, os.path.join(jobdir, name))


def head_job(path: str, jobdir: str, first_tail: int, chunk_bytes: int = CHUNK_BYTES) -> Profile | str:
    """Runs in the head process: the whole file's Profile, or why it could not be read (``load_job``)."""
    return load_job(path, lambda p: _head_or_whole(p, jobdir, first_tail, chunk_bytes))


def _head_or_whole(path: str, jobdir: str, first_tail: int, chunk_bytes: int) -> Profile:
    """The head's chunks joined with the tail's; a file the chunked reader refuses is read whole."""
    try:
        return _head(path, jobdir, first_tail, chunk_bytes)
    except NotChunkable as e:
        log.debug("%s: reading it whole (%s)", path, e)
    _claim(jobdir, "head")  # a tail that has not started yet need not
    return load_whole(path)


def _head(path: str, jobdir: str, first_tail: int, chunk_bytes: int) -> Profile:
    started = time.monotonic()
    part = read_chunks(path, chunk_bytes, stop=first_tail)
    if not part.reached_end:
        patience = max(30.0, 3 * (time.monotonic() - started))
        part.extend(_tail(path, jobdir, first_tail, chunk_bytes, patience))
    return part.profile("", "", "", path)


def _tail(path: str, jobdir: str, first: int, chunk_bytes: int, patience: float) -> TablesPart:
    """The tail's tables: from the tail process when it claimed them, else read here."""
    if _claim(jobdir, "head"):
        return read_chunks(path, chunk_bytes, first=first)
    deadline = time.monotonic() + patience
    tables, failed = os.path.join(jobdir, _TABLES), os.path.join(jobdir, _FAILED)
    while time.monotonic() < deadline:
        if os.path.exists(tables):
            with open(tables, "rb") as f:
                part: TablesPart = pickle.load(f)
            return part
        if os.path.exists(failed):
            break
        time.sleep(_POLL_S)
    else:
        log.warning("%s: the tail process took too long; reading the tail here", path)
    return read_chunks(path, chunk_bytes, first=first)


_PREFIX = "torch-tb-profiler-split-"
STALE_S = 24 * 3600  # no job lasts this long: older folders were left by a killed server


def new_jobdir() -> str:
    """A fresh job folder; folders a killed server left behind (they may hold a tail's pickled
    tables, tens of MB) are removed on the way."""
    root = tempfile.gettempdir()
    now = time.time()
    try:
        names = [n for n in os.listdir(root) if n.startswith(_PREFIX)]
    except OSError:
        names = []
    for name in names:
        path = os.path.join(root, name)
        try:
            if now - os.path.getmtime(path) > STALE_S:
                shutil.rmtree(path, ignore_errors=True)
        except OSError:
            pass
    return tempfile.mkdtemp(prefix=_PREFIX)


def load_split(
    path: str,
    submit: Callable[..., Future[Any]] | None,
    run: str = "",
    worker: str = "",
    span: str = "",
    chunk_bytes: int = CHUNK_BYTES,
) -> Profile:
    """``load_profile`` with the tail handed to another process through ``submit`` (an executor's;
    None: one process)."""
    first_tail = tail_start(path, chunk_bytes) if submit is not None else None
    if first_tail is None:
        return load_profile(path, run, worker, span, chunk_bytes)
    jobdir = new_jobdir()
    try:
        submit(tail_job, path, jobdir, first_tail, chunk_bytes)
        profile = _head_or_whole(path, jobdir, first_tail, chunk_bytes)
        profile.run, profile.worker, profile.span = run, worker, span
        return profile
    finally:
        shutil.rmtree(jobdir, ignore_errors=True)

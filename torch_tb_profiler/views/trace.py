"""The Trace view's route: the trace file itself, with GPU counter tracks added, ready for Perfetto.

The answer is written once per loaded file content into a gzip file in a private cache folder, streaming
the source in chunks (a 1 GB trace never sits in memory), and served from there on later requests. Its
key is the fingerprint the loader took of the file it parsed (``private_dir.fingerprint``: identity and
content, not just path/size/mtime), so the counters always belong to the events served; a file that
changed since it was loaded answers 409 until the rescan has reloaded it. The folder is per user and
mode 0700 (``TORCH_PROFILER_TRACE_CACHE``, else the user cache folder + ``torch-tb-profiler/trace``), and
only regular files this user wrote there are served (docs/security.md).
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import os
import posixpath
import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TypeVar
from urllib.parse import quote

import msgspec
from werkzeug.wrappers import Request, Response
from werkzeug.wsgi import wrap_file

from torch_tb_profiler.analysis.timeline.counters import counter_events
from torch_tb_profiler.ingest.loading import SOURCE_FINGERPRINT, SOURCE_LOCAL, RunStore
from torch_tb_profiler.ingest.names import display
from torch_tb_profiler.ingest.private_dir import fingerprint, is_ours, private_dir, user_cache_root
from torch_tb_profiler.trace.decode import TraceDecodeError, open_regular
from torch_tb_profiler.views.common import HttpError, profile_param

_EVENTS_ARRAY = re.compile(rb'"traceEvents"\s*:\s*\[')
_CHUNK = 16 << 20
_KEEP_FILES = 8  # answers kept in the cache folder (oldest removed first)
_FORMAT = "3"  # part of the key: answers of an older layout are never served (3: tracks named by kind, no SM track off CUDA)
_lock = threading.Lock()
T = TypeVar("T")


def with_counters(data: bytes, counters: list[dict]) -> bytes:
    """The trace bytes with the counter events spliced in at the start of the event array."""
    return b"".join(_spliced(iter([data]), counters))


def _spliced(chunks: Iterator[bytes], counters: list[dict]) -> Iterator[bytes]:
    """The chunks of a trace with the counters inserted after the opening bracket of its events."""
    if not counters:
        yield from chunks
        return
    encoded = msgspec.json.encode(counters)[1:-1]  # the events without the surrounding brackets
    head = b""
    for chunk in chunks:
        head += chunk
        match = _EVENTS_ARRAY.search(head)
        stripped = head.lstrip()
        if match is None and stripped[:1] != b"[" and len(head) < (64 << 20):
            continue  # the key may be further on (metadata first)
        if match is not None:
            at = match.end()
        elif stripped[:1] == b"[":  # a bare top-level event array
            at = head.index(b"[") + 1
        else:
            yield head  # no event array found: serve as is
            break
        rest = head[at:].lstrip()
        if not rest and len(head) - at < 4096:
            continue  # can't tell yet whether the array is empty
        separator = b"" if rest[:1] == b"]" else b","
        yield head[:at] + encoded + separator
        yield head[at:]
        break
    else:
        if head:
            yield head
        return
    yield from chunks


def _source_chunks(path: str) -> Iterator[bytes]:
    with open_regular(path) as raw:
        magic = raw.read(2)
        raw.seek(0)
        stream: IO[bytes] = gzip.GzipFile(fileobj=raw) if magic == b"\x1f\x8b" else raw
        while chunk := stream.read(_CHUNK):
            yield chunk


def _cache_dir() -> Path:
    configured = os.environ.get("TORCH_PROFILER_TRACE_CACHE", "").strip()
    folder = Path(configured).expanduser() if configured else user_cache_root() / "trace"
    return private_dir(folder, "trace")


class CacheWriteError(OSError):
    """The answer could not be written to the cache folder (full disk, read-only folder): not the trace's
    fault, and the message says so."""


_STALE_PARTIAL_S = 3600.0  # a partial file this old is left over whatever its writer


def cached_trace(source: str, identity: str, counters: Callable[[], list[dict]]) -> Path:
    """The gzip answer for this source file content (``identity``: its fingerprint), written on first
    use (``counters`` computed only then). A failed write leaves no partial file behind; partial files
    of writers that died (killed mid-write) are swept on the next write."""
    key = hashlib.sha256(f"{_FORMAT}\0{identity}".encode()).hexdigest()
    folder = _cache_dir()
    target = folder / f"{key}.json.gz"
    with _lock:
        if is_ours(target):
            os.utime(target)  # most recently used
            return target
        _sweep_partials(folder)
        partial = folder / f"{key}.{os.getpid()}.partial"
        try:
            _write_answer(partial, _spliced(_source_chunks(source), counters()), folder)
            _cache_op(lambda: os.replace(partial, target), folder)  # replaces anything else under that name
        except BaseException:
            with contextlib.suppress(OSError):  # a read-only folder answers EROFS even for a missing file
                partial.unlink()
            raise
        answers = sorted((p for p in folder.glob("*.json.gz") if is_ours(p)), key=lambda p: p.stat().st_mtime)
        for old in answers[:-_KEEP_FILES]:
            old.unlink(missing_ok=True)
        return target


def _write_answer(partial: Path, pieces: Iterator[bytes], folder: Path) -> None:
    """Write the pieces gzipped: the cache side's failures are CacheWriteError, the source's (reading
    the trace) pass as they are."""
    out = _cache_op(lambda: gzip.open(partial, "wb", compresslevel=1), folder)  # noqa: SIM115 (closed below)
    try:
        for piece in pieces:
            _cache_op(lambda piece=piece: out.write(piece), folder)
    except BaseException:
        with contextlib.suppress(OSError):
            out.close()
        raise
    _cache_op(out.close, folder)


def _cache_op(op: Callable[[], T], folder: Path) -> T:
    try:
        return op()
    except OSError as e:
        raise CacheWriteError(_write_message(folder, e)) from None


def _write_message(folder: Path, e: OSError) -> str:
    return (
        f"cannot write the trace download into the cache folder {folder}: {e.strerror or e}; "
        "free space there or point TORCH_PROFILER_TRACE_CACHE at another folder"
    )


def _sweep_partials(folder: Path) -> None:
    """Remove partial files of dead writers (this process holds the lock: its own are dead too) and any
    older than an hour."""
    now = time.time()
    for p in folder.glob("*.partial"):
        if not is_ours(p):
            continue
        try:
            pid = int(p.name.rsplit(".", 2)[-2])
        except (ValueError, IndexError):
            pid = -1
        try:
            if pid == os.getpid() or not _alive(pid) or now - p.stat().st_mtime > _STALE_PARTIAL_S:
                p.unlink()
        except OSError:
            pass


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, not ours to signal
        return True
    return True


def _attachment(name: str) -> str:
    """A Content-Disposition for any file name: an ASCII fallback plus the UTF-8 name (RFC 6266), so a
    newline or an undecodable byte in the name cannot break the header."""
    shown = display(name)
    fallback = re.sub(r"[^A-Za-z0-9._-]", "_", shown)
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(shown, safe='')}"


def trace(request: Request, store: RunStore) -> Response:
    profile = profile_param(request, store)
    local = profile.cache.get(SOURCE_LOCAL, profile.source)
    try:
        current = fingerprint(local)
        loaded = profile.cache.setdefault(SOURCE_FINGERPRINT, current)  # set by the loader when it parsed
        if current != loaded:
            raise HttpError(
                409, "the trace file changed since it was loaded; it is reloaded on the next scan"
            )
        path = cached_trace(local, loaded, lambda: counter_events(profile))
    except CacheWriteError as e:
        raise HttpError(507, str(e)) from None
    except (OSError, EOFError, TraceDecodeError) as e:
        raise HttpError(404, f"the trace file is no longer readable: {e}") from None
    name = posixpath.basename(profile.source)
    if name.endswith(".gz"):
        name = name[:-3]
    headers = {
        "Content-Disposition": _attachment(f"{name}.gz"),
        "X-Content-Type-Options": "nosniff",
        "Content-Length": str(path.stat().st_size),
    }
    body = wrap_file(request.environ, open(path, "rb"), buffer_size=1 << 20)  # noqa: SIM115 (closed by the server)
    return Response(body, mimetype="application/gzip", headers=headers, direct_passthrough=True)


ROUTES = {"/trace": trace}

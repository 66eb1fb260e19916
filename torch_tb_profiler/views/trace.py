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

import gzip
import hashlib
import os
import posixpath
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO
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


def cached_trace(source: str, identity: str, counters: Callable[[], list[dict]]) -> Path:
    """The gzip answer for this source file content (``identity``: its fingerprint), written on first
    use (``counters`` computed only then)."""
    key = hashlib.sha256(f"{_FORMAT}\0{identity}".encode()).hexdigest()
    folder = _cache_dir()
    target = folder / f"{key}.json.gz"
    with _lock:
        if is_ours(target):
            os.utime(target)  # most recently used
            return target
        partial = folder / f"{key}.{os.getpid()}.partial"
        with gzip.open(partial, "wb", compresslevel=1) as out:
            for piece in _spliced(_source_chunks(source), counters()):
                out.write(piece)
        os.replace(partial, target)  # replaces anything else under that name
        answers = sorted((p for p in folder.glob("*.json.gz") if is_ours(p)), key=lambda p: p.stat().st_mtime)
        for old in answers[:-_KEEP_FILES]:
            old.unlink(missing_ok=True)
        return target


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

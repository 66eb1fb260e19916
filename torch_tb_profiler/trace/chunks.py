"""A big trace file's text in chunks of whole events, read and decompressed as a stream.

Decoding a whole 300 MB trace at once holds the text and every event object of the file together
(about 2.5 bytes of memory per byte of JSON). Cut into chunks of about ``CHUNK_BYTES`` of text, each
chunk is decoded, turned into tables and dropped before the next is read, so memory holds one chunk
plus the tables, and the per-event work runs on a cache-sized working set.

Chunk ``k`` starts at the first event boundary (``}`` ``,`` ``{`` between two events) at or after text
offset ``k * chunk_bytes``. The rule depends only on the text, so two processes that each take a range of
chunks (``first``, ``stop``) agree on where their ranges meet.

Only the plain shape is handled here: one JSON object holding a ``traceEvents`` array. A boundary that
turns out to be wrong makes a chunk undecodable; any surprise (a top-level array, a truncated or
corrupt gzip stream, a chunk that does not decode) raises ``NotChunkable``, and the caller reads the
whole file with the repairing decoder instead (``trace/decode.py``).
"""

from __future__ import annotations

import queue
import re
import threading
import zlib
from collections.abc import Iterator
from dataclasses import dataclass

import msgspec

from torch_tb_profiler.trace import limits
from torch_tb_profiler.trace.decode import decode_strict, has_second_events_key, open_regular
from torch_tb_profiler.trace.events import DecodedTrace

CHUNK_BYTES = 32 << 20  # text per chunk (read at call time by the loader: tests use small chunks)
_READ = 1 << 22  # bytes of the file read at a time
_INFLATE = 1 << 24  # most text inflated at a time (big: the inflating thread needs the GIL once per piece)
_BOUNDARY = re.compile(rb"\}\s*,\s*\{")


class NotChunkable(Exception):
    """The file cannot be read chunk-wise; read it whole (with repairs) instead."""


def text_size(path: str) -> int | None:
    """Size of the file's JSON text: the file size, or a gzip file's ISIZE trailer (None if unusable)."""
    with open_regular(path) as f:
        magic = f.read(2)
        f.seek(0, 2)
        size = f.tell()
        if magic != b"\x1f\x8b":
            return size
        f.seek(-4, 2)
        isize = int.from_bytes(f.read(4), "little")
    # ISIZE is the size mod 2**32 and only covers the last gzip member: trust it only when plausible
    return isize if size < isize < 64 * size else None


def _prefetched(pieces: Iterator[bytes], depth: int) -> Iterator[bytes]:
    """``pieces`` produced by a thread, ahead of the consumer: zlib releases the GIL while it
    inflates, so decompression overlaps the Python work on earlier chunks."""
    q: queue.Queue[tuple[bytes | None, BaseException | None]] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def produce() -> None:
        try:
            for piece in pieces:
                if stop.is_set():
                    return
                q.put((piece, None))
            q.put((None, None))
        except BaseException as e:  # handed to the consumer, raised there
            q.put((None, e))

    thread = threading.Thread(target=produce, name="trace-inflate", daemon=True)
    thread.start()
    try:
        while True:
            piece, error = q.get()
            if error is not None:
                raise error
            if piece is None:
                return
            yield piece
    finally:
        stop.set()
        while thread.is_alive():  # unblock a producer waiting on a full queue
            try:
                q.get_nowait()
            except queue.Empty:
                thread.join(0.01)


def _text_pieces(path: str) -> Iterator[bytes]:
    """The file's text, decompressed when gzip (every member), in pieces of at most ``_INFLATE``;
    LimitError as soon as the text passes the size or gzip-ratio cap (``trace/limits.py``)."""
    with open_regular(path) as f:
        first = f.read(_READ)
        gzip = first[:2] == b"\x1f\x8b"
        guard = limits.InflateGuard(gzip)
        read = len(first)
        if not gzip:
            while first:
                guard.add(len(first), read)
                yield first
                first = f.read(_READ)
                read += len(first)
            return
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        data = first
        while True:
            try:
                piece = d.decompress(data, _INFLATE)
            except zlib.error as e:
                raise NotChunkable(f"gzip: {e}") from None
            if piece:
                guard.add(len(piece), read - len(d.unconsumed_tail) - len(d.unused_data))
                yield piece
            if d.eof:
                data = d.unused_data
                if not data:
                    data = f.read(_READ)
                    read += len(data)
                if not data or not data.strip(b"\0"):
                    return
                d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            elif d.unconsumed_tail:
                data = d.unconsumed_tail
            else:
                data = f.read(_READ)
                read += len(data)
                if not data:
                    raise NotChunkable("the gzip stream ended early")


@dataclass
class ChunkResult:
    decoded: DecodedTrace
    last: bool  # holds the end of the file (and so the metadata keys after the events)


def decoded_chunks(
    path: str, chunk_bytes: int = CHUNK_BYTES, first: int = 0, stop: int | None = None
) -> Iterator[ChunkResult]:
    """Decode chunks ``first`` .. ``stop - 1`` (``stop`` None: to the end of the file), in order.

    Chunk 0 carries the metadata keys before ``traceEvents``; the file's last chunk those after it."""
    text = _Text(
        _prefetched(_text_pieces(path), depth=chunk_bytes // _INFLATE + 2), keep_from=first * chunk_bytes
    )
    chunk = first
    start = 0
    if chunk > 0:
        found = text.boundary(chunk * chunk_bytes)
        if found is None:
            return  # the range starts after the last boundary: nothing to decode
        start = found[1]
    while stop is None or chunk < stop:
        found = text.boundary(max((chunk + 1) * chunk_bytes, start))
        if found is None:
            head = b"" if chunk == 0 else b'{"traceEvents":['
            yield ChunkResult(_strict(text.take(start, None, head, b"")), last=True)
            return
        brace, next_start = found
        head, tail = (b"", b"]}") if chunk == 0 else (b"[", b"]")
        yield ChunkResult(_strict(text.take(start, brace + 1, head, tail)), last=False)
        start = next_start
        chunk += 1


_WINDOW = 1 << 16  # a boundary straddling two pieces is looked for in this much of each


class _Text:
    """The file's text as a queue of pieces, addressed by text offset; pieces before ``keep_from``
    are dropped as they arrive, and those before the last ``take`` once it is done."""

    def __init__(self, pieces: Iterator[bytes], keep_from: int) -> None:
        self._source = pieces
        self._pieces: list[bytes] = []
        self._base = 0  # text offset of self._pieces[0]
        self._end = 0  # text offset just past the last piece read
        self._keep_from = keep_from
        self._exhausted = False

    def _more(self) -> bool:
        for piece in self._source:
            if self._end + len(piece) <= self._keep_from:  # wholly before the range wanted
                self._end += len(piece)
                self._base = self._end
                continue
            self._pieces.append(piece)
            self._end += len(piece)
            return True
        self._exhausted = True
        return False

    def _locate(self, offset: int) -> tuple[int, int] | None:
        """(piece index, offset in it) of a text offset, reading pieces as needed."""
        while self._end <= offset:
            if not self._more():
                return None
        pos = self._base
        for i, piece in enumerate(self._pieces):
            if offset < pos + len(piece):
                return i, offset - pos
            pos += len(piece)
        return None

    def boundary(self, offset: int) -> tuple[int, int] | None:
        """Text offsets of the '}' and of the '{' of the first event boundary at or after ``offset``."""
        located = self._locate(offset)
        if located is None:
            return None
        i, local = located
        while True:
            piece = self._pieces[i]
            pos = self._base + sum(len(p) for p in self._pieces[:i])
            m = _BOUNDARY.search(piece, local)
            if m is not None:
                return pos + m.start(), pos + m.end() - 1
            if i + 1 == len(self._pieces) and not self._more():
                return None
            lo = max(local, len(piece) - _WINDOW)
            window = piece[lo:] + self._pieces[i + 1][:_WINDOW]
            m = _BOUNDARY.search(window)
            if m is not None and m.start() < len(piece) - lo:
                return pos + lo + m.start(), pos + lo + m.end() - 1
            i, local = i + 1, 0

    def take(self, start: int, stop: int | None, head: bytes, tail: bytes) -> bytes:
        """``head`` + text[start:stop] + ``tail`` in one copy (stop None: to the end of the file);
        the text before ``stop`` is dropped."""
        if stop is None:
            while self._more():
                pass
            stop = self._end
        parts: list[bytes | memoryview] = [head]
        pos = self._base
        keep: list[bytes] = []
        for piece in self._pieces:
            lo, hi = max(start - pos, 0), min(stop - pos, len(piece))
            if lo < hi:
                parts.append(memoryview(piece)[lo:hi] if (lo, hi) != (0, len(piece)) else piece)
            if pos + len(piece) > stop:
                keep.append(piece)
            else:
                self._base = pos + len(piece)
            pos += len(piece)
        parts.append(tail)
        data = b"".join(parts)
        self._pieces = keep
        return data


def _strict(data: bytes) -> DecodedTrace:
    """A chunk's events: the typed decode, else the lenient per-event one (a NaN, an id of the wrong type:
    the chunk keeps what it can instead of sending the whole file to the whole-file reader)."""
    # a repeated key: the typed decoder would keep only the last array. Only the first and last chunks
    # (objects) can hold one silently: in a middle chunk (an array) it makes the JSON invalid.
    if data[:1] == b"{" and has_second_events_key(data):
        raise NotChunkable("more than one 'traceEvents' key")
    try:
        decoded = decode_strict(data)
    except RecursionError as e:
        raise NotChunkable(str(e)) from None
    except (msgspec.DecodeError, msgspec.ValidationError):
        decoded = _lenient(data)
    else:
        if decoded.repairs:
            raise NotChunkable("; ".join(decoded.repairs))
    events = decoded.events
    # a boundary inside some nested list of objects would decode as objects without a phase
    if events and (not events[0].ph or not events[-1].ph):
        raise NotChunkable("a chunk edge is not an event boundary")
    return decoded


def _lenient(data: bytes) -> DecodedTrace:
    from torch_tb_profiler.trace.lenient import decode_lenient  # the slow road: imported when needed

    try:
        return decode_lenient(data, [], chunk=True)
    except (ValueError, RecursionError) as e:  # not JSON: a wrong edge, a truncated file...
        raise NotChunkable(str(e)) from None

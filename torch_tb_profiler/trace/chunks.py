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

from torch_tb_profiler.trace.decode import DecodedTrace, decode_strict

CHUNK_BYTES = 32 << 20  # text per chunk (read at call time by the loader: tests use small chunks)
_READ = 1 << 22  # bytes of the file read at a time
_INFLATE = 1 << 24  # most text inflated at a time (big: the inflating thread needs the GIL once per piece)
_BOUNDARY = re.compile(rb"\}\s*,\s*\{")


class NotChunkable(Exception):
    """The file cannot be read chunk-wise; read it whole (with repairs) instead."""


def text_size(path: str) -> int | None:
    """Size of the file's JSON text: the file size, or a gzip file's ISIZE trailer (None if unusable)."""
    with open(path, "rb") as f:
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
    """The file's text, decompressed when gzip (every member), in pieces of at most ``_INFLATE``."""
    with open(path, "rb") as f:
        first = f.read(_READ)
        if first[:2] != b"\x1f\x8b":
            while first:
                yield first
                first = f.read(_READ)
            return
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        data = first
        while True:
            try:
                piece = d.decompress(data, _INFLATE)
            except zlib.error as e:
                raise NotChunkable(f"gzip: {e}") from None
            if piece:
                yield piece
            if d.eof:
                data = d.unused_data
                if not data:
                    data = f.read(_READ)
                if not data or not data.strip(b"\0"):
                    return
                d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            elif d.unconsumed_tail:
                data = d.unconsumed_tail
            else:
                data = f.read(_READ)
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
    buf = bytearray()
    base = 0  # text offset of buf[0]
    chunk = first
    start: int | None = None  # offset in buf where the current chunk's first event (or chunk 0) starts
    pieces = _prefetched(_text_pieces(path), depth=chunk_bytes // _INFLATE + 2)
    exhausted = False
    while True:
        if not exhausted:
            piece = next(pieces, None)
            if piece is None:
                exhausted = True
            else:
                if start is None and chunk > 0 and base + len(buf) + len(piece) <= chunk * chunk_bytes:
                    base += len(piece)  # before the range this call decodes: skipped
                    continue
                buf += piece
        if start is None:
            start = 0 if chunk == 0 else _boundary_at_or_after(buf, chunk * chunk_bytes - base, exhausted)
            if start is None:
                if exhausted:
                    return  # the range starts after the last boundary: nothing to decode
                continue
            if chunk > 0:
                start += 1  # past the '}' ending the previous chunk's last event
                start = buf.index(b"{", start)
            del buf[:start]
            base += start
            start = 0
        if stop is not None and chunk >= stop:
            return
        end = _boundary_at_or_after(buf, (chunk + 1) * chunk_bytes - base, exhausted)
        if end is None:
            if not exhausted:
                continue
            yield ChunkResult(_decode_last(buf, chunk), last=True)
            return
        yield ChunkResult(_decode_inner(buf, end, chunk), last=False)
        next_start = buf.index(b"{", end + 1)
        del buf[:next_start]
        base += next_start
        chunk += 1


def _boundary_at_or_after(buf: bytearray, offset: int, exhausted: bool) -> int | None:
    """Position of the '}' of the first event boundary at or after ``offset`` in ``buf``; None when the
    text read so far does not reach one yet (or the file has none there)."""
    if offset >= len(buf):
        return None
    m = _BOUNDARY.search(buf, max(offset, 0))
    if m is None or (not exhausted and m.end() >= len(buf)):
        return None
    return m.start()


def _decode_inner(buf: bytearray, end: int, chunk: int) -> DecodedTrace:
    """Events up to the '}' at ``end``: chunk 0 still holds the object's head, so it gets closed."""
    with memoryview(buf) as text:
        data = b"".join((text[: end + 1], b"]}") if chunk == 0 else (b"[", text[: end + 1], b"]"))
    return _strict(data)


def _decode_last(buf: bytearray, chunk: int) -> DecodedTrace:
    """The file's last chunk: its events, the end of the array and the metadata keys after it."""
    with memoryview(buf) as text:
        data = bytes(text) if chunk == 0 else b"".join((b'{"traceEvents":[', text))
    return _strict(data)


def _strict(data: bytes) -> DecodedTrace:
    try:
        decoded = decode_strict(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as e:
        raise NotChunkable(str(e)) from None
    if decoded.repairs:
        raise NotChunkable("; ".join(decoded.repairs))
    events = decoded.events
    # a boundary inside some nested list of objects would decode as objects without a phase
    if events and (not events[0].ph or not events[-1].ph):
        raise NotChunkable("a chunk edge is not an event boundary")
    return decoded

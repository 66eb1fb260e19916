"""Bytes of a trace file -> typed events, with the repairs real traces need.

Only the fields every event needs are decoded here; ``args`` stay as raw JSON (``msgspec.Raw``) and are
decoded later per event kind into typed structs (``trace/args.py``). This keeps decoding close to the
speed of a structural JSON parse (see docs/performance.md).
"""

from __future__ import annotations

import json
import os
import re
import stat
import zlib
from decimal import Decimal
from typing import Any, BinaryIO

import msgspec

from torch_tb_profiler.trace import limits
from torch_tb_profiler.trace.events import DecodedTrace, Event, TraceObject
from torch_tb_profiler.trace.exact_time import read_exactly
from torch_tb_profiler.trace.utf8 import utf8_data


class TraceDecodeError(ValueError):
    """The file could not be read as a trace, even after repairs."""


_object_decoder = msgspec.json.Decoder(TraceObject)
_array_decoder = msgspec.json.Decoder(list[Event])

# a bare N/A where a JSON value should be (old Kineto wrote these)
_BARE_NA = re.compile(rb"(?<=[:\[,])(\s*)N/A(\s*)(?=[,\]}])")


def open_regular(path: str) -> BinaryIO:
    """Open a file for reading, refusing anything but a regular file without blocking: a FIFO named
    like a trace would block an ordinary ``open`` until a writer appears, ``/dev/zero`` never ends."""
    nonblock = getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, os.O_RDONLY | nonblock)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise TraceDecodeError(f"not a regular file ({file_kind(mode)}); only regular files are read")
        if nonblock:
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def file_kind(mode: int) -> str:
    for test, kind in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a directory"),
    ):
        if test(mode):
            return kind
    return "not a regular file"


def read_bytes(path: str) -> bytes | bytearray:
    """The file's bytes, gunzipped when it is gzip (by magic number, not by name); LimitError
    (``trace/limits.py``) when its text would pass the size or gzip-ratio cap."""
    cap = limits.get("max_trace_bytes")
    with open_regular(path) as f:
        data = f.read(cap + 1)
    if data[:2] != b"\x1f\x8b" and len(data) > cap:
        raise limits.too_big("the trace", len(data))
    return gunzip_if_needed(data)


_GUNZIP_CHUNK = 1 << 24


def gunzip_if_needed(data: bytes) -> bytes | bytearray:
    """Inflate gzip data into one buffer sized from the gzip trailer (ISIZE), chunk by chunk: the peak
    is the text plus one chunk, where ``gzip.decompress`` holds the text twice while joining its output.
    A truncated stream keeps what decompressed (marked for ``decode``). The size and ratio caps are
    checked after every chunk, so a gzip bomb is stopped before its text is held."""
    if data[:2] != b"\x1f\x8b":
        return data
    guard = limits.InflateGuard(gzip=True)
    hint = int.from_bytes(data[-4:], "little")  # ISIZE: size mod 2**32; garbage if the file is cut
    out = bytearray(hint if hint <= min(100 * len(data), guard.cap) else 0)  # a hint: grows if short
    pos = 0
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    rest = data
    done = 0  # compressed bytes of the members before this one
    truncated = False
    try:
        while True:
            chunk = d.decompress(rest, _GUNZIP_CHUNK)
            guard.add(len(chunk), done + len(rest) - len(d.unconsumed_tail))
            out[pos : pos + len(chunk)] = chunk
            pos += len(chunk)
            if d.eof:
                done += len(rest) - len(d.unused_data)
                rest = d.unused_data  # a further gzip member, or padding
                if not rest.strip(b"\0"):
                    break
                d = zlib.decompressobj(16 + zlib.MAX_WBITS)
                continue
            done += len(rest) - len(d.unconsumed_tail)
            rest = d.unconsumed_tail
            if not rest and not chunk:  # input ended before the stream did
                truncated = True
                break
    except zlib.error as e:
        if pos == 0:
            raise TraceDecodeError(f"the gzip stream is corrupt: {e}") from None
        truncated = True
    del out[pos:]
    if truncated:
        if not out:
            raise TraceDecodeError("the gzip stream is corrupt: nothing could be decompressed")
        out += b"\0TRUNCATED-GZIP"
    return out


def decode(data: bytes | bytearray) -> DecodedTrace:
    """Decode trace bytes. Tries the fast typed decode, then repairs, then the lenient per-event read
    of a complete file (``lenient.py``), and only then salvage of a truncated file."""
    from torch_tb_profiler.trace.lenient import decode_lenient  # the slow road: imported when needed

    repairs: list[str] = []
    if data.endswith(b"\0TRUNCATED-GZIP"):
        data = data[: -len(b"\0TRUNCATED-GZIP")]
        repairs.append("the gzip stream ended early; decompressed what was there")
    error: Exception = ValueError("the file has more than one 'traceEvents' key")
    if not has_second_events_key(data):  # the typed decoder would keep only the last array
        try:
            return _typed(data, repairs)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as first_error:
            error = first_error
        if _BARE_NA.search(data):
            data = _BARE_NA.sub(rb'\1"N/A"\2', data)
            repairs.append('bare N/A values quoted as "N/A"')
            try:
                return _typed(data, repairs)
            except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as e:
                error = e
        try:
            return _typed(_renormalised(data), [*repairs, "non-strict JSON re-read leniently"])
        except (ValueError, msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            pass
    try:
        return decode_lenient(data, repairs)
    except (ValueError, RecursionError):
        pass  # not JSON as a whole: a file cut short, or not a trace
    salvaged = _salvage_truncated(data, repairs)
    if salvaged is not None:
        return salvaged
    raise TraceDecodeError(f"not a valid trace: {error}")


def has_second_events_key(data: bytes | bytearray) -> bool:
    first = data.find(b'"traceEvents"')
    return first >= 0 and data.find(b'"traceEvents"', first + 1) >= 0


def decode_strict(data: bytes | bytearray) -> DecodedTrace:
    """The typed decode alone, without repairs (msgspec errors propagate): a trace object, or a bare
    array of events (no metadata)."""
    if _is_array(data):
        events = _array_decoder.decode(data)
        return DecodedTrace(events, {}, [], read_exactly(events, data, is_array=True))
    return _typed(data, [])


def _is_array(data: bytes | bytearray) -> bool:
    """The text is a bare array of events rather than a trace object."""
    return data[:4096].lstrip()[:1] == b"["


def _typed(data: bytes, repairs: list[str]) -> DecodedTrace:
    if _is_array(data):
        events = _array_decoder.decode(data)
        base = read_exactly(events, data, is_array=True)
        return DecodedTrace(events, {}, [*repairs, "top-level JSON array (no metadata)"], base)
    obj = _object_decoder.decode(data)
    top: dict[str, Any] = {}
    for name in obj.__struct_fields__:
        if name == "traceEvents":
            continue
        value = getattr(obj, name)
        if isinstance(value, msgspec.Raw):
            try:
                value = msgspec.json.decode(value)
            except msgspec.DecodeError:
                repairs.append(f"top-level '{name}' unreadable, ignored")
                continue
        if value is not None:
            top[name] = value
    return DecodedTrace(obj.traceEvents, top, repairs, read_exactly(obj.traceEvents, data, is_array=False))


_number_encoder = msgspec.json.Encoder(decimal_format="number")


def _renormalised(data: bytes) -> bytes:
    """Lenient re-read with the standard library (control characters in strings, NaN), re-encoded;
    numbers with a fraction are kept as decimals, so their digits are written back as they were."""
    text = data.decode("utf-8", errors="replace")
    obj = json.loads(text, strict=False, parse_constant=lambda _c: None, parse_float=Decimal)
    try:
        return _number_encoder.encode(obj)
    except UnicodeEncodeError:  # a lone surrogate ("\ud800"): kept as its escape, as text
        return _number_encoder.encode(utf8_data(obj))


def _salvage_truncated(data: bytes, repairs: list[str]) -> DecodedTrace | None:
    """A file cut short (crash, still being written): keep every complete event before the cut."""
    marker = data.find(b'"traceEvents"')
    prefix_is_array = _is_array(data)
    if marker < 0 and not prefix_is_array:
        return None
    cut = len(data)
    for _ in range(8):  # try the last few event boundaries
        cut = data.rfind(b"}", 0, cut)
        if cut <= max(marker, 0):
            return None
        candidate = data[: cut + 1] + (b"]" if prefix_is_array else b"]}")
        try:
            decoded = _typed(candidate, [])
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            continue
        note = f"file truncated at byte {len(data)}; kept the {len(decoded.events)} complete events before the cut"
        decoded.repairs = [*repairs, note]
        return decoded
    return None

"""Timestamps read exactly: an integer µs base subtracted before the conversion to float64.

A float64 holds about 16 significant digits, so an absolute µs timestamp at the epoch
(``1712195495519689.047``, ~1.7e15) is rounded to 0.25 µs before any arithmetic, and ns digits are lost.
When a trace has such timestamps, each event's ts is re-read from its own text as a decimal, and
the model stores ``ts − base`` (``base``: an integer µs, the integer part of the earliest such ts),
which a float64 holds to far below a nanosecond; ends are then ``(ts − base) + dur``.

Below ``LARGE_US`` (2^43 µs, ~101 days: Kineto's boot-clock timestamps) a float64 already resolves
the ns digits, and an epoch timestamp without fraction digits is an integer a float64 holds exactly:
both keep base 0, so the usual traces pay only one pass over their ts values (docs/performance.md).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from operator import attrgetter

import msgspec
import numpy as np

from torch_tb_profiler.trace.events import Event

LARGE_US = float(2**43)  # from here on a float64 spacing passes 1/1024 µs: ns digits are rounded
_PROBE_BYTES = 1 << 20  # text searched for fraction digits when every large ts read as an integer
_FRACTION = re.compile(rb'"ts"\s*:\s*"?-?\d{14,}\.\d*[1-9]')

Exact = int | Decimal | float  # a timestamp as written: an integer, a decimal, or a float already


class _Times(msgspec.Struct, gc=False):
    ts: msgspec.Raw = msgspec.Raw(b"0")


class _TimesObject(msgspec.Struct, gc=False):
    traceEvents: list[_Times] = []


_object_times = msgspec.json.Decoder(_TimesObject)
_array_times = msgspec.json.Decoder(list[_Times])


def needs_exact(ts: np.ndarray, text: bytes | bytearray | None) -> bool:
    """Some timestamp is large and had fraction digits (a large float ts that is not an integer; when
    all are integers, fraction digits that rounded away are looked for in the start of ``text``)."""
    big = ts[np.abs(ts) >= LARGE_US]
    if big.size == 0:
        return False
    if bool((big != np.floor(big)).any()):
        return True
    return text is not None and _FRACTION.search(text, 0, _PROBE_BYTES) is not None


def event_ts(events: Sequence[Event]) -> np.ndarray:
    return np.fromiter(map(attrgetter("ts"), events), dtype=np.float64, count=len(events))


def read_exactly(events: list[Event], text: bytes | bytearray, is_array: bool) -> int:
    """Rebase the typed decode's events on their ts as written in ``text`` (the text they were
    decoded from: one ``_Times`` per event, in order); returns the base (0: nothing to do)."""
    if not events:
        return 0
    floats = event_ts(events)
    if not needs_exact(floats, text):
        return 0
    times = _array_times.decode(text) if is_array else _object_times.decode(text).traceEvents
    if len(times) != len(events):  # cannot happen for the same text; keep the floats rather than guess
        return 0
    texts = [bytes(t.ts) for t in times]
    split = _split_digits(texts)
    if split is None:  # exponents, a '+', more than 18 integer digits: one decimal at a time
        return rebase(events, [_parse(t) for t in texts])
    whole, fraction = split
    large = np.abs(floats) >= LARGE_US
    base = int(whole[large].min())
    relative = (whole - base).astype(np.float64) + fraction
    for e, t in zip(events, relative.tolist(), strict=True):
        e.ts = t
    return base


def _split_digits(texts: list[bytes]) -> tuple[np.ndarray, np.ndarray] | None:
    """Each plain decimal text ``[-]ddd[.ddd]`` as (its integer part, an int64; its signed fraction, a
    float64), all texts at once as one byte matrix; None when some text is not that plain."""
    table = np.array(texts, dtype=np.bytes_)
    width = table.dtype.itemsize
    if not texts or width == 0 or width > 40:
        return None
    m = table.view(np.uint8).reshape(len(texts), width)  # NUL-padded on the right
    digit = (m >= ord("0")) & (m <= ord("9"))
    dot = m == ord(".")
    minus = m[:, 0] == ord("-")
    allowed = digit | dot | (m == 0)
    allowed[:, 0] |= minus
    if not allowed.all() or (dot.sum(axis=1) > 1).any():
        return None
    length = (m != 0).sum(axis=1)
    int_end = np.where(dot.any(axis=1), dot.argmax(axis=1), length)
    start = minus.astype(np.int64)
    if (int_end - start > 18).any() or (int_end <= start).any():  # past int64, or no integer digit
        return None
    cols = np.arange(width)
    in_int = (cols >= start[:, None]) & (cols < int_end[:, None])
    in_frac = (cols > int_end[:, None]) & (cols < length[:, None])
    d = m.astype(np.int64) - ord("0")
    whole = np.zeros(len(texts), dtype=np.int64)
    numerator = np.zeros(len(texts), dtype=np.int64)
    places = np.zeros(len(texts), dtype=np.int64)
    for j in range(width):  # Horner's rule, one column of digits at a time
        whole = np.where(in_int[:, j], whole * 10 + d[:, j], whole)
        take = in_frac[:, j] & (places < 18)  # digits past 1e-18 µs change nothing a float64 holds
        numerator = np.where(take, numerator * 10 + d[:, j], numerator)
        places += take
    sign = np.where(minus, -1, 1)
    return sign * whole, sign * (numerator / 10.0**places)


def _parse(text: bytes) -> Exact:
    if b"." not in text and b"e" not in text and b"E" not in text:
        return int(text)
    try:
        return Decimal(text.decode("ascii"))
    except (InvalidOperation, UnicodeDecodeError):
        return float(text)


def rebase(events: Sequence[Event], exact: Sequence[Exact]) -> int:
    """Set each event's ts to ``exact − base`` (float64), base = the floor of the earliest large
    timestamp; returns base."""
    large = [x for x in exact if abs(x) >= LARGE_US and _finite(x)]
    if not large:
        return 0
    base = math.floor(min(large))
    for e, x in zip(events, exact, strict=True):
        e.ts = float(x - base) if _finite(x) else e.ts
    return int(base)


def _finite(x: Exact) -> bool:
    return x.is_finite() if isinstance(x, Decimal) else math.isfinite(x)

"""The slow road for a complete trace the typed decoder refused: keep every event that can be kept.

The text is parsed generically (the standard library accepts ``NaN``, ``-Infinity``, ``1e400``, control
characters in strings and duplicate keys), and each event is rebuilt field by field: a value of the
wrong type is converted or dropped, an event without a usable ``ts`` is dropped, and each kind of fix
becomes one warning naming the field and the first event concerned. Values nested deeper than
``max_nesting`` (``trace/limits.py``) are replaced before parsing, so no depth raises RecursionError.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal, InvalidOperation
from typing import Any

import msgspec
import numpy as np

from torch_tb_profiler.trace import limits
from torch_tb_profiler.trace.events import EMPTY_ARGS, DecodedTrace, Event, TraceObject
from torch_tb_profiler.trace.exact_time import LARGE_US, Exact, event_ts, needs_exact, rebase
from torch_tb_profiler.trace.utf8 import utf8_data, utf8_text

_DEEP = "\u0000nested too deep"  # what replaces a too-deep value (a string no trace holds)
_DEEP_JSON = json.dumps(_DEEP).encode()
_EVENT_DEPTH = 3  # brackets around an event's own fields: the top object, traceEvents, the event
_DENEST_MAX_BYTES = 1 << 30  # the numpy pass holds ~6 bytes per byte of text
_RAW_FIELDS = ("deviceProperties", "computeProperties", "distributedInfo")


class _Digits(float):
    """A float read from JSON that keeps its text: ts digits past a float64's ~16 are not lost."""

    text: str


def _parse_float(text: str) -> float:
    value = float(text)
    if len(text) <= 16 or abs(value) < LARGE_US:
        return value
    kept = _Digits(text)
    kept.text = text
    return kept


def _plain(value: Any) -> Any:
    """msgspec's hook for what it cannot encode: a _Digits is written as the float it is."""
    if isinstance(value, float):
        return float(value)
    raise TypeError(f"cannot encode {type(value).__name__}")


class _Notes:
    def __init__(self) -> None:
        self._seen: dict[str, list[Any]] = {}  # what -> [count, first event]

    def add(self, what: str, where: str) -> None:
        self._seen.setdefault(what, [0, where])[0] += 1

    def lines(self) -> list[str]:
        return [
            f"{count} event{'s' if count > 1 else ''}: {what} (first: {where})"
            for what, (count, where) in self._seen.items()
        ]


def decode_lenient(data: bytes | bytearray, repairs: list[str], chunk: bool = False) -> DecodedTrace:
    """Every event that can be kept; ValueError when the text is not JSON at all (truncated, garbage).
    ``chunk``: the text is one chunk of a file (``chunks.py``): an array is expected, and events are
    named by name and ts, their index in the chunk meaning nothing to the user."""
    deep: list[str] = []
    duplicates = [0]

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        obj: dict[str, Any] = {}
        for key, value in items:
            if key == "traceEvents" and isinstance(obj.get(key), list) and isinstance(value, list):
                obj[key] = obj[key] + value  # a second traceEvents array: keep both
                duplicates[0] += 1
            else:
                obj[key] = value
        return obj

    text = data
    try:
        obj = json.loads(
            bytes(text).decode("utf-8", "replace"),
            strict=False,
            object_pairs_hook=pairs,
            parse_float=_parse_float,
        )
    except RecursionError:
        text, deep = _denest(data, limits.get("max_nesting") + _EVENT_DEPTH)
        obj = json.loads(
            text.decode("utf-8", "replace"), strict=False, object_pairs_hook=pairs, parse_float=_parse_float
        )
    notes = _Notes()
    fixes = list(repairs)
    if duplicates[0]:
        fixes.append(f"the file has {duplicates[0] + 1} 'traceEvents' arrays; their events were joined")
    if isinstance(obj, list):
        items, top = obj, {}
        if not chunk:
            fixes.append("top-level JSON array (no metadata)")
    elif isinstance(obj, dict) and isinstance(obj.get("traceEvents", []), list):
        items, top = obj.get("traceEvents", []), _top(obj, fixes)
    else:
        raise ValueError("the JSON holds no 'traceEvents' array")
    events: list[Event] = []
    exact: list[Exact] = []  # each kept event's ts as written
    for index, item in enumerate(items):
        event = _event(item, -1 if chunk else index, notes)
        if event is not None:
            events.append(event)
            exact.append(_exact_ts(item.get("ts"), event.ts))
    if deep:
        fixes.append(
            f"{len(deep)} value(s) nested deeper than {limits.get('max_nesting')} levels were dropped "
            f"(first: {deep[0]}); {limits.how_to_raise('max_nesting')}"
        )
    fixes.extend(notes.lines())
    base = rebase(events, exact) if needs_exact(event_ts(events), None) or _has_digits(exact) else 0
    return DecodedTrace(events, top, fixes, base)


def _exact_ts(written: Any, read: float) -> Exact:
    """The ts as written (its digits kept) where a float64 would round it, else the float read."""
    text = written.text if isinstance(written, _Digits) else written if isinstance(written, str) else None
    if text is None or abs(read) < LARGE_US:
        return read
    try:
        return Decimal(text.strip())
    except InvalidOperation:
        return read


def _has_digits(exact: list[Exact]) -> bool:
    return any(isinstance(x, Decimal) and x != x.to_integral_value() for x in exact)


def _top(obj: dict[str, Any], fixes: list[str]) -> dict[str, Any]:
    top: dict[str, Any] = {}
    for name in TraceObject.__struct_fields__:
        if name == "traceEvents" or obj.get(name) is None:
            continue
        value = obj[name]
        if name not in _RAW_FIELDS:
            try:
                value = getattr(msgspec.convert({name: value}, TraceObject), name)
            except msgspec.ValidationError:
                fixes.append(f"top-level '{name}' has the wrong type, ignored")
                continue
        top[name] = value
    return top


def _where(index: int, item: dict[str, Any]) -> str:
    """The event as a user can find it: its position in the file (when known), name and ts."""
    name = item.get("name")
    shown = f" '{name[:80]}'" if isinstance(name, str) else ""
    ts = item.get("ts")
    finite = isinstance(ts, (int, float)) and not isinstance(ts, bool) and math.isfinite(ts)
    at = f" at ts {ts}" if finite else ""
    return f"event #{index}{shown}{at}" if index >= 0 else f"event{shown}{at}"


def _event(item: Any, index: int, notes: _Notes) -> Event | None:
    if not isinstance(item, dict):
        notes.add(f"not a JSON object ({type(item).__name__}), dropped", f"event #{index}")
        return None
    fields: dict[str, Any] = {}
    for key in ("ph", "cat", "name", "bp"):
        value = item.get(key)
        if isinstance(value, str):
            fields[key] = value if value.isascii() else utf8_text(value)
        elif value is not None:
            fields[key] = json.dumps(value)[:200]
            notes.add(f"'{key}' is not a string, kept as text", _where(index, item))
    for key in ("ts", "dur"):
        value = item.get(key)
        if value is None:
            continue
        number = _number(value)
        if number is None or not math.isfinite(number):
            if key == "ts":
                notes.add(f"'ts' is {_short(value)}, not a finite number: event dropped", _where(index, item))
                return None
            notes.add(f"'dur' is {_short(value)}, not a finite number: taken as 0", _where(index, item))
            number = 0.0
        fields[key] = number
    for key in ("pid", "tid"):
        value = item.get(key)
        if value is None:
            continue
        fields[key] = _pid(value)
        if fields[key] is not value:
            notes.add(f"'{key}' is {_short(value)}, kept as {fields[key]!r}", _where(index, item))
    if "id" in item:
        value = item["id"]
        if (isinstance(value, (int, str)) and not isinstance(value, bool)) or value is None:
            fields["id"] = utf8_text(value) if isinstance(value, str) else value
        elif isinstance(value, float) and math.isfinite(value):
            fields["id"] = repr(value)  # both ends of a flow spell it the same, so they still match
            notes.add(f"'id' is a float ({value!r}), kept as text", _where(index, item))
        else:
            notes.add(f"'id' is {_short(value)}, dropped (the flow is unlinked)", _where(index, item))
    args = item.get("args")
    if isinstance(args, dict):
        try:
            encoded = msgspec.json.encode(args, enc_hook=_plain)
        except UnicodeEncodeError:  # a lone surrogate in a string: kept as its escape
            encoded = msgspec.json.encode(utf8_data(args), enc_hook=_plain)
        if _DEEP_JSON in encoded:
            notes.add("a value in 'args' nested too deeply, dropped", _where(index, item))
        fields["args"] = msgspec.Raw(encoded)
    elif args is not None:
        notes.add(f"'args' is {_short(args)}, not an object: ignored", _where(index, item))
        fields["args"] = EMPTY_ARGS
    return Event(**fields)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _pid(value: Any) -> int | str:
    if isinstance(value, str):
        return value if value.isascii() else utf8_text(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return json.dumps(value)[:200] if not isinstance(value, float) else repr(value)


def _short(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, float) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


_KEY_BEFORE = re.compile(rb'"([^"\\]{1,100})"\s*:[\s\[{]*$')  # the key, then the brackets opening its value


def _denest(data: bytes | bytearray, depth: int) -> tuple[bytes, list[str]]:
    """The text with every value that opens at nesting level ``depth + 1`` replaced by a marker string;
    and where each was (the key it belonged to). Strings are told apart with their escapes."""
    if len(data) > _DENEST_MAX_BYTES:
        raise ValueError(f"the file nests JSON too deeply to be read ({limits.how_to_raise('max_nesting')})")
    buf = np.frombuffer(bytes(data), dtype=np.uint8)
    n = len(buf)
    idx = np.arange(n, dtype=np.int64)
    backslash = buf == ord("\\")
    # a quote is escaped when an odd run of backslashes precedes it
    last_plain = np.maximum.accumulate(np.where(backslash, -1, idx))
    quotes = np.flatnonzero(buf == ord('"'))
    before = quotes - 1
    run = np.where(before >= 0, before - last_plain[np.maximum(before, 0)], 0)
    real = quotes[run % 2 == 0]
    in_string = np.zeros(n + 1, dtype=np.int8)
    np.add.at(in_string, real, 1)
    in_string = (np.cumsum(in_string[:n]) % 2).astype(bool)
    in_string[real] = False  # the quote characters themselves
    opening = ((buf == ord("[")) | (buf == ord("{"))) & ~in_string
    closing = ((buf == ord("]")) | (buf == ord("}"))) & ~in_string
    level = np.cumsum(opening.astype(np.int32) - closing.astype(np.int32))
    starts = np.flatnonzero(opening & (level == depth + 1))
    ends = np.flatnonzero(closing & (level == depth))
    out = bytearray()
    where: list[str] = []
    pos = 0
    for start in starts.tolist():
        if start < pos:
            continue
        k = np.searchsorted(ends, start)
        if k == len(ends):
            break  # never closed: a truncated file; the parser will say so
        end = int(ends[k])
        out += data[pos:start] + _DEEP_JSON
        key = _KEY_BEFORE.search(bytes(data[max(0, start - 4096) : start]))
        where.append(
            f"'{key.group(1).decode('utf-8', 'replace')}' at byte {start}" if key else f"byte {start}"
        )
        pos = end + 1
    out += data[pos:]
    return bytes(out), where

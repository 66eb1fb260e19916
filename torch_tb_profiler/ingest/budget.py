"""The memory budget for full profiles: what a size string means, what one profile costs, which go first.

``--profiler_memory_budget`` (env ``TORCH_PROFILER_MEMORY_BUDGET``) bounds the estimated bytes of the
full profiles the plugin keeps in memory. Past it, the least recently used profiles are dropped (with
their per-profile caches) and read again on demand: from the persisted index when it is current, else
by parsing the trace. The small facts the run-level routes need (which views a profile has, its file
state) are kept for every file. Default: half of the machine's RAM (or of the cgroup's limit when lower).

A profile's estimate (``profile_nbytes``) is the bytes of its table columns (numpy buffers; for string
columns the 8-byte pointers plus the distinct strings, which index reads and parses share between rows)
plus the tables and arrays its cache holds (per-op tables, the timeline index...), re-estimated each
time the profile is used, as the cache grows with the views asked.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

BUDGET_ENV = "TORCH_PROFILER_MEMORY_BUDGET"
DEFAULT_FRACTION = 0.5  # of the machine's (or cgroup's) memory
UNBOUNDED = ("off", "none", "unlimited")

_UNITS = {
    "": 1,
    "b": 1,
    "k": 1 << 10,
    "kb": 10**3,
    "kib": 1 << 10,
    "m": 1 << 20,
    "mb": 10**6,
    "mib": 1 << 20,
    "g": 1 << 30,
    "gb": 10**9,
    "gib": 1 << 30,
    "t": 1 << 40,
    "tb": 10**12,
    "tib": 1 << 40,
}
_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:e[0-9]+)?)\s*([a-z]*|%)\s*$", re.IGNORECASE)


def parse_budget(text: str) -> int | None:
    """'2GiB', '500MB' (10^6 bytes), '512M' (MiB), '25%' (of total memory), '1e9', 'off' -> bytes, or
    None for no budget. ValueError with the accepted forms otherwise."""
    if text.strip().lower() in UNBOUNDED:
        return None
    match = _SIZE.match(text)
    unit = match.group(2).lower() if match else ""
    if match is None or (unit != "%" and unit not in _UNITS):
        raise ValueError(
            f"{text!r} is not a memory size: use a number of bytes with an optional unit "
            "(500MB, 2GiB, 512M), a percentage of the machine's memory (25%), or 'off'"
        )
    number = float(match.group(1))
    if unit == "%":
        if not 0 < number <= 100:
            raise ValueError(f"{text!r}: a percentage must be in (0, 100]")
        return int(total_memory() * number / 100)
    value = int(number * _UNITS[unit])
    if value <= 0:
        raise ValueError(f"{text!r}: the budget must be positive")
    return value


def total_memory() -> int:
    """Physical memory, or the cgroup's memory limit when it is lower."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for limit_file in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            raw = Path(limit_file).read_text().strip()
        except OSError:
            continue
        if raw.isdigit() and 0 < int(raw) < total:
            total = int(raw)
    return total


def default_budget() -> int:
    return int(total_memory() * DEFAULT_FRACTION)


def configured_budget(flag: str | None = None) -> int | None:
    """The budget from the flag, else the env var, else the default (ValueError when malformed)."""
    text = flag if flag else os.environ.get(BUDGET_ENV, "").strip()
    return parse_budget(text) if text else default_budget()


def describe(nbytes: int | None) -> str:
    if nbytes is None:
        return "off"
    return f"{nbytes / 2**20:.0f} MiB"


# ---- estimate --------------------------------------------------------------------------------------------
def frame_nbytes(frame: pd.DataFrame | pd.Series) -> int:
    """Bytes of a table's columns: numpy buffers, plus each string column's distinct strings."""
    columns = [frame] if isinstance(frame, pd.Series) else [frame[c] for c in frame.columns]
    total = 0
    for series in columns:
        values = _object_values(series)
        if values is None:
            total += int(series.memory_usage(index=False, deep=False))
            continue
        total += values.nbytes
        if values.dtype == object and len(values):
            total += _strings_nbytes(values)
    return total


_SAMPLE = 4096


def _object_values(series: pd.Series) -> np.ndarray | None:
    """The numpy buffer behind a column: its own, or the object array of a python-storage string
    column (pandas 3's default); None for other extension arrays (their memory_usage is exact)."""
    if isinstance(series.dtype, np.dtype):
        return series.to_numpy(copy=False)
    inner = getattr(series.array, "_ndarray", None)
    return inner if isinstance(inner, np.ndarray) else None


def _strings_nbytes(values: np.ndarray) -> int:
    """The distinct objects of an object column (rows share them: parsing and the index intern strings).
    Long columns are sampled: a sample of mostly distinct values is scaled up to the column's length,
    one of few distinct values is taken as the whole set."""
    sample = values if len(values) <= _SAMPLE else values[:: len(values) // _SAMPLE]
    distinct = {id(v): v for v in sample.tolist()}
    size = sum(sys.getsizeof(v) for v in distinct.values())
    if len(sample) < len(values) and len(distinct) > len(sample) // 2:
        size = int(size * len(values) / len(sample))
    return size


def value_nbytes(value: Any, depth: int = 0) -> int:
    """Bytes of the tables and arrays a cached answer holds (containers walked two levels deep)."""
    if isinstance(value, pd.DataFrame | pd.Series):
        return frame_nbytes(value)
    if isinstance(value, np.ndarray):
        return value.nbytes
    if depth >= 2:
        return 0
    if isinstance(value, dict):
        return sum(value_nbytes(v, depth + 1) for v in value.values())
    if isinstance(value, list | tuple):
        return sum(value_nbytes(v, depth + 1) for v in value[:1000])
    if hasattr(value, "__dict__") and not isinstance(value, type):
        return sum(value_nbytes(v, depth + 1) for v in vars(value).values())
    return 0


_TABLES_KEY = "budget.tables_nbytes"


def profile_nbytes(profile: Any) -> int:
    """The estimated bytes of a Profile: its tables (estimated once: they never change) plus the tables
    and arrays its cache holds now."""
    import dataclasses

    tables = profile.cache.get(_TABLES_KEY)
    if tables is None:
        tables = sum(
            frame_nbytes(value)
            for f in dataclasses.fields(profile)
            if isinstance(value := getattr(profile, f.name), pd.DataFrame)
        )
        profile.cache[_TABLES_KEY] = tables
    return tables + sum(value_nbytes(value) for value in list(profile.cache.values()))


_libc: Any = None


def release_freed_memory() -> None:
    """Hand the memory of dropped profiles back to the OS. glibc keeps freed memory in per-thread arenas
    (TensorBoard answers each request on its own thread), so without this the process's RSS kept
    growing by about a profile per switch although the profiles were freed; ``malloc_trim`` returns the
    free pages of every arena. A no-op where there is no glibc."""
    global _libc
    if _libc is None:
        try:
            import ctypes

            _libc = ctypes.CDLL("libc.so.6")
            _libc.malloc_trim.argtypes = [ctypes.c_size_t]
        except (OSError, AttributeError):
            _libc = False
    if _libc:
        _libc.malloc_trim(0)


_M_ARENA_MAX = -8  # glibc's mallopt parameter


def limit_arenas(count: int = 4) -> None:
    """Under a budget: at most ``count`` glibc malloc arenas. TensorBoard answers each request on its own
    thread, and with 20 clients glibc made up to 8 per core, each keeping freed pages of profiles that
    were dropped; fewer arenas keep the process within the budget's margin. A no-op without glibc."""
    release_freed_memory()  # loads libc
    if _libc:
        with contextlib.suppress(AttributeError):
            _libc.mallopt(_M_ARENA_MAX, count)


# ---- accounting ------------------------------------------------------------------------------------------
class Resident:
    """Which full profiles stay in memory: an LRU by estimated bytes under a budget (None: no bound).

    ``touch`` records a use (and the profile's current size); ``over_budget`` names the least recently
    used keys to drop so the rest fit. The most recently used one is never dropped: a budget smaller
    than one profile still serves it, one at a time. A key added with ``recent=False`` (loaded, not
    asked for) goes first."""

    def __init__(self, budget: int | None) -> None:
        self.budget = budget
        self._sizes: OrderedDict[str, int] = OrderedDict()
        self._lock = threading.Lock()

    def touch(self, key: str, nbytes: int, recent: bool = True) -> None:
        """Record ``key``'s size; as the most recently used, or (``recent=False``, a new key only) as
        the least recently used."""
        with self._lock:
            new = key not in self._sizes
            self._sizes[key] = nbytes
            if recent:
                self._sizes.move_to_end(key)
            elif new:
                self._sizes.move_to_end(key, last=False)

    def discard(self, key: str) -> None:
        with self._lock:
            self._sizes.pop(key, None)

    def over_budget(self, pinned: frozenset[str] | set[str] = frozenset(), extra: int = 0) -> list[str]:
        """Keys to drop, least recently used first, so that the rest (plus ``extra`` bytes about to be
        read) fit the budget (and forget them). ``pinned`` keys (held by requests in flight: dropping
        them frees nothing) stay, and so does the most recently used one unless ``extra`` asks room."""
        with self._lock:
            if self.budget is None:
                return []
            total = sum(self._sizes.values()) + extra
            out = []
            for key in list(self._sizes)[: None if extra else -1]:
                if total <= self.budget:
                    break
                if key in pinned:
                    continue
                total -= self._sizes.pop(key)
                out.append(key)
            return out

    @property
    def total(self) -> int:
        with self._lock:
            return sum(self._sizes.values())

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._sizes

    def keys(self) -> list[str]:
        with self._lock:
            return list(self._sizes)

    def sizes(self) -> dict[str, int]:
        with self._lock:
            return dict(self._sizes)

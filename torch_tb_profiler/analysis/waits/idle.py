"""Idle time per device stream, whole profile and per step (docs/metrics.md, "Idle time").

- A stream's activities are the model's ``device`` rows (kernels, copies, sets) of one (device, stream),
  in start order. A *gap* is the time between the running latest end of the activities before one and
  that activity's start, when positive: overlapping work never gives negative idle.
- A gap is **host wait** when the launch call of the activity after it started after the gap began (the
  host had not asked for the work yet), else **kernel wait** when it is shorter than
  ``KERNEL_WAIT_US`` (back-to-back work the device took a moment to start), else **other**.
- The whole-profile row of a stream (``step: None``) covers its first to last activity; a step's row
  counts the parts of the gaps inside the step's device-extended window (analysis/core/steps.py), so a
  gap across a step boundary is split between the steps.
- ``ratio``: the category's share of that row group's idle time (the three categories add up to 1);
  ``None`` when the stream was never idle there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from torch_tb_profiler.analysis.core.cache import memoized
from torch_tb_profiler.analysis.core.steps import steps as step_table
from torch_tb_profiler.model import Profile

KERNEL_WAIT_US = 30.0
CATEGORIES = ("host_wait", "kernel_wait", "other")
LONGEST = 10


@dataclass(frozen=True)
class Gaps:
    """Every gap of every stream: parallel arrays, one entry per gap."""

    device: np.ndarray  # int64
    stream: np.ndarray  # int64
    start: np.ndarray  # float64 µs
    end: np.ndarray
    category: np.ndarray  # index into CATEGORIES
    after: np.ndarray  # row in profile.device of the activity that ended the gap


def gaps(profile: Profile) -> Gaps:
    return memoized(profile, "waits.idle.gaps", lambda: _gaps(profile))


def _gaps(profile: Profile) -> Gaps:
    dev = profile.device
    if not len(dev):
        empty_i, empty_f = np.zeros(0, np.int64), np.zeros(0, np.float64)
        return Gaps(empty_i, empty_i, empty_f, empty_f, empty_i, empty_i)
    device = dev["device"].to_numpy(dtype=np.int64)
    stream = dev["stream"].to_numpy(dtype=np.int64)
    ts = dev["ts"].to_numpy(dtype=np.float64)
    end = dev["end"].to_numpy(dtype=np.float64)
    order = np.lexsort((ts, stream, device))
    d, s, t, e = device[order], stream[order], ts[order], end[order]
    first = np.ones(order.size, dtype=bool)
    first[1:] = (d[1:] != d[:-1]) | (s[1:] != s[:-1])
    # running latest end within each stream: a cumulative max restarted at each stream's first row
    group = np.cumsum(first) - 1
    running = pd.Series(e).groupby(group).cummax().to_numpy(dtype=np.float64)
    prev_end = np.empty_like(running)
    prev_end[1:] = running[:-1]
    is_gap = ~first & (t > prev_end)
    is_gap[0] = False
    idx = np.flatnonzero(is_gap)
    g_start, g_end = prev_end[idx], t[idx]
    after = order[idx]
    rt = dev["runtime"].to_numpy(dtype=np.int64)[after]
    call_ts = np.full(after.size, -np.inf)
    linked = rt >= 0
    if linked.any():
        call_ts[linked] = profile.runtimes["ts"].to_numpy(dtype=np.float64)[rt[linked]]
    category = np.where(call_ts > g_start, 0, np.where(g_end - g_start < KERNEL_WAIT_US, 1, 2))
    return Gaps(d[idx], s[idx], g_start, g_end, category.astype(np.int64), after)


def idle_rows(profile: Profile) -> list[dict[str, Any]]:
    """Rows {device, stream, step, category, us, ratio}: whole profile (``step`` None) then per step."""
    return memoized(profile, "waits.idle.rows", lambda: _rows(profile))


def _rows(profile: Profile) -> list[dict[str, Any]]:
    g = gaps(profile)
    out: list[dict[str, Any]] = []
    streams = _streams(profile)
    for dev, st in streams:
        on = (g.device == dev) & (g.stream == st)
        out += _group_rows(dev, st, None, g.end[on] - g.start[on], g.category[on])
    windows = step_table(profile)
    lo = windows["start"].to_numpy(np.float64)
    hi = windows["end"].to_numpy(np.float64)
    # every (gap, step) pair that overlaps: steps are disjoint and in time order
    first = np.searchsorted(hi, g.start, side="right")
    last = np.searchsorted(lo, g.end, side="left")
    count = np.maximum(last - first, 0)
    gap = np.repeat(np.arange(g.start.size), count)
    step = np.repeat(first, count) + (np.arange(gap.size) - np.repeat(np.cumsum(count) - count, count))
    part = np.minimum(g.end[gap], hi[step]) - np.maximum(g.start[gap], lo[step])
    keep = part > 0
    gap, step, part = gap[keep], step[keep], part[keep]
    numbers = windows["number"].to_numpy(np.int64)
    # one bin per (stream, step, category): sums in one pass, rows for the (stream, step) idle anywhere
    keys = np.array([d * (1 << 32) + s for d, s in streams], dtype=np.int64)
    by_key = np.argsort(keys)
    gap_keys = g.device[gap] * (1 << 32) + g.stream[gap]
    stream_of = by_key[np.searchsorted(keys[by_key], gap_keys)] if gap.size else np.zeros(0, np.int64)
    n_cat = len(CATEGORIES)
    group = stream_of * len(numbers) + step if gap.size else np.zeros(0, np.int64)
    sums = np.bincount(
        group * n_cat + g.category[gap], weights=part, minlength=len(streams) * len(numbers) * n_cat
    )
    sums = sums.reshape(len(streams), len(numbers), n_cat)
    for si, s in zip(*np.nonzero(sums.sum(axis=2) > 0), strict=True):
        dev, st = streams[si]
        out += _group_rows(dev, st, int(numbers[s]), sums[si, s], np.arange(n_cat))
    return out


def _streams(profile: Profile) -> list[tuple[int, int]]:
    dev = profile.device
    if not len(dev):
        return []
    pairs = np.unique(
        np.stack([dev["device"].to_numpy(np.int64), dev["stream"].to_numpy(np.int64)], 1), axis=0
    )
    return [(int(a), int(b)) for a, b in pairs]


def _group_rows(
    device: int, stream: int, step: int | None, us: np.ndarray, category: np.ndarray
) -> list[dict[str, Any]]:
    per = np.bincount(category, weights=us, minlength=len(CATEGORIES))
    total = float(per.sum())
    if step is not None and total <= 0:
        return []  # a stream idle nowhere in a step (or absent from it) adds no row
    return [
        {
            "device": device,
            "stream": stream,
            "step": step,
            "category": name,
            "us": float(per[i]),
            "ratio": float(per[i] / total) if total > 0 else None,
        }
        for i, name in enumerate(CATEGORIES)
    ]


def interval_stats(profile: Profile) -> list[dict[str, Any]]:
    """Per stream: count, p50, p90 and max of its gaps (µs), whole profile."""
    g = gaps(profile)
    out = []
    for dev, st in _streams(profile):
        us = (g.end - g.start)[(g.device == dev) & (g.stream == st)]
        out.append(
            {
                "device": dev,
                "stream": st,
                "count": int(us.size),
                "p50_us": float(np.percentile(us, 50)) if us.size else None,
                "p90_us": float(np.percentile(us, 90)) if us.size else None,
                "max_us": float(us.max()) if us.size else None,
            }
        )
    return out


def longest(profile: Profile, top: int = LONGEST) -> list[dict[str, Any]]:
    """The ``top`` longest gaps, each with the activity that ended it, its launch call and the host op
    around that call (what the host was doing), for a timeline link."""
    g = gaps(profile)
    us = g.end - g.start
    pick = np.argsort(-us, kind="stable")[:top]
    dev, rts, ops = profile.device, profile.runtimes, profile.ops
    out = []
    for i in pick:
        row = int(g.after[i])
        rt = int(dev["runtime"].iat[row])
        host = int(rts["host_op"].iat[rt]) if rt >= 0 else -1
        out.append(
            {
                "device": int(g.device[i]),
                "stream": int(g.stream[i]),
                "start_us": float(g.start[i]),
                "end_us": float(g.end[i]),
                "us": float(us[i]),
                "category": CATEGORIES[int(g.category[i])],
                "next": str(dev["name"].iat[row]),
                "launch": str(rts["name"].iat[rt]) if rt >= 0 else "",
                "launch_ts_us": float(rts["ts"].iat[rt]) if rt >= 0 else None,
                "host_op": str(ops["name"].iat[host]) if host >= 0 else "",
            }
        )
    return out

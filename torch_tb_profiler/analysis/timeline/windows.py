"""Windows of the timeline index: the events of some tracks overlapping a time range at a zoom, small
neighbours merged into one box so a window never holds more than ``MAX_ITEMS`` (docs/api.md, "Timeline")."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from torch_tb_profiler.analysis.memory.downsample import downsample_indices
from torch_tb_profiler.analysis.timeline.index import Series, TimelineIndex

MAX_ITEMS = 100_000  # boxes in one window (and matches in one search answer)
MAX_PX = 20_000  # the widest window asked for, in pixels


@dataclass
class Window:
    start_us: float
    end_us: float
    px: int
    resolution_us: float
    coarsened: bool  # resolution_us was raised above (end - start) / px to keep under MAX_ITEMS boxes
    ts: np.ndarray
    dur: np.ndarray
    kind: np.ndarray  # uint8, KINDS index
    row: np.ndarray  # int32, -1 for a merged box
    name: np.ndarray  # index into names; 0 ("") for a box of mixed names
    major: np.ndarray  # index into names: the name covering most of the box's time (``name`` when one)
    names: list[str]
    count: np.ndarray
    track: np.ndarray
    depth: np.ndarray
    counters: dict[int, Series]


def window(idx: TimelineIndex, start: float, end: float, px: int, tracks: list[int] | None) -> Window:
    """The events of ``tracks`` overlapping [start, end], small neighbours merged (module doc; api.md)."""
    segs = idx.segments_of(tracks)
    pieces = []
    for s in segs.tolist():
        lo, hi = int(idx.seg_lo[s]), int(idx.seg_hi[s])
        a = lo + int(np.searchsorted(idx.end[lo:hi], start, side="left"))
        b = lo + int(np.searchsorted(idx.ts[lo:hi], end, side="right"))
        if b > a:
            pieces.append((a, b))
    if pieces:
        lengths = np.array([b - a for a, b in pieces], dtype=np.int64)
        starts = np.array([a for a, _ in pieces], dtype=np.int64)
        first = np.r_[0, np.cumsum(lengths)[:-1]]
        sel = np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(first - starts, lengths)
        seg_first = np.zeros(sel.size, dtype=bool)
        seg_first[first] = True
    else:
        sel = np.zeros(0, np.int64)
        seg_first = np.zeros(0, bool)
    res = requested = (end - start) / px
    t, e = idx.ts[sel], idx.end[sel]
    while True:
        group = _merge_groups(t, e, seg_first, res)
        n_groups = int(group[-1]) + 1 if group.size else 0
        # a row's events merge at most into one box: past the window's width coarsening can't help
        if n_groups <= MAX_ITEMS or res > 2 * (end - start):
            break
        res *= 2
    heads = np.flatnonzero(np.r_[True, group[1:] != group[:-1]]) if group.size else np.zeros(0, np.int64)
    tails = np.r_[heads[1:], group.size] - 1 if group.size else np.zeros(0, np.int64)
    count = (tails - heads + 1).astype(np.uint32)
    codes = idx.name[sel]
    same_name = (
        np.minimum.reduceat(codes, heads) == np.maximum.reduceat(codes, heads)
        if heads.size
        else np.zeros(0, bool)
    )
    head_rows = sel[heads]
    name_code = np.where(same_name, codes[heads], -1)
    major_code = _major_names(group, heads, codes, e - t, same_name, len(idx.names))
    used, local = np.unique(np.concatenate((name_code, major_code)), return_inverse=True)
    names = [""] + [str(idx.names[c]) for c in used.tolist() if c >= 0]
    local = local.ravel() + (0 if used.size and used[0] == -1 else 1)
    local, major = local[: heads.size], local[heads.size :]
    single = count == 1
    counters = {}
    wanted = idx.counters.keys() if tracks is None else [t for t in tracks if t in idx.counters]
    for tid in wanted:
        counters[tid] = _counter_window(idx.counters[tid], start, end, px)
    return Window(
        start_us=start,
        end_us=end,
        px=px,
        resolution_us=res,
        coarsened=res > requested,
        ts=t[heads],
        dur=(e[tails] - t[heads]) if heads.size else np.zeros(0),
        kind=idx.kind[head_rows],
        row=np.where(single, idx.row[head_rows], -1).astype(np.int32),
        name=local.astype(np.uint32),
        major=major.astype(np.uint32),
        names=names,
        count=count,
        track=idx.track[head_rows],
        depth=idx.depth[head_rows],
        counters=counters,
    )


def _major_names(
    group: np.ndarray,
    heads: np.ndarray,
    codes: np.ndarray,
    dur: np.ndarray,
    same_name: np.ndarray,
    n_names: int,
) -> np.ndarray:
    """Per box, the name code covering most of its time (ties: more events, then the smaller code);
    a box's events never overlap (one row), so that is its dominant colour."""
    out = codes[heads].astype(np.int64)
    mixed = ~same_name
    if not mixed.any():
        return out
    ev = np.flatnonzero(mixed[group])  # the events of boxes of mixed names
    n = max(1, n_names)
    key = group[ev].astype(np.int64) * n + codes[ev]
    order, key = _sort_with_order(key)
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])  # one per (box, name)
    total = np.add.reduceat(dur[ev][order], starts)
    count = np.diff(np.r_[starts, key.size]).astype(np.float64)
    box = key[starts] // n
    # per box the largest total, then the most events; the smallest code wins what is left
    first = np.flatnonzero(np.r_[True, box[1:] != box[:-1]])
    best_total = np.maximum.reduceat(total, first)
    box_of = np.repeat(np.arange(first.size), np.diff(np.r_[first, box.size]))
    top = total >= best_total[box_of] * (1 - 1e-12)
    best_count = np.maximum.reduceat(np.where(top, count, -1.0), first)
    pick = np.flatnonzero(top & (count == best_count[box_of]))
    pick = pick[np.r_[True, box_of[pick][1:] != box_of[pick][:-1]]]
    out[box[pick]] = key[starts[pick]] % n
    return out


def _sort_with_order(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(order, key[order]) for non-negative int64 keys: one value sort of key and position packed in one
    int64 when they fit (several times faster than an argsort), else an argsort."""
    if not key.size:
        return np.zeros(0, np.int64), key
    bits = max(1, int(key.size - 1).bit_length())
    if int(key.max()).bit_length() + bits <= 62:
        packed = np.sort((key << bits) | np.arange(key.size, dtype=np.int64))
        return packed & ((1 << bits) - 1), packed >> bits
    order = np.argsort(key, kind="stable")
    return order, key[order]


def _merge_groups(t: np.ndarray, e: np.ndarray, seg_first: np.ndarray, res: float) -> np.ndarray:
    """Group number per event: runs of events narrower than ``res`` whose gaps are under ``res``."""
    if not t.size:
        return np.zeros(0, np.int64)
    small = (e - t) < res
    close = np.r_[False, (t[1:] - e[:-1]) < res]
    joins = small & np.r_[False, small[:-1]] & close & ~seg_first
    return np.cumsum(~joins) - 1


def _counter_window(series: Series, start: float, end: float, px: int) -> Series:
    lo = max(0, int(np.searchsorted(series.ts, start, side="right")) - 1)  # the value entering the window
    hi = int(np.searchsorted(series.ts, end, side="right"))
    t, v = series.ts[lo:hi], series.values[lo:hi]
    keep = downsample_indices(t, [v], max_points=4 * px)
    return Series(t[keep], v[keep])


# ---- one event, search, aggregates -------------------------------------------------------------------

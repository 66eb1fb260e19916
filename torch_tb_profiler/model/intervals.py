"""Interval arithmetic on numpy arrays of half-open ranges [start, end).

An *interval set* is a pair of float64 arrays (starts, ends), sorted, disjoint and non-empty
(end > start), as returned by ``union``. All functions are vectorised.
"""

from __future__ import annotations

import numpy as np

Intervals = tuple[np.ndarray, np.ndarray]

EMPTY: Intervals = (np.empty(0), np.empty(0))


def union(starts: np.ndarray, ends: np.ndarray) -> Intervals:
    """Merge possibly overlapping ranges into a sorted, disjoint interval set."""
    starts = np.asarray(starts, dtype=np.float64)
    ends = np.asarray(ends, dtype=np.float64)
    keep = ends > starts
    starts, ends = starts[keep], ends[keep]
    if starts.size == 0:
        return EMPTY
    order = np.argsort(starts, kind="stable")
    starts, ends = starts[order], ends[order]
    running_end = np.maximum.accumulate(ends)
    # a new group starts where the start lies beyond every earlier end
    new_group = np.empty(starts.size, dtype=bool)
    new_group[0] = True
    new_group[1:] = starts[1:] > running_end[:-1]
    group_starts = starts[new_group]
    last_of_group = np.append(np.flatnonzero(new_group)[1:] - 1, starts.size - 1)
    return group_starts, running_end[last_of_group]


def total(iv: Intervals) -> float:
    return float(np.sum(iv[1] - iv[0]))


def intersect(a: Intervals, b: Intervals) -> Intervals:
    """Intersection of two interval sets."""
    if a[0].size == 0 or b[0].size == 0:
        return EMPTY
    # boundaries of both sets; a point is inside the result when inside both
    points = np.union1d(np.concatenate(a), np.concatenate(b))
    # each elementary segment [p_i, p_i+1) lies wholly inside or outside a set: test its left end
    # (exact at any magnitude, unlike a midpoint, which rounds onto an end at epoch µs)
    left = points[:-1]
    inside = _contains(a, left) & _contains(b, left)
    return _from_mask(points, inside)


def subtract(a: Intervals, b: Intervals) -> Intervals:
    """The parts of a that are not in b."""
    if a[0].size == 0:
        return EMPTY
    if b[0].size == 0:
        return a
    points = np.union1d(np.concatenate(a), np.concatenate(b))
    left = points[:-1]  # see intersect
    inside = _contains(a, left) & ~_contains(b, left)
    return _from_mask(points, inside)


def clip(iv: Intervals, lo: float, hi: float) -> Intervals:
    """The interval set restricted to [lo, hi)."""
    starts = np.maximum(iv[0], lo)
    ends = np.minimum(iv[1], hi)
    keep = ends > starts
    return starts[keep], ends[keep]


def overlap_with_each(iv: Intervals, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """For each range [starts[i], ends[i]), the length of its overlap with the interval set."""
    starts = np.asarray(starts, dtype=np.float64)
    ends = np.asarray(ends, dtype=np.float64)
    if iv[0].size == 0:
        return np.zeros(starts.size)
    # cumulative covered length up to x, evaluated at both ends
    return _covered_until(iv, ends) - _covered_until(iv, starts)


def _covered_until(iv: Intervals, x: np.ndarray) -> np.ndarray:
    s, e = iv
    lengths = np.concatenate(([0.0], np.cumsum(e - s)))
    k = np.searchsorted(s, x, side="right")  # intervals starting at or before x
    covered = lengths[np.maximum(k - 1, 0)]
    partial = np.where(k > 0, np.minimum(x, e[np.maximum(k - 1, 0)]) - s[np.maximum(k - 1, 0)], 0.0)
    return covered + np.maximum(partial, 0.0)


def holding(iv: Intervals, x: np.ndarray) -> np.ndarray:
    """Per point, the index of the interval [start, end) that holds it, -1 where none does. The
    intervals are sorted by start and do not overlap (an interval set, or steps)."""
    k = np.searchsorted(iv[0], x, side="right") - 1
    ok = k >= 0
    ok[ok] &= x[ok] < iv[1][k[ok]]
    return np.where(ok, k, -1)


def _contains(iv: Intervals, x: np.ndarray) -> np.ndarray:
    return holding(iv, x) >= 0


def _from_mask(points: np.ndarray, inside: np.ndarray) -> Intervals:
    if not inside.any():
        return EMPTY
    edges = np.diff(np.concatenate(([0], inside.astype(np.int8), [0])))
    first = np.flatnonzero(edges == 1)
    last = np.flatnonzero(edges == -1)
    return points[first], points[last]

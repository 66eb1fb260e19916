"""Interval arithmetic, including sub-µs ranges at epoch magnitudes."""

from __future__ import annotations

import numpy as np
import pytest

from torch_tb_profiler.model import intervals as iv


def _set(*pairs: tuple[float, float]) -> iv.Intervals:
    return iv.union(np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs]))


def test_union_merges_overlaps_and_drops_empty() -> None:
    u = _set((0, 3), (5, 6), (2, 4), (20, 25), (7, 7))
    assert u[0].tolist() == [0, 5, 20] and u[1].tolist() == [4, 6, 25]
    assert iv.total(u) == 10


def test_intersect_subtract_clip_overlap() -> None:
    a = _set((0, 4), (5, 6), (20, 25))
    b = _set((1, 5.5), (21, 30))
    inter = iv.intersect(a, b)
    assert inter[0].tolist() == [1, 5, 21] and inter[1].tolist() == [4, 5.5, 25]
    sub = iv.subtract(a, _set((1, 22)))
    assert sub[0].tolist() == [0, 22] and sub[1].tolist() == [1, 25]
    assert iv.clip(a, 3, 21)[0].tolist() == [3, 5, 20]
    assert iv.overlap_with_each(a, np.array([0, 2.5, 10, 19]), np.array([30, 5.5, 12, 21])).tolist() == [
        10,
        2,
        0,
        1,
    ]


def test_sub_microsecond_segments_at_epoch_magnitude() -> None:
    base = 1_712_195_495_519_689.0  # epoch µs: float64 spacing here is 0.25 µs
    a = _set((base, base + 10))
    b = _set((base + 9.75, base + 20))
    assert iv.total(iv.intersect(a, b)) == pytest.approx(0.25)
    assert iv.total(iv.subtract(a, b)) == pytest.approx(9.75)
    assert iv.total(iv.subtract(b, a)) == pytest.approx(10.0)

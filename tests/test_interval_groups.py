"""grouped_union_total against a loop of intervals.union per group, and by hand."""

from __future__ import annotations

import numpy as np
import pytest

from torch_tb_profiler.analysis.distributed.interval_groups import grouped_union_total
from torch_tb_profiler.model import intervals as iv


def test_by_hand() -> None:
    # group 0: [0, 10) ∪ [5, 12) ∪ [20, 25) = 12 + 5 = 17; group 1: [3, 4) and an empty [7, 7) = 1;
    # group 2: nothing; group 3: a NaN start counts nothing, [1e15, 1e15 + 2) = 2 at epoch-µs size
    groups = np.array([0, 1, 0, 0, 1, 3, 3])
    starts = np.array([5.0, 3.0, 0.0, 20.0, 7.0, np.nan, 1e15])
    ends = np.array([12.0, 4.0, 10.0, 25.0, 7.0, 9.0, 1e15 + 2])
    assert grouped_union_total(groups, starts, ends, 4).tolist() == [17.0, 1.0, 0.0, 2.0]


def test_a_later_group_never_inherits_an_earlier_end() -> None:
    # group 0 ends at 100; group 1's ranges start at 1: two separate ranges of 1 µs each, not merged
    got = grouped_union_total(np.array([0, 1, 1]), np.array([0.0, 1.0, 3.0]), np.array([100.0, 2.0, 4.0]), 2)
    assert got.tolist() == [100.0, 2.0]


@pytest.mark.parametrize("seed", range(5))
def test_equals_a_union_per_group(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 400
    groups = rng.integers(0, 30, n)
    starts = 1.7e15 + rng.integers(0, 10_000, n).astype(float)
    ends = starts + rng.integers(-5, 300, n)
    got = grouped_union_total(groups, starts, ends, 31)
    want = [iv.total(iv.union(starts[groups == g], ends[groups == g])) for g in range(31)]
    assert got.tolist() == want

"""The operator analysis's structure, without timing it (timings: benchmarks/bench_scaling.py).

100 k identical cpu_ops nest into one chain 100 k deep; folding it level by level took 17.5 s
(issue 12). Folding now doubles its jump every pass, and subtree sums are prefix-sum differences.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from tests.fixtures.builders_overview import load
from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.analysis import operators


def test_fold_of_a_chain_takes_log_passes() -> None:
    n = 1 << 16
    up = np.maximum(np.arange(n) - 1, 0)  # row i folds into row i-1; row 0 is the top
    rep, passes = operators.fold_targets(up)
    assert (rep == 0).all()
    assert passes <= math.log2(n) + 2  # a level-by-level walk takes n passes


def test_subtree_sums_equal_a_direct_sum_on_a_random_forest() -> None:
    rng = np.random.default_rng(0)
    n = 500
    # a random depth-first forest: each row's parent is one of the rows still open before it
    parent = np.full(n, -1)
    last = np.full(n, n)
    stack: list[int] = []
    for i in range(n):
        while stack and rng.random() < 0.4:
            last[stack.pop()] = i
        parent[i] = stack[-1] if stack else -1
        stack.append(i)
    values = np.where(rng.random(n) < 0.3, 0.0, rng.random(n) * 100)
    expected = values.copy()
    for i in range(n - 1, -1, -1):  # children come after their parent
        if parent[i] >= 0:
            expected[parent[i]] += expected[i]
    got = operators.subtree_sum(values, last)
    assert np.allclose(got, expected, rtol=0, atol=1e-9)
    assert (got[expected == 0] == 0).all()  # exactly zero where nothing was launched


def test_identical_ops_fold_into_one_call(tmp_path: Path) -> None:
    b = TraceBuilder()
    for _ in range(2000):
        b.op("aten::add", 0, 10, ext_id=1)
    p = load(b, tmp_path)
    assert p.ops["depth"].max() == 1999  # identical ranges nest
    table = operators.operator_table(p)
    assert table[["name", "calls", "host_total_us", "host_self_us"]].to_dict("records") == [
        {"name": "aten::add", "calls": 1, "host_total_us": 10.0, "host_self_us": 10.0}
    ]

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
from torch_tb_profiler.analysis.ops import operators
from torch_tb_profiler.model.build import EnclosingOp


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


def test_enclosing_op_on_a_deep_chain_matches_a_direct_search(tmp_path: Path) -> None:
    """Calls far below the last op started: the deepest op holding them is found by binary lifting
    (log2(depth) passes) and equals the direct search over every op."""
    n = 2000
    b = TraceBuilder()
    for i in range(n):
        b.op(f"op{i}", i, 10 * n - 2 * i)  # [i, 10n - i): each inside the previous one
    p = load(b, tmp_path)
    ops = p.ops
    base = TraceBuilder().base_ts
    times = base + np.array([10 * n - k + 0.5 for k in (1, 40, 500, 1999)] + [10 * n + 5.0, -1.0])
    found = EnclosingOp(ops).find(
        np.full(len(times), "100", dtype=object), np.full(len(times), "100", dtype=object), times
    )
    ts, end = ops["ts"].to_numpy(), ops["end"].to_numpy()
    expected = []
    for t in times:
        inside = np.flatnonzero((ts <= t) & (t < end))
        expected.append(int(inside[ops["depth"].to_numpy()[inside].argmax()]) if inside.size else -1)
    assert found.tolist() == expected
    assert ops.loc[found[2], "name"] == "op499"

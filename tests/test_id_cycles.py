"""Walks over ids in a trace end: python_function parent ids that point at each other do not hang
``operators/stack`` (issue 12, item 1), through a real TensorBoard."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from tests.fixtures.tensorboard_server import tensorboard
from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.analysis.ops.operators import python_parents


def _cyclic_trace(path: Path) -> Path:
    b = TraceBuilder()
    b.step(1, 0, 1000)
    b.python_function("train.py(3): f", 0, 500, py_id=1, parent_id=2)  # f and g: each other's parent
    b.python_function("model.py(9): g", 10, 400, py_id=2, parent_id=1)
    b.python_function("loop.py(1): h", 600, 100, py_id=3, parent_id=3)  # its own parent
    mm = b.op("aten::mm", 20, 80)
    b.launch("gemm", 30, 10, 120, 50, ext_id=mm)
    b.op("aten::mm", 620, 50)
    return b.write(path)


def test_stack_route_answers_on_parent_id_cycles(tmp_path: Path) -> None:
    _cyclic_trace(tmp_path / "logdir" / "run" / "worker0.1.pt.trace.json.gz")
    with tensorboard(tmp_path / "logdir", tmp=tmp_path) as tb:
        tb.wait_loaded()
        status, body = tb.get("operators/stack", run="run", worker="worker0", name="aten::mm")  # 30 s timeout
    assert status == 200, body
    stacks = {tuple(f["function"] for f in s["frames"]): s["calls"] for s in body["stacks"]}
    # g lies inside f, so g's link to f is kept and f's link to g (which does not enclose it) dropped
    assert stacks == {("g", "f"): 1, ("h",): 1}


def test_python_parents_never_cycle_even_for_identical_ranges() -> None:
    py = pd.DataFrame(
        {
            "py_id": [1, 2, 3],
            "py_parent_id": [2, 1, 3],
            "pid": ["1"] * 3,
            "tid": ["1"] * 3,
            "ts": [0.0, 0.0, 0.0],
            "end": [10.0, 10.0, 10.0],
        }
    )
    parents = python_parents(py)
    assert parents.tolist() == [-1, 0, -1]  # the earlier row of two equal ranges is the parent
    # following parents from any row ends within n steps
    for start in range(3):
        seen, k = set(), start
        while k >= 0:
            assert k not in seen
            seen.add(k)
            k = int(parents[k])
    assert np.all(parents < np.arange(3))

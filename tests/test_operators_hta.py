"""Operator and kernel attribution on PyTorch 2.x traces (../shared/traces/hta_samples), checked
against the definitions directly: the original plugin is wrong there (it ignores cuda_runtime)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.fixtures.paths import shared_trace
from torch_tb_profiler.analysis.ops import kernels, operators
from torch_tb_profiler.analysis.overview.summary import profile_summary
from torch_tb_profiler.ingest.loading import load_profile

pytestmark = pytest.mark.shared

TRACES = [
    "hta_samples/nccl_parser_config/nccl_data.pt.trace.json.gz",
    "hta_samples/trace_filter/sampled_rank-0.pt.trace.json.gz",
    "hta_samples/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
    "hta_samples/triton_example/triton_example.pt.trace.json.gz",
    "hta_samples/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.pt.trace.json.gz",
]
_cache: dict[str, object] = {}
TOL = 0.01  # µs: sums of ns-resolution float durations


def _profile(rel: str):
    if rel not in _cache:
        _cache[rel] = load_profile(str(shared_trace(rel)))
    return _cache[rel]


def _enclosing(
    ops: pd.DataFrame, rows: np.ndarray, pid: np.ndarray, tid: np.ndarray, t: np.ndarray
) -> np.ndarray:
    """For each op row i (rows), a mask over the points (pid, tid, t) inside [ts_i, end_i] on its thread."""
    return (
        (pid[None, :] == ops["pid"].to_numpy()[rows, None])
        & (tid[None, :] == ops["tid"].to_numpy()[rows, None])
        & (t[None, :] >= ops["ts"].to_numpy()[rows, None] - 1e-3)
        & (t[None, :] <= ops["end"].to_numpy()[rows, None] + 1e-3)
    )


@pytest.mark.parametrize("rel", TRACES)
def test_device_time_is_conserved(rel: str) -> None:
    p = _profile(rel)
    stats = operators.op_stats(p)
    attributed = p.device["dur"].to_numpy()[p.device["op"].to_numpy() >= 0].sum()
    assert attributed > 0
    assert stats["device_self"].sum() == pytest.approx(attributed, abs=TOL)
    roots = p.ops["parent"].to_numpy() < 0
    assert stats["device_total"].to_numpy()[roots].sum() == pytest.approx(attributed, abs=TOL)


@pytest.mark.parametrize("rel", TRACES)
def test_device_total_is_the_device_time_launched_inside_the_op(rel: str) -> None:
    """For the top-level ops: the device time of the activities whose runtime call lies inside the op
    (same thread, by time) equals the op's device total."""
    p = _profile(rel)
    stats = operators.op_stats(p)
    dev, rts = p.device, p.runtimes
    launched = dev["runtime"].to_numpy() >= 0
    rt = dev["runtime"].to_numpy()[launched]
    pid = rts["pid"].to_numpy()[rt]
    tid = rts["tid"].to_numpy()[rt]
    t = rts["ts"].to_numpy()[rt]
    dur = dev["dur"].to_numpy()[launched]
    roots = np.flatnonzero(p.ops["parent"].to_numpy() < 0)
    # device time reaching a root only through ext-id links (no runtime) is not "launched inside"
    unlaunched = np.zeros(len(p.ops))
    direct = ~launched & (dev["op"].to_numpy() >= 0)
    np.add.at(unlaunched, dev["op"].to_numpy()[direct], dev["dur"].to_numpy()[direct])
    for chunk in np.array_split(roots, max(1, len(roots) // 200)):
        inside = _enclosing(p.ops, chunk, pid, tid, t)
        expected = inside.astype(float) @ dur
        actual = stats["device_total"].to_numpy()[chunk]
        assert np.allclose(actual, expected + _subtree(p, unlaunched, chunk), atol=TOL), rel


def _subtree(p, values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Σ values over each row's subtree, by time containment on the same thread (no parent links)."""
    if not values.any():
        return np.zeros(len(rows))
    has = np.flatnonzero(values)
    ops = p.ops
    inside = _enclosing(
        ops, rows, ops["pid"].to_numpy()[has], ops["tid"].to_numpy()[has], ops["ts"].to_numpy()[has]
    )
    return inside.astype(float) @ values[has]


@pytest.mark.parametrize("rel", TRACES)
def test_nothing_goes_to_a_dummy_root_when_a_launcher_exists(rel: str) -> None:
    p = _profile(rel)
    dev, rts = p.device, p.runtimes
    orphan = (dev["op"].to_numpy() < 0) & (dev["runtime"].to_numpy() >= 0)
    rt = dev["runtime"].to_numpy()[orphan]
    if rt.size == 0:
        return
    ops = p.ops
    inside = _enclosing(
        ops,
        np.arange(len(ops)),
        rts["pid"].to_numpy()[rt],
        rts["tid"].to_numpy()[rt],
        rts["ts"].to_numpy()[rt],
    )
    cpu = (ops["cat"] == "cpu_op").to_numpy()
    assert not inside[cpu].any(), (
        f"{int(inside[cpu].any(axis=0).sum())} launches inside an op left unattributed"
    )


def test_triton_kernel_launched_by_cu_launch_kernel_reaches_its_operator() -> None:
    p = _profile("hta_samples/triton_example/triton_example.pt.trace.json.gz")
    (row,) = kernels.kernel_table(p, "name_op_launch").to_dict(orient="records")
    assert row["name"] == "triton_poi_fused_add_cos_sin_0" and row["op_name"] != ""
    table = operators.operator_table(p, "name").set_index("name")
    assert table.loc[row["op_name"], "device_self_us"] == pytest.approx(row["total_us"])


@pytest.mark.parametrize("rel", TRACES)
def test_summary_has_no_errors(rel: str) -> None:
    s = profile_summary(_profile(rel), top=5)
    assert s["errors"] == [] and s["device_type"] == "GPU"
    assert s["operators"] and s["kernels"] and s["steps"] >= 1
    assert sum(s["breakdown_us"].values()) == pytest.approx(s["step_time_us"], rel=1e-9)
    assert any(o["device_total_us"] > 0 for o in s["operators"])

"""Runtime call -> op links by containment, host self of calls inside annotations, nesting at float
resolution and device time launched under annotations (docs/metrics.md, "Operators" / "Links").

Every expected figure below is computed by hand from the events the test writes.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.fixtures.builders_overview import load
from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.analysis.ops import operators
from torch_tb_profiler.ingest.parse import load_profile


def _stats_by_name(profile) -> dict[str, dict[str, float]]:
    stats = operators.op_stats(profile)
    out: dict[str, dict[str, float]] = {}
    for name, row in zip(profile.ops["name"], stats.to_dict(orient="records"), strict=True):
        out[name] = row
    return out


def _collision_trace() -> TraceBuilder:
    """A build that writes a runtime call's correlation id as its External id: the launch inside
    aten::uniform_ (correlation = External id = 218) collides with aten::clamp_min_'s External id."""
    b = TraceBuilder()
    b.op("aten::uniform_", 0, 100, ext_id=1)
    corr = b.runtime("cudaLaunchKernel", 10, 5, ext_id=218, corr=218)
    b.kernel("uniform_kernel", 200, 71, corr, ext_id=218)
    b.op("aten::clamp_min_", 12_700_000, 100, ext_id=218)
    own = b.runtime("cudaLaunchKernel", 12_700_010, 5, ext_id=218, corr=300)
    b.kernel("clamp_kernel", 12_700_100, 683, own, ext_id=218)
    # a 29.9 s call on another thread, its External id 5 colliding with aten::empty's
    b.runtime("cudaDeviceGetStreamPriorityRange", 0, 29_900_000, ext_id=5, corr=5, tid=2)
    b.op("aten::empty", 20_000_000, 10, ext_id=5)
    return b


def test_external_id_collision_links_by_containment(tmp_path: Path) -> None:
    p = load(_collision_trace(), tmp_path)
    s = _stats_by_name(p)
    assert s["aten::uniform_"]["device_self"] == pytest.approx(71)
    assert s["aten::clamp_min_"]["device_self"] == pytest.approx(683)
    # each op's host self = 100 − its own 5 µs launch; aten::empty has no call inside it
    assert s["aten::uniform_"]["host_self"] == pytest.approx(95)
    assert s["aten::clamp_min_"]["host_self"] == pytest.approx(95)
    assert s["aten::empty"]["host_self"] == pytest.approx(10)
    rts = p.runtimes.set_index("corr")
    assert rts.loc[5, "op"] == -1  # inside no op on its own thread


def test_valid_external_id_still_names_an_enclosing_ancestor(tmp_path: Path) -> None:
    """record_param_comms [0, 100) holds the annotation nccl:all_reduce [10, 60), which holds a launch
    [20, 30) whose External id is record_param_comms' (as PyTorch writes it)."""
    b = TraceBuilder()
    rpc = b.op("record_param_comms", 0, 100)
    b.annotation("nccl:all_reduce", 10, 50)
    b.launch("ncclKernel_AllReduce", 20, 10, 200, 40, ext_id=rpc)
    p = load(b, tmp_path)
    s = _stats_by_name(p)
    # the call's 10 µs are subtracted once, from the range that holds it
    assert s["record_param_comms"]["host_self"] == pytest.approx(100 - 50)
    assert s["nccl:all_reduce"]["host_self"] == pytest.approx(50 - 10)
    # its device time goes to the op its External id names, which encloses it
    assert s["record_param_comms"]["device_self"] == pytest.approx(40)
    assert s["nccl:all_reduce"]["device_self"] == 0


def test_device_external_id_fallback_needs_an_op_that_started_before(tmp_path: Path) -> None:
    """Kernels without a launching call in the trace fall back to their own External id, but only
    to an op that started before the kernel did."""
    b = TraceBuilder()
    early = b.op("aten::mm", 0, 50, ext_id=7)
    b.kernel("gemm", 100, 30, corr=9001, ext_id=early)
    b.op("aten::add", 5000, 50, ext_id=8)
    b.kernel("add_kernel", 200, 20, corr=9002, ext_id=8)  # ran before aten::add began
    p = load(b, tmp_path)
    dev = p.device.set_index("name")
    assert p.ops.loc[dev.loc["gemm", "op"], "name"] == "aten::mm"
    assert dev.loc["add_kernel", "op"] == -1


def _write_raw(path: Path, events: list[str]) -> Path:
    """A trace whose numbers are written exactly as given (decimal ns digits at epoch µs)."""
    head = '{"schemaVersion": 1, "traceEvents": [\n'
    path.write_text(head + ",\n".join(events) + "\n]}")
    return path


def _x(cat: str, name: str, ts: str, dur: str, ext: int, tid: int = 1) -> str:
    return (
        f'{{"ph": "X", "cat": "{cat}", "name": "{name}", "pid": 1, "tid": {tid}, "ts": {ts}, '
        f'"dur": {dur}, "args": {{"External id": {ext}}}}}'
    )


def test_nesting_tolerates_float_resolution_at_epoch_microseconds(tmp_path: Path) -> None:
    """Three nested calls from hta_samples/ns_resolution_trace (ts with ns digits). As float64 the
    starts round to 0.25 µs, so detach's end lands 0.25 µs past aten::detach's: still nested."""
    events = [
        _x("cpu_op", "torch::autograd::AccumulateGrad", "1712195495521714.904", "2.210", 1),
        _x("cpu_op", "aten::detach", "1712195495521715.604", "1.340", 2),
        _x("cpu_op", "detach", "1712195495521715.936", "0.893", 3),
        # siblings: B starts where A ends (1.874), but A's start rounds up and B's rounds down
        _x("cpu_op", "A", "1712195495521800.874", "1.000", 4),
        _x("cpu_op", "B", "1712195495521801.874", "5.000", 5),
    ]
    p = load_profile(str(_write_raw(tmp_path / "ns.pt.trace.json", events)))
    assert p.meta.partial_overlaps == 0
    ops = p.ops.set_index("name")
    assert ops.loc["detach", "parent"] == p.ops.index[p.ops["name"] == "aten::detach"][0]
    assert ops.loc["B", "parent"] == -1
    s = _stats_by_name(p)
    assert s["torch::autograd::AccumulateGrad"]["host_self"] == pytest.approx(2.210 - 1.340)
    assert s["aten::detach"]["host_self"] == pytest.approx(1.340 - 0.893)
    assert s["detach"]["host_self"] == pytest.approx(0.893)


def test_device_time_under_annotations_has_rows(tmp_path: Path) -> None:
    """Launches whose innermost enclosing range is an annotation (nccl:*, Optimizer.step#…,
    ProfilerStep#N) show in a row of that annotation; the rows' device self adds up."""
    b = TraceBuilder()
    b.step(1, 0, 1000)
    b.annotation("nccl:all_reduce", 100, 100)
    b.launch("ncclKernel_AllReduce", 110, 10, 300, 50)
    b.annotation("Optimizer.step#SGD.step", 400, 100)
    b.launch("sgd_kernel", 410, 10, 500, 20)
    mm = b.op("aten::mm", 600, 100)
    b.launch("gemm", 610, 10, 700, 30, ext_id=mm)
    b.launch("step_kernel", 800, 10, 900, 7)  # directly under ProfilerStep#1
    b.annotation("## forward ##", 900, 50)  # an annotation without device work: no row
    p = load(b, tmp_path)
    table = operators.operator_table(p).set_index("name")
    assert table["device_self_us"].to_dict() == pytest.approx(
        {"nccl:all_reduce": 50, "Optimizer.step#SGD.step": 20, "aten::mm": 30, "ProfilerStep#1": 7}
    )
    assert table["device_self_us"].sum() == pytest.approx(p.device["dur"].sum()) == 107
    # host self of the annotation rows: dur − their launch call
    assert table.loc["nccl:all_reduce", "host_self_us"] == pytest.approx(90)
    assert table.loc["ProfilerStep#1", "host_self_us"] == pytest.approx(1000 - 100 - 100 - 100 - 10 - 50)


def test_tree_rows_are_depth_first_with_subtree_ends(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.op("a", 0, 100)
    b.op("b", 10, 50)
    b.op("c", 20, 10)
    b.op("d", 70, 10)
    b.op("e", 200, 10)
    p = load(b, tmp_path)
    ops = p.ops.set_index("name")
    assert ops["last"].to_dict() == {"a": 4, "b": 3, "c": 3, "d": 4, "e": 5}
    values = np.array([1.0, 2.0, 0.0, 4.0, 8.0])
    assert operators.subtree_sum(values, p.ops["last"].to_numpy()).tolist() == [7.0, 2.0, 0.0, 4.0, 8.0]


def test_builder_trace_json_roundtrip(tmp_path: Path) -> None:
    """The raw writer above writes valid JSON (guards the helper itself)."""
    path = _write_raw(tmp_path / "t.json", [_x("cpu_op", "a", "1.5", "2", 1)])
    assert json.loads(path.read_text())["traceEvents"][0]["ts"] == 1.5

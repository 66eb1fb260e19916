"""The Profile model: op tree, links between ops, runtime calls and device events, steps, flows."""

from __future__ import annotations

from pathlib import Path

from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.ingest.loading import load_profile
from torch_tb_profiler.model import Profile


def _load(b: TraceBuilder, tmp_path: Path) -> Profile:
    return load_profile(str(b.write(tmp_path / "w.pt.trace.json")))


def _parent_name(p: Profile, name: str) -> str | None:
    row = p.ops[p.ops["name"] == name].iloc[0]
    return None if row["parent"] < 0 else p.ops.loc[row["parent"], "name"]


def test_tree_by_containment_per_thread(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100)
    b.op("aten::linear", 10, 50)
    b.op("aten::addmm", 12, 40)
    b.op("aten::relu", 70, 10)
    b.op("same_start_child", 70, 5)  # same start: the longer one is the parent
    b.op("other_thread", 20, 5, tid=200)
    p = _load(b, tmp_path)
    assert _parent_name(p, "aten::linear") == "ProfilerStep#1"
    assert _parent_name(p, "aten::addmm") == "aten::linear"
    assert _parent_name(p, "same_start_child") == "aten::relu"
    assert _parent_name(p, "other_thread") is None
    depth = dict(zip(p.ops["name"], p.ops["depth"], strict=True))
    assert depth == {
        "ProfilerStep#1": 0,
        "aten::linear": 1,
        "aten::addmm": 2,
        "aten::relu": 1,
        "same_start_child": 2,
        "other_thread": 0,
    }
    assert p.meta.partial_overlaps == 0


def test_partial_overlap_is_counted_and_placed_under_the_enclosing_event(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.op("outer", 0, 100)
    b.op("a", 10, 30)
    b.op("overhangs_a", 30, 20)  # 30..50 starts inside a (10..40) and ends after it
    b.op("rounding", 60, 40.001)  # 60..100.001: within rounding of outer's end -> contained
    p = _load(b, tmp_path)
    assert p.meta.partial_overlaps == 1
    assert _parent_name(p, "overhangs_a") == "outer"
    assert _parent_name(p, "rounding") == "outer"


def test_runtime_links_by_external_id_then_by_containment(tmp_path: Path) -> None:
    b = TraceBuilder()
    mm = b.op("aten::mm", 0, 100)
    b.op("aten::other", 200, 100)
    b.launch("k_by_ext", 10, 5, 50, 10, ext_id=mm)
    b.launch("k_by_containment", 210, 5, 260, 10, ext_id=0)  # no External id: enclosing op
    b.launch("k_triton", 20, 5, 80, 10, ext_id=mm, runtime_name="cuLaunchKernel", driver=True)
    b.launch("k_orphan", 400, 5, 450, 10, ext_id=0)  # outside every op
    p = _load(b, tmp_path)
    by_kernel = {
        row["name"]: (p.ops.loc[row["op"], "name"] if row["op"] >= 0 else None)
        for _, row in p.device.iterrows()
    }
    assert by_kernel == {
        "k_by_ext": "aten::mm",
        "k_by_containment": "aten::other",
        "k_triton": "aten::mm",
        "k_orphan": None,
    }
    assert set(p.runtimes["cat"]) == {"cuda_runtime", "cuda_driver"}


def test_device_event_without_runtime_uses_its_own_external_id(tmp_path: Path) -> None:
    b = TraceBuilder()
    ext = b.op("aten::copy_", 0, 100)
    b.kernel("k", 50, 10, corr=99999, ext_id=ext)  # its runtime call is missing from the trace
    p = _load(b, tmp_path)
    assert p.device["runtime"].tolist() == [-1]
    assert p.ops.loc[p.device["op"].iloc[0], "name"] == "aten::copy_"


def test_steps_in_numeric_order_and_gpu_annotation_is_not_a_step(tmp_path: Path) -> None:
    b = TraceBuilder()
    for n, ts in ((10, 200), (9, 100), (100, 300)):
        ext = b.step(n, ts, 90)
        b.gpu_annotation(f"ProfilerStep#{n}", ts + 5, 80, ext_id=ext)
    p = _load(b, tmp_path)
    assert p.steps["number"].tolist() == [9, 10, 100]
    assert p.steps["ts"].tolist() == [b.base_ts + 100, b.base_ts + 200, b.base_ts + 300]
    assert len(p.gpu_annotations) == 3


def test_fwdbwd_flows_bind_forward_and_backward_ops(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.op("aten::mul", 10, 5, args={"Sequence number": 7})
    b.op("autograd::engine::evaluate_function: MulBackward0", 100, 20, tid=300)
    b.op("MulBackward0", 102, 15, tid=300, args={"Sequence number": 7})
    b.fwdbwd(1, fwd_ts=10, bwd_ts=103, bwd_tid=300)
    p = _load(b, tmp_path)
    flow = p.flows.iloc[0]
    assert p.ops.loc[flow["fwd_op"], "name"] == "aten::mul"
    assert p.ops.loc[flow["bwd_op"], "name"] == "MulBackward0"


def test_memory_records_attach_to_deepest_op_on_their_thread(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.op("aten::conv2d", 0, 100)
    b.op("aten::empty", 10, 5)
    b.memory(12, 4096, addr=1, total_allocated=4096, total_reserved=8192)  # inside aten::empty
    b.memory(50, -4096, addr=1, total_allocated=0, total_reserved=8192)  # inside conv2d only
    b.memory(150, 16, addr=2, total_allocated=16, total_reserved=8192)  # outside every op
    b.memory(13, 8, addr=3, total_allocated=8, total_reserved=8192, tid=999)  # another thread
    p = _load(b, tmp_path)
    names = [p.ops.loc[o, "name"] if o >= 0 else None for o in p.memory["op"]]
    assert names == ["aten::empty", None, "aten::conv2d", None]  # sorted by time: 12, 13, 50, 150


def test_metadata(tmp_path: Path) -> None:
    dist = {"backend": "nccl", "rank": 3, "world_size": 8}
    b = TraceBuilder(
        device_properties=[{"id": 0, "name": "GPU-X", "totalGlobalMem": 1024}], distributed_info=dist
    )
    b.op("aten::add", 0, 1)
    p = _load(b, tmp_path)
    assert p.meta.distributed_info == dist
    assert p.meta.device_property(0)["name"] == "GPU-X"
    assert p.meta.counts["X:cpu_op"] == 1
    assert p.meta.thread_names[("100", "100")] == "thread 100 (python)"

"""Device ids reconciled to one id per physical device (model/devices.py, docs/metrics.md "Device ids")."""

from __future__ import annotations

import pytest

from tests.fixtures.paths import shared_trace
from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.analysis.device.gpu_metrics import gpu_summary
from torch_tb_profiler.analysis.memory import usage
from torch_tb_profiler.analysis.timeline.index import index as timeline_index
from torch_tb_profiler.ingest.parse import load_profile
from torch_tb_profiler.model.devices import reconcile

MI300X = {"name": "AMD Instinct MI300X", "totalGlobalMem": 205822885888, "computeMajor": 9, "numSms": 304}
HIP = 6


def test_ids_that_agree_are_kept() -> None:
    assert reconcile([0, 1], [0], [0, 1, 2, 3]) == ({}, None)
    assert reconcile([3], [], []) == ({}, None)  # no properties, no memory: nothing to check against


def test_kernels_follow_the_memory_records_when_the_two_never_meet() -> None:
    # MI300X on an 8-GPU node: kernels on HSA agent 2, memory on HIP 0, properties 0..7
    assert reconcile([2], [0], range(8)) == ({2: 0}, None)
    assert reconcile([2, 3], [0, 1], range(8)) == ({2: 0, 3: 1}, None)


def test_off_rocm_kernels_apart_from_memory_are_kept_with_a_warning() -> None:
    # CUDA writes its ordinals everywhere: kernels on 1 and memory on 0 are two devices, or unknown
    mapping, warning = reconcile([1], [0], [0, 1], agent_indices=False)
    assert mapping == {} and warning is not None


def test_cuda_trace_with_kernels_on_1_and_memory_on_0_keeps_both(tmp_path) -> None:
    b = TraceBuilder(device_properties=[{"id": 0, "name": "A"}, {"id": 1, "name": "B"}])
    b.step(1, 0, 1000)
    b.launch("k", 20, 5, 200, 300, ext_id=b.op("aten::mm", 10, 100), device=1)
    b.memory(15, 1024, 0x1000, 1024, 2048, device_type=1, device_id=0)
    p = load_profile(str(b.write(tmp_path / "cuda.pt.trace.json")))
    assert p.meta.device_ids == [] and set(p.device["device"]) == {1}
    assert any("device ids do not agree" in w for w in p.meta.warnings)


def test_kernels_missing_from_the_properties_take_them_in_order() -> None:
    # one visible GPU (HIP_VISIBLE_DEVICES): kernels say 9, the only properties entry is 0
    assert reconcile([9], [], [0]) == ({9: 0}, None)
    assert reconcile([2, 5], [], [0, 1]) == ({2: 0, 5: 1}, None)


def test_ambiguous_ids_are_kept_with_a_warning() -> None:
    mapping, warning = reconcile([2, 3, 4], [0], [0, 1])
    assert mapping == {}
    assert warning is not None and "2, 3, 4" in warning and "kept as written" in warning


def _rocm_trace(kernel_device: int, memory_device: int, props: list[int]) -> TraceBuilder:
    b = TraceBuilder(device_properties=[{**MI300X, "id": i} for i in props])
    b.step(1, 0, 1000)
    ext = b.op("aten::mm", 10, 100)
    b.launch("Cijk_Ailk_Bljk_MT64x64", 20, 5, 200, 300, ext_id=ext, runtime_name="hipLaunchKernel")
    b.kernel("elementwise", 600, 100, corr=b.runtime("hipLaunchKernel", 30, 5), device=kernel_device)
    b.memory(15, 1024, 0x1000, 1024, 2048, device_type=HIP, device_id=memory_device)
    b.memory(40, -1024, 0x1000, 0, 2048, device_type=HIP, device_id=memory_device)
    for e in b.events:
        if e.get("cat") == "kernel":
            e["pid"] = e["args"]["device"] = kernel_device
    return b


def test_rocm_agent_index_becomes_the_memory_device(tmp_path) -> None:
    p = load_profile(str(_rocm_trace(2, 0, list(range(8))).write(tmp_path / "mi300.pt.trace.json")))
    assert p.meta.device_ids == [[2, 0]]
    assert set(p.device["device"]) == {0}
    (gpu,) = gpu_summary(p)
    # 300 + 100 µs of kernels in the 1000 µs step; the name comes from the entry with id 0
    assert gpu["id"] == 0 and gpu["name"] == "AMD Instinct MI300X"
    assert gpu["utilization_pct"] == pytest.approx(40.0)
    devices = usage.devices(p)
    assert [d["device"] for d in devices] == ["GPU0"]  # HIP memory is the GPU's
    assert devices[0]["total_memory_bytes"] == 205822885888
    groups = [g for g in timeline_index(p).groups if g["kind"] == "device"]
    assert [g["name"] for g in groups] == ["GPU 0 (AMD Instinct MI300X)"]  # kernels and memory together


def test_ambiguous_trace_keeps_its_ids_and_says_so(tmp_path) -> None:
    b = _rocm_trace(2, 0, [0])
    b.kernel("other", 700, 10, corr=b.runtime("hipLaunchKernel", 50, 5), device=3)
    p = load_profile(str(b.write(tmp_path / "odd.pt.trace.json")))
    assert p.meta.device_ids == []
    assert sorted(set(p.device["device"])) == [2, 3]
    assert any("device ids do not agree" in w for w in p.meta.warnings)


def test_mi300_bert_small_is_one_gpu() -> None:
    p = load_profile(
        str(shared_trace("tracelens/mi300_bert_small/gaunernst_bert-small-uncased__1016001.pt.trace.json.gz"))
    )
    assert p.meta.device_ids == [[2, 0]]
    assert [(g["id"], g["name"]) for g in gpu_summary(p)] == [(0, "AMD Instinct MI300X VF")]
    assert [d["device"] for d in usage.devices(p)] == ["GPU0", "CPU"]
    assert [g["id"] for g in timeline_index(p).groups if g["kind"] == "device"] == ["d:0"]


def test_8_gpu_node_takes_the_properties_of_gpu_0() -> None:
    p = load_profile(
        str(shared_trace("tracelens/mi300_normalization/normalization_layer_test.pt.trace.json.gz"))
    )
    assert p.meta.device_ids == [[2, 0]]
    assert [g["id"] for g in gpu_summary(p)] == [0]

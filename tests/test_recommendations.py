"""Each recommendation rule fires on a trace made to trigger it, with its evidence, and stays quiet
on a healthy one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.builders_overview import load
from tests.fixtures.trace_builder import V100, TraceBuilder
from torch_tb_profiler.analysis.memory.usage import device_label
from torch_tb_profiler.analysis.overview.recommendations import recommendations


def _found(b: TraceBuilder, tmp_path: Path) -> dict[str, dict]:
    return {r["id"]: r for r in recommendations(load(b, tmp_path))}


def _busy_step(b: TraceBuilder, n: int = 1, start: float = 0, dur: float = 1000) -> None:
    """A step whose GPU is busy 95% of the time with one well-occupied kernel."""
    b.step(n, start, dur)
    ext = b.op("aten::add", start + 1, 5)
    b.launch(
        "elementwise_kernel", start + 2, 2, start + 10, dur * 0.95, ext_id=ext, blocks_per_sm=8, occupancy=90
    )


def test_a_healthy_step_gets_no_advice(tmp_path: Path) -> None:
    b = TraceBuilder(device_properties=[V100])
    _busy_step(b)
    assert _found(b, tmp_path) == {}


def _loader_step(b: TraceBuilder, n: int, start: float, loader_us: float) -> None:
    """A 1000 µs step: kernel [10, 710), then the DataLoader from 750 while the GPU is idle."""
    b.step(n, start, 1000)
    ext = b.op("aten::add", start + 1, 5)
    b.launch("elementwise_kernel", start + 2, 2, start + 10, 700, ext_id=ext, blocks_per_sm=8, occupancy=90)
    b.op("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", start + 750, loader_us)


def test_dataloader_share(tmp_path: Path) -> None:
    b = TraceBuilder(device_properties=[V100])
    _loader_step(b, 1, 0, 100)
    r = _found(b, tmp_path)["dataloader"]
    assert r["evidence"]["share"] == pytest.approx(0.1) and "10.0%" in r["text"]


def test_data_parallel_on_two_gpus(tmp_path: Path) -> None:
    b = TraceBuilder(device_properties=[V100, {**V100, "id": 1}])
    _busy_step(b)
    b.op("DataParallel.forward", 100, 300)
    b.launch("k", 110, 2, 200, 900, device=1)
    r = _found(b, tmp_path)["data_parallel"]
    assert r["evidence"]["gpus"] == [0, 1] and "0 and 1" in r["text"]


@pytest.mark.parametrize(("backend", "fires"), [("gloo", True), ("nccl", False)])
def test_ddp_backend(tmp_path: Path, backend: str, fires: bool) -> None:
    b = TraceBuilder(
        device_properties=[V100], distributed_info={"backend": backend, "rank": 0, "world_size": 2}
    )
    _busy_step(b)
    assert ("ddp_backend" in _found(b, tmp_path)) is fires


def test_communication_share(tmp_path: Path) -> None:
    b = TraceBuilder(device_properties=[V100])
    b.step(1, 0, 1000)
    ext = b.op("aten::add", 1, 5)
    b.launch("elementwise_kernel", 2, 2, 10, 800, ext_id=ext, blocks_per_sm=8, occupancy=90)
    ar = b.annotation("nccl:all_reduce", 20, 10)
    b.launch("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 22, 2, 820, 150, ext_id=ar)
    b.annotation("nccl:broadcast", 975, 10)  # host-side communication while the GPU is idle
    r = _found(b, tmp_path)["communication"]
    # NCCL kernel [820, 970) + host nccl:broadcast [975, 985); nccl:all_reduce [20, 30) runs under a
    # compute kernel, so that time is Kernel (priority rule)
    assert r["evidence"]["communication_us"] == pytest.approx(160)
    assert r["evidence"]["share"] == pytest.approx(0.16)


def test_low_utilization_lists_each_gpu(tmp_path: Path) -> None:
    b = TraceBuilder(device_properties=[V100])
    b.step(1, 0, 1000)
    b.launch("elementwise_kernel", 2, 2, 10, 300, blocks_per_sm=8, occupancy=90)
    r = _found(b, tmp_path)["low_gpu_utilization"]
    assert r["evidence"]["gpus"] == {"0": pytest.approx(30.0)} and "GPU 0: 30.0%" in r["text"]


def test_amp_when_eligible_ops_use_no_tensor_cores(tmp_path: Path) -> None:
    b = TraceBuilder(device_properties=[V100])
    b.step(1, 0, 1000)
    mm = b.op("aten::mm", 1, 5)
    b.launch("volta_sgemm_128x64_nn", 2, 2, 10, 600, ext_id=mm, blocks_per_sm=8, occupancy=90)
    add = b.op("aten::add", 10, 5)
    b.launch("elementwise_kernel", 11, 2, 610, 350, ext_id=add, blocks_per_sm=8, occupancy=90)
    r = _found(b, tmp_path)["amp"]
    assert r["evidence"]["eligible_kernel_share"] == pytest.approx(600 / 950)


def test_no_amp_advice_once_tensor_cores_run(tmp_path: Path) -> None:
    b = TraceBuilder(device_properties=[V100])
    b.step(1, 0, 1000)
    mm = b.op("aten::mm", 1, 5)
    b.launch("volta_h884gemm_64x64_ldg8_nn", 2, 2, 10, 950, ext_id=mm, blocks_per_sm=8, occupancy=90)
    assert "amp" not in _found(b, tmp_path)


def test_memory_peak_checks_each_cuda_device_not_the_cpu(tmp_path: Path) -> None:
    total = V100["totalGlobalMem"]
    b = TraceBuilder(device_properties=[V100])
    _busy_step(b)
    b.memory(
        100, 64, addr=1, total_allocated=int(0.95 * total), total_reserved=total, device_type=1, device_id=0
    )
    b.memory(
        110, 64, addr=2, total_allocated=10 * total, total_reserved=10 * total, device_type=0
    )  # CPU: ignored
    r = _found(b, tmp_path)["memory_peak"]
    assert [d["device"] for d in r["evidence"]["devices"]] == [device_label(1, 0)]  # the CPU is not checked
    assert r["evidence"]["devices"][0]["peak_allocated_bytes"] == int(0.95 * total)


def test_cpu_memory_alone_never_triggers(tmp_path: Path) -> None:
    b = TraceBuilder(device_properties=[V100])
    _busy_step(b)
    b.memory(110, 64, addr=2, total_allocated=V100["totalGlobalMem"] * 2, total_reserved=1, device_type=0)
    assert "memory_peak" not in _found(b, tmp_path)


def test_host_bound(tmp_path: Path) -> None:
    b = TraceBuilder(device_properties=[V100])
    b.step(1, 0, 1000)
    b.op("aten::index", 100, 400)  # host busy, GPU idle
    ext = b.op("aten::add", 600, 5)
    b.launch("elementwise_kernel", 601, 2, 610, 380, ext_id=ext, blocks_per_sm=8, occupancy=90)
    r = _found(b, tmp_path)["host_bound"]
    assert r["evidence"]["top_host_ranges"][0]["name"] == "aten::index"
    assert r["evidence"]["top_host_ranges"][0]["idle_overlap_us"] == pytest.approx(400)
    assert "mostly in “aten::index”" in r["text"]  # names quoted, readable whatever they contain


def test_launch_bound(tmp_path: Path) -> None:
    b = TraceBuilder(device_properties=[V100])
    b.step(1, 0, 2000)
    for i in range(150):  # 150 kernels of 2 µs, each launch call 5 µs
        b.launch("tiny_kernel", 10 * i, 5, 10 * i + 6, 2, blocks_per_sm=8, occupancy=90)
    r = _found(b, tmp_path)["launch_bound"]
    assert r["evidence"]["kernels_per_step"] == 150 and r["evidence"]["short_kernel_share"] == 1.0
    assert (
        r["evidence"]["mean_launch_us"] == pytest.approx(5)
        and r["evidence"]["top_short_kernels"][0]["calls"] == 150
    )


def test_synchronizing_calls(tmp_path: Path) -> None:
    b = TraceBuilder(device_properties=[V100])
    _busy_step(b)
    item = b.op("aten::item", 500, 60)
    b.runtime("cudaStreamSynchronize", 505, 50, ext_id=item)
    r = _found(b, tmp_path)["synchronization"]
    assert r["evidence"]["calls"] == {"cudaStreamSynchronize": {"count": 1, "us": 50.0}}
    assert r["evidence"]["top_ops"] == {"aten::item": 50.0}


def test_pageable_copies(tmp_path: Path) -> None:
    b = TraceBuilder(device_properties=[V100])
    _busy_step(b)
    copy = b.op("aten::copy_", 300, 30)
    c = b.runtime("cudaMemcpyAsync", 305, 20, ext_id=copy)
    b.memcpy("Memcpy HtoD (Pageable -> Device)", 400, 50, c, 8 << 20, ext_id=copy)
    r = _found(b, tmp_path)["pageable_memcpy"]
    assert r["evidence"]["bytes"] == 8 << 20 and r["evidence"]["ops"] == {"aten::copy_": 1}


def test_dataloader_stall_in_one_step(tmp_path: Path) -> None:
    b = TraceBuilder(device_properties=[V100])
    for n, dl in ((1, 10), (2, 12), (3, 11), (4, 200)):
        _loader_step(b, n, (n - 1) * 1000, dl)
    found = _found(b, tmp_path)
    r = found["dataloader_stall"]
    assert [s["step"] for s in r["evidence"]["steps"]] == ["4"]
    assert r["evidence"]["median_dataloader_us"] == pytest.approx(11.5)


def test_low_occupancy_top_kernel(tmp_path: Path) -> None:
    b = TraceBuilder(device_properties=[V100])
    b.step(1, 0, 1000)
    b.launch("skinny_kernel", 2, 2, 10, 950, blocks_per_sm=0.25, occupancy=12)
    r = _found(b, tmp_path)["low_occupancy"]
    (k,) = r["evidence"]["kernels"]
    assert k["name"] == "skinny_kernel" and k["mean_blocks_per_sm"] == 0.25 and k["share"] == 1.0


def test_idle_device_without_host_work_is_not_host_bound(tmp_path: Path) -> None:
    b = TraceBuilder(device_properties=[V100])
    b.step(1, 0, 1000)
    b.launch("elementwise_kernel", 2, 2, 10, 600, blocks_per_sm=8, occupancy=90)  # 40% idle, host idle too
    assert "host_bound" not in _found(b, tmp_path)


def test_communication_kernels_are_not_flagged_for_occupancy(tmp_path: Path) -> None:
    b = TraceBuilder(device_properties=[V100])
    b.step(1, 0, 1000)
    b.launch("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 2, 2, 10, 900, blocks_per_sm=0.05, occupancy=3)
    b.launch("elementwise_kernel", 5, 2, 910, 80, blocks_per_sm=8, occupancy=90)
    assert "low_occupancy" not in _found(b, tmp_path)

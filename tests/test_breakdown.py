"""Step-time breakdown: the priority rule on a hand-made step, summing to the step time."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.builders_overview import load
from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.analysis.device import breakdown
from torch_tb_profiler.analysis.overview.page import categories, environment, overview


def _one_step(b: TraceBuilder) -> None:
    b.step(1, 0, 1000)
    b.op("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 10, 80)  # [10, 90)
    mm = b.op("aten::mm", 100, 300)  # [100, 400)
    b.launch("volta_sgemm_128x64_nn", 150, 10, 450, 200, ext_id=mm)  # runtime [150,160), kernel [450,650)
    copy = b.op("aten::copy_", 405, 25)  # [405, 430)
    c = b.runtime("cudaMemcpyAsync", 410, 10, ext_id=copy)  # [410, 420)
    b.memcpy("Memcpy HtoD (Pinned -> Device)", 600, 100, c, 1 << 20, ext_id=copy)  # [600, 700)
    c = b.runtime("cudaMemsetAsync", 420, 5, ext_id=copy)  # [420, 425)
    b.memset(690, 30, c, 4096, ext_id=copy)  # [690, 720)
    ar = b.annotation("nccl:all_reduce", 800, 50)  # [800, 850)
    b.launch("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)", 810, 5, 900, 80, ext_id=ar)


def test_priority_rule_by_hand(tmp_path: Path) -> None:
    b = TraceBuilder()
    _one_step(b)
    (row,) = breakdown.per_step(load(b, tmp_path)).to_dict(orient="records")
    expected = {
        "kernel": 200,  # [450, 650); the NCCL kernel is communication
        "memcpy": 50,  # [600, 700) minus the kernel
        "memset": 20,  # [690, 720) minus kernel and memcpy
        "communication": 130,  # NCCL kernel [900, 980) + host nccl:all_reduce [800, 850)
        "runtime": 25,  # [150,160) + [410,420) + [420,425); the launch inside nccl:all_reduce is communication
        "dataloader": 80,  # [10, 90)
        "cpu_exec": 300,  # aten::mm 300 - 10 of runtime, aten::copy_ 25 - 15 of runtime
        "other": 195,  # the rest of the 1000 µs step
    }
    assert {k: row[k] for k in expected} == pytest.approx(expected)
    assert row["duration"] == 1000
    assert sum(row[k] for k in breakdown.CATEGORIES) == pytest.approx(row["duration"])


def test_average_is_the_mean_over_steps(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100)
    b.op("aten::add", 10, 40)  # 40 µs CPU Exec in a 100 µs step
    b.step(2, 100, 300)
    b.op("aten::add", 110, 100)  # 100 µs CPU Exec in a 300 µs step
    avg = breakdown.average(load(b, tmp_path))
    assert avg["duration"] == 200 and avg["cpu_exec"] == 70 and avg["other"] == 130
    assert avg["kernel"] == 0


def test_cpu_only_overview_has_no_gpu_sections(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100)
    b.op("aten::add", 10, 40)
    p = load(b, tmp_path)
    data = overview(p)
    assert data["device_type"] == "CPU" and data["gpus"] == []
    assert categories(p) == ["dataloader", "cpu_exec", "other"]  # no device, no Runtime
    assert data["average"]["cpu_exec"] == {"us": 40.0, "pct": 40.0}
    assert data["steps"][0]["other_us"] == 60


def test_no_steps_no_crash(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.empty_profiler_span()
    p = load(b, tmp_path)
    assert breakdown.per_step(p).empty
    assert breakdown.average(p)["duration"] == 0
    assert overview(p)["recommendations"] == []


def test_environment(tmp_path: Path) -> None:
    b = TraceBuilder(
        distributed_info={
            "backend": "nccl",
            "rank": 1,
            "world_size": 8,
            "nccl_version": "2.21.5",
            "pg_config": [],
        },
        extra_top={"cuda_runtime_version": 12040, "cuda_driver_version": 12080, "with_stack": 1},
    )
    b.step(1, 0, 10)
    env = environment(load(b, tmp_path))
    assert env["device_type"] == "CPU"
    assert env["distributed"] == {"backend": "nccl", "rank": 1, "world_size": 8, "nccl_version": "2.21.5"}
    assert env["versions"] == {
        "cuda_runtime_version": "12.4",
        "cuda_driver_version": "12.8",
        "schemaVersion": 1,
    }

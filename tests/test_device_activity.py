"""The run's device is the one that did work: a CPU run on a GPU host is a CPU run; launches whose
device records were all lost are warned about and build no device figure or advice."""

from __future__ import annotations

from pathlib import Path

from tests.fixtures.builders_overview import load
from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.analysis.core.accelerator import accelerator, lost_launches
from torch_tb_profiler.analysis.overview import page as overview
from torch_tb_profiler.analysis.overview import summary
from torch_tb_profiler.analysis.overview.recommendations import DEVICE_RULES
from torch_tb_profiler.ingest.loading import RunStore

A100 = {"id": 0, "name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85_000_000_000, "computeMajor": 8,
        "computeMinor": 0, "numSms": 108}  # fmt: skip


def _cpu_run_on_gpu_host() -> TraceBuilder:
    b = TraceBuilder(device_properties=[A100])
    b.step(1, 0, 1000)
    b.op("aten::mm", 10, 500)
    # the only runtime calls: PyTorch asking how many GPUs there are
    b.runtime("cudaGetDeviceCount", 600, 3)
    b.runtime("cudaGetDeviceProperties", 610, 2)
    return b


def test_cpu_run_on_a_gpu_host_is_a_cpu_run(tmp_path: Path) -> None:
    profile = load(_cpu_run_on_gpu_host(), tmp_path)
    assert accelerator(profile).platform is None
    answer = overview.overview(profile)
    assert answer["device_type"] == "CPU"  # was "GPU" (CUDA) with Tensor Cores
    assert answer["matrix_units"] is None
    assert answer["gpus"] == []
    assert not {"kernel", "memcpy", "memset"} & set(answer["categories"])
    assert answer["lost_device_activity"] is None  # queries are not launches
    assert summary.profile_summary(profile)["device_type"] == "CPU"


def _lost_launches(n: int = 3) -> TraceBuilder:
    b = TraceBuilder(device_properties=[A100])
    b.step(1, 0, 1000)
    for i in range(n):
        b.op("aten::add", 10 + 100 * i, 50, ext_id=i + 1)
        b.runtime("cudaLaunchKernel", 20 + 100 * i, 30, ext_id=i + 1)  # no kernel record follows
    b.runtime("cudaGetDeviceCount", 900, 1)
    return b


def test_launches_without_device_records_are_warned_about(tmp_path: Path) -> None:
    profile = load(_lost_launches(), tmp_path)
    assert lost_launches(profile) == 3
    note = "3 launches have no device activity in this trace"
    assert any(w.startswith(note) for w in profile.meta.warnings)
    answer = overview.overview(profile)
    assert answer["device_type"] == "GPU"  # the launches say a GPU ran work
    assert answer["lost_device_activity"]["launches"] == 3
    assert answer["lost_device_activity"]["text"].startswith(note)
    assert answer["gpus"] == []
    device_ids = {"data_parallel", "communication", "low_gpu_utilization", "amp", "host_bound"}
    device_ids |= {"launch_bound", "pageable_memcpy", "low_occupancy"}
    assert not device_ids & {r["id"] for r in answer["recommendations"]}
    assert len(DEVICE_RULES) == len(device_ids)


def test_the_run_carries_the_warning(tmp_path: Path) -> None:
    run = tmp_path / "logs" / "run"
    run.mkdir(parents=True)
    _lost_launches(268).write(run / "w0.1.pt.trace.json.gz")
    store = RunStore(str(tmp_path / "logs"), processes=0, settle_seconds=0)
    try:
        store.scan_once()
        assert store.wait_idle(60)
        (entry,) = store.runs()
        assert any("268 launches have no device activity" in w["message"] for w in entry["warnings"])
    finally:
        store.close()


def test_a_trace_with_kernels_has_no_note(tmp_path: Path) -> None:
    b = TraceBuilder(device_properties=[A100])
    b.step(1, 0, 1000)
    b.launch("ampere_sgemm_128x64_nn", 10, 5, 20, 100)
    b.runtime("cudaLaunchKernel", 300, 5)  # one launch whose kernel ran after the profiler stopped
    profile = load(b, tmp_path)
    assert lost_launches(profile) == 0
    assert not any("no device activity" in w for w in profile.meta.warnings)

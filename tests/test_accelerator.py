"""Device kinds: GPU for CUDA/ROCm, MTIA/XPU/HPU/PrivateUse1 by name; CUDA-only figures only on CUDA."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.builders_overview import load
from tests.fixtures.paths import shared_trace
from tests.fixtures.trace_builder import V100, TraceBuilder
from torch_tb_profiler.analysis.core.accelerator import accelerator
from torch_tb_profiler.analysis.device import gpu_metrics
from torch_tb_profiler.analysis.overview import page as overview
from torch_tb_profiler.analysis.overview import summary
from torch_tb_profiler.ingest.loading import load_profile

MI250 = {**V100, "name": "AMD Instinct MI250X", "computeMajor": 9, "computeMinor": 0, "warpSize": 64}


def _vendor_trace(runtime_cat: str, kernel_cat: str, device: int = 9) -> TraceBuilder:
    """One step with one launch recorded under a vendor's own categories (no CUDA-only kernel args)."""
    b = TraceBuilder(device_properties=[{"id": device, "name": None}])
    b.step(1, 0, 100)
    b.op("aten::mm", 10, 20, ext_id=1)
    b.raw({"ph": "X", "cat": runtime_cat, "name": "launch", "pid": b.pid, "tid": b.tid,
           "ts": b.base_ts + 12, "dur": 2, "args": {"correlation": 7, "External id": 1}})  # fmt: skip
    b.raw({"ph": "X", "cat": kernel_cat, "name": "fused_mm_16x16", "pid": device, "tid": 1,
           "ts": b.base_ts + 40, "dur": 30, "args": {"correlation": 7, "External id": 1, "device": device}})  # fmt: skip
    return b


def _cuda_trace(props: dict[str, Any], kernel: str, runtime: str = "cudaLaunchKernel") -> TraceBuilder:
    b = TraceBuilder(device_properties=[props])
    b.step(1, 0, 100)
    b.op("aten::mm", 10, 20, ext_id=1)
    b.launch(kernel, 12, 2, 40, 30, ext_id=1, runtime_name=runtime, blocks_per_sm=0.5, occupancy=40)
    return b


@pytest.mark.parametrize(
    ("runtime_cat", "kernel_cat", "kind"),
    [
        ("mtia_runtime", "mtia_ccp_events", "MTIA"),
        ("xpu_runtime", "kernel", "XPU"),
        ("privateuse1_runtime", "kernel", "PrivateUse1"),
    ],
)
def test_vendor_devices_are_named_by_kind_without_cuda_figures(
    tmp_path: Path, runtime_cat: str, kernel_cat: str, kind: str
) -> None:
    profile = load(_vendor_trace(runtime_cat, kernel_cat), tmp_path)
    assert overview.device_type(profile) == kind
    answer = overview.overview(profile)
    assert answer["device_type"] == kind and answer["matrix_units"] is None
    assert "kernel" in answer["categories"]  # device categories still show
    (gpu,) = answer["gpus"]
    assert gpu["id"] == 9
    # nothing in the trace gives these: None ("–" in the UI), never 0
    assert gpu["compute_capability"] is None
    assert gpu["sm_efficiency_pct"] is None
    assert gpu["achieved_occupancy_pct"] is None
    assert gpu["tensor_core_pct"] is None
    assert gpu["utilization_pct"] == pytest.approx(30.0)
    assert summary.profile_summary(profile)["device_type"] == kind


def test_rocm_is_a_gpu_with_matrix_cores_and_no_compute_capability(tmp_path: Path) -> None:
    kernel = "Cijk_Alik_Bljk_SB_MT64x16x32_MI16x16x1_SN_LDSB0"
    profile = load(_cuda_trace(MI250, kernel, runtime="hipLaunchKernel"), tmp_path)
    assert accelerator(profile).platform == "ROCm"
    answer = overview.overview(profile)
    assert answer["device_type"] == "GPU" and answer["matrix_units"] == "Matrix Cores"
    (gpu,) = answer["gpus"]
    assert gpu["compute_capability"] is None  # ROCm writes its gfx major there, not a CUDA capability
    assert gpu["tensor_core_pct"] == pytest.approx(100.0)


def test_cuda_keeps_its_figures(tmp_path: Path) -> None:
    profile = load(_cuda_trace(V100, "volta_h884gemm_64x64_nn"), tmp_path)
    answer = overview.overview(profile)
    assert answer["device_type"] == "GPU" and answer["platform"] == "CUDA"
    assert answer["matrix_units"] == "Tensor Cores"
    (gpu,) = answer["gpus"]
    assert gpu["compute_capability"] == "7.0"
    assert gpu["sm_efficiency_pct"] == pytest.approx(15.0)  # 0.5 × 30 / 100
    assert gpu["tensor_core_pct"] == pytest.approx(100.0)


def test_cpu_only_trace(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100)
    b.op("aten::add", 10, 20)
    profile = load(b, tmp_path)
    assert overview.device_type(profile) == "CPU"
    assert gpu_metrics.gpu_summary(profile) == []


def test_shared_rocm_trace_is_labelled_rocm() -> None:
    path = shared_trace("hta_samples/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.pt.trace.json.gz")
    profile = load_profile(str(path), run="r", worker="w", span="1")
    assert accelerator(profile).platform == "ROCm"
    (gpu,) = gpu_metrics.gpu_summary(profile)
    assert gpu["compute_capability"] is None
    assert gpu["sm_efficiency_pct"] is None  # ROCm kernels carry no "blocks per SM"
    assert gpu["tensor_core_pct"] == pytest.approx(27.27, abs=0.01)  # the Tensile MI GEMMs


def test_distributed_device_info_is_keyed_by_kind(tmp_path: Path) -> None:
    from torch_tb_profiler.analysis.distributed.job import _gpu_info

    assert set(_gpu_info(load(_vendor_trace("mtia_runtime", "mtia_ccp_events"), tmp_path / "m"))) == {"MTIA9"}
    rocm = load(_cuda_trace(MI250, "Cijk_MT64x16x32_MI16x16x1", runtime="hipLaunchKernel"), tmp_path / "r")
    assert _gpu_info(rocm)["GPU0"].get("compute_capability") is None


def test_recommendations_name_the_device_kind(tmp_path: Path) -> None:
    answer = overview.overview(load(_vendor_trace("mtia_runtime", "mtia_ccp_events"), tmp_path))
    (low,) = [r for r in answer["recommendations"] if r["id"] == "low_gpu_utilization"]
    assert low["title"] == "Low MTIA utilization" and "MTIA 9: 30.0%" in low["text"]
    assert "GPU" not in low["text"]

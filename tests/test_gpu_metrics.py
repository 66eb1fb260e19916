"""GPU utilization, Est. SM efficiency, Est. achieved occupancy and tensor-core share, by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.fixtures.builders_overview import load
from tests.fixtures.trace_builder import V100, TraceBuilder
from torch_tb_profiler.analysis.device import gpu_metrics

# kernels A [0,10) 0.5 blocks/SM 50%, B [5,15) 0.7 blocks/SM 20%, C [20,30) 2.0 blocks/SM 80%, D [32,36) no values
TS = np.array([0.0, 5.0, 20.0, 32.0])
END = np.array([10.0, 15.0, 30.0, 36.0])
BPS = np.array([0.5, 0.7, 2.0, np.nan])
OCC = np.array([50.0, 20.0, 80.0, np.nan])


def test_utilization_is_busy_union_over_the_window() -> None:
    # busy [0,15) + [20,30) + [32,36) = 29 of 40
    assert gpu_metrics.utilization(TS, END, 0, 40) == pytest.approx(29 / 40)
    assert gpu_metrics.utilization(TS, END, 8, 12) == pytest.approx(1.0)


def test_sm_efficiency_sums_concurrent_kernels_capped_at_one() -> None:
    # [0,5): 0.5 -> 2.5; [5,10): min(1.2, 1) -> 5; [10,15): 0.7 -> 3.5; [20,30): min(2, 1) -> 10; D adds 0
    assert gpu_metrics.sm_efficiency(TS, END, BPS, 0, 40) == pytest.approx(21 / 40)
    # clipped to [8, 25): [8,10) 1 -> 2; [10,15) 0.7 -> 3.5; [20,25) 1 -> 5
    assert gpu_metrics.sm_efficiency(TS, END, BPS, 8, 25) == pytest.approx(10.5 / 17)


def test_occupancy_weights_by_kernel_time_inside_the_window() -> None:
    # window [8, 40): A 2 µs x 50, B 7 µs x 20, C 10 µs x 80; D has no value and no weight
    assert gpu_metrics.achieved_occupancy(TS, END, OCC, 8, 40) == pytest.approx((100 + 140 + 800) / 19)
    assert gpu_metrics.achieved_occupancy(TS, END, np.full(4, np.nan), 0, 40) is None


def test_tensor_core_share_is_tc_kernel_time_over_kernel_time() -> None:
    names = pd.Series(["ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_nn", "volta_sgemm_64x64_nn"])
    assert gpu_metrics.tensor_core_share(names, np.array([30.0, 10.0])) == pytest.approx(0.75)


def test_gpu_summary_per_device(tmp_path: Path) -> None:
    a100 = {**V100, "id": 1, "name": "NVIDIA A100-SXM4-80GB", "computeMajor": 8, "numSms": 108}
    b = TraceBuilder(device_properties=[V100, a100])
    b.step(1, 0, 100)
    b.launch("volta_sgemm_64x64_nn", 1, 1, 10, 40, blocks_per_sm=0.5, occupancy=25)  # device 0
    b.launch("sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel",
             2, 1, 20, 20, device=1, blocks_per_sm=4, occupancy=50)  # fmt: skip
    b.launch("elementwise_kernel", 3, 1, 50, 20, device=1, blocks_per_sm=0.25, occupancy=100)
    gpus = {g["id"]: g for g in gpu_metrics.gpu_summary(load(b, tmp_path))}
    assert gpus[0]["name"] == "Tesla V100-SXM2-16GB" and gpus[0]["compute_capability"] == "7.0"
    assert gpus[1]["compute_capability"] == "8.0" and gpus[1]["num_sms"] == 108
    assert gpus[0]["utilization_pct"] == pytest.approx(40.0)
    assert gpus[0]["sm_efficiency_pct"] == pytest.approx(20.0)  # 0.5 x 40 / 100
    assert gpus[0]["achieved_occupancy_pct"] == pytest.approx(25.0)
    assert gpus[0]["tensor_core_pct"] == 0.0
    assert gpus[1]["utilization_pct"] == pytest.approx(40.0)
    assert gpus[1]["sm_efficiency_pct"] == pytest.approx(25.0)  # 1 x 20 + 0.25 x 20 over 100
    assert gpus[1]["achieved_occupancy_pct"] == pytest.approx(75.0)
    assert gpus[1]["tensor_core_pct"] == pytest.approx(50.0)

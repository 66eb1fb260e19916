"""Kineto writes est. achieved occupancy 0 when CUPTI cannot compute it: unknown, never a figure.

Kineto writes whole percents; a kernel with at least one warp per SM is over 1 % (one of at most 64 warp
slots), so its 0 is the placeholder; below one warp per SM a computed value truncates to 0 and stays."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.fixtures.builders_overview import load
from tests.fixtures.trace_builder import V100, TraceBuilder
from torch_tb_profiler.analysis.device import gpu_metrics
from torch_tb_profiler.analysis.ops import kernels
from torch_tb_profiler.analysis.overview import page as overview
from torch_tb_profiler.analysis.overview.recommendations import recommendations
from torch_tb_profiler.analysis.timeline import events, queries
from torch_tb_profiler.analysis.timeline.index import index as timeline_index


def _trace() -> TraceBuilder:
    b = TraceBuilder(device_properties=[V100])
    b.step(1, 0, 1000)
    # 73,728 B of dynamic shared memory: CUPTI gives no occupancy, Kineto writes 0
    b.launch("big_smem_kernel", 2, 2, 10, 600, blocks_per_sm=185, occupancy=0, shared_memory=73728)
    b.launch("elementwise_kernel", 5, 2, 700, 200, blocks_per_sm=8, occupancy=60)
    return b


def test_known_occupancy_maps_the_placeholder_to_nan() -> None:
    occ = np.array([0.0, 12.0, np.nan, 0.0, 0.0])
    warps = np.array([740.0, 8.0, 4.0, 0.2, np.nan])
    out = gpu_metrics.known_occupancy(occ, warps)
    # 740 warps/SM and 0 %: placeholder; 0.2 warps/SM and 0 %: Kineto's "< 1 %"; no warps: unknown
    assert np.isnan(out[0]) and out[1] == 12.0 and np.isnan(out[2]) and out[3] == 0.0 and np.isnan(out[4])


def test_a_tiny_kernels_zero_is_kept(tmp_path: Path) -> None:
    b = TraceBuilder(device_properties=[V100])
    b.step(1, 0, 1000)
    # one 128-thread block on 80 SMs: 0.0125 blocks, 0.05 warps per SM: under 1 %, written 0
    b.launch("tiny_kernel", 2, 2, 10, 100, blocks_per_sm=0.0125, occupancy=0)
    b.launch("elementwise_kernel", 5, 2, 700, 300, blocks_per_sm=8, occupancy=60)
    (gpu,) = gpu_metrics.gpu_summary(load(b, tmp_path))
    assert gpu["achieved_occupancy_pct"] == pytest.approx(60 * 300 / 400)


def test_placeholder_is_left_out_of_the_averages(tmp_path: Path) -> None:
    profile = load(_trace(), tmp_path)
    (gpu,) = gpu_metrics.gpu_summary(profile)
    # only the 200 µs kernel with 60 % carries a value (the 600 µs one would drag it to 15 %)
    assert gpu["achieved_occupancy_pct"] == pytest.approx(60.0)
    table = kernels.kernel_table(profile).set_index("name")
    assert np.isnan(table.loc["big_smem_kernel", "mean_achieved_occupancy_pct"])  # "–" in the UI
    assert table.loc["elementwise_kernel", "mean_achieved_occupancy_pct"] == pytest.approx(60.0)
    (card,) = overview.overview(profile)["gpus"]
    assert card["achieved_occupancy_pct"] == pytest.approx(60.0)


def test_only_placeholders_give_no_figure(tmp_path: Path) -> None:
    b = TraceBuilder(device_properties=[V100])
    b.step(1, 0, 1000)
    b.launch("big_smem_kernel", 2, 2, 10, 600, blocks_per_sm=185, occupancy=0)
    (gpu,) = gpu_metrics.gpu_summary(load(b, tmp_path))
    assert gpu["achieved_occupancy_pct"] is None


def test_no_low_occupancy_advice_from_a_placeholder(tmp_path: Path) -> None:
    # before: "big_smem_kernel (60% of kernel time, occupancy 0%, blocks/SM 185.00)"
    ids = {r["id"] for r in recommendations(load(_trace(), tmp_path))}
    assert "low_occupancy" not in ids


def test_event_details_omit_the_placeholder(tmp_path: Path) -> None:
    profile = load(_trace(), tmp_path)
    idx = timeline_index(profile)
    rows = profile.device.index[profile.device["name"] == "big_smem_kernel"]
    (row,) = rows
    detail = events.details(profile, idx, "dev", int(row), queries.locate(idx, "dev", int(row)))
    assert "est. achieved occupancy %" not in detail["args"]
    assert detail["args"]["blocks per SM"] == 185

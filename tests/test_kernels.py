"""Kernel table: both groupings, duration-weighted means, missing launch statistics."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.builders_overview import load
from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.analysis import kernels

GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"


def _profile(tmp_path: Path):
    b = TraceBuilder()
    b.step(1, 0, 1000)
    mm = b.op("aten::mm", 10, 100)
    b.launch(GEMM, 11, 2, 200, 30, ext_id=mm, grid=(8, 1, 1), blocks_per_sm=0.5, occupancy=20)
    b.launch(GEMM, 14, 2, 240, 10, ext_id=mm, grid=(8, 1, 1), blocks_per_sm=1.5, occupancy=60)
    add = b.op("aten::add", 120, 50)
    b.launch(GEMM, 121, 2, 260, 20, ext_id=add, grid=(16, 1, 1), blocks_per_sm=2.0)  # no occupancy value
    b.launch("elementwise", 122, 2, 290, 5, ext_id=add)  # no launch statistics at all
    c = b.runtime("cudaMemcpyAsync", 130, 2, ext_id=add)
    b.memcpy("Memcpy DtoD (Device -> Device)", 300, 50, c, 1024, ext_id=add)  # not a kernel
    return load(b, tmp_path)


def test_group_by_name(tmp_path: Path) -> None:
    t = kernels.kernel_table(_profile(tmp_path), "name").set_index("name")
    assert list(t.index) == [GEMM, "elementwise"]
    g = t.loc[GEMM]
    assert (g["calls"], g["total_us"], g["mean_us"], g["max_us"], g["min_us"]) == (3, 60, 20, 30, 10)
    assert g["mean_blocks_per_sm"] == pytest.approx((0.5 * 30 + 1.5 * 10 + 2.0 * 20) / 60)
    assert g["mean_achieved_occupancy_pct"] == pytest.approx((20 * 30 + 60 * 10) / 40)  # calls with a value
    assert bool(g["tc_used"])
    e = t.loc["elementwise"]
    assert e["calls"] == 1 and not bool(e["tc_used"])
    assert e["mean_blocks_per_sm"] != e["mean_blocks_per_sm"]  # NaN: no call carries the value


def test_group_by_operator_and_launch_configuration(tmp_path: Path) -> None:
    t = kernels.kernel_table(_profile(tmp_path), "name_op_launch")
    rows = {(r["op_name"], r["grid"]): r for r in t.to_dict(orient="records") if r["name"] == GEMM}
    assert set(rows) == {("aten::mm", "[8, 1, 1]"), ("aten::add", "[16, 1, 1]")}
    assert rows[("aten::mm", "[8, 1, 1]")]["calls"] == 2 and rows[("aten::mm", "[8, 1, 1]")]["total_us"] == 40
    assert rows[("aten::mm", "[8, 1, 1]")]["op_tc_eligible"]
    # aten::add is not on the allowlist, but it launched a tensor-core kernel, so it is eligible
    assert rows[("aten::add", "[16, 1, 1]")]["op_tc_eligible"]
    assert (
        rows[("aten::add", "[16, 1, 1]")]["regs"] == 32
        and rows[("aten::add", "[16, 1, 1]")]["block"] == "[128, 1, 1]"
    )


def test_kernel_of_a_plain_operator_is_not_eligible(tmp_path: Path) -> None:
    b = TraceBuilder()
    add = b.op("aten::add", 0, 10)
    b.launch("elementwise", 1, 1, 20, 5, ext_id=add)
    (row,) = kernels.kernel_table(load(b, tmp_path), "name_op_launch").to_dict(orient="records")
    assert row["op_name"] == "aten::add" and not row["op_tc_eligible"]


def test_tensor_core_share(tmp_path: Path) -> None:
    assert kernels.tensor_core_share(_profile(tmp_path)) == pytest.approx(60 / 65)


def test_bad_group_by(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        kernels.kernel_table(_profile(tmp_path), "grid")

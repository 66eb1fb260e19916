"""Kernel table: both groupings, duration-weighted means, missing launch statistics; the ``/kernels``
route's bounded page (offset/limit, q, order, totals and 400s)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.builders_overview import load
from tests.fixtures.trace_builder import V100, TraceBuilder
from tests.test_operators_routes import get
from torch_tb_profiler.analysis.ops import kernels
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.views import kernels as kernels_view
from torch_tb_profiler.views import operators as operators_view

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


# ---- the /kernels route: a bounded page, search, order, totals (issue 12) ---------------------------

KERNELS = [f"kern_{i:02d}" for i in range(12)]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunStore]:
    root = tmp_path_factory.mktemp("logdir")
    b = TraceBuilder(device_properties=[V100])
    b.step(1, 0, 20_000)
    for i, name in enumerate(KERNELS):  # kern_i: 10 + i µs, launched by aten::op (kern_11 by my::Special)
        op = b.op("my::Special" if i == 11 else "aten::op", 10 + 500 * i, 50)
        b.launch(name, 11 + 500 * i, 2, 100 + 500 * i, 10 + i, ext_id=op)
    b.launch(GEMM, 7000, 2, 7100, 100)  # a tensor-core kernel that nothing launched
    path = b.write(root / "run" / "worker0.pt.trace.json.gz")
    os.utime(path, (time.time() - 60,) * 2)
    s = RunStore(str(root), processes=0, settle_seconds=1)
    s.scan_once()
    assert s.wait_idle(60)
    yield s
    s.close()


def kern(store: RunStore, **params: str) -> dict:
    status, body = get(store, "/kernels", run="run", worker="worker0", **params)
    assert status == 200, body
    return body


def test_route_default_page_is_bounded(store: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(operators_view, "DEFAULT_LIMIT", 5)
    monkeypatch.setattr(kernels_view, "DEFAULT_LIMIT", 5)
    body = kern(store)
    assert body["total_rows"] == 13 and body["matched_rows"] == 13 and body["kernel_count"] == 13
    assert (len(body["rows"]), body["offset"], body["limit"]) == (5, 0, 5)
    assert [r["name"] for r in body["rows"]][:3] == [GEMM, "kern_11", "kern_10"]


def test_route_pages_search_and_order(store: RunStore) -> None:
    pages = [kern(store, limit="5", offset=str(o))["rows"] for o in (0, 5, 10)]
    names = [r["name"] for page in pages for r in page]
    assert len(names) == len(set(names)) == 13
    assert kern(store, offset="100")["rows"] == []
    body = kern(store, q="KERN_0", sort="total_us", order="asc", limit="3")
    assert body["matched_rows"] == 10 and body["total_rows"] == 13
    assert [r["name"] for r in body["rows"]] == ["kern_00", "kern_01", "kern_02"]
    assert kern(store, q="[")["matched_rows"] == 0  # a plain substring, not a regex
    # with the launch grouping, q matches the launching operator too
    body = kern(store, group_by="name_op_launch", q="special")
    assert [(r["name"], r["op_name"]) for r in body["rows"]] == [("kern_11", "my::Special")]


def test_route_top_and_totals_cover_every_kernel(store: RunStore) -> None:
    body = kern(store, limit="1", top="2")
    # 10 + 11 + … + 21 = 186 µs for kern_*, 100 µs for the GEMM
    # kern_* are custom names that do not say whether they use tensor cores: 186 µs unknown
    assert body["totals"] == {
        "total_us": pytest.approx(286.0),
        "tc_us": pytest.approx(100.0),
        "tc_unknown_us": pytest.approx(186.0),
    }
    assert body["top"] == [
        {"name": GEMM, "total_us": 100.0},
        {"name": "kern_11", "total_us": 21.0},
    ]
    assert body["tensor_core_share"] == pytest.approx(100 / 286)
    assert body["tensor_core_unknown_share"] == pytest.approx(186 / 286)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"limit": "0"}, "'limit' must be between 1 and 100000"),
        ({"limit": "100001"}, "'limit' must be between 1 and 100000"),
        ({"offset": "-1"}, "'offset' must be between 0"),
        ({"order": "up"}, "'order' must be one of desc, asc"),
        ({"sort": "name"}, "'sort' must be one of"),
        ({"top": "x"}, "'top' must be an integer"),
    ],
)
def test_route_bad_paging_parameters(store: RunStore, params: dict[str, str], message: str) -> None:
    status, body = get(store, "/kernels", run="run", worker="worker0", **params)
    assert status == 400 and message in str(body)

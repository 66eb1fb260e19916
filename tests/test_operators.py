"""Operator table: host/device self and total, folding, tensor cores, grouping, call stacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.builders_overview import load
from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.analysis.ops import operators

TC_GEMM = "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_nn"


def _trace(style: str = "modern") -> TraceBuilder:
    b = TraceBuilder(style=style)
    b.step(1, 0, 1000)
    lin = b.op(
        "aten::linear",
        100,
        400,
        input_dims=[[4, 8], [16, 8]],
        call_stack="model.py(12): forward;train.py(40): <module>",
    )
    mm = b.op("aten::addmm", 120, 280)  # [120, 400)
    b.launch(TC_GEMM, 130, 10, 600, 100, ext_id=mm)  # cuda_runtime launch
    b.launch(
        "triton_poi_fused_add_0",
        150,
        10,
        700,
        30,
        ext_id=mm,
        runtime_name="cuLaunchKernel",
        driver=style == "modern",
    )
    c = b.runtime("cudaMemsetAsync", 410, 5, ext_id=lin)  # aten::linear's own call
    b.memset(730, 5, c, 64, ext_id=lin)
    div = b.op("aten::div", 520, 80)  # [520, 600) with one child of the same name
    inner = b.op("aten::div", 525, 65)
    b.launch("elementwise_div", 530, 5, 740, 10, ext_id=inner)
    b.op("aten::add", 610, 40, input_dims=[[4], [4]])
    b.op("aten::add", 660, 30, input_dims=[[8], [8]])
    assert div
    return b


@pytest.fixture(params=["modern", "legacy"])
def table(request: pytest.FixtureRequest, tmp_path: Path):
    p = load(_trace(request.param), tmp_path)
    return operators.operator_table(p, "name").set_index("name")


def test_self_and_total_times_by_hand(table) -> None:
    lin, mm = table.loc["aten::linear"], table.loc["aten::addmm"]
    assert lin["host_total_us"] == 400
    assert lin["host_self_us"] == 400 - 280 - 5  # minus the child and its own runtime call
    assert lin["device_self_us"] == 5  # its memset
    assert lin["device_total_us"] == 5 + 100 + 30  # plus the child's kernels
    assert mm["host_self_us"] == 280 - 10 - 10
    assert mm["device_self_us"] == mm["device_total_us"] == 130  # cuda_runtime and cuda_driver launches
    assert mm["tc_self_us"] == 100 and mm["tc_self_ratio"] == pytest.approx(100 / 130)
    assert lin["tc_self_ratio"] == 0 and lin["tc_total_ratio"] == pytest.approx(100 / 135)
    assert bool(lin["tc_eligible"]) and bool(mm["tc_eligible"])


def test_same_name_single_child_is_one_call(table) -> None:
    div = table.loc["aten::div"]
    assert div["calls"] == 1
    assert div["host_total_us"] == 80
    assert div["host_self_us"] == 80 - 5  # the folded child's runtime call; the child itself is not a child
    assert div["device_self_us"] == 10 and not bool(div["tc_eligible"])


def test_rows_exclude_steps_and_sort_by_host_total(table) -> None:
    assert list(table.index) == ["aten::linear", "aten::addmm", "aten::div", "aten::add"]
    assert table.loc["aten::add", "calls"] == 2


def test_group_by_input_shape(tmp_path: Path) -> None:
    t = operators.operator_table(load(_trace(), tmp_path), "name_input_shape")
    adds = t[t["name"] == "aten::add"].set_index("input_shape")
    assert adds.loc["[[4], [4]]", "host_total_us"] == 40 and adds.loc["[[8], [8]]", "host_total_us"] == 30
    assert t[t["name"] == "aten::linear"]["input_shape"].tolist() == ["[[4, 8], [16, 8]]"]


def test_top_n_by_measure(tmp_path: Path) -> None:
    t = operators.operator_table(load(_trace(), tmp_path), "name")
    assert operators.top(t, "device_total_us", 2)["name"].tolist() == ["aten::linear", "aten::addmm"]
    assert operators.top(t, "host_self_us", 1)["name"].tolist() == ["aten::addmm"]
    with pytest.raises(ValueError):
        operators.top(t, "nope", 1)


def test_legacy_call_stack_frames(tmp_path: Path) -> None:
    p = load(_trace("legacy"), tmp_path)
    (entry,) = operators.operator_stacks(p, "aten::linear")
    assert entry["frames"] == [
        {"file": "model.py", "line": 12, "function": "forward"},
        {"file": "train.py", "line": 40, "function": "<module>"},
    ]
    assert entry["calls"] == 1 and entry["device_total_us"] == 135
    assert operators.operator_table(p, "name").set_index("name").loc["aten::linear", "has_call_stack"]
    assert operators.operator_stacks(p, "no::such_op") == []


def test_python_function_frames_enclosing_an_op(tmp_path: Path) -> None:
    b = _trace()
    b.python_function("train.py(40): <module>", 50, 850, py_id=1, parent_id=None)
    b.python_function("x.py(1): f", 60, 20, py_id=4, parent_id=1)  # ended before the ops
    b.python_function("model.py(12): forward", 90, 460, py_id=2, parent_id=1)  # [90, 550)
    b.python_function("<built-in method addmm of type object at 0x7f>", 115, 290, py_id=3, parent_id=2)
    p = load(b, tmp_path)
    (mm,) = operators.operator_stacks(p, "aten::addmm")
    assert mm["frames"] == [
        {"file": None, "line": None, "function": "<built-in method addmm of type object at 0x7f>"},
        {"file": "model.py", "line": 12, "function": "forward"},
        {"file": "train.py", "line": 40, "function": "<module>"},
    ]
    (div,) = operators.operator_stacks(p, "aten::div")  # [520, 600) only fits in <module>
    assert div["frames"] == [{"file": "train.py", "line": 40, "function": "<module>"}]
    t = operators.operator_table(p, "name").set_index("name")
    assert t["has_call_stack"].all()


def test_frame_parsing() -> None:
    assert operators.parse_frame("/a/b (1)/c.py(7): <lambda>") == {
        "file": "/a/b (1)/c.py",
        "line": 7,
        "function": "<lambda>",
    }
    assert operators.parse_frame("nn.Module: Linear_0") == {
        "file": None,
        "line": None,
        "function": "nn.Module: Linear_0",
    }
    assert len(operators.parse_call_stack("a.py(1): f;b.py(2): g;")) == 2

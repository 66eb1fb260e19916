"""Convolutions without Concrete Inputs (PyTorch 1.x to 2.3): the forward's output shape from its
backward (linked by the autograd Sequence number), 1.x backward children's shapes from their parent
(analysis/roofline/conv_links.py; docs/metrics.md, "Roofline"). Figures computed by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.fixtures.paths import shared_trace
from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.analysis.roofline import attribution as A
from torch_tb_profiler.analysis.roofline import figures as F
from torch_tb_profiler.ingest.parse import load_profile

X, WT, OUT = [2, 3, 32, 32], [8, 3, 3, 3], [2, 8, 32, 32]  # 3×3, stride 1, padding 1
FWD_TYPES = ["float", "float", "GenericList", "GenericList", "GenericList", "Int", "Bool", "Bool", "Bool"]
# 2·N·C_out·Π(out)·C_in·Π(kernel)
CONV_FLOPS = 2 * 2 * 8 * 32 * 32 * 3 * 3 * 3  # 884,736
FWD_BYTES = (2 * 3 * 32 * 32 + 8 * 3 * 3 * 3) * 4 + 2 * 8 * 32 * 32 * 4  # input + weight + output: 90,976


def legacy_conv_trace(path: Path, backward_input_shape: list[int] = X, with_backward: bool = True) -> Path:
    """A 1.9-style training step: conv2d → … → cudnn_convolution (Sequence number 7), and on the
    autograd thread CudnnConvolutionBackward (7) → cudnn_convolution_backward → its two children."""
    b = TraceBuilder(device_properties=[{"id": 0, "name": "Tesla V100-SXM2-16GB", "numSms": 80}])
    b.step(1, 0, 1000)
    seq = {"Sequence number": 7, "Fwd thread id": 0}
    dims = [X, WT] + [[]] * 7
    b.op("aten::conv2d", 10, 200, input_dims=[X, WT, [], [], [], [], []], input_types=FWD_TYPES[:7], args=seq)
    b.op("aten::convolution", 12, 190, input_dims=dims, input_types=FWD_TYPES, args=seq)
    ext = b.op("aten::cudnn_convolution", 14, 180, input_dims=dims, input_types=FWD_TYPES, args=seq)
    b.launch("implicit_convolve_sgemm", 20, 5, 30, 40.0, ext_id=ext)
    if with_backward:
        b.op("CudnnConvolutionBackward", 400, 400, tid=2, input_dims=[OUT], input_types=["float"], args=seq)
        b.op(
            "aten::cudnn_convolution_backward", 405, 390, tid=2,
            input_dims=[backward_input_shape, OUT, WT] + [[]] * 8, input_types=["float"] * 3 + [""] * 8,
        )  # fmt: skip
        grad_types = ["GenericList", "float", "float"] + ["GenericList"] * 3 + ["Int", "Bool", "Bool", "Bool"]
        ext_in = b.op(
            "aten::cudnn_convolution_backward_input", 410, 150, tid=2,
            input_dims=[[], OUT, WT] + [[]] * 7, input_types=grad_types,
        )  # fmt: skip
        b.launch("dgrad_kernel", 420, 5, 430, 50.0, ext_id=ext_in, tid=2)
        ext_w = b.op(
            "aten::cudnn_convolution_backward_weight", 600, 150, tid=2,
            input_dims=[[], OUT, backward_input_shape] + [[]] * 7, input_types=grad_types,
        )  # fmt: skip
        b.launch("wgrad_kernel", 610, 5, 620, 60.0, ext_id=ext_w, tid=2)
    return b.write(path)


def _row(profile, name: str):
    work = A.op_work(profile)
    at = np.flatnonzero(profile.ops["name"].to_numpy() == name)
    assert at.size == 1
    return work.iloc[at[0]]


def test_forward_output_shape_comes_from_its_backward(tmp_path: Path) -> None:
    p = load_profile(str(legacy_conv_trace(tmp_path / "t.pt.trace.json")))
    for name in ("aten::conv2d", "aten::convolution", "aten::cudnn_convolution"):
        row = _row(p, name)
        assert row["flops"] == CONV_FLOPS and row["bytes"] == FWD_BYTES and row["flops_source"] == "model"
        assert row["dtype"] == "fp32" and row["reason"] == ""
    # the leaf holds the forward's work once
    held = p.ops["name"].to_numpy()[A.holders(p)["op"].to_numpy()]
    assert sorted(held) == [
        "aten::cudnn_convolution",
        "aten::cudnn_convolution_backward_input",
        "aten::cudnn_convolution_backward_weight",
    ]


def test_backward_children_take_their_parents_shapes(tmp_path: Path) -> None:
    p = load_profile(str(legacy_conv_trace(tmp_path / "t.pt.trace.json")))
    grad_in = _row(p, "aten::cudnn_convolution_backward_input")
    # reads grad_output and weight, writes a gradient shaped like the forward input
    assert grad_in["flops"] == CONV_FLOPS
    assert grad_in["bytes"] == (2 * 8 * 32 * 32 + 8 * 3 * 3 * 3) * 4 + 2 * 3 * 32 * 32 * 4 == 90_976
    grad_w = _row(p, "aten::cudnn_convolution_backward_weight")
    # the weight shape is the parent's: FLOPs of one forward; reads grad_output and input, writes dW
    assert grad_w["flops"] == CONV_FLOPS and grad_w["dtype"] == "fp32"
    assert grad_w["bytes"] == (2 * 8 * 32 * 32 + 2 * 3 * 32 * 32) * 4 + 8 * 3 * 3 * 3 * 4 == 90_976
    rows = F.op_rows(p)
    assert rows["flops"].notna().all() and set(rows["name"]) == {
        "aten::cudnn_convolution",
        "aten::cudnn_convolution_backward_input",
        "aten::cudnn_convolution_backward_weight",
    }


def test_no_backward_or_other_shapes_leave_the_forward_unknown(tmp_path: Path) -> None:
    p = load_profile(str(legacy_conv_trace(tmp_path / "a.pt.trace.json", with_backward=False)))
    row = _row(p, "aten::cudnn_convolution")
    assert np.isnan(row["flops"]) and "stride/padding/dilation" in row["reason"]
    # a backward whose input is not the forward's (another call with this sequence number): no link
    p = load_profile(
        str(legacy_conv_trace(tmp_path / "b.pt.trace.json", backward_input_shape=[2, 3, 64, 64]))
    )
    assert np.isnan(_row(p, "aten::cudnn_convolution")["flops"])


def test_kineto_v100_sample_conv_and_gemm_rows() -> None:
    path = shared_trace("kineto_samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz")
    p = load_profile(str(path))
    rows = F.op_rows(p)
    conv = rows[rows["name"].str.contains("convolution")]
    # every convolution row of the ResNet-50 step has figures, forward and both backwards
    assert len(conv) > 0 and conv["flops"].notna().all() and conv["pct_of_roofline"].notna().all()
    # the stem: 7×7/2 over 32×3×224×224 → 32×64×112×112 (from its backward's grad_output)
    stem = conv[
        (conv["name"] == "aten::cudnn_convolution") & conv["input_dims"].str.startswith("[[32, 3, 224")
    ]
    assert stem["flops"].iloc[0] / stem["calls"].iloc[0] == pytest.approx(2 * 32 * 64 * 112 * 112 * 3 * 49)
    fc = rows[rows["name"] == "aten::addmm"]
    assert fc["flops"].iloc[0] / fc["calls"].iloc[0] == 2 * 32 * 1000 * 2048 + 32 * 1000
    assert F.device(p)["matched_peak_name"] == "V100 SXM2"

"""Work models (analysis/roofline/work.py): FLOPs and bytes per modelled family, computed by hand
(docs/metrics.md, "Roofline")."""

from __future__ import annotations

import json

import pytest

from torch_tb_profiler.analysis.roofline import work as W

BF16, F32, F16 = "c10::BFloat16", "float", "c10::Half"


def work(name: str, dims: list, types: list[str], concrete: list[str] | None = None) -> W.Work:
    args = W.parse(json.dumps(dims), json.dumps(types), json.dumps(concrete) if concrete is not None else "")
    return W.model(name, args)


def test_mm_flops_and_bytes() -> None:
    w = work("aten::mm", [[32, 4096], [4096, 4096]], [BF16, BF16])
    assert w.flops == 2 * 32 * 4096 * 4096 == 1_073_741_824
    # A + B + the 32×4096 output, 2 bytes each
    assert w.bytes == (32 * 4096 + 4096 * 4096 + 32 * 4096) * 2 == 34_078_720
    assert w.dtype == "bf16"


def test_transposed_operands_use_their_logical_shapes() -> None:
    # B = W.t(): Input Dims holds the logical [K, N] whatever the strides, so the model is the same
    w = work("aten::mm", [[64, 128], [128, 32]], [F32, F32])
    assert w.flops == 2 * 64 * 32 * 128 == 524_288
    assert w.bytes == (64 * 128 + 128 * 32 + 64 * 32) * 4 == 57_344


def test_addmm_counts_the_bias_add() -> None:
    w = work("aten::addmm", [[512], [141, 512], [512, 512], [], []], [F32, F32, F32, "Scalar", "Scalar"])
    assert w.flops == 2 * 141 * 512 * 512 + 141 * 512 == 73_996_800
    assert w.bytes == (512 + 141 * 512 + 512 * 512 + 141 * 512) * 4 == 1_628_160


def test_bmm_and_baddbmm_batch() -> None:
    w = work("aten::bmm", [[8, 64, 32], [8, 32, 16]], [F16, F16])
    assert w.flops == 2 * 8 * 64 * 16 * 32 == 524_288
    assert w.bytes == (8 * 64 * 32 + 8 * 32 * 16 + 8 * 64 * 16) * 2 == 57_344
    w = work(
        "aten::baddbmm", [[8, 64, 16], [8, 64, 32], [8, 32, 16], [], []], [F16, F16, F16, "Scalar", "Scalar"]
    )
    assert w.flops == 524_288 + 8 * 64 * 16 == 532_480
    assert w.bytes == 57_344 + 8 * 64 * 16 * 2 == 73_728


def test_linear_with_and_without_bias() -> None:
    w = work("aten::linear", [[2, 10, 64], [32, 64], [32]], [F32, F32, F32])
    assert w.flops == 2 * 20 * 32 * 64 + 20 * 32 == 82_560
    assert w.bytes == (2 * 10 * 64 + 32 * 64 + 32 + 20 * 32) * 4 == 16_000
    w = work("aten::linear", [[2, 10, 64], [32, 64], []], [F32, F32, ""])
    assert w.flops == 81_920


def test_matmul_broadcasts_and_takes_vectors() -> None:
    w = work("aten::matmul", [[4, 1, 8, 16], [3, 16, 5]], [F32, F32])
    assert w.flops == 2 * (4 * 3) * 8 * 5 * 16 == 15_360
    assert w.bytes == (4 * 8 * 16 + 3 * 16 * 5 + 12 * 8 * 5) * 4 == 4_928
    assert work("aten::matmul", [[16], [16, 5]], [F32, F32]).flops == 2 * 1 * 5 * 16


def test_scaled_mm_output_dtype_from_concrete_inputs() -> None:
    dims = [[32, 64], [64, 16], [], [], [], [], [], []]
    types = ["c10::Float8_e4m3fn", "c10::Float8_e4m3fn", F32, F32, "", "", "Scalar", "Scalar"]
    w = work("aten::_scaled_mm", dims, types, ["", "", "", "", "", "", "15", "False"])
    assert w.flops == 2 * 32 * 16 * 64 == 65_536 and w.dtype == "fp8"
    # A, B (1 byte), two 0-dim fp32 scales, a bf16 (code 15) 32×16 output
    assert w.bytes == 32 * 64 + 64 * 16 + 4 + 4 + 32 * 16 * 2 == 4_104
    unknown = work("aten::_scaled_mm", dims, types)
    assert unknown.flops == 65_536 and unknown.bytes is None and "output dtype" in unknown.reason


CONV_TYPES = [F32, F32, F32, "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"]


def test_convolution_forward_from_concrete_inputs() -> None:
    dims = [[2, 3, 32, 32], [8, 3, 3, 3], [8], [], [], [], [], [], []]
    concrete = ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1"]
    w = work("aten::convolution", dims, CONV_TYPES, concrete)
    # out 32×32 (pad 1, 3×3): 2·N·C_out·H·W·C_in·k² + bias N·C_out·H·W
    assert w.flops == 2 * 2 * 8 * 1024 * 3 * 9 + 2 * 8 * 1024 == 901_120
    assert w.bytes == (2 * 3 * 1024 + 8 * 27 + 8 + 2 * 8 * 1024) * 4 == 91_008
    strided = ["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1"]
    assert work("aten::convolution", dims, CONV_TYPES, strided).flops == 2 * 2 * 8 * 256 * 27 + 2 * 8 * 256
    grouped = work(
        "aten::convolution",
        [[2, 4, 32, 32], [8, 2, 3, 3], [], [], [], [], [], [], []],
        [F32, F32, "", *CONV_TYPES[3:]],
        ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "2"],
    )
    assert grouped.flops == 2 * 2 * 8 * 1024 * 2 * 9 == 589_824
    no_args = work("aten::convolution", dims, CONV_TYPES)
    assert no_args.flops is None and "Concrete Inputs" in no_args.reason
    # transposed=True with an (8, 3, 3, 3) weight: C_in 8 ≠ the input's 3 channels
    transposed = ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "True", "[0, 0]", "1"]
    bad = work("aten::convolution", dims, CONV_TYPES, transposed)
    assert bad.flops is None and "inconsistent" in bad.reason


def test_transposed_convolutions() -> None:
    # input (2, 8, 16, 16), weight (C_in 8, C_out/groups 3, 4, 4), stride 2, padding 1, bias (3)
    dims = [[2, 8, 16, 16], [8, 3, 4, 4], [3], [], [], [], [], [], []]
    concrete = ["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "True", "[0, 0]", "1"]
    w = work("aten::convolution", dims, CONV_TYPES, concrete)
    # each input element meets C_out·k² weights: 2·N·C_in·H·W·3·16; out (16−1)·2 − 2 + 3 + 1 = 32,
    # so the bias adds N·C_out·32² = 6144
    assert w.flops == 2 * (2 * 8 * 256) * 3 * 16 + 6144 == 399_360
    assert w.bytes == (4096 + 384 + 3 + 6144) * 4 == 42_508
    # conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups, dilation)
    types = [F32, F32, F32, "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList"]
    named = work(
        "aten::conv_transpose2d", dims[:8], types, ["", "", "", "[2, 2]", "[1, 1]", "[0, 0]", "1", "[1]"]
    )
    assert (named.flops, named.bytes) == (399_360, 42_508)
    # 2 groups: weight (4, 2, 3, 3), so C_out = 4; out 8×8; no bias
    grouped = work(
        "aten::conv_transpose2d",
        [[1, 4, 8, 8], [4, 2, 3, 3], [], [], [], [], [], []],
        [F32, F32, "", *types[3:]],
        ["", "", "", "[1, 1]", "[1, 1]", "[0, 0]", "2", "[1, 1]"],
    )
    assert grouped.flops == 2 * (4 * 64) * 2 * 9 == 9216
    assert grouped.bytes == (256 + 72 + 4 * 64) * 4 == 2336
    # without Concrete Inputs the FLOPs are known (no output size needed), the bytes are not
    bare = work("aten::conv_transpose2d", dims[:8], types)
    assert bare.flops == 399_360 - 6144 and bare.bytes is None and "Concrete Inputs" in bare.reason
    # its backward: grad input and grad weight cost the same MACs each, grad bias N·C_out·Π(out)
    back_dims = [[2, 3, 32, 32], [2, 8, 16, 16], [8, 3, 4, 4], [], [], [], [], [], [], [], []]
    back_types = [F32, F32, F32, *["ScalarList"] * 4, "Scalar", "ScalarList", "Scalar", "ScalarList"]
    back = ["", "", "", "[3]", "[2, 2]", "[1, 1]", "[1, 1]", "True", "[0, 0]", "1", "[True, True, True]"]
    assert work("aten::convolution_backward", back_dims, back_types, back).flops == 2 * 393_216 + 6144


def test_convolution_backwards() -> None:
    w = work(
        "aten::cudnn_convolution_backward_input",
        [[], [2, 8, 32, 32], [8, 3, 3, 3], [], [], [], []],
        ["ScalarList", F32, F32, "ScalarList", "ScalarList", "ScalarList", "Scalar"],
        ["[2, 3, 32, 32]", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "1"],
    )
    assert w.flops == 2 * 2 * 8 * 1024 * 3 * 9 == 884_736
    assert w.bytes == (2 * 8 * 1024 + 8 * 27) * 4 + 2 * 3 * 1024 * 4 == 90_976
    dims = [[2, 8, 32, 32], [2, 3, 32, 32], [8, 3, 3, 3], [], [], [], [], [], [], [], []]
    types = [F32, F32, F32, *["ScalarList"] * 4, "Scalar", "ScalarList", "Scalar", "ScalarList"]
    concrete = ["", "", "", "[8]", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1", "[True, True, True]"]
    w = work("aten::convolution_backward", dims, types, concrete)
    assert w.flops == 2 * 884_736 + 2 * 8 * 1024 == 1_785_856
    concrete[-1] = "[False, True, False]"  # the first layer: no grad input
    assert work("aten::convolution_backward", dims, types, concrete).flops == 884_736


def test_attention_forward_and_causal() -> None:
    dims = [[1, 8, 141, 64]] * 3 + [[], [], [], [], []]
    types = [BF16] * 3 + ["", "Scalar", "Scalar", "", "Scalar"]
    w = work("aten::scaled_dot_product_attention", dims, types, ["", "", "", "", "0.", "False", "", "False"])
    # 4·B·H·Sq·Sk·D (Q·Kᵀ and P·V)
    assert w.flops == 4 * 1 * 8 * 141 * 141 * 64 == 40_716_288
    assert w.bytes == 4 * (8 * 141 * 64 * 2) == 577_536
    causal = work(
        "aten::scaled_dot_product_attention", dims, types, ["", "", "", "", "0.", "True", "", "False"]
    )
    assert causal.flops == 40_716_288 / 2
    flash = work(
        "aten::_scaled_dot_product_flash_attention",
        [[2, 4, 128, 64]] * 3 + [[]] * 4,
        [F16] * 3 + ["Scalar"] * 4,
        ["", "", "", "0.", "True", "False", ""],
    )
    assert flash.flops == 4 * 2 * 4 * 128 * 128 * 64 / 2
    gqa = work(  # fewer k/v heads: the FLOPs follow the query heads
        "aten::_scaled_dot_product_flash_attention",
        [[1, 8, 16, 64], [1, 2, 32, 64], [1, 2, 32, 64]] + [[]] * 4,
        [BF16] * 3 + ["Scalar"] * 4,
        ["", "", "", "0.", "False", "False", ""],
    )
    assert gqa.flops == 4 * 8 * 16 * 32 * 64


def test_attention_backward_is_two_and_a_half_forwards() -> None:
    q = [2, 4, 128, 64]
    dims = [q, q, q, q, q, [2, 4, 128], [], [], [], [], [], [], [], [], []]
    types = [F16] * 5 + [F32] + ["", "", "Scalar", "Scalar", "Scalar", "Scalar", "", "", "Scalar"]
    concrete = [""] * 11 + ["True"] + [""] * 3
    w = work("aten::_scaled_dot_product_flash_attention_backward", dims, types, concrete)
    # forward 4·B·H·S²·D / 2 (causal) = 16,777,216; × 2.5
    assert w.flops == 2.5 * 4 * 2 * 4 * 128 * 128 * 64 / 2 == 41_943_040
    elems = 2 * 4 * 128 * 64
    # grad_out, q, k, v, out (fp16) + logsumexp (fp32) read; dq, dk, dv written
    assert w.bytes == 5 * elems * 2 + 2 * 4 * 128 * 4 + 3 * elems * 2


def test_bytes_only_families() -> None:
    add = work("aten::add", [[32, 4096], [32, 4096], []], [BF16, BF16, "Scalar"])
    assert add.flops is None and add.bytes == 3 * 32 * 4096 * 2 == 786_432
    inplace = work("aten::add_", [[32, 4096], [4096], []], [BF16, BF16, "Scalar"])
    assert inplace.bytes == (32 * 4096 + 4096) * 2 + 32 * 4096 * 2 == 532_480
    norm = work(
        "aten::layer_norm",
        [[32, 768], [], [768], [768], [], []],
        [F32, "ScalarList", F32, F32, "Scalar", "Scalar"],
    )
    assert norm.bytes == (32 * 768 + 768 + 768) * 4 + 32 * 768 * 4 == 202_752
    copy = work("aten::copy_", [[32, 1024], [32, 1024], []], [BF16, F32, "Scalar"])
    assert copy.bytes == 32 * 1024 * 2 + 32 * 1024 * 4
    assert work("aten::softmax", [[4, 10], [], []], [F32, "Scalar", ""]).bytes == 2 * 40 * 4
    assert work("aten::sum", [[4, 10], [], [], []], [F32, "ScalarList", "Scalar", ""]).bytes == 160


@pytest.mark.parametrize(
    ("name", "dims", "types", "why"),
    [
        ("aten::mm", None, None, "record_shapes"),
        ("aten::mm", [[], []], ["", ""], "shapes not in the trace"),
        ("my::custom_gemm", [[32, 32], [32, 32]], [F32, F32], "no work model"),
    ],
)
def test_unknown_work_is_null_with_a_reason(name: str, dims, types, why: str) -> None:
    args = W.parse(json.dumps(dims) if dims is not None else "", json.dumps(types) if types else "", "")
    w = W.model(name, args)
    assert w.flops is None and w.bytes is None and why in w.reason


I8 = "signed char"


def test_int8_gemms() -> None:
    # _int_mm: int8 × int8 → int32 output (4 bytes an element)
    w = work("aten::_int_mm", [[64, 256], [256, 128]], [I8, I8])
    assert w.flops == 2 * 64 * 128 * 256 == 4_194_304
    assert w.bytes == 64 * 256 + 256 * 128 + 64 * 128 * 4 == 81_920 and w.dtype == "int8"
    # weight-only int8: x [M, K] bf16 @ w [N, K]ᵀ, scales [N] are no bias; the output is bf16
    w = work("aten::_weight_int8pack_mm", [[16, 512], [1024, 512], [1024]], [BF16, I8, BF16])
    assert w.flops == 2 * 16 * 1024 * 512 == 16_777_216
    assert w.bytes == 16 * 512 * 2 + 1024 * 512 + 1024 * 2 + 16 * 1024 * 2 == 575_488
    assert w.dtype == "bf16"


def test_grouped_gemms_per_layout() -> None:
    types = [BF16, BF16, "int", "", ""]
    # 2-D × 3-D (MoE: tokens sorted by expert): A [ΣM=96, 64], B [4 experts, 64, 32]
    w = work("aten::_grouped_mm", [[96, 64], [4, 64, 32], [4], [], []], types, ["", "", "", "", ""])
    assert w.flops == 2 * 96 * 64 * 32 == 393_216
    assert w.bytes == (96 * 64 + 4 * 64 * 32) * 2 + 4 * 4 + 96 * 32 * 2 == 34_832
    # 3-D × 3-D: batched
    w = work("aten::_grouped_mm", [[4, 8, 64], [4, 64, 32], [], [], []], types, ["", "", "", "", ""])
    assert w.flops == 2 * 4 * 8 * 64 * 32 == 131_072
    # 3-D × 2-D: the N side is ragged, [K, ΣN]
    w = work("aten::_grouped_mm", [[4, 8, 64], [64, 40], [4], [], []], types, ["", "", "", "", ""])
    assert w.flops == 2 * 8 * 64 * 40 == 40_960
    # 2-D × 2-D: the K side is ragged, the output [G, M, N]
    w = work("aten::_grouped_mm", [[8, 96], [96, 32], [3], [], []], types, ["", "", "", "", ""])
    assert w.flops == 2 * 8 * 96 * 32 == 49_152
    assert w.bytes == (8 * 96 + 96 * 32) * 2 + 3 * 4 + 3 * 8 * 32 * 2 == 9_228
    # out_dtype float (ScalarType 6): a 4-byte output
    w = work("aten::_grouped_mm", [[96, 64], [4, 64, 32], [4], [], []], types, ["", "", "", "", "6"])
    assert w.bytes == (96 * 64 + 4 * 64 * 32) * 2 + 4 * 4 + 96 * 32 * 4
    # disagreeing K: no figure, a reason
    w = work("aten::_grouped_mm", [[96, 64], [4, 32, 32], [4], [], []], types, ["", "", "", "", ""])
    assert w.flops is None and w.reason == "operand shapes do not agree"


def test_scaled_grouped_mm_writes_bf16_by_default() -> None:
    fp8 = "c10::Float8_e4m3fn"
    dims = [[96, 64], [4, 64, 32], [96], [4, 32], [4], [], [], [], []]
    types = [fp8, fp8, "float", "float", "int", "", "", "", "Scalar"]
    w = work("aten::_scaled_grouped_mm", dims, types, [""] * 8 + ["False"])
    assert w.flops == 2 * 96 * 64 * 32 and w.dtype == "fp8"
    assert w.bytes == 96 * 64 + 4 * 64 * 32 + 96 * 4 + 4 * 32 * 4 + 4 * 4 + 96 * 32 * 2 == 21_392


def _varlen(tq: int, tk: int, batch: int, max_q: int, max_k: int, causal: bool) -> W.Work:
    """_flash_attention_forward on packed q [tq, 8, 64], k/v [tk, 2, 64] (GQA), batch + 1 offsets."""
    dims = [[tq, 8, 64], [tk, 2, 64], [tk, 2, 64], [batch + 1], [batch + 1]] + [[]] * 10
    types = [BF16, BF16, BF16, "int", "int"] + ["Scalar"] * 6 + [""] * 4
    concrete = ["", "", "", "", "", str(max_q), str(max_k), "0.", str(causal), "False", "0.125"] + [""] * 4
    return work("aten::_flash_attention_forward", dims, types, concrete)


def test_varlen_attention_is_exact_only_when_one_side_is_uniform() -> None:
    moved = lambda tq, tk, b: (tq * 8 * 64 + 2 * tk * 2 * 64 + tq * 8 * 64) * 2 + 2 * (b + 1) * 4  # noqa: E731
    # prefill of 3 sequences of 100 tokens each (ΣSq = 3·100): Σ Sq_b·Sk_b = 100·ΣSk
    w = _varlen(300, 300, 3, 100, 100, False)
    assert w.flops == 2 * 8 * (64 + 64) * 100 * 300 == 61_440_000 and w.bytes == moved(300, 300, 3)
    # causal with every length equal: half of the pairs, as the padded formula
    w = _varlen(300, 300, 3, 100, 100, True)
    assert w.flops == 2 * 8 * 128 * 0.5 * 3 * 100 * 100 == 30_720_000
    # decode: one query each (ΣSq = B·1) against contexts of different lengths (ΣSk = 1000)
    w = _varlen(4, 1000, 4, 1, 400, False)
    assert w.flops == 2 * 8 * 128 * 1 * 1000 == 2_048_000
    # keys uniform, queries not: Σ Sq_b·Sk_b = max_k·ΣSq
    w = _varlen(250, 400, 4, 100, 100, False)
    assert w.flops == 2 * 8 * 128 * 100 * 250
    # both sides vary: the sum of products is a tensor value; bytes are still known
    w = _varlen(250, 1000, 4, 100, 400, False)
    assert w.flops is None and "variable sequence lengths" in (w.reason or "")
    assert w.bytes == moved(250, 1000, 4)
    # causal with varying lengths: unknown
    assert _varlen(250, 250, 4, 100, 100, True).flops is None


def test_varlen_attention_backward() -> None:
    dims = [[300, 8, 64], [300, 8, 64], [300, 2, 64], [300, 2, 64], [300, 8, 64], [8, 300], [4], [4]]
    dims += [[]] * 9
    types = [BF16] * 5 + ["float", "int", "int"] + ["Scalar"] * 4 + [""] * 5
    concrete = [""] * 8 + ["100", "100", "0.", "False"] + [""] * 5
    w = work("aten::_flash_attention_backward", dims, types, concrete)
    assert w.flops == 2.5 * (2 * 8 * 128 * 100 * 300)


def test_library_gemm_and_unknowable_inference_ops() -> None:
    # vLLM's ROCm GEMM is F.linear(x, weight, bias)
    w = work("vllm::rocm_unquantized_gemm", [[46, 2880], [201088, 2880], []], [BF16, BF16, ""])
    assert w.flops == 2 * 46 * 201088 * 2880 and W.flop_modelled("vllm::rocm_unquantized_gemm")
    w = work(
        "vllm::unified_attention_with_output",
        [[888, 8, 64], [888, 1, 64], [888, 1, 64], [888, 8, 64]],
        [BF16] * 4,
    )
    assert w.flops is None and "paged KV cache" in (w.reason or "")
    w = work("vllm::moe_forward", [[888, 3072], [888, 128], []], [BF16, BF16, ""])
    assert w.flops is None and "routing" in (w.reason or "")


def test_efficient_attention_ops_and_their_mask_type() -> None:
    # _efficient_attention_forward(q, k, v, bias, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
    # max_seqlen_k, dropout_p, custom_mask_type, …): q[B, Sq, H, D]
    q, kv = [2, 128, 8, 64], [2, 256, 8, 64]
    dims = [q, kv, kv, [], [], [], [], [], [], [], [], [], [], []]
    types = [BF16] * 3 + ["", "", "", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "", "", ""]

    def forward(mask_type: str, d: list = dims, t: list = types) -> W.Work:
        concrete = ["", "", "", "", "", "", "", "", "0.", mask_type, "False", "", "", ""]
        return work("aten::_efficient_attention_forward", d, t, concrete)

    # 2·B·H·Sq·Sk·(D + Dv)
    none = forward("0")
    assert none.flops == 2 * 2 * 8 * 128 * 256 * 128 == 134_217_728
    assert none.bytes == (131_072 + 262_144 * 2 + 2 * 8 * 128 * 64) * 2 == 1_572_864  # q, k, v, out
    assert forward("1").flops == forward("2").flops == 67_108_864  # either causal mask halves it
    assert forward("").flops is None  # the mask type is not in the trace
    packed_dims = [[1, 384, 8, 64], [1, 512, 8, 64], [1, 512, 8, 64], [], [3], [3], *dims[6:]]
    packed = forward("0", packed_dims, [*types[:4], "int", "int", *types[6:]])
    assert packed.flops is None and "variable sequence lengths" in packed.reason
    # _efficient_attention_backward(grad_out, q, k, v, bias, out, cu_seqlens_q, cu_seqlens_k,
    # max_seqlen_q, max_seqlen_k, logsumexp, dropout_p, philox_seed, philox_offset, custom_mask_type, …)
    back_dims = [q, q, kv, kv, [], q, [], [], [], [], [2, 8, 128], [], [], [], [], [], [], [], [], []]
    back_types = [BF16] * 4 + ["", BF16, "", "", "Scalar", "Scalar", "float", *["Scalar"] * 9]
    back_concrete = [""] * 11 + ["0.", "", "", "0", "False", "", "", "", "False"]
    back = work("aten::_efficient_attention_backward", back_dims, back_types, back_concrete)
    assert back.flops == 2.5 * 134_217_728

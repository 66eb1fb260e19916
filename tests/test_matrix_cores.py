"""Matrix units per vendor: the AMD (Matrix Cores) and NVIDIA (Tensor Cores) naming rules, the
three classes (used / not used / name does not say) and the lower-bound share with its unknown part."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.fixtures.builders_overview import load
from tests.fixtures.paths import SHARED_TRACES, shared_trace
from tests.fixtures.trace_builder import V100, TraceBuilder
from torch_tb_profiler.analysis.core.accelerator import accelerator
from torch_tb_profiler.analysis.device import gpu_metrics
from torch_tb_profiler.analysis.device.tensor_cores import (
    NOT_USED,
    UNKNOWN,
    USES,
    kernel_matrix_class,
)
from torch_tb_profiler.analysis.ops import kernels
from torch_tb_profiler.ingest.parse import load_profile

MI210 = {**V100, "name": "AMD Instinct MI210", "computeMajor": 9, "computeMinor": 0, "warpSize": 64}

# Every kernel-name family of the ROCm traces in ../shared/traces and its class on ROCm.
ROCM_FAMILIES: list[tuple[str, int]] = [
    (r"^Cijk_.*_MI\d+x\d+x\d+_", USES),  # Tensile GEMMs with an MFMA instruction (all traces)
    (r"^igemm_(?:fwd|bwd|wrw)_gtcx2_", USES),  # MIOpen XDLOPS implicit GEMMs (mi210_gpu_only)
    (r"paged_attention_ll4mi_QKV_mfma16_kernel", USES),  # sglang_decode
    (r"^SubTensorOpWith", NOT_USED),  # MIOpen elementwise (mi210_gpu_only)
    (r"^batched_transpose_", NOT_USED),  # MIOpen transposes (mi210_gpu_only)
    (r"^MIOpenBatchNorm", NOT_USED),  # mi300_normalization
    (r"^void at::native::", NOT_USED),  # ATen's own kernels (every trace)
    (r"^void rocprim::", NOT_USED),  # sglang_decode
    (r"^triton_(?:poi|red)_", UNKNOWN),  # Inductor (mi300_compile_triton, vllm)
    (r"^attn_fwd$|^kernel_unified_attention_2d$|^create_flashinfer_kv_indices_triton$", UNKNOWN),  # Triton
    (
        r"^_(?:matmul_ogs|finalize_matmul|combined_routing|sum_bitmatrix|topk_forward)",
        UNKNOWN,
    ),  # vLLM Triton MoE
    (r"^_ZN5aiter|^_ZN7ck_tile|^_ZN7sgl_hip", UNKNOWN),  # aiter, CK-tile rmsnorm, sgl-kernel (custom)
    (r"^void (?:vllm::)?(?:rotary_embedding|reshape_and_cache|paged_attention_ll4mi_reduce)", UNKNOWN),
    (r"^void \(anonymous namespace\)::", UNKNOWN),  # SGLang's and ATen's unnamed-namespace kernels
]

ROCM_NAMES = {
    # Tensile with and without a matrix instruction
    "Cijk_Ailk_Bjlk_BBS_BH_Bias_HAS_SAV_UserArgs_MT128x64x32_MI32x32x1_SN_LDSB0_AFC1": USES,
    "Cijk_Ailk_Bljk_SB_MT64x64x8_SN_1LDSB0_APM1_ABV0_ACED0_AF0EM1_AF1EM1": NOT_USED,
    # MIOpen: XDLOPS vs. FMA implicit GEMMs, and the elementwise kernels whose name holds "TensorOp"
    "igemm_wrw_gtcx2_nhwc_bf16_bx0_ex1_bt256x128x16_wt32x32x8_ws2x1_wr2x2_ta1x4x1x4_1x4x1x64_gkgs": USES,
    "igemm_fwd_gtcx3_nhwc_fp16_bx0_ex1_bt128x128x32_wt32x32x8_ws1x1_wr2x2": USES,
    "igemm_fwd_gtc_nchw_fp32_bx0_ex1_bt128x128x16_tb1x1x8x1": NOT_USED,
    "SubTensorOpWithCastTensor1d": NOT_USED,
    "SubTensorOpWithScalar1d": NOT_USED,
    # composable_kernel
    "void ck::kernel_grouped_conv_fwd_xdl_cshuffle_v3<ck::GridwiseGemm_xdl_cshuffle_v3<ck::tensor_layout::gemm::RowMajor>>": USES,
    "void ck::kernel_gemm_xdlops_v2r3<ck::GridwiseGemm_k0mk1_k0nk1_mn_xdlops_v2r3<256>>": USES,
    "void ck::kernel_gemm_wmma<ck::GridwiseGemm_Wmma<128>>": USES,
    "__amd_rocclr_fillBufferAligned": NOT_USED,
    "triton_poi_fused_add_0": UNKNOWN,
    "my_custom_kernel": UNKNOWN,
}


@pytest.mark.parametrize(("name", "expected"), sorted(ROCM_NAMES.items()))
def test_rocm_rule(name: str, expected: int) -> None:
    assert kernel_matrix_class(name, "ROCm") == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4>(Params)", USES),
        ("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn", USES),
        ("volta_sgemm_64x64_nn", NOT_USED),
        ("void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>(int)", NOT_USED),
        ("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", NOT_USED),
        ("triton_poi_fused_add_cos_sin_0", UNKNOWN),
        ("cudnn::bn_fw_tr_1C11_kernel_NCHW", UNKNOWN),
        # AMD markers mean nothing on CUDA, NVIDIA ones nothing on ROCm
        ("Cijk_Ailk_Bjlk_BBS_BH_MT128x64x32_MI32x32x1_SN", NOT_USED),
    ],
)
def test_cuda_rule(name: str, expected: int) -> None:
    assert kernel_matrix_class(name, "CUDA") == expected


def test_no_rule_off_cuda_and_rocm() -> None:
    assert kernel_matrix_class("Cijk_MT64x16x32_MI16x16x1", "MTIA") == UNKNOWN
    assert kernel_matrix_class("volta_h884gemm_64x64_nn", "ROCm") == UNKNOWN  # no NVIDIA marker on AMD


def _rocm_trace() -> TraceBuilder:
    b = TraceBuilder(device_properties=[MI210])
    b.step(1, 0, 200)
    b.op("aten::convolution", 1, 150, ext_id=1)
    kernels_us = [
        ("igemm_fwd_gtcx2_nhwc_bf16_bx0_ex1_bt128x128x32_wt32x32x8", 30),  # Matrix Cores
        ("SubTensorOpWithScalar1d", 10),  # not (elementwise)
        ("triton_poi_fused_add_0", 20),  # unknown
        ("void at::native::vectorized_elementwise_kernel<4>(int)", 40),  # not
    ]
    start = 10.0
    for i, (name, dur) in enumerate(kernels_us):
        b.launch(name, 2 + i, 1, start, dur, ext_id=1, runtime_name="hipLaunchKernel")
        start += dur
    return b


def test_share_is_a_lower_bound_with_the_unknown_share(tmp_path: Path) -> None:
    profile = load(_rocm_trace(), tmp_path)
    assert accelerator(profile).matrix_units == "Matrix Cores"
    (gpu,) = gpu_metrics.gpu_summary(profile)
    # 30 µs of the 100 µs of kernels used Matrix Cores, 20 µs (Triton) does not say
    assert gpu["tensor_core_pct"] == pytest.approx(30.0)
    assert gpu["tensor_core_unknown_pct"] == pytest.approx(20.0)
    assert kernels.tensor_core_share(profile) == pytest.approx(0.30)
    assert kernels.tensor_core_unknown_share(profile) == pytest.approx(0.20)
    table = kernels.kernel_table(profile).set_index("name")
    assert bool(table.loc["triton_poi_fused_add_0", "tc_unknown"])
    assert not bool(table.loc["SubTensorOpWithScalar1d", "tc_used"])
    assert not bool(table.loc["SubTensorOpWithScalar1d", "tc_unknown"])


# --- shared traces -------------------------------------------------------------------------------

_ROCM_TRACES = [
    "hta_samples/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.pt.trace.json.gz",
    "tracelens/mi210_gpu_only/gpu_only_trace.pt.trace.json.gz",
    "tracelens/mi300_bert_small/gaunernst_bert-small-uncased__1016001.pt.trace.json.gz",
    "tracelens/mi300_compile_triton/trace.pt.trace.json.gz",
    "tracelens/mi300_normalization/normalization_layer_test.pt.trace.json.gz",
    "tracelens/sglang_decode/sglang_Qwen3-8B_decode.pt.trace.json.gz",
    "tracelens/vllm_prefilldecode_piecewise/graph_execution.pt.trace.json.gz",
]


@pytest.mark.shared
@pytest.mark.parametrize("rel", _ROCM_TRACES)
def test_every_rocm_kernel_family_is_classified(rel: str) -> None:
    profile = load_profile(str(shared_trace(rel)))
    assert accelerator(profile).platform == "ROCm"
    k = profile.device[profile.device["kind"] == "kernel"]
    assert len(k)
    for name in sorted(set(k["name"])):
        families = [cls for pattern, cls in ROCM_FAMILIES if re.search(pattern, name)]
        assert len(families) == 1, (name, families)
        assert kernel_matrix_class(name, "ROCm") == families[0], name


@pytest.mark.shared
def test_mi210_matrix_core_share() -> None:
    profile = load_profile(str(shared_trace(_ROCM_TRACES[1])))
    (gpu,) = gpu_metrics.gpu_summary(profile)
    # XDLOPS implicit GEMMs (30.3 %) + Tensile MI GEMMs (1.7 %); SubTensorOp (9.3 %) no longer counts
    assert gpu["tensor_core_pct"] == pytest.approx(32.0, abs=0.05)
    assert gpu["tensor_core_unknown_pct"] == pytest.approx(0.0)


def test_shared_folder_present_or_skipped() -> None:
    if not SHARED_TRACES.is_dir():
        pytest.skip("../shared/traces absent")
    assert all((SHARED_TRACES / rel).exists() for rel in _ROCM_TRACES)

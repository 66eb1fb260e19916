"""The tensor-core kernel-name rule on real kernel names, and the TC-eligible operator allowlist."""

from __future__ import annotations

import pytest

from torch_tb_profiler.analysis.device.tensor_cores import (
    kernel_uses_tensor_cores,
    op_name_eligible,
    op_names_eligible,
    uses_tensor_cores,
)

TENSOR_CORE = [
    # from ../shared/traces (A100 NCCL job, trace_filter ranks); AMD names: tests/test_matrix_cores.py
    "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer",
    "sm80_xmma_wgrad_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x64x64_stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_train",
    "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4>(cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4::Params)",
    "void cutlass_cudnn_infer::Kernel<cutlass_tensorop_s1688dgrad_optimized_tf32_64x256_16x4_nhwc_align4>(cutlass_tensorop_s1688dgrad_optimized_tf32_64x256_16x4_nhwc_align4::Params)",
    "_ZN19cutlass_cudnn_train6KernelINS_4conv6kernel23ImplicitGemmConvolutionINS1_11threadblock22ImplicitGemmMultistageINS_4gemm9GemmShapeILi128ELi128ELi32EEENS_4arch15OpClassTensorOpE",
    # current NVIDIA libraries
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
    "sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x64_warpgroupsize1x1x1_g1_execute_kernel__5x_cudnn",
    "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTN",
    "nvjet_sm100_tst_256x128_64x4_2x1_2cta_v_bz_TNT",
    "void cutlass::device_kernel<cutlass3x_sm90_tensorop_gemm_bf16_bf16_f32_bf16_bf16_128x256x64_1x2x1_0_tnn_align8_warpspecialized_cooperative_epi_tma>(cutlass3x_sm90_tensorop_gemm_bf16_bf16_f32_bf16_bf16_128x256x64_1x2x1_0_tnn_align8_warpspecialized_cooperative_epi_tma::Params)",
    "cutlass3x_sm100_tensorop_s64x256x16gemm_bf16_bf16_f32_bf16_bf16_256x256x64_2x1x1_0_tnn_align8_2sm",
    "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int>, cutlass::gemm::collective::CollectiveMma<cutlass::gemm::MainloopSm90TmaGmmaWarpSpecialized<4, cute::tuple<cute::C<2>>>>>>",
    "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn",
    "ampere_bf16_s16816gemm_bf16_64x64_ldg8_f2f_stages_64x5_tn",
    "ampere_tf32_s1688gemm_tf32_128x128_32x3_nn",
    "ampere_int8_i16832gemm_int8_128x128_ldg16_stages_64x3_nt",
    "volta_h884gemm_64x64_ldg8_nn",
    "volta_fp16_s884cudnn_fp16_256x128_ldg8_splitK_relu_f2f_exp_small_nhwc2nchw_tn_v1",
    "turing_fp16_s1688gemm_fp16_128x128_ldg8_f2f_nn",
    "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t>, true>(Flash_fwd_params)",
    "fmha_cutlassF_bf16_aligned_64x128_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t, cutlass::arch::Sm80, true, 64, 128, 128, true, true>::Params)",
    "cudnn_generated_fort_native_sdpa_sm90_knob_7_64x128x128_4x1x1_kernel0_0",
    "xmma_warp_specialized_implicit_gemm_hmma_fprop",
]

NOT_TENSOR_CORE = [
    # from ../shared/traces (fp32 SIMT kernels, element-wise, cuDNN helpers)
    "volta_sgemm_64x64_nn",
    "ampere_sgemm_128x64_nn",
    "void cutlass::Kernel<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>(cutlass_80_simt_sgemm_128x32_8x5_nn_align1::Params)",
    "void implicit_convolve_sgemm<float, float, 1024, 6, 7, 3, 3, 5, 1, false, true, true>(int, int, int, float const*, int, float*)",
    "volta_scudnn_128x64_relu_interior_nn_v1",
    "cudnn_infer_volta_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1",
    "void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int, int, float const*, int)",
    "void cutlass_cudnn_train::Kernel<cutlass_cudnn_train::reduction::kernel::ReduceSplitK<cutlass_cudnn_train::MatrixShape<4, 128>>>",
    "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>, at::detail::Array<char*, 3> >(int)",
    "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
    "triton_poi_fused_add_cos_sin_0",
    "sm80_xmma_fprop_implicit_gemm_indexed_f32f32_f32f32_f32_nchwkcrs_nchw_tilesize32x32x8_stage3_warpsize1x2x1_g1_ffma_aligna4_alignc4_execute_kernel_cudnn",
    "fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<float, cutlass::arch::Sm80>::Params)",
    "dummy_kernel_summary",
]


@pytest.mark.parametrize("name", TENSOR_CORE)
def test_tensor_core_kernels(name: str) -> None:
    assert kernel_uses_tensor_cores(name)


@pytest.mark.parametrize("name", NOT_TENSOR_CORE)
def test_other_kernels(name: str) -> None:
    assert not kernel_uses_tensor_cores(name)


def test_vectorised_matches_per_name() -> None:
    names = TENSOR_CORE + NOT_TENSOR_CORE + TENSOR_CORE[:3]
    assert uses_tensor_cores(names).tolist() == [kernel_uses_tensor_cores(n) for n in names]
    assert uses_tensor_cores([]).tolist() == []


@pytest.mark.parametrize(
    ("name", "eligible"),
    [
        ("aten::conv2d", True),
        ("aten::cudnn_convolution_backward_weight", True),
        ("aten::mm", True),
        ("aten::linear", True),
        ("aten::_scaled_dot_product_flash_attention", True),
        ("CudnnConvolutionBackward", True),  # PyTorch 1.x autograd node
        ("ConvolutionBackward0", True),  # PyTorch 2.x
        ("autograd::engine::evaluate_function: AddmmBackward0", True),
        ("BmmBackward0", True),
        ("aten::add", False),
        ("aten::cudnn_batch_norm", False),
        ("ReluBackward0", False),
        ("aten::mmx", False),
    ],
)
def test_eligible_operators(name: str, eligible: bool) -> None:
    assert op_name_eligible(name) is eligible
    assert op_names_eligible([name]).tolist() == [eligible]

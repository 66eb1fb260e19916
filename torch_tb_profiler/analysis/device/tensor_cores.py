"""Matrix-unit detection: which kernels ran on tensor cores (NVIDIA) or matrix cores (AMD), which
operators could have.

A trace does not say whether a kernel used the device's matrix units, so the kernel *name* decides,
by what it says about the instruction family, per vendor (the rules are written out in
docs/metrics.md, "Tensor cores"). Each kernel is in one of three classes: it used them (``USES``),
its name says it did not (``NOT_USED``), or its name does not say (``UNKNOWN``: Triton and custom
kernels). The share of ``USES`` kernel time is therefore a lower bound, shown with the ``UNKNOWN`` share.

CUDA (Tensor Cores):

1. A name with a SIMT marker is not a tensor-core kernel: ``simt`` (CUTLASS SIMT kernels),
   ``ffma`` (cuDNN xmma kernels built on fused FP32 multiply-add), ``sgemm`` (FP32 SIMT GEMMs such as
   ``volta_sgemm_*``, ``implicit_convolve_sgemm``) and ``scudnn`` (FP32 SIMT cuDNN kernels).
2. Otherwise it is one when it carries a tensor-core marker: the MMA tile shapes cuBLAS/cuDNN/CUTLASS
   write into names (``h884``, ``s1688``, ``s16816``, ``i8816``, ``i16832`` ... and the CUTLASS 2
   ``tensor16x8x8`` tile), the MMA instruction families (``hmma``, ``imma``, ``wmma``, ``wgmma``,
   CUTLASS 3 ``Gmma``/``Umma`` main loops, Blackwell ``tcgen05``), NVIDIA kernel families that only
   exist as tensor-core kernels (``xmma_*`` cuDNN/cuBLAS kernels on sm80/sm86/sm89/sm90/sm100,
   ``nvjet`` cuBLAS kernels, CUTLASS ``tensorop``/``TensorOp`` kernels), half/bfloat16 fused attention
   kernels (FlashAttention ``flash_fwd``/``flash_bwd``, xformers ``fmha_cutlass`` f16/bf16, cuDNN
   ``sdpa``), and the original plugin's PyProf names (``dgrad_1x1_stride_2x2``, ``conv1x1``, ...).

ROCm (Matrix Cores): a kernel used them when its name names an MFMA/WMMA instruction family: a
Tensile GEMM (``Cijk_*``, rocBLAS/hipBLASLt) with an ``MI<m>x<n>x<k>`` matrix-instruction token,
``mfma``, composable_kernel's ``xdl``/``xdlops``/``xdl_cshuffle``, MIOpen's XDLOPS implicit GEMMs
``igemm_*_gtcx*``, or ``wmma``. (MIOpen's ``SubTensorOp*`` kernels are elementwise: "tensorop" is a
CUTLASS marker, never an AMD one.)

Known not to (both vendors, after the markers above): PyTorch's own ``at::native::`` kernels, NCCL/RCCL
collectives, CUB/rocPRIM primitives, cuBLAS helpers (``gemv``, ``splitKreduce``), a Tensile GEMM without
``MI``, MIOpen's non-XDLOPS ``igemm_*_gtc_*``, ``SubTensorOp*``, ``batched_transpose_*`` and
``MIOpen*`` kernels, ROCclr's ``__amd_rocclr_*`` copy/fill kernels. Every other name is unknown. On
MTIA, XPU, HPU and PrivateUse1 devices no naming rule is known and no share is reported.

An operator is *tensor-core eligible* when its name is one of the operators that autocast runs in
reduced precision on CUDA (convolutions, matrix products, RNN cells, attention) or the backward node
of one of them, when one of its children is eligible, or when one of its kernels used tensor cores.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from torch_tb_profiler.analysis.core import names as name_tests
from torch_tb_profiler.analysis.core.accelerator import accelerator
from torch_tb_profiler.analysis.core.cache import memoized
from torch_tb_profiler.analysis.core.names import once_per_distinct

USES, NOT_USED, UNKNOWN = 1, 0, -1

_SIMT = re.compile(r"simt|ffma|sgemm|scudnn", re.IGNORECASE)

_NVIDIA = re.compile(
    "|".join(
        [
            # MMA tile shapes: <type letter><m><n><k>, as in volta_h884gemm, ampere_fp16_s16816gemm,
            # turing_fp16_s1688cudnn, ampere_int8_i16832gemm, cutlass_tensorop_s1688fprop
            r"[hsicz](?:884|1688|16816|16832|8816|8832)",
            r"16816",
            r"tensor\d+x\d+x\d+",  # cuDNN xmma kernels name their MMA tile: ..._tensor16x8x8_...
            r"hmma|imma|wmma|wgmma|tcgen05",
            r"Gmma|Umma",  # CUTLASS 3 main loops: MainloopSm90TmaGmmaWarpSpecialized, ...Sm100TmaUmma...
            r"xmma",  # sm80_xmma_fprop_implicit_gemm_*, sm90_xmma_gemm_*, xmma_gemm, xmma_sparse_conv
            r"nvjet",  # cuBLAS 12.8+ Hopper/Blackwell GEMMs
            r"tensorop",  # CUTLASS: cutlass_80_tensorop_*, cutlass3x_sm90_tensorop_*, OpClassTensorOp
            r"flash_fwd|flash_bwd|fmha_cutlass[FB]_(?:f16|bf16)|sdpa",
            r"dgrad_1x1_stride_2x2|first_layer_wgrad_kernel|conv1x1|conv2d_c1_k1|direct_group",
        ]
    ),
    re.IGNORECASE,
)
# Gmma/Umma must keep their case ("dummy" contains "umma"); everything else is case-insensitive.
_NVIDIA_CASED = re.compile(r"(?-i:Gmma|Umma)")

_AMD = re.compile(
    "|".join(
        [
            r"Cijk_.*_MI\d+x\d+x\d+",  # Tensile GEMM whose MI token names its matrix instruction
            r"mfma",  # MFMA in the name: paged_attention_ll4mi_QKV_mfma16_kernel, *_mfma_*
            r"xdl",  # composable_kernel: *_xdl_cshuffle*, gridwise_gemm_xdlops*, DeviceGemmXdl
            r"_gtcx\d*_",  # MIOpen XDLOPS implicit GEMMs: igemm_fwd_gtcx2_nhwc_bf16_..._wt32x32x8_...
            r"wmma",  # RDNA 3+ matrix instructions (rocWMMA, CK *_wmma_*)
        ]
    ),
    re.IGNORECASE,
)

# Families whose name says they are not matrix-unit kernels (checked after the markers above).
_NOT_USED = re.compile(
    "|".join(
        [
            r"^(?:void )?at::native::",  # PyTorch's own elementwise, reduction, norm, indexing kernels
            r"nccl|rccl",  # collectives
            r"^(?:void )?(?:at_cuda_detail::)?(?:cub|hipcub|rocprim)::",  # scans, sorts, reductions
            r"gemv|splitKreduce",  # cuBLAS/rocBLAS matrix-vector and split-K reduction helpers
            r"^Cijk_",  # a Tensile GEMM without an MI token (matched first otherwise)
            r"^igemm_\w+_gtc_",  # MIOpen's non-XDLOPS (FMA) implicit GEMMs
            r"^SubTensorOp|^batched_transpose_|^MIOpen",  # MIOpen elementwise, transpose, norm kernels
            r"^__amd_rocclr_",  # ROCclr copy/fill kernels
        ]
    ),
    re.IGNORECASE,
)

_RULES = ("CUDA", "ROCm")  # the platforms with a naming rule


def kernel_matrix_class(name: str, platform: str | None = "CUDA") -> int:
    """USES, NOT_USED or UNKNOWN for one kernel name on the given platform (module docstring)."""
    if platform == "CUDA":
        if _SIMT.search(name):
            return NOT_USED
        for match in _NVIDIA.finditer(name):
            token = match.group(0)
            if token.lower() in ("gmma", "umma") and not _NVIDIA_CASED.fullmatch(token):
                continue
            return USES
    elif platform == "ROCm":
        if _AMD.search(name):
            return USES
    else:
        return UNKNOWN
    return NOT_USED if _NOT_USED.search(name) else UNKNOWN


def kernel_uses_tensor_cores(name: str, platform: str | None = "CUDA") -> bool:
    """Whether the naming rule says the kernel used the platform's matrix units."""
    return kernel_matrix_class(name, platform) == USES


def uses_tensor_cores(names: pd.Series | np.ndarray | list[str], platform: str | None = "CUDA") -> np.ndarray:
    """Vectorised ``kernel_uses_tensor_cores``: the rule runs once per distinct name."""
    return once_per_distinct(names, lambda n: kernel_uses_tensor_cores(n, platform))


def matrix_classes(profile) -> np.ndarray:
    """The class of every row of ``profile.device`` on the profile's platform (int8; cached)."""

    def compute() -> np.ndarray:
        platform = accelerator(profile).platform
        codes, uniques = name_tests.factorized(profile, "device")
        if codes.size == 0:
            return np.zeros(0, dtype=np.int8)
        verdict = np.fromiter((kernel_matrix_class(u, platform) for u in uniques), np.int8, len(uniques))
        return verdict[codes]

    return memoized(profile, "tensor_cores.classes", compute)


def uses_mask(profile) -> np.ndarray:
    """Per row of ``profile.device``: the kernel used the matrix units (by the platform's rule)."""
    return matrix_classes(profile) == USES


def matrix_share(classes: np.ndarray, dur: np.ndarray) -> tuple[float, float]:
    """(share of kernel time on matrix units — a lower bound, share of kernels whose name does not say)."""
    dur = np.asarray(dur, dtype=np.float64)
    total = float(dur.sum())
    if total <= 0:
        return 0.0, 0.0
    return float(dur[classes == USES].sum()) / total, float(dur[classes == UNKNOWN].sum()) / total


# Operators autocast runs in reduced precision on CUDA (so they can use tensor cores).
_ELIGIBLE_OPS = frozenset(
    "aten::" + n
    for n in [
        # convolutions
        "_convolution", "convolution", "conv1d", "conv2d", "conv3d", "conv_tbc",
        "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
        "cudnn_convolution", "cudnn_convolution_transpose", "cudnn_convolution_relu",
        "cudnn_convolution_add_relu", "_convolution_double_backward", "convolution_backward",
        "cudnn_convolution_backward", "cudnn_convolution_backward_input",
        "cudnn_convolution_backward_weight", "cudnn_convolution_transpose_backward",
        "cudnn_convolution_transpose_backward_input", "cudnn_convolution_transpose_backward_weight",
        "prelu",
        # matrix products
        "addmm", "addmm_", "addmv", "addr", "matmul", "mm", "mv", "linear", "addbmm", "baddbmm",
        "bmm", "chain_matmul", "linalg_multi_dot", "einsum", "tensordot", "_addmm_activation",
        "_scaled_mm", "_int_mm", "_grouped_mm", "_scaled_grouped_mm",
        # recurrent cells
        "_thnn_fused_lstm_cell", "_thnn_fused_gru_cell", "lstm_cell", "gru_cell",
        "rnn_tanh_cell", "rnn_relu_cell", "_cudnn_rnn", "_cudnn_rnn_backward", "lstm", "gru",
        # attention
        "scaled_dot_product_attention", "_scaled_dot_product_flash_attention",
        "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention",
        "_flash_attention_forward", "_efficient_attention_forward",
        "_scaled_dot_product_flash_attention_backward", "_scaled_dot_product_efficient_attention_backward",
        "_scaled_dot_product_cudnn_attention_backward", "_flash_attention_backward",
        "_efficient_attention_backward",
    ]
)  # fmt: skip

# Autograd backward nodes of those operators: "<Base>Backward" with an optional overload number
# (PyTorch 1.x "MmBackward", 2.x "MmBackward0"), possibly wrapped as
# "autograd::engine::evaluate_function: MmBackward0".
_ELIGIBLE_BACKWARD = re.compile(
    r"^(?:autograd::engine::evaluate_function: )?"
    r"(?:CudnnConvolution|CudnnConvolutionTranspose|Convolution|ConvolutionBackwardOverrideable|"
    r"Mm|Addmm|Bmm|Baddbmm|Addbmm|Mv|Addmv|Addr|Linear|Matmul|Prelu|"
    r"ScaledDotProductFlashAttention|ScaledDotProductEfficientAttention|ScaledDotProductCudnnAttention|"
    r"CudnnRnn|ThnnFusedLstmCell|ThnnFusedGruCell)Backward\d*$"
)


def op_name_eligible(name: str) -> bool:
    """Whether the operator name alone makes it tensor-core eligible."""
    return name in _ELIGIBLE_OPS or _ELIGIBLE_BACKWARD.match(name) is not None


def op_names_eligible(names: pd.Series | np.ndarray | list[str]) -> np.ndarray:
    return once_per_distinct(names, op_name_eligible)

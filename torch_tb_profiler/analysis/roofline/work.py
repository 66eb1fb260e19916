"""Work models: FLOPs and bytes moved of one operator call, from its input shapes and dtypes.

An op's ``Input Dims`` (one shape per argument, ``[]`` for a non-tensor), ``Input type`` (``float``,
``c10::BFloat16``, ``Scalar``, ``""`` for None) and, where the profiler wrote them, ``Concrete Inputs``
(the scalar arguments as text: strides, paddings, flags) are all a model has. Formulas
(docs/metrics.md, "Roofline"):

- GEMMs: FLOPs = 2·M·N·K (per batch), + M·N when a bias / ``C`` is added; bytes = every tensor input
  + the output (M·N per batch) at their dtype sizes.
- convolutions: FLOPs = 2·N·C_out·Π(out spatial)·(C_in/groups)·Π(kernel), + N·C_out·Π(out) with a
  bias; the forward's output size needs stride/padding/dilation from Concrete Inputs; backward-input
  from the grad output and weight shapes; ``convolution_backward`` per its output mask; a transposed
  one costs 2·N·C_in·Π(in spatial)·(C_out/groups)·Π(kernel).
- attention: FLOPs = 2·B·H·S_q·S_k·(D_qk + D_v) forward (Q·Kᵀ and P·V; 4·B·H·S_q·S_k·D when
  D_qk = D_v), halved when causal; bytes = q + k + v (+ mask) + output; backward 2.5 × the forward.
- normalisations, softmax, elementwise ops and reductions: bytes only (their FLOPs are a few per
  element and do not decide their speed).

Each answer is a ``Work``: flops and bytes (None when unknown), the dtype the op computes in, and the
reason when something is unknown.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from torch_tb_profiler.analysis.roofline.op_families import ELEMENTWISE, NORMS, REDUCTIONS, SOFTMAX

# bytes per element of the profiler's type names (c10 spellings); packed fp4 counts two per byte
# and its dims count the packed bytes
TYPE_BYTES: dict[str, int] = {
    "double": 8,
    "float": 4,
    "c10::Half": 2,
    "c10::BFloat16": 2,
    "c10::Float8_e4m3fn": 1,
    "c10::Float8_e5m2": 1,
    "c10::Float8_e4m3fnuz": 1,
    "c10::Float8_e5m2fnuz": 1,
    "c10::Float8_e8m0fnu": 1,
    "c10::Float4_e2m1fn_x2": 1,
    "long int": 8,
    "int": 4,
    "short int": 2,
    "signed char": 1,
    "unsigned char": 1,
    "bool": 1,
    "c10::complex<float>": 8,
    "c10::complex<double>": 16,
    "c10::complex<c10::Half>": 4,
}
DTYPE_OF: dict[str, str] = {
    "double": "fp64",
    "float": "fp32",
    "c10::Half": "fp16",
    "c10::BFloat16": "bf16",
    "c10::Float8_e4m3fn": "fp8",
    "c10::Float8_e5m2": "fp8",
    "c10::Float8_e4m3fnuz": "fp8",
    "c10::Float8_e5m2fnuz": "fp8",
    "c10::Float4_e2m1fn_x2": "fp4",
    "long int": "int64",
    "int": "int32",
    "short int": "int16",
    "signed char": "int8",
    "unsigned char": "uint8",
    "bool": "bool",
}
# c10::ScalarType codes, as Concrete Inputs write a dtype argument
SCALAR_TYPE_BYTES = {0: 1, 1: 1, 2: 2, 3: 4, 4: 8, 5: 2, 6: 4, 7: 8, 11: 1, 15: 2, 23: 1, 24: 1, 25: 1, 26: 1}


@dataclass(frozen=True)
class Work:
    flops: float | None
    bytes: float | None
    dtype: str | None
    reason: str | None = None  # why flops (or bytes) are unknown

    @property
    def known(self) -> bool:
        return self.flops is not None or self.bytes is not None


UNKNOWN = Work(None, None, None, "no work model for this operator")


@dataclass(frozen=True)
class Args:
    dims: list[Any]
    types: list[str]
    concrete: list[str]

    def tensor(self, i: int) -> list[int] | None:
        """Argument i's shape when it is a tensor (``[]`` with a dtype: a 0-dim tensor)."""
        if i >= len(self.dims) or i >= len(self.types) or self.types[i] not in TYPE_BYTES:
            return None
        shape = self.dims[i]
        if not isinstance(shape, list) or not all(isinstance(d, int) and d >= 0 for d in shape):
            return None
        return shape

    def nbytes(self, i: int) -> float:
        shape = self.tensor(i)
        return 0.0 if shape is None else float(math.prod(shape)) * TYPE_BYTES[self.types[i]]

    def size(self, i: int) -> int:
        return TYPE_BYTES.get(self.types[i], 0) if i < len(self.types) else 0

    def value(self, i: int) -> str | None:
        """Concrete input i as text, None when not written or empty."""
        if i >= len(self.concrete):
            return None
        text = str(self.concrete[i]).strip()
        return text or None

    def ints(self, i: int) -> list[int] | None:
        text = self.value(i)
        if text is None:
            return None
        found = re.findall(r"-?\d+", text)
        return [int(x) for x in found] if found and re.fullmatch(r"\[?[\d\s,\-]*\]?", text) else None

    def flag(self, i: int) -> bool | None:
        text = self.value(i)
        return {"True": True, "False": False, "1": True, "0": False}.get(text) if text else None


def parse(dims: str, types: str, concrete: str) -> Args | None:
    """The three args' JSON texts; None when Input Dims is absent or unreadable."""
    try:
        d = json.loads(dims) if dims else None
        t = json.loads(types) if types else []
        c = json.loads(concrete) if concrete else []
    except ValueError:
        return None
    if not isinstance(d, list):
        return None
    return Args(
        d,
        [str(x) for x in t] if isinstance(t, list) else [],
        [str(x) for x in c] if isinstance(c, list) else [],
    )


def _dtype(a: Args, i: int) -> str | None:
    return DTYPE_OF.get(a.types[i]) if i < len(a.types) else None


def inputs_bytes(a: Args) -> float:
    return sum(a.nbytes(i) for i in range(len(a.dims)))


# ---- GEMMs ----------------------------------------------------------------------------------------


def _gemm(a: Args, ia: int, ib: int, bias: int | None, batched: bool, out_size: int | None = None) -> Work:
    """A[(b,) M, K] @ B[(b,) K, N] (+ bias); the output at ``out_size`` bytes an element (A's)."""
    sa, sb = a.tensor(ia), a.tensor(ib)
    rank = 3 if batched else 2
    if sa is None or sb is None or len(sa) != rank or len(sb) != rank:
        return Work(None, None, _dtype(a, ia), "operand shapes not in the trace")
    batch = sa[0] if batched else 1
    m, k, n = sa[-2], sa[-1], sb[-1]
    has_bias = bias is not None and a.tensor(bias) is not None
    flops = 2.0 * batch * m * n * k + (batch * m * n if has_bias else 0)
    out = float(batch * m * n) * (a.size(ia) if out_size is None else out_size)
    return Work(flops, inputs_bytes(a) + out, _dtype(a, ia))


def _matmul(a: Args) -> Work:
    """torch.matmul: 1-D operands are a row / a column, leading dims broadcast."""
    sa, sb = a.tensor(0), a.tensor(1)
    if not sa or not sb:
        return Work(None, None, _dtype(a, 0), "operand shapes not in the trace")
    ma = [1, *sa] if len(sa) == 1 else sa
    mb = [*sb, 1] if len(sb) == 1 else sb
    batch_a, batch_b = ma[:-2], mb[:-2]
    width = max(len(batch_a), len(batch_b))
    pa = [1] * (width - len(batch_a)) + batch_a
    pb = [1] * (width - len(batch_b)) + batch_b
    if any(x != y and 1 not in (x, y) for x, y in zip(pa, pb, strict=True)):
        return Work(None, None, _dtype(a, 0), "operand shapes do not broadcast")
    batch = math.prod(max(x, y) for x, y in zip(pa, pb, strict=True))
    m, k, n = ma[-2], ma[-1], mb[-1]
    return Work(
        2.0 * batch * m * n * k, a.nbytes(0) + a.nbytes(1) + float(batch * m * n) * a.size(0), _dtype(a, 0)
    )


def _linear(a: Args) -> Work:
    """input[..., K] @ weight[N, K]ᵀ + bias[N]."""
    x, w = a.tensor(0), a.tensor(1)
    if not x or w is None or len(w) != 2:
        return Work(None, None, _dtype(a, 0), "operand shapes not in the trace")
    m, k, n = math.prod(x[:-1]), x[-1], w[0]
    bias = a.tensor(2) is not None
    flops = 2.0 * m * n * k + (m * n if bias else 0)
    return Work(flops, inputs_bytes(a) + float(m * n) * a.size(0), _dtype(a, 0))


def _scaled_mm(a: Args) -> Work:
    """_scaled_mm(A, B, scale_a, scale_b, bias, scale_result, out_dtype, use_fast_accum): the output is
    ``out_dtype`` (Concrete Inputs), the input's dtype when that is None."""
    w = _gemm(a, 0, 1, 4, False)
    if w.flops is None:
        return w
    sa = a.tensor(0) or []
    sb = a.tensor(1) or []
    size = _out_dtype_size(a, 6, a.size(0))
    if size is None:
        return Work(w.flops, None, w.dtype, "the output dtype is not in the trace")
    return Work(w.flops, inputs_bytes(a) + float(sa[0] * sb[-1]) * size, w.dtype)


def _out_dtype_size(a: Args, i: int, default: int | None) -> int | None:
    """Bytes an element of an ``out_dtype`` argument (a c10::ScalarType code in Concrete Inputs);
    ``default`` when the argument is None (empty), None when it is not in the trace."""
    if i >= len(a.concrete):
        return None
    code = a.value(i)
    if code is None:
        return default
    return SCALAR_TYPE_BYTES.get(int(code)) if code.isdigit() else None


def _int_mm(a: Args) -> Work:
    """_int_mm(A int8 [M, K], B int8 [K, N]) -> int32 [M, N]: 2·M·N·K integer operations."""
    return _gemm(a, 0, 1, None, False, out_size=4)


def _weight_int8pack_mm(a: Args) -> Work:
    """_weight_int8pack_mm(x [M, K], w int8 [N, K], scales [N]): x @ wᵀ, computed and written in x's
    dtype (the weights are dequantised on the fly; the scales are no bias)."""
    x, w = a.tensor(0), a.tensor(1)
    if x is None or w is None or len(x) != 2 or len(w) != 2 or x[1] != w[1]:
        return Work(None, None, _dtype(a, 0), "operand shapes not in the trace")
    m, k, n = x[0], x[1], w[0]
    return Work(2.0 * m * n * k, inputs_bytes(a) + float(m * n) * a.size(0), _dtype(a, 0))


def _grouped_mm(a: Args, offs: int, out_dtype: int, out_default: int | None) -> Work:
    """_grouped_mm / _scaled_grouped_mm: G GEMMs in one call, the groups cut along one dimension by
    ``offs`` (a G-element tensor). 2-D A [ΣM, K] × 3-D B [G, K, N]: 2·ΣM·K·N; 3-D × 3-D: batched,
    2·G·M·K·N; 3-D A [G, M, K] × 2-D B [K, ΣN]: 2·M·K·ΣN; 2-D A [M, ΣK] × 2-D B [ΣK, N]: 2·M·ΣK·N, the
    output [G, M, N]. The ragged dimension counts whole: rows past the last offset (padding) count."""
    sa, sb, so = a.tensor(0), a.tensor(1), a.tensor(offs)
    if sa is None or sb is None or len(sa) not in (2, 3) or len(sb) not in (2, 3):
        return Work(None, None, _dtype(a, 0), "operand shapes not in the trace")
    if sa[-1] != sb[-2]:
        return Work(None, None, _dtype(a, 0), "operand shapes do not agree")
    k = sa[-1]
    if len(sa) == 3 and len(sb) == 3:
        if sa[0] != sb[0]:
            return Work(None, None, _dtype(a, 0), "operand shapes do not agree")
        flops, out = 2.0 * sa[0] * sa[1] * k * sb[2], float(sa[0] * sa[1] * sb[2])
    elif len(sa) == 2 and len(sb) == 2:
        if so is None or len(so) != 1:
            return Work(None, None, _dtype(a, 0), "the group offsets are not in the trace")
        flops, out = 2.0 * sa[0] * k * sb[1], float(so[0] * sa[0] * sb[1])
    else:  # one operand 2-D: the other's group dimension is the ragged one's partition
        m = sa[0] if len(sa) == 2 else sa[1]
        n = sb[-1]
        flops, out = 2.0 * m * k * n, float(m * n)
    size = _out_dtype_size(a, out_dtype, out_default)
    if size is None:
        return Work(flops, None, _dtype(a, 0), "the output dtype is not in the trace")
    return Work(flops, inputs_bytes(a) + out * size, _dtype(a, 0))


# ---- convolutions ---------------------------------------------------------------------------------


def _conv_out(size: int, k: int, stride: int, pad: int, dilation: int) -> int:
    return (size + 2 * pad - dilation * (k - 1) - 1) // stride + 1


def _spread(values: list[int] | None, n: int) -> list[int] | None:
    if values is None:
        return None
    if len(values) == 1:
        return values * n
    return values if len(values) == n else None


def _conv_forward(a: Args, bias: int | None, stride: int, pad: int, dil: int, transposed: int | None) -> Work:
    x, w = a.tensor(0), a.tensor(1)
    if x is None or w is None or len(x) < 3 or len(x) != len(w):
        return Work(None, None, _dtype(a, 0), "input/weight shapes not in the trace")
    if transposed is not None and a.flag(transposed):  # convolution(..., transposed, output_padding, groups)
        return _conv_transposed(a, x, w, (bias, stride, pad, dil, transposed + 1, transposed + 2))
    n_sp = len(x) - 2
    s, p, d = (_spread(a.ints(i), n_sp) for i in (stride, pad, dil))
    if s is None or p is None or d is None:
        return Work(None, None, _dtype(a, 0), "stride/padding/dilation not in the trace (Concrete Inputs)")
    out = [_conv_out(x[2 + i], w[2 + i], s[i], p[i], d[i]) for i in range(n_sp)]
    if min(out) <= 0:
        return Work(None, None, _dtype(a, 0), "inconsistent convolution arguments")
    n, c_out = x[0], w[0]
    per_out = math.prod(out)
    has_bias = bias is not None and a.tensor(bias) is not None
    flops = 2.0 * n * c_out * per_out * w[1] * math.prod(w[2:]) + (n * c_out * per_out if has_bias else 0)
    return Work(flops, inputs_bytes(a) + float(n * c_out * per_out) * a.size(0), _dtype(a, 0))


def _conv_transposed(
    a: Args, x: list[int], w: list[int], at: tuple[int | None, int, int, int, int, int]
) -> Work:
    """A transposed convolution, weight (C_in, C_out/groups, k…): every input element meets C_out/groups
    × Π(kernel) weights, so FLOPs = 2·N·C_in·Π(in)·(C_out/groups)·Π(kernel) (+ N·C_out·Π(out) with a
    bias), the MACs of the forward convolution it is the gradient of; out = (in − 1)·s − 2p + d(k−1)
    + output_padding + 1. ``at``: the positions of bias, stride, padding, dilation, output padding,
    groups."""
    bias, stride, pad, dil, out_pad, groups = at
    flops = 2.0 * math.prod(x) * w[1] * math.prod(w[2:])
    n_sp = len(x) - 2
    s, p, d, op = (_spread(a.ints(i), n_sp) for i in (stride, pad, dil, out_pad))
    g = a.ints(groups)
    if s is None or p is None or d is None or op is None or g is None or len(g) != 1:
        reason = "stride/padding/dilation/output padding/groups not in the trace (Concrete Inputs)"
        return Work(flops, None, _dtype(a, 0), reason)
    out = [(x[2 + i] - 1) * s[i] - 2 * p[i] + d[i] * (w[2 + i] - 1) + op[i] + 1 for i in range(n_sp)]
    if min(out) <= 0 or x[1] != w[0]:
        return Work(None, None, _dtype(a, 0), "inconsistent convolution arguments")
    outputs = x[0] * w[1] * g[0] * math.prod(out)
    if bias is not None and a.tensor(bias) is not None:
        flops += outputs
    return Work(flops, inputs_bytes(a) + float(outputs) * a.size(0), _dtype(a, 0))


def _conv_backward_input(a: Args, grad: int, weight: int) -> Work:
    """cudnn_convolution_backward_input(self_size, grad_output, weight, ...): the forward's MACs."""
    g, w = a.tensor(grad), a.tensor(weight)
    if g is None or w is None or len(g) < 3 or len(g) != len(w):
        return Work(None, None, _dtype(a, grad), "grad/weight shapes not in the trace")
    flops = 2.0 * g[0] * g[1] * math.prod(g[2:]) * w[1] * math.prod(w[2:])
    sizes = a.ints(0)
    if sizes is None or len(sizes) != len(g):
        return Work(flops, None, _dtype(a, grad), "the input size is not in the trace (Concrete Inputs)")
    grad_in = float(math.prod(sizes)) * a.size(grad)
    return Work(flops, inputs_bytes(a) + grad_in, _dtype(a, grad))


def _convolution_backward(a: Args) -> Work:
    """convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
    output_padding, groups, output_mask): grad input and grad weight cost a forward each, grad bias
    N·C_out·Π(out)."""
    g, x, w = a.tensor(0), a.tensor(1), a.tensor(2)
    if g is None or x is None or w is None or len(g) < 3 or not len(g) == len(x) == len(w):
        return Work(None, None, _dtype(a, 0), "grad/input/weight shapes not in the trace")
    mask = re.findall(r"True|False|1|0", a.value(10) or "")
    if len(mask) != 3:
        return Work(None, None, _dtype(a, 0), "the output mask is not in the trace (Concrete Inputs)")
    want = [m in ("True", "1") for m in mask]
    per_out = g[0] * g[1] * math.prod(g[2:])
    # each gradient costs the forward's MACs: per output element (per input element when transposed,
    # whose weight is (C_in, C_out/groups, k…))
    macs = 2.0 * (math.prod(x) if a.flag(7) else per_out) * w[1] * math.prod(w[2:])
    flops = macs * (want[0] + want[1]) + (per_out if want[2] else 0)
    out = a.nbytes(1) * want[0] + a.nbytes(2) * want[1] + float(g[1]) * a.size(0) * want[2]
    return Work(flops, inputs_bytes(a) + out, _dtype(a, 0))


# ---- attention ------------------------------------------------------------------------------------


def _attention(
    a: Args, causal: int | None, layout: str, mask: int | None = None, varlen: tuple[int, ...] = ()
) -> Work:
    """q[B, H, Sq, D] (``bhsd``) or q[B, Sq, H, D] (``bshd``), k, v alike (k/v may have fewer heads);
    with ``varlen`` positions (cum_seq_q, cum_seq_k, max_q, max_k), 3-D packed q[ΣSq, H, D]."""
    q, k, v = a.tensor(0), a.tensor(1), a.tensor(2)
    if varlen and q is not None and len(q) == 3:
        return _varlen_attention(a, causal, varlen)
    if q is None or k is None or v is None or not len(q) == len(k) == len(v) == 4:
        return Work(None, None, _dtype(a, 0), "q/k/v shapes not in the trace")
    if layout == "bhsd":
        b, h, sq, d = q
        sk, dv = k[2], v[3]
    else:
        b, sq, h, d = q
        sk, dv = k[1], v[3]
    is_causal = _causal(a, causal)
    if is_causal is None:
        return Work(None, None, _dtype(a, 0), "is_causal is not in the trace (Concrete Inputs)")
    flops = 2.0 * b * h * sq * sk * (d + dv) * (0.5 if is_causal else 1.0)
    moved = a.nbytes(0) + a.nbytes(1) + a.nbytes(2) + float(b * h * sq * dv) * a.size(0)
    if mask is not None:
        moved += a.nbytes(mask)
    return Work(flops, moved, _dtype(a, 0))


def _causal(a: Args, at: int | None) -> bool | None:
    """The is_causal flag, or a custom_mask_type: 0 none, 1 causal from the top left, 2 from the bottom
    right (the same mask when Sq = Sk; both halve the work as is_causal does)."""
    if at is None:
        return False
    return True if a.value(at) == "2" else a.flag(at)


def _varlen_attention(a: Args, causal: int | None, pos: tuple[int, ...]) -> Work:
    """Packed sequences: q[ΣSq, H, D], k[ΣSk, Hk, D], v[ΣSk, Hk, Dv], B + 1 cumulative lengths each,
    the longest Sq and Sk in Concrete Inputs. FLOPs = 2·H·(D + Dv)·Σ_b Sq_b·Sk_b; the per-sequence
    lengths are tensor values, so the sum is known only when one side's lengths are all equal (a side
    whose total is B × its longest): ΣSq·Sk = max_q·ΣSk or max_k·ΣSq. Causal: ½·B·max_q·max_k, only when
    every sequence has the same lengths (as the padded formula)."""
    q, k, v = a.tensor(0), a.tensor(1), a.tensor(2)
    cum_q, cum_k = a.tensor(pos[0]), a.tensor(pos[1])
    if k is None or v is None or len(k) != 3 or len(v) != 3 or q is None:
        return Work(None, None, _dtype(a, 0), "q/k/v shapes not in the trace")
    moved = a.nbytes(0) + a.nbytes(1) + a.nbytes(2) + float(q[0] * q[1] * v[2]) * a.size(0)
    moved += a.nbytes(pos[0]) + a.nbytes(pos[1])
    lengths = [a.ints(i) for i in pos[2:4]]
    if (
        cum_q is None
        or cum_k is None
        or len(cum_q) != 1
        or cum_q != cum_k
        or any(x is None or len(x) != 1 for x in lengths)
    ):
        return Work(None, moved, _dtype(a, 0), "sequence lengths not in the trace (Concrete Inputs)")
    batch, (max_q,), (max_k,) = cum_q[0] - 1, *lengths  # type: ignore[misc]
    is_causal = _causal(a, causal)
    if is_causal is None:
        return Work(None, moved, _dtype(a, 0), "is_causal is not in the trace (Concrete Inputs)")
    same_q, same_k = q[0] == batch * max_q, k[0] == batch * max_k
    pairs: float | None = None
    if is_causal:
        pairs = 0.5 * batch * max_q * max_k if same_q and same_k else None
    elif same_q or same_k:
        pairs = float(max_q * k[0]) if same_q else float(max_k * q[0])
    if pairs is None:
        why = "variable sequence lengths: the per-sequence lengths are tensor values, not in the trace"
        return Work(None, moved, _dtype(a, 0), why)
    return Work(2.0 * q[1] * (q[2] + v[2]) * pairs, moved, _dtype(a, 0))


def _attention_backward(a: Args, causal: int, layout: str, varlen: tuple[int, ...] = ()) -> Work:
    """grad_out, q, k, v, … : 2.5 × the forward's FLOPs (Q·Kᵀ recomputed, then dV, dP, dQ, dK: five
    GEMMs for the forward's two); bytes = inputs + dq, dk, dv."""
    shifted = Args(a.dims[1:], a.types[1:], a.concrete[1:])
    fwd = _attention(shifted, causal - 1, layout, varlen=tuple(i - 1 for i in varlen))
    moved = inputs_bytes(a) + a.nbytes(1) + a.nbytes(2) + a.nbytes(3)
    if fwd.flops is None:
        return Work(None, None if fwd.bytes is None else moved, fwd.dtype, fwd.reason)
    return Work(2.5 * fwd.flops, moved, fwd.dtype)


# ---- bytes-only families --------------------------------------------------------------------------


def _broadcast(shapes: list[list[int]]) -> list[int] | None:
    width = max(len(s) for s in shapes)
    out = [1] * width
    for s in shapes:
        for i, dim in enumerate([1] * (width - len(s)) + s):
            if dim != 1 and out[i] not in (1, dim):
                return None
            out[i] = dim if dim != 1 else out[i]
    return out


def _elementwise(a: Args, inplace: bool) -> Work:
    """Reads every tensor input and writes the broadcast output (in place: the first input)."""
    tensors = [i for i in range(len(a.dims)) if a.tensor(i) is not None]
    if not tensors:
        return Work(None, None, None, "tensor shapes not in the trace")
    shape = _broadcast([a.tensor(i) or [] for i in tensors])
    if shape is None:
        return Work(None, None, _dtype(a, tensors[0]), "shapes do not broadcast")
    size = max(a.size(i) for i in tensors)
    out = a.nbytes(tensors[0]) if inplace else float(math.prod(shape)) * size
    return Work(None, inputs_bytes(a) + out, _dtype(a, tensors[0]), "bytes only (elementwise)")


def _copy(a: Args) -> Work:
    """copy_(dst, src): reads src, writes dst."""
    if a.tensor(0) is None or a.tensor(1) is None:
        return Work(None, None, None, "tensor shapes not in the trace")
    return Work(None, a.nbytes(0) + a.nbytes(1), _dtype(a, 1), "bytes only (copy)")


def _same_size_out(a: Args, what: str) -> Work:
    """Normalisations and softmax: read the inputs (weights, statistics), write an output like input 0."""
    if a.tensor(0) is None:
        return Work(None, None, None, "input shape not in the trace")
    return Work(None, inputs_bytes(a) + a.nbytes(0), _dtype(a, 0), f"bytes only ({what})")


def _reduction(a: Args) -> Work:
    """Reads the input; the reduced output (not in the trace) is left out (at most input/reduced size)."""
    if a.tensor(0) is None:
        return Work(None, None, None, "input shape not in the trace")
    return Work(None, a.nbytes(0), _dtype(a, 0), "bytes only (reduction: input read; output not counted)")


def _library_op(name: str, a: Args) -> Work:
    """Ops of other libraries: those computing a known GEMM, else why their work is not in the trace."""
    if name in _LINEAR_OPS:
        return _linear(a)
    lowered = name.lower()
    if "attention" in lowered and ("paged" in lowered or "unified" in lowered):
        return Work(
            None, None, None, "attention over a paged KV cache: the context lengths are tensor values"
        )
    if "moe" in lowered or "experts" in lowered:
        return Work(None, None, None, "mixture of experts: the routing (tokens per expert) is a tensor value")
    return UNKNOWN


def model(name: str, a: Args | None) -> Work:
    """The work of one call of operator ``name`` with args ``a`` (docstring above); UNKNOWN otherwise."""
    if a is None:
        return Work(None, None, None, "no input shapes in the trace (record_shapes=False)")
    base = name.removeprefix("aten::")
    if not name.startswith("aten::"):
        return _library_op(name, a)
    if base == "mm":
        return _gemm(a, 0, 1, None, False)
    if base in ("addmm", "_addmm_activation"):
        return _gemm(a, 1, 2, 0, False)
    if base == "bmm":
        return _gemm(a, 0, 1, None, True)
    if base == "baddbmm":
        return _gemm(a, 1, 2, 0, True)
    if base == "matmul":
        return _matmul(a)
    if base == "linear":
        return _linear(a)
    if base == "_scaled_mm":
        return _scaled_mm(a)
    if base == "_int_mm":
        return _int_mm(a)
    if base == "_weight_int8pack_mm":
        return _weight_int8pack_mm(a)
    if base == "_grouped_mm":
        return _grouped_mm(a, 2, 4, a.size(0))
    if base == "_scaled_grouped_mm":  # out_dtype None means bf16
        return _grouped_mm(a, 4, 7, 2)
    conv = _CONVOLUTIONS.get(base)
    if conv is not None:
        return _conv_forward(a, *conv)
    if base in _TRANSPOSED:
        x, w = a.tensor(0), a.tensor(1)
        if x is None or w is None or len(x) < 3 or len(x) != len(w):
            return Work(None, None, _dtype(a, 0), "input/weight shapes not in the trace")
        return _conv_transposed(a, x, w, (2, 3, 4, 7, 5, 6))
    if base == "cudnn_convolution_backward_input":
        return _conv_backward_input(a, 1, 2)
    if base == "convolution_backward":
        return _convolution_backward(a)
    if base in _CU_SEQLENS and a.tensor(_CU_SEQLENS[base]) is not None:
        why = "variable sequence lengths: the per-sequence lengths are tensor values, not in the trace"
        return Work(None, None, _dtype(a, 1 if "backward" in base else 0), why)
    att = _ATTENTION.get(base)
    if att is not None:
        return _attention(a, *att, varlen=_VARLEN.get(base, ()))
    back = _ATTENTION_BACKWARD.get(base)
    if back is not None:
        return _attention_backward(a, *back, varlen=_VARLEN.get(base, ()))
    if base in ("copy_", "_copy_from"):
        return _copy(a)
    if base in ("fill_", "zero_"):  # writes only
        if a.tensor(0) is None:
            return Work(None, None, None, "tensor shape not in the trace")
        return Work(None, a.nbytes(0), _dtype(a, 0), "bytes only (fill: written once)")
    plain = base.removesuffix("_")
    if plain in ELEMENTWISE:
        return _elementwise(a, base.endswith("_"))
    if base in NORMS:
        return _same_size_out(a, "normalisation")
    if base in SOFTMAX:
        return _same_size_out(a, "softmax")
    if base in REDUCTIONS:
        return _reduction(a)
    return UNKNOWN


def flop_modelled(name: str) -> bool:
    """Whether ``model`` gives FLOPs (not bytes only) for some call of this operator."""
    if name in _LINEAR_OPS:
        return True
    base = name.removeprefix("aten::")
    return name.startswith("aten::") and (
        base in _GEMMS
        or base in _CONVOLUTIONS
        or base in _ATTENTION
        or base in _CONV_BACKWARD
        or base in _ATTENTION_BACKWARD
    )


_GEMMS = frozenset(
    [
        "mm",
        "addmm",
        "_addmm_activation",
        "bmm",
        "baddbmm",
        "matmul",
        "linear",
        "_scaled_mm",
        "_int_mm",
        "_weight_int8pack_mm",
        "_grouped_mm",
        "_scaled_grouped_mm",
    ]
)
# other libraries' ops that are F.linear(x, weight, bias): x[..., K], weight[N, K]
_LINEAR_OPS = frozenset(["vllm::rocm_unquantized_gemm"])
# packed (varlen) positions: cum_seq_q, cum_seq_k, max_q, max_k
_VARLEN: dict[str, tuple[int, ...]] = {
    "_flash_attention_forward": (3, 4, 5, 6),
    "_flash_attention_backward": (6, 7, 8, 9),
}
_CONV_BACKWARD = frozenset(("cudnn_convolution_backward_input", "convolution_backward"))
# (bias arg, stride, padding, dilation, transposed flag) argument positions
_CONVOLUTIONS: dict[str, tuple[int | None, int, int, int, int | None]] = {
    "convolution": (2, 3, 4, 5, 6),
    "_convolution": (2, 3, 4, 5, 6),
    "conv1d": (2, 3, 4, 5, None),
    "conv2d": (2, 3, 4, 5, None),
    "conv3d": (2, 3, 4, 5, None),
    "cudnn_convolution": (None, 3, 2, 4, None),  # (self, weight, padding, stride, dilation, groups, ...)
    "miopen_convolution": (2, 4, 3, 5, None),  # (self, weight, bias, padding, stride, dilation, ...)
}
# conv_transposeNd(input, weight, bias, stride, padding, output_padding, groups, dilation)
_TRANSPOSED = frozenset(("conv_transpose1d", "conv_transpose2d", "conv_transpose3d"))
# (is_causal arg, layout) of the backward ops (grad_out first)
_ATTENTION_BACKWARD: dict[str, tuple[int, str]] = {
    "_scaled_dot_product_flash_attention_backward": (11, "bhsd"),
    "_scaled_dot_product_efficient_attention_backward": (11, "bhsd"),
    "_scaled_dot_product_cudnn_attention_backward": (14, "bhsd"),
    "_flash_attention_backward": (11, "bshd"),
    "_efficient_attention_backward": (14, "bshd"),  # its custom_mask_type: 0 none, 1/2 causal
}
# (is_causal arg, layout, attention mask arg)
_ATTENTION: dict[str, tuple[int | None, str, int | None]] = {
    "scaled_dot_product_attention": (5, "bhsd", 3),
    "_scaled_dot_product_flash_attention": (4, "bhsd", None),
    "_scaled_dot_product_flash_attention_for_cpu": (4, "bhsd", 5),
    "_scaled_dot_product_efficient_attention": (6, "bhsd", 3),
    "_scaled_dot_product_cudnn_attention": (6, "bhsd", 3),
    "_flash_attention_forward": (8, "bshd", None),
    "_efficient_attention_forward": (9, "bshd", 3),  # (q, k, v, bias, cu_seqlens_q, …, custom_mask_type)
}
# ops whose sequences are packed when this argument (cu_seqlens_q) is a tensor, with q still 4-D
_CU_SEQLENS: dict[str, int] = {"_efficient_attention_forward": 4, "_efficient_attention_backward": 6}

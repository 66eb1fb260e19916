"""Convolutions whose own arguments are not enough: traces without Concrete Inputs (PyTorch 1.x to
2.3) write no stride, padding or dilation, so a forward convolution's output size, and with it its
FLOPs, is not in its own arguments; 1.x backward children (``cudnn_convolution_backward_input`` /
``_weight``) lack the tensor shapes their parent recorded. In a training trace the shapes are in
related calls (docs/metrics.md, "Roofline"):

- the **backward** of a forward convolution: its autograd node carries the forward op's ``Sequence
  number`` (same process), and the convolution backward under it has ``grad_output``, shaped like the
  forward's output. Forward FLOPs = 2·N·C_out·Π(out)·(C_in/groups)·Π(kernel) (+ N·C_out·Π(out) with a
  bias), bytes = inputs + output; used only when the backward's input and weight shapes equal the
  forward's and one output shape is found for the sequence number.
- the **parent** ``cudnn_convolution_backward`` / ``miopen_convolution_backward`` (self, grad_output,
  weight, …) of a 1.x ``…_backward_input`` (writes a gradient shaped like ``self``) or
  ``…_backward_weight`` (FLOPs of a forward, from grad_output and the parent's weight; writes the
  weight's gradient).

An inference trace without Concrete Inputs has no backward: its forward convolutions stay unknown.
"""

from __future__ import annotations

import math

import numpy as np

from torch_tb_profiler.analysis.core import names
from torch_tb_profiler.analysis.roofline import work as W

FORWARD = frozenset(
    f"aten::{n}"
    for n in (
        "convolution",
        "_convolution",
        "conv1d",
        "conv2d",
        "conv3d",
        "cudnn_convolution",
        "miopen_convolution",
    )
)
# backward op -> positions of (forward input, grad_output, weight)
BACKWARD = {
    "aten::cudnn_convolution_backward": (0, 1, 2),
    "aten::miopen_convolution_backward": (0, 1, 2),
    "aten::convolution_backward": (1, 0, 2),
}
CHILDREN = frozenset(
    f"aten::{k}_convolution_backward_{w}" for k in ("cudnn", "miopen") for w in ("input", "weight")
)


def _parse(profile, row: int) -> W.Args | None:
    ops = profile.ops
    concrete = ops["concrete_inputs"].iat[row] if "concrete_inputs" in ops.columns else ""
    return W.parse(
        str(ops["input_dims"].iat[row] or ""), str(ops["input_types"].iat[row] or ""), str(concrete or "")
    )


def _rows_named(profile, wanted: frozenset[str] | set[str]) -> np.ndarray:
    codes, values = names.factorized(profile, "ops")
    hit = np.fromiter((str(v) in wanted for v in values), dtype=bool, count=len(values))
    return np.flatnonzero(hit[codes]) if hit.any() else np.zeros(0, np.int64)


def fill(profile, flops: np.ndarray, nbytes: np.ndarray, dtype: np.ndarray, reason: np.ndarray) -> None:
    """Fills, in place, the per-op arrays of ``attribution.op_work`` where the links above give what the
    op's own arguments do not (rows whose FLOPs are unknown only)."""
    ops = profile.ops
    if not len(ops) or "input_dims" not in ops.columns:
        return
    backward = _rows_named(profile, set(BACKWARD))
    if not backward.size:
        return
    parent = ops["parent"].to_numpy(dtype=np.int64)
    _fill_children(profile, backward, parent, flops, nbytes, dtype, reason)
    _fill_forwards(profile, backward, parent, flops, nbytes, dtype, reason)


def _fill_forwards(profile, backward, parent, flops, nbytes, dtype, reason) -> None:
    ops = profile.ops
    seq = ops["seq"].to_numpy(dtype=np.int64)
    pids = ops["pid"].to_numpy(dtype=object)
    # (pid, sequence number) -> (input shape, weight shape, grad_output shape); None when ambiguous
    found: dict[tuple[object, int], tuple | None] = {}
    for row in backward:
        node = parent[row]
        s = seq[node] if node >= 0 and seq[node] >= 0 else seq[row]
        a = _parse(profile, row)
        if s < 0 or a is None:
            continue
        ix, ig, iw = BACKWARD[str(ops["name"].iat[row])]
        shapes = (a.tensor(ix), a.tensor(iw), a.tensor(ig))
        if any(x is None for x in shapes):
            continue
        key = (pids[row], int(s))
        value = tuple(tuple(x) for x in shapes)  # type: ignore[arg-type]
        found[key] = value if found.get(key, value) == value else None
    if not found:
        return
    for row in _rows_named(profile, FORWARD):
        if not np.isnan(flops[row]):
            continue
        shapes = found.get((pids[row], int(seq[row])))
        a = _parse(profile, row)
        if shapes is None or a is None:
            continue
        x, w, out = (list(v) for v in shapes)
        if a.tensor(0) != x or a.tensor(1) != w or len(out) != len(x):
            continue
        has_bias = a.tensor(2) is not None  # cudnn_convolution's third argument is a list: no bias
        per_out = out[0] * out[1] * math.prod(out[2:])
        flops[row] = 2.0 * per_out * w[1] * math.prod(w[2:]) + (per_out if has_bias else 0)
        nbytes[row] = W.inputs_bytes(a) + float(math.prod(out)) * a.size(0)
        dtype[row] = W.DTYPE_OF.get(a.types[0], "") if a.types else ""
        reason[row] = ""


def _fill_children(profile, backward, parent, flops, nbytes, dtype, reason) -> None:
    """1.x ``…_backward_input`` / ``_weight`` under a ``…_convolution_backward`` parent."""
    ops = profile.ops
    children = _rows_named(profile, CHILDREN)
    if not children.size:
        return
    is_parent = np.zeros(len(ops), dtype=bool)
    is_parent[backward] = True
    for row in children:
        up = parent[row]
        if up < 0 or not is_parent[up]:
            continue
        own, mine = _parse(profile, up), _parse(profile, row)
        if own is None or mine is None:
            continue
        ix, _, iw = BACKWARD[str(ops["name"].iat[up])]
        x, w, grad = own.tensor(ix), own.tensor(iw), mine.tensor(1)
        if x is None or w is None or grad is None or len(grad) != len(w):
            continue
        element = mine.size(1)
        if str(ops["name"].iat[row]).endswith("_input"):
            if np.isnan(nbytes[row]):
                nbytes[row] = W.inputs_bytes(mine) + float(math.prod(x)) * element
        elif np.isnan(flops[row]):
            flops[row] = 2.0 * grad[0] * grad[1] * math.prod(grad[2:]) * w[1] * math.prod(w[2:])
            nbytes[row] = W.inputs_bytes(mine) + float(math.prod(w)) * element
        dtype[row] = dtype[row] or W.DTYPE_OF.get(mine.types[1], "")
        if not (np.isnan(flops[row]) or np.isnan(nbytes[row])):
            reason[row] = ""

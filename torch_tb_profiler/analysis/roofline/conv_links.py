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
import pandas as pd

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


def fill(
    profile,
    combo: np.ndarray,
    combo_names: list[str],
    combo_args: list[W.Args | None],
    out: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
) -> None:
    """Fills, in place, the per-op arrays ``out`` = (flops, bytes, dtype, reason) of
    ``attribution.op_work`` where the links above give what an op's own arguments do not. ``combo``:
    per op, its distinct (name, shapes, types, Concrete Inputs) combination; ``combo_names`` and
    ``combo_args`` the name and parsed arguments of each (parsed once: a trace repeats few)."""
    ops = profile.ops
    # per combination: 1 backward, 2 forward, 3 backward child, 0 anything else
    kind = np.array(
        [1 if n in BACKWARD else 2 if n in FORWARD else 3 if n in CHILDREN else 0 for n in combo_names],
        dtype=np.int8,
    )
    if not len(ops) or not (kind == 1).any():
        return
    row_kind = kind[combo]
    parent = ops["parent"].to_numpy(dtype=np.int64)
    _fill_children(np.flatnonzero(row_kind == 3), combo, combo_names, combo_args, kind, parent, out)
    _fill_forwards(profile, row_kind, combo, combo_names, combo_args, parent, out)


def _backward_shapes(name: str, a: W.Args | None) -> tuple[tuple[int, ...], ...] | None:
    """(forward input, weight, grad_output) shapes of a convolution backward call."""
    if a is None:
        return None
    ix, ig, iw = BACKWARD[name]
    shapes = (a.tensor(ix), a.tensor(iw), a.tensor(ig))
    return None if any(x is None for x in shapes) else tuple(tuple(x) for x in shapes)  # type: ignore[arg-type]


def _fill_forwards(profile, row_kind, combo, combo_names, combo_args, parent, out) -> None:
    ops = profile.ops
    seq = ops["seq"].to_numpy(dtype=np.int64)
    pid = pd.factorize(ops["pid"].to_numpy(dtype=object))[0].astype(np.int64)
    shapes = [
        _backward_shapes(n, a) if n in BACKWARD else None
        for n, a in zip(combo_names, combo_args, strict=True)
    ]
    shape_codes, shape_values = pd.factorize(pd.Series(shapes, dtype=object), use_na_sentinel=True)
    # backward calls: key (pid, the autograd node's sequence number) -> its shapes
    rows = np.flatnonzero(row_kind == 1)
    node = parent[rows]
    own = np.where(node >= 0, seq[np.maximum(node, 0)], -1)
    s = np.where(own >= 0, own, seq[rows])
    vid = shape_codes[combo[rows]]
    ok = (s >= 0) & (vid >= 0)
    width = int(seq.max()) + 2
    links = pd.DataFrame({"key": pid[rows][ok] * width + s[ok], "vid": vid[ok]})
    if links.empty:
        return
    per_key = links.groupby("key")["vid"].agg(["first", "nunique"])
    per_key = per_key[per_key["nunique"] == 1]  # two backwards disagree: no link
    fwd = np.flatnonzero((row_kind == 2) & np.isnan(out[0]) & (seq >= 0))
    at = pd.Index(per_key.index).get_indexer(pid[fwd] * width + seq[fwd])
    fwd, at = fwd[at >= 0], at[at >= 0]
    _broadcast(fwd, combo[fwd], per_key["first"].to_numpy()[at], out,
               lambda c, v: _forward_work(combo_args[c], shape_values[v]))  # fmt: skip


def _broadcast(rows: np.ndarray, left: np.ndarray, right: np.ndarray, out, work) -> None:
    """``work(l, r)`` once per distinct (left, right) pair of ``rows``, written into ``out`` where it
    is known (an already known figure is kept)."""
    if not rows.size:
        return
    flops, nbytes, dtype, reason = out
    width = int(right.max()) + 1
    pair, pairs = pd.factorize(left.astype(np.int64) * width + right)
    for i, code in enumerate(pairs):
        got = work(int(code) // width, int(code) % width)
        if got is None:
            continue
        sel = rows[pair == i]
        f, b, d = got
        flops[sel] = np.where(np.isnan(flops[sel]), f, flops[sel])
        nbytes[sel] = np.where(np.isnan(nbytes[sel]), b, nbytes[sel])
        dtype[sel] = np.where(dtype[sel] == "", d, dtype[sel])
        known = ~(np.isnan(flops[sel]) | np.isnan(nbytes[sel]))
        reason[sel[known]] = ""


def _forward_work(a: W.Args | None, shapes: tuple) -> tuple[float, float, str] | None:
    if a is None:
        return None
    x, w, grad = (list(v) for v in shapes)
    if a.tensor(0) != x or a.tensor(1) != w or len(grad) != len(x):
        return None
    has_bias = a.tensor(2) is not None  # cudnn_convolution's third argument is a list: no bias
    per_out = grad[0] * grad[1] * math.prod(grad[2:])
    flops = 2.0 * per_out * w[1] * math.prod(w[2:]) + (per_out if has_bias else 0)
    moved = W.inputs_bytes(a) + float(math.prod(grad)) * a.size(0)
    return flops, moved, W.DTYPE_OF.get(a.types[0], "") if a.types else ""


def _fill_children(rows, combo, combo_names, combo_args, kind, parent, out) -> None:
    """1.x ``…_backward_input`` / ``_weight`` under a ``…_convolution_backward`` parent."""
    up = parent[rows]
    ok = up >= 0
    ok[ok] = kind[combo[up[ok]]] == 1
    rows, up = rows[ok], up[ok]
    _broadcast(rows, combo[rows], combo[up], out,
               lambda c, u: _child_work(combo_names[c], combo_args[c], combo_names[u], combo_args[u]))  # fmt: skip


def _child_work(name: str, mine: W.Args | None, parent_name: str, own: W.Args | None):
    shapes = _backward_shapes(parent_name, own)
    if mine is None or shapes is None:
        return None
    x, w, _ = (list(v) for v in shapes)
    grad = mine.tensor(1)
    if grad is None or len(grad) != len(w):
        return None
    element = mine.size(1)
    d = W.DTYPE_OF.get(mine.types[1], "")
    flops = 2.0 * grad[0] * grad[1] * math.prod(grad[2:]) * w[1] * math.prod(w[2:])
    if name.endswith("_input"):  # writes a gradient shaped like the forward input
        return flops, W.inputs_bytes(mine) + float(math.prod(x)) * element, d
    return flops, W.inputs_bytes(mine) + float(math.prod(w)) * element, d  # writes dW

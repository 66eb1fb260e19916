"""Who holds the work: per op call its FLOPs and bytes (trace counts first, else the model), the
*holder* calls that carry it, and each kernel's share.

- An op call's own figures, in this order of trust: the op's ``flops`` arg (``with_flops=True``) for
  FLOPs; the Inductor counts (``kernel_flop``, ``kernel_num_gb``) of its kernels when every kernel it
  launched carries them; else ``work.model`` from its shapes. Each figure says its source.
- A **holder** is a call with known work and kernel time in its subtree none of whose descendants is
  one: the leaf op that launched the kernels (``aten::addmm`` under ``aten::linear``, ``aten::mm``
  under ``aten::matmul``), so no FLOP is counted twice. Holders' subtrees are disjoint. A holder's time
  is the kernel time of its subtree (memcpy/memset are not kernels: a copy over PCIe is not on the
  roofline).
- A kernel under a holder takes the holder's work when it is the holder's only kernel (exactly); a
  holder with several kernels splits its work by kernel time only to place it in steps (MFU); a kernel
  with Inductor counts keeps its own.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from torch_tb_profiler.analysis.core import names
from torch_tb_profiler.analysis.core.cache import memoized
from torch_tb_profiler.analysis.device.tensor_cores import kernel_uses_tensor_cores
from torch_tb_profiler.analysis.ops.operators import op_stats, subtree_sum
from torch_tb_profiler.analysis.roofline import conv_links
from torch_tb_profiler.analysis.roofline import work as W


def op_work(profile) -> pd.DataFrame:
    """Per row of ``profile.ops``: flops, bytes (NaN unknown), dtype, flops_source, bytes_source
    ("trace", "model", ""), reason (why unknown; "" when both are known)."""
    return memoized(profile, "roofline.op_work", lambda: _op_work(profile))


def _op_work(profile) -> pd.DataFrame:
    ops = profile.ops
    n = len(ops)
    if not n:
        return pd.DataFrame(
            {c: [] for c in ("flops", "bytes", "dtype", "flops_source", "bytes_source", "reason")}
        )
    columns = [c for c in ("name", "input_dims", "input_types", "concrete_inputs") if c in ops.columns]
    coded = [names.factorized(profile, "ops", c) for c in columns]
    # one code per distinct (name, dims, types, concrete): pairwise, each product < n² (no overflow)
    inverse = coded[0][0]
    for codes, values in coded[1:]:
        inverse = pd.factorize(inverse * (len(values) + 1) + codes)[0].astype(np.int64)
    first = np.unique(inverse, return_index=True)[1]  # a row of each distinct combination
    found, combo_names, combo_args = [], [], []
    for row in first:
        texts = [str(values[codes[row]]) for codes, values in coded]
        texts += [""] * (4 - len(texts))
        combo_names.append(texts[0])
        combo_args.append(W.parse(texts[1], texts[2], texts[3]))
        found.append(W.model(texts[0], combo_args[-1]))
    flops = np.array([np.nan if w.flops is None else w.flops for w in found])[inverse]
    nbytes = np.array([np.nan if w.bytes is None else w.bytes for w in found])[inverse]
    dtype = np.array([w.dtype or "" for w in found], dtype=object)[inverse]
    reason = np.array([w.reason or "" for w in found], dtype=object)[inverse]
    conv_links.fill(profile, inverse, combo_names, combo_args, (flops, nbytes, dtype, reason))
    f_src = np.where(np.isnan(flops), "", "model").astype(object)
    b_src = np.where(np.isnan(nbytes), "", "model").astype(object)

    # the trace's own counts win: Inductor's on kernels (when all of an op's kernels carry them) ...
    k_flops, k_bytes = _inductor_counts(profile, n)
    has = ~np.isnan(k_flops)
    flops[has], f_src[has] = k_flops[has], "trace"
    has = ~np.isnan(k_bytes)
    nbytes[has], b_src[has] = k_bytes[has], "trace"
    # ... and the op's own flops arg
    if "flops" in ops.columns:
        arg = ops["flops"].to_numpy(dtype=np.float64)
        has = np.isfinite(arg) & (arg > 0)
        flops[has], f_src[has] = arg[has], "trace"
    reason = np.where(np.isnan(flops) | np.isnan(nbytes), reason, "")
    return pd.DataFrame(
        {
            "flops": flops,
            "bytes": nbytes,
            "dtype": dtype,
            "flops_source": f_src,
            "bytes_source": b_src,
            "reason": reason,
        },
        copy=False,
    )


def _kernel_rows(profile) -> np.ndarray:
    dev = profile.device
    return np.flatnonzero(dev["kind"].to_numpy() == "kernel") if len(dev) else np.zeros(0, np.int64)


def _inductor_counts(profile, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per op (folded): Σ kernel_flop and Σ kernel_num_gb·1e9 of the kernels it launched, when every one
    of them carries the count; NaN otherwise."""
    out_f, out_b = np.full(n, np.nan), np.full(n, np.nan)
    dev = profile.device
    rows = _kernel_rows(profile)
    if not rows.size or "kernel_flop" not in dev.columns:
        return out_f, out_b
    rep = op_stats(profile)["rep"].to_numpy()
    op = dev["op"].to_numpy(dtype=np.int64)[rows]
    linked = op >= 0
    op = rep[op[linked]]
    for column, scale, out in (("kernel_flop", 1.0, out_f), ("kernel_num_gb", 1e9, out_b)):
        value = dev[column].to_numpy(dtype=np.float64)[rows][linked]
        if np.isnan(value).all():
            continue
        total = np.bincount(op, weights=np.nan_to_num(value) * scale, minlength=n)
        missing = np.bincount(op, weights=np.isnan(value).astype(np.float64), minlength=n)
        count = np.bincount(op, minlength=n)
        ok = (count > 0) & (missing == 0)
        out[ok] = total[ok]
    return out_f, out_b


def holders(profile) -> pd.DataFrame:
    """The holder calls (see the module docstring), in op order: ``op`` (row in ops), ``kernel_us``
    (kernel time of its subtree), ``kernels`` (how many), ``tc_us`` (of it on tensor cores), and its
    op_work columns. Cached."""
    return memoized(profile, "roofline.holders", lambda: _holders(profile))


def kernel_holder(profile) -> np.ndarray:
    """Per kernel row of ``profile.device`` (those with kind kernel, in order): the position in
    ``holders(profile)`` of the holder whose subtree launched it, -1 for none."""
    return memoized(profile, "roofline.kernel_holder", lambda: _holders_and_kernels(profile)[1])


def _holders(profile) -> pd.DataFrame:
    return _holders_and_kernels(profile)[0]


def _holders_and_kernels(profile) -> tuple[pd.DataFrame, np.ndarray]:
    def compute() -> tuple[pd.DataFrame, np.ndarray]:
        ops = profile.ops
        n = len(ops)
        work = op_work(profile)
        dev = profile.device
        rows = _kernel_rows(profile)
        stats = op_stats(profile) if n else None
        rep = stats["rep"].to_numpy() if stats is not None else np.zeros(0, np.int64)
        k_op = dev["op"].to_numpy(dtype=np.int64)[rows] if rows.size else np.zeros(0, np.int64)
        k_dur = dev["dur"].to_numpy(dtype=np.float64)[rows] if rows.size else np.zeros(0)
        linked = k_op >= 0
        k_rep = np.where(linked, rep[np.maximum(k_op, 0)] if n else -1, -1)
        self_us = np.bincount(k_rep[linked], weights=k_dur[linked], minlength=n) if n else np.zeros(0)
        last = ops["last"].to_numpy(dtype=np.int64) if n else np.zeros(0, np.int64)
        subtree_us = subtree_sum(self_us, last)
        known = ~(np.isnan(work["flops"].to_numpy()) & np.isnan(work["bytes"].to_numpy()))
        cand = known & (subtree_us > 0) & (rep == np.arange(n))
        below = np.concatenate(([0], np.cumsum(cand)))
        # a candidate holds the work when no candidate lies strictly inside its subtree
        is_holder = cand & (below[last] - below[np.arange(n) + 1] == 0)
        held = np.flatnonzero(is_holder)
        # each kernel's holder: the holder whose subtree [h, last[h]) contains the kernel's op
        pos = np.searchsorted(held, k_rep, side="right") - 1
        ok = linked & (pos >= 0)
        ok[ok] &= k_rep[ok] < last[held[pos[ok]]]
        k_holder = np.where(ok, pos, -1)
        tc = names.mask(profile, "device", kernel_uses_tensor_cores)[rows] if rows.size else np.zeros(0, bool)
        m = held.size
        sel = k_holder >= 0
        kernel_us = np.bincount(k_holder[sel], weights=k_dur[sel], minlength=m)
        kernels = np.bincount(k_holder[sel], minlength=m)
        tc_us = np.bincount(k_holder[sel & tc], weights=k_dur[sel & tc], minlength=m)
        frame = work.iloc[held].reset_index(drop=True)
        frame.insert(0, "op", held)
        frame["kernel_us"] = kernel_us
        frame["kernels"] = kernels
        frame["tc_us"] = tc_us
        frame.attrs["subtree_us"] = subtree_us  # per op: kernel time of its subtree (subtree_work)
        return frame, k_holder

    return memoized(profile, "roofline.holders_kernels", compute)


def subtree_work(profile) -> pd.DataFrame:
    """Per row of ``profile.ops``: the holders' figures summed over the op's subtree — ``flops``,
    ``bytes`` (NaN when a holder inside lacks one, or none is inside), ``known_us`` (the holders' kernel
    time), ``kernel_us`` (all kernel time of the subtree), ``tc_us``, ``holders``, ``dtype`` (the first
    holder's). A wrapper
    (``aten::linear``, ``aiter::gemm_a16w16``) shows its leaves' work as its total. Cached."""

    def compute() -> pd.DataFrame:
        n = len(profile.ops)
        hold = holders(profile)
        op = hold["op"].to_numpy()
        last = profile.ops["last"].to_numpy(dtype=np.int64) if n else np.zeros(0, np.int64)
        # holders are few and in op order: those inside op i's subtree [i, last[i]) are the positions
        # [lo[i], hi[i]) of ``op``, so each sum is a difference of two prefixes over the holders alone
        lo = np.searchsorted(op, np.arange(n), side="left")
        hi = np.searchsorted(op, last, side="left")
        count = hi - lo
        none = count == 0

        def inside(values: np.ndarray) -> np.ndarray:
            # extended precision, as subtree_sum: a small subtree's figure stays exact to rounding
            prefix = np.concatenate(([0], np.cumsum(values, dtype=np.longdouble)))
            return (prefix[hi] - prefix[lo]).astype(np.float64)

        out: dict[str, np.ndarray] = {}
        for column in ("flops", "bytes"):
            values = hold[column].to_numpy(dtype=np.float64)
            missing = np.concatenate(([0], np.cumsum(np.isnan(values))))
            total = inside(np.nan_to_num(values))
            total[(missing[hi] - missing[lo] > 0) | none] = np.nan
            out[column] = total
        out["known_us"] = inside(hold["kernel_us"].to_numpy(dtype=np.float64))
        out["tc_us"] = inside(hold["tc_us"].to_numpy(dtype=np.float64))
        out["holders"] = count.astype(np.int64)
        out["kernel_us"] = hold.attrs.get("subtree_us", np.zeros(n))
        # the dtype of the first holder inside (a wrapper has no model of its own)
        dtypes = hold["dtype"].to_numpy()
        first = dtypes[np.minimum(lo, op.size - 1)] if op.size else np.full(n, "", dtype=object)
        out["dtype"] = np.where(none, "", first)
        return pd.DataFrame(out, copy=False)

    return memoized(profile, "roofline.subtree_work", compute)


def kernel_work(profile) -> pd.DataFrame:
    """Per kernel row (kind kernel, in device order): ``flops``, ``bytes`` (their share, NaN unknown),
    ``exact`` (bool: its own counts, or its holder's only kernel), ``dtype``, ``source``, ``holder``."""
    return memoized(profile, "roofline.kernel_work", lambda: _kernel_work(profile))


def _kernel_work(profile) -> pd.DataFrame:
    dev = profile.device
    rows = _kernel_rows(profile)
    hold = holders(profile)
    k_holder = kernel_holder(profile)
    dur = dev["dur"].to_numpy(dtype=np.float64)[rows] if rows.size else np.zeros(0)
    has = k_holder >= 0
    h = np.maximum(k_holder, 0)
    h_flops = hold["flops"].to_numpy()[h] if len(hold) else np.full(rows.size, np.nan)
    h_bytes = hold["bytes"].to_numpy()[h] if len(hold) else np.full(rows.size, np.nan)
    h_us = hold["kernel_us"].to_numpy()[h] if len(hold) else np.ones(rows.size)
    h_n = hold["kernels"].to_numpy()[h] if len(hold) else np.zeros(rows.size)
    share = np.divide(dur, h_us, out=np.zeros_like(dur), where=h_us > 0)
    flops = np.where(has, h_flops * share, np.nan)
    nbytes = np.where(has, h_bytes * share, np.nan)
    exact = has & (h_n == 1)
    src_model = hold["flops_source"].to_numpy()[h] if len(hold) else np.full(rows.size, "", dtype=object)
    source = np.where(has, src_model, "").astype(object)
    dtype = np.where(has, hold["dtype"].to_numpy()[h] if len(hold) else "", "").astype(object)
    if rows.size and "kernel_flop" in dev.columns:
        own_f = dev["kernel_flop"].to_numpy(dtype=np.float64)[rows]
        own_b = dev["kernel_num_gb"].to_numpy(dtype=np.float64)[rows] * 1e9
        mine = ~np.isnan(own_f) | ~np.isnan(own_b)
        flops = np.where(mine, own_f, flops)
        nbytes = np.where(mine, own_b, nbytes)
        exact = exact | mine
        source = np.where(mine, "trace", source).astype(object)
    return pd.DataFrame(
        {
            "flops": flops,
            "bytes": nbytes,
            "exact": exact,
            "dtype": dtype,
            "source": source,
            "holder": k_holder,
        }
    )


def has_flops(profile) -> bool:
    """Whether some FLOPs can be known (the Roofline view is listed): a kernel with Inductor's count,
    an op with a ``flops`` arg, or a FLOP-modelled op (GEMM, convolution, attention) with input shapes.
    A name test per distinct (name, shapes) pair: cheap enough for load time."""

    def compute() -> bool:
        dev = profile.device
        if (
            len(dev)
            and "kernel_flop" in dev.columns
            and np.isfinite(dev["kernel_flop"].to_numpy(np.float64)).any()
        ):
            return True
        ops = profile.ops
        if not len(ops):
            return False
        if "flops" in ops.columns and (np.nan_to_num(ops["flops"].to_numpy(np.float64)) > 0).any():
            return True
        codes, values = names.factorized(profile, "ops")
        flop_names = np.fromiter((W.flop_modelled(str(v)) for v in values), dtype=bool, count=len(values))
        if not flop_names.any():
            return False
        dims = ops["input_dims"].to_numpy()[flop_names[codes]]
        return bool(any(d not in ("", "[]") for d in set(dims)))

    return memoized(profile, "roofline.has_flops", compute)

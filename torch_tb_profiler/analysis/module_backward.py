"""Backward time per module: the backward functions of the ops a module ran in its forward.

PyTorch links each forward op to its autograd backward function by a ``fwdbwd`` flow (``profile.flows``:
``fwd_op`` -> ``bwd_op``, rows of ``ops``). A flow's backward op is attributed to the innermost module
instance (``modules`` tree) whose range holds the forward op's start on the forward op's thread; each
backward op counts once (its first flow). Per instance, backward host = Σ duration of its backward ops,
backward device = Σ device total of those ops (docs/metrics.md "Operators"); totals add the instance's
descendants, as host and device totals do. The backward op may run on any thread (the autograd
engine's); it counts in the step of the forward instance.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from torch_tb_profiler.analysis import operators
from torch_tb_profiler.analysis.cache import memoized
from torch_tb_profiler.analysis.modules import tree


def backward(profile) -> tuple[np.ndarray, np.ndarray]:
    """(backward host µs, backward device µs) per instance of the modules tree, descendants included."""
    return memoized(profile, "module_backward.backward", lambda: _backward(profile))


def _backward(profile) -> tuple[np.ndarray, np.ndarray]:
    t = tree(profile, "modules")
    inst = t.instances
    n = len(inst)
    host = np.zeros(n)
    device = np.zeros(n)
    flows = profile.flows
    if not n or not len(flows):
        return host, device
    flows = flows[(flows["fwd_op"] >= 0) & (flows["bwd_op"] >= 0)].drop_duplicates("bwd_op")
    ops = profile.ops
    fwd = flows["fwd_op"].to_numpy(dtype=np.int64)
    bwd = flows["bwd_op"].to_numpy(dtype=np.int64)
    owner = _innermost(
        inst,
        t.nodes,
        ops["pid"].astype(str).to_numpy(dtype=object)[fwd],
        ops["tid"].astype(str).to_numpy(dtype=object)[fwd],
        ops["ts"].to_numpy(dtype=np.float64)[fwd],
    )
    ok = owner >= 0
    np.add.at(host, owner[ok], ops["dur"].to_numpy(dtype=np.float64)[bwd[ok]])
    np.add.at(device, owner[ok], operators.op_stats(profile)["device_total"].to_numpy()[bwd[ok]])
    parent = inst["parent"].to_numpy(dtype=np.int64)
    for i in range(n - 1, -1, -1):  # children come after their parent: add each subtree upwards
        p = parent[i]
        if p >= 0:
            host[p] += host[i]
            device[p] += device[i]
    return host, device


def _innermost(
    inst: pd.DataFrame, nodes: pd.DataFrame, pid: np.ndarray, tid: np.ndarray, t: np.ndarray
) -> np.ndarray:
    """Row of the innermost instance on (pid, tid) whose [ts, end) holds t, else -1."""
    out = np.full(len(t), -1, dtype=np.int64)
    node = inst["node"].to_numpy()
    thread = (nodes["pid"].astype(str) + "/" + nodes["tid"].astype(str)).to_numpy(dtype=object)[node]
    starts = inst["ts"].to_numpy()
    ends = inst["end"].to_numpy()
    parent = inst["parent"].to_numpy(dtype=np.int64)
    blocks = pd.Series(np.arange(len(inst))).groupby(thread, sort=False).indices
    keys = pd.Series(pid, dtype=object) + "/" + pd.Series(tid, dtype=object)
    for key, rows in pd.Series(np.arange(len(t))).groupby(keys.to_numpy(), sort=False).indices.items():
        block = blocks.get(key)
        if block is None:
            continue
        lo, hi = int(block[0]), int(block[-1]) + 1  # a thread's instances are contiguous
        cand = lo + np.searchsorted(starts[lo:hi], t[rows], side="right") - 1
        found = np.full(len(rows), -1, dtype=np.int64)
        for j, c in enumerate(cand.tolist()):
            while c >= lo and ends[c] <= t[rows[j]]:
                c = parent[c]
            found[j] = c if c >= lo else -1
        out[rows] = found
    return out

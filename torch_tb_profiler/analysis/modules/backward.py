"""``<module>.backward`` nodes: the backward functions of the ops a module ran in its forward.

PyTorch links each forward op to its autograd backward function by a ``fwdbwd`` flow (``profile.flows``:
``fwd_op`` -> ``bwd_op``, rows of ``ops``). A flow's backward op is attributed to the innermost forward
module instance whose range holds the forward op's start on the forward op's thread; each backward op
counts once (its first flow). Every forward node with backward ops in its subtree gets one backward
node ``<name>.backward``, under the backward node of its forward parent (so the backward tree mirrors
the forward one; a root module's backward node is a root). A forward instance with backward ops in its
subtree gives one backward instance, in the forward instance's step:

- host total = the union of the ranges of the backward ops of the instance and its descendants;
  host self = host total − Σ host total of the direct child backward instances;
- device total = Σ device total of those backward ops (docs/metrics.md "Operators"); device self
  likewise;
- thread = the thread of the backward instance's longest backward op (the autograd engine's).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from torch_tb_profiler.analysis.ops import operators
from torch_tb_profiler.model import intervals as iv


@dataclass
class BackwardPart:
    """``nodes`` and ``instances`` in the columns of ``modules.ModuleTree`` (ids and rows counted from
    0; the caller offsets them after the forward ones); ``ops``: backward op rows sorted by the forward
    instance they belong to; ``lo``/``hi``: per backward instance, its slice of ``ops`` (its subtree's)."""

    nodes: pd.DataFrame
    instances: pd.DataFrame
    ops: np.ndarray
    lo: np.ndarray
    hi: np.ndarray


def build(profile, nodes: pd.DataFrame, inst: pd.DataFrame) -> BackwardPart:
    """The backward nodes and instances of a forward tree (``nodes``, ``instances`` of ModuleTree)."""
    n = len(inst)
    owner, bwd = _attributed(profile, nodes, inst)
    ops = profile.ops
    order = np.lexsort((ops["ts"].to_numpy(dtype=np.float64)[bwd], owner))
    owner, bwd = owner[order], bwd[order]
    parent = inst["parent"].to_numpy(dtype=np.int64)
    levels = _levels(parent)
    starts = ops["ts"].to_numpy(dtype=np.float64)[bwd]
    ends = ops["end"].to_numpy(dtype=np.float64)[bwd]
    durs = ends - starts
    thread_code, thread_names = pd.factorize(
        (ops["pid"].astype(str) + "/" + ops["tid"].astype(str)).to_numpy(dtype=object)[bwd]
    )
    # per forward instance: its own backward ops' figures, then its subtree's (children fold upwards)
    count = np.bincount(owner, minlength=n).astype(np.float64)
    host = np.bincount(owner, weights=durs, minlength=n)
    device = np.bincount(
        owner, weights=operators.op_stats(profile)["device_total"].to_numpy()[bwd], minlength=n
    )
    overlapping = np.bincount(owner, weights=_later_overlaps(thread_code, starts, ends), minlength=n)
    first = np.full(n, np.inf)
    final = np.full(n, -np.inf)
    np.minimum.at(first, owner, starts)
    np.maximum.at(final, owner, ends)
    longest = np.full(n, -1.0)
    longest_thread = np.full(n, -1, dtype=np.int64)
    by_length = np.lexsort((durs, owner))  # the last row of each owner is its longest op
    tail = by_length[np.r_[owner[by_length][1:] != owner[by_length][:-1], True]] if len(owner) else by_length
    longest[owner[tail]] = durs[tail]
    longest_thread[owner[tail]] = thread_code[tail]
    last = np.arange(1, n + 1, dtype=np.int64)  # one past each instance's subtree (rows are contiguous)
    for rows in levels:  # deepest first, so a child is complete before it folds into its parent
        up = parent[rows]
        for column in (count, host, device, overlapping):
            np.add.at(column, up, column[rows])
        np.minimum.at(first, up, first[rows])
        np.maximum.at(final, up, final[rows])
        np.maximum.at(last, up, last[rows])
        np.maximum.at(longest, up, longest[rows])
        won = longest[rows] == longest[up]
        longest_thread[up[won]] = longest_thread[rows[won]]
    lo = np.searchsorted(owner, np.arange(n), side="left")
    hi = np.searchsorted(owner, last, side="left")
    rows = np.flatnonzero(count > 0)  # forward instances with backward ops in their subtree
    # host = the union of the subtree's backward op ranges: their sum, unless two of them overlap
    for i in np.flatnonzero(overlapping > 0).tolist():
        host[i] = iv.total(iv.union(starts[lo[i] : hi[i]], ends[lo[i] : hi[i]]))
    host, device, first, final = host[rows], device[rows], first[rows], final[rows]
    threads = (
        np.asarray(thread_names, dtype=object)[longest_thread[rows]]
        if len(rows)
        else np.zeros(0, dtype=object)
    )
    # backward instance rows follow the forward rows' order, so a parent still precedes its children
    as_backward = np.full(n, -1, dtype=np.int64)
    as_backward[rows] = np.arange(len(rows))
    fwd_parent = parent[rows]
    b_parent = np.where(fwd_parent >= 0, as_backward[np.maximum(fwd_parent, 0)], -1)
    has_parent = b_parent >= 0
    host_child = np.zeros(len(rows))
    device_child = np.zeros(len(rows))
    np.add.at(host_child, b_parent[has_parent], host[has_parent])
    np.add.at(device_child, b_parent[has_parent], device[has_parent])
    # one backward node per forward node, numbered in forward node order (parents first)
    fwd_node = inst["node"].to_numpy(dtype=np.int64)[rows]
    used = np.unique(fwd_node)
    node_id = np.full(len(nodes), -1, dtype=np.int64)
    node_id[used] = np.arange(len(used))
    fwd_parent_node = nodes["parent"].to_numpy(dtype=np.int64)[used]
    node_thread = pd.Series(threads).groupby(fwd_node, sort=True).first()  # each node's first instance's
    pid_tid = [t.split("/", 1) for t in node_thread.loc[used].tolist()]
    b_nodes = pd.DataFrame(
        {
            "parent": np.where(fwd_parent_node >= 0, node_id[np.maximum(fwd_parent_node, 0)], -1),
            "name": (nodes["name"].iloc[used] + ".backward").to_numpy(dtype=object),
            "cls": nodes["cls"].iloc[used].to_numpy(dtype=object),
            "event": np.full(len(used), "", dtype=object),
            "pid": np.asarray([p for p, _ in pid_tid], dtype=object),
            "tid": np.asarray([t for _, t in pid_tid], dtype=object),
            "kind": np.full(len(used), "backward", dtype=object),
            "forward": used.astype(np.int64),
        }
    )
    b_inst = pd.DataFrame(
        {
            "node": node_id[fwd_node],
            "parent": b_parent,
            "step": inst["step"].to_numpy(dtype=np.int64)[rows],
            "ts": first,
            "end": final,
            "host": host,
            "host_child": host_child,
            "device": device,
            "device_child": device_child,
            "origin": rows.astype(np.int64),
        }
    )
    return BackwardPart(nodes=b_nodes, instances=b_inst, ops=bwd, lo=lo[rows], hi=hi[rows])


def _levels(parent: np.ndarray) -> list[np.ndarray]:
    """Rows of the instances that have a parent, grouped by depth, deepest first."""
    depth = np.zeros(len(parent), dtype=np.int64)
    up = parent.copy()
    while (up >= 0).any():
        depth[up >= 0] += 1
        up = np.where(up >= 0, parent[np.maximum(up, 0)], -1)
    return [np.flatnonzero(depth == d) for d in range(int(depth.max(initial=0)), 0, -1)]


def _later_overlaps(thread: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """1.0 for an op that starts before an earlier-starting op on its thread ends (of any two
    overlapping ops, the later one is marked), else 0.0."""
    out = np.zeros(len(starts))
    order = np.lexsort((starts, thread))
    th, st, en = thread[order], starts[order], ends[order]
    for lo, hi in _segments(th):
        reach = np.maximum.accumulate(en[lo:hi])
        out[order[lo + 1 : hi]] = st[lo + 1 : hi] < reach[:-1]
    return out


def _segments(sorted_codes: np.ndarray) -> list[tuple[int, int]]:
    """[lo, hi) of each run of equal values."""
    if not len(sorted_codes):
        return []
    cuts = np.flatnonzero(sorted_codes[1:] != sorted_codes[:-1]) + 1
    bounds = np.r_[0, cuts, len(sorted_codes)]
    return list(zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True))


def _attributed(profile, nodes: pd.DataFrame, inst: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(forward instance row, backward op row) of every backward op with an owner."""
    flows = profile.flows
    empty = np.zeros(0, dtype=np.int64)
    if not len(inst) or not len(flows):
        return empty, empty
    flows = flows[(flows["fwd_op"] >= 0) & (flows["bwd_op"] >= 0)].drop_duplicates("bwd_op")
    ops = profile.ops
    fwd = flows["fwd_op"].to_numpy(dtype=np.int64)
    bwd = flows["bwd_op"].to_numpy(dtype=np.int64)
    owner = _innermost(
        inst,
        nodes,
        ops["pid"].astype(str).to_numpy(dtype=object)[fwd],
        ops["tid"].astype(str).to_numpy(dtype=object)[fwd],
        ops["ts"].to_numpy(dtype=np.float64)[fwd],
    )
    ok = owner >= 0
    return owner[ok], bwd[ok]


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

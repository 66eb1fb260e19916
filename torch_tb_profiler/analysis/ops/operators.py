"""Operator view: per-operator host/device times, tensor-core figures, call stacks.

Definitions (docs/metrics.md, "Operators"), per operator call (a row of ``ops``):

- Rows are ``cpu_op`` ranges except ``ProfilerStep#*``, DataLoader ranges, ``Optimizer.*`` and
  ``(Distributed)DataParallel.forward``, plus every range (annotations and those names included)
  whose name launched device work directly, so the rows' device self adds up to the attributed device
  time. An operator whose only child is an operator of the same name (``aten::div`` calling
  ``aten::div``) is one call: the child folds into the parent, which takes over the child's
  children, runtime calls and device activities.
- host total = dur; host self = dur − Σ dur of its children − Σ dur of the runtime calls it holds
  innermost (``runtimes.host_op``).
- device self = Σ dur of the device activities (kernel, memcpy, memset) linked to the op
  (``device.op``: the runtime call's External-id op when that op encloses the call, else the deepest
  op enclosing it; cuda_runtime and cuda_driver launches alike); device total = device self summed
  over the op's subtree.
- TC self / TC total: the same sums restricted to tensor-core kernels; TC self % = TC self / device
  self, TC total % = TC total / device total (0 when the denominator is 0).
- TC eligible: the name is on the allowlist (``tensor_cores``), or a descendant is, or one of its
  kernels (or a descendant's) used tensor cores.

- graph replays: a ``graph_replay`` range (one per graph launch call, model/graph_replays.py) is a row
  of ``kind`` "graph_replay" (other rows: "op"); replayed device = the part of device self that ran in
  graph replays; replayed calls = the calls with any. A capture-time op copied onto a replay (a capture
  trace was merged) has host total and host self 0: it ran no host code in this trace.

Grouping by name, or by name + input shape, sums every figure over the calls of a group.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pandas as pd

from torch_tb_profiler.analysis.core import names as name_index
from torch_tb_profiler.analysis.core.cache import memoized
from torch_tb_profiler.analysis.device.breakdown import dataloader_ops, profiler_step_ops
from torch_tb_profiler.analysis.device.tensor_cores import op_name_eligible, uses_mask
from torch_tb_profiler.analysis.graphs.replays import replay_ops, replayed_copies, replayed_mask
from torch_tb_profiler.model.build import EnclosingOp, nesting_tolerance, op_tree

GROUP_BY = ("name", "name_input_shape")
SORT_KEYS = (
    "host_total_us",
    "host_self_us",
    "device_total_us",
    "device_self_us",
    "calls",
    "tc_self_us",
    "tc_total_us",
)
_EXCLUDED_NAMES = ("DataParallel.forward", "DistributedDataParallel.forward")
MAX_FRAMES = 1024  # python frames shown per call stack (a walk over trace ids is always bounded)


def op_stats(profile) -> pd.DataFrame:
    """Per-op-call figures, one row per row of ``profile.ops`` (same index), cached.

    Columns: ``row`` (bool: this call is an operator-table row), ``host_total``, ``host_self``,
    ``device_self``, ``device_total``, ``tc_self``, ``tc_total``, ``tc_eligible``, ``rep`` (the call it
    folds into; itself when not folded).
    """
    return memoized(profile, "operators.op_stats", lambda: _op_stats(profile))


def _op_stats(profile) -> pd.DataFrame:
    ops = profile.ops
    n = len(ops)
    parent = ops["parent"].to_numpy(dtype=np.int64)
    last = ops["last"].to_numpy(dtype=np.int64)
    # a capture-time op copied onto a graph replay ran no host code in this trace: no host time
    dur = np.where(replayed_copies(profile), 0.0, ops["dur"].to_numpy(dtype=np.float64))
    is_cpu_op = (ops["cat"] == "cpu_op").to_numpy()

    # fold same-name single-child operator chains into the topmost call
    has_parent = parent >= 0
    n_children = np.bincount(parent[has_parent], minlength=n) if n else np.zeros(0, np.int64)
    name_codes = name_index.factorized(profile, "ops")[0]
    p = np.where(has_parent, parent, 0)
    folded = has_parent & is_cpu_op & is_cpu_op[p] & (name_codes == name_codes[p]) & (n_children[p] == 1)
    rep, _ = fold_targets(np.where(folded, parent, np.arange(n)))

    # self times on the folded tree
    child_sum = np.zeros(n)
    kids = has_parent & ~folded
    np.add.at(child_sum, rep[parent[kids]], dur[kids])
    rt_sum = np.zeros(n)
    rts = profile.runtimes
    if len(rts):
        # a call's time is the host self time of the op that immediately holds it (its host op), even
        # when its device time goes to an ancestor named by its External id
        host_op = rts["host_op" if "host_op" in rts.columns else "op"].to_numpy(dtype=np.int64)
        ok = host_op >= 0
        np.add.at(rt_sum, rep[host_op[ok]], rts["dur"].to_numpy(dtype=np.float64)[ok])

    dev_self = np.zeros(n)
    tc_self = np.zeros(n)
    dev = profile.device
    if len(dev):
        d_op = dev["op"].to_numpy(dtype=np.int64)
        ok = d_op >= 0
        d_dur = dev["dur"].to_numpy(dtype=np.float64)
        tc = (dev["kind"].to_numpy() == "kernel") & uses_mask(profile)
        np.add.at(dev_self, rep[d_op[ok]], d_dur[ok])
        np.add.at(tc_self, rep[d_op[ok & tc]], d_dur[ok & tc])

    # subtree sums: rows are in depth-first order, the subtree of i is rows [i, last[i])
    eligible = name_index.mask(profile, "ops", op_name_eligible) | (tc_self > 0)
    dev_total = subtree_sum(dev_self, last)
    tc_total = subtree_sum(tc_self, last)
    eligible = subtree_sum(eligible.astype(np.float64), last) > 0

    # rows: operators, and every range (annotations included) whose name launched device work
    # directly, so that the table's device self times add up to the attributed device time
    excluded = (
        profiler_step_ops(profile)
        | dataloader_ops(profile)
        | name_index.mask(profile, "ops", lambda n: n.startswith("Optimizer.") or n in _EXCLUDED_NAMES)
    )
    launched = np.zeros(int(name_codes.max(initial=-1)) + 1, dtype=bool)
    launched[name_codes[dev_self > 0]] = True
    row = ~folded & ((is_cpu_op & ~excluded) | launched[name_codes])
    return pd.DataFrame(
        {
            "row": row,
            "rep": rep,
            "host_total": dur,
            "host_self": dur - child_sum - rt_sum,
            "device_self": dev_self,
            "device_total": dev_total,
            "tc_self": tc_self,
            "tc_total": tc_total,
            "tc_eligible": eligible,
        },
        index=ops.index,
    )


def replayed_self(profile, rep: np.ndarray) -> np.ndarray:
    """Per op: the part of its device self time that ran in graph replays (µs; on the folded tree)."""
    out = np.zeros(len(profile.ops))
    dev = profile.device
    mask = replayed_mask(profile)
    if mask.any():
        op = dev["op"].to_numpy(dtype=np.int64)[mask]
        linked = op >= 0
        np.add.at(out, rep[op[linked]], dev["dur"].to_numpy(dtype=np.float64)[mask][linked])
    return out


def fold_targets(up: np.ndarray) -> tuple[np.ndarray, int]:
    """Each row's topmost ancestor through ``up`` (a row's own index where it does not fold), and
    the number of passes taken.

    Pointer doubling: every pass doubles the jump, so a chain of length L takes about log2(L) passes
    (a level-by-level walk is quadratic on a chain of n identical calls)."""
    rep = up
    passes = 0
    while True:
        passes += 1
        nxt = rep[rep]
        if np.array_equal(nxt, rep):
            return rep, passes
        rep = nxt


def subtree_sum(values: np.ndarray, last: np.ndarray) -> np.ndarray:
    """Σ values over rows [i, last[i]) for each row i, in O(n) with prefix sums.

    Sums run in extended precision so a difference of two large prefixes keeps the small figure
    exact to float64 rounding, and a subtree without any nonzero value gets exactly 0."""
    n = len(values)
    if n == 0:
        return np.zeros(0)
    prefix = np.concatenate(([0], np.cumsum(values, dtype=np.longdouble)))
    nonzero = np.concatenate(([0], np.cumsum(values != 0)))
    idx = np.arange(n)
    out = (prefix[last] - prefix[idx]).astype(np.float64)
    out[nonzero[last] == nonzero[idx]] = 0.0
    return out


def has_stack(profile) -> np.ndarray:
    """Per op: a legacy ``Call stack`` arg, or python_function frames enclosing it on its thread."""
    return memoized(profile, "operators.has_stack", lambda: _has_stack(profile))


def _has_stack(profile) -> np.ndarray:
    ops = profile.ops
    result = name_index.mask(
        profile, "ops", lambda v: v not in ("", "nan", "None"), column="call_stack"
    ).copy()
    if len(profile.python) and len(ops):
        # an op has frames when a python range of its thread encloses it
        result |= innermost_frames(profile, np.arange(len(ops))) >= 0
    return result


def _python_tree(profile) -> tuple[pd.DataFrame, EnclosingOp, float]:
    """The python_function ranges nested by time per thread (as the op tree), their lookup and the
    nesting tolerance; cached."""

    def build() -> tuple[pd.DataFrame, EnclosingOp, float]:
        py = profile.python
        tol = nesting_tolerance(py, profile.ops)
        frames = pd.DataFrame(
            {c: py[c].to_numpy() for c in ("pid", "tid", "ts", "dur", "end")}, index=pd.RangeIndex(len(py))
        )
        tree, _ = op_tree(frames, tol)
        return tree, EnclosingOp(tree), tol

    return memoized(profile, "operators.python_tree", build)


def innermost_frames(profile, op_rows: np.ndarray) -> np.ndarray:
    """For each op row: the row of ``profile.python`` of the innermost python range on the op's thread
    that encloses the op (within the nesting tolerance), or -1."""
    if not len(profile.python) or op_rows.size == 0:
        return np.full(op_rows.size, -1, dtype=np.int64)
    tree, finder, tol = _python_tree(profile)
    ops = profile.ops
    o_end = ops["end"].to_numpy(dtype=np.float64)[op_rows]
    cand = finder.find(
        ops["pid"].to_numpy()[op_rows], ops["tid"].to_numpy()[op_rows], ops["ts"].to_numpy()[op_rows]
    )
    cand = finder.up_while(cand, lambda c, sel: o_end[sel] > finder.end[c] + tol)
    orig = tree["_orig"].to_numpy()
    return np.where(cand >= 0, orig[np.maximum(cand, 0)], -1)


def _shape_label(text: str) -> str:
    """Compact JSON input dims → the readable form ``[[32, 3, 224, 224], []]``."""
    if not text or text in ("nan", "None"):
        return ""
    try:
        return json.dumps(json.loads(text))
    except ValueError:
        return text


def operator_rows(profile) -> pd.DataFrame:
    """Per-call rows of the operator table: name, input_shape, their integer codes (``name_code``,
    ``shape_code``; grouping is done on these) and the figures (µs)."""

    def build() -> pd.DataFrame:
        stats = op_stats(profile)
        keep = stats["row"].to_numpy()
        replayed = replayed_self(profile, stats["rep"].to_numpy())
        name_codes, name_values = name_index.factorized(profile, "ops")
        shape_codes, shape_values = name_index.factorized(profile, "ops", "input_dims")
        shape_labels = np.asarray([_shape_label(t) for t in shape_values], dtype=object)
        frame = pd.DataFrame(
            {
                "name_code": name_codes[keep],
                "shape_code": shape_codes[keep],
                "name": name_values[name_codes[keep]],
                "input_shape": shape_labels[shape_codes[keep]],
                "host_self": stats["host_self"].to_numpy()[keep],
                "host_total": stats["host_total"].to_numpy()[keep],
                "device_self": stats["device_self"].to_numpy()[keep],
                "device_total": stats["device_total"].to_numpy()[keep],
                "tc_self": stats["tc_self"].to_numpy()[keep],
                "tc_total": stats["tc_total"].to_numpy()[keep],
                "tc_eligible": stats["tc_eligible"].to_numpy()[keep],
                "has_stack": has_stack(profile)[keep],
                "op": np.flatnonzero(keep),
                "kind": np.where(replay_ops(profile)[keep], "graph_replay", "op"),
                "replayed_device": replayed[keep],
                "replayed_calls": (replayed[keep] > 0).astype(np.int64),
            }
        )
        return frame

    return memoized(profile, "operators.rows", build)


def has_input_shapes(profile) -> bool:
    """Whether any operator call carries recorded input dims (``record_shapes=True``)."""
    return memoized(
        profile, "operators.has_shapes", lambda: bool((operator_rows(profile)["input_shape"] != "").any())
    )


def operator_table(profile, group_by: str = "name") -> pd.DataFrame:
    """Grouped operator table, sorted by host total (desc). Times in µs, ratios in 0..1."""
    if group_by not in GROUP_BY:
        raise ValueError(f"group_by must be one of {GROUP_BY}")
    return memoized(profile, f"operators.table.{group_by}", lambda: _group(operator_rows(profile), group_by))


def _group(rows: pd.DataFrame, group_by: str) -> pd.DataFrame:
    keys = ["name"] if group_by == "name" else ["name", "input_shape"]
    if rows.empty:
        cols = [*keys, "calls", *(f"{c}_us" for c in _SUMS), "replayed_calls", "replayed_device_us", "kind"]
        cols += ["tc_eligible", "has_call_stack"]
        return pd.DataFrame({c: [] for c in [*cols, "tc_self_ratio", "tc_total_ratio"]})
    codes = ["name_code"] if group_by == "name" else ["name_code", "shape_code"]
    g = rows.groupby(codes, sort=False)  # integer keys: much faster than grouping strings
    table = g[list(_SUMS)].sum()
    table.columns = [f"{c}_us" for c in _SUMS]
    table.insert(0, "calls", g.size())
    table["replayed_calls"] = g["replayed_calls"].sum()
    table["replayed_device_us"] = g["replayed_device"].sum()
    table["kind"] = g["kind"].first()
    table["tc_eligible"] = g["tc_eligible"].any()
    table["has_call_stack"] = g["has_stack"].any()
    first = g[keys].first()
    table = pd.concat([first, table], axis=1).reset_index(drop=True)
    table["tc_self_ratio"] = _ratio(table["tc_self_us"], table["device_self_us"])
    table["tc_total_ratio"] = _ratio(table["tc_total_us"], table["device_total_us"])
    return table.sort_values(["host_total_us", "name"], ascending=[False, True], kind="stable").reset_index(
        drop=True
    )


_SUMS = ("host_self", "host_total", "device_self", "device_total", "tc_self", "tc_total")


def _ratio(num: pd.Series, den: pd.Series) -> np.ndarray:
    n = num.to_numpy(dtype=np.float64)
    d = den.to_numpy(dtype=np.float64)
    return np.divide(n, d, out=np.zeros_like(n), where=d > 0)


def top(table: pd.DataFrame, by: str, n: int) -> pd.DataFrame:
    """The n rows with the largest ``by`` (ties by name)."""
    if by not in table.columns:
        raise ValueError(f"unknown sort key {by!r}")
    return (
        table.sort_values([by, "name"], ascending=[False, True], kind="stable").head(n).reset_index(drop=True)
    )


def records(table: pd.DataFrame) -> list[dict[str, Any]]:
    """DataFrame → list of plain dicts (numpy scalars converted)."""
    out = table.to_dict(orient="records")
    for rec in out:
        for k, v in rec.items():
            if isinstance(v, np.generic):
                rec[k] = v.item()
    return out


# ---- call stacks ----------------------------------------------------------------------------------

_FRAME = re.compile(r"^(?P<file>.*?)\((?P<line>\d+)\): (?P<func>.*)$")


def parse_frame(text: str) -> dict[str, Any]:
    """``path/file.py(123): func`` → {file, line, function}; other frames keep only the function."""
    m = _FRAME.match(text.strip())
    if m:
        return {"file": m.group("file"), "line": int(m.group("line")), "function": m.group("func")}
    return {"file": None, "line": None, "function": text.strip()}


def parse_call_stack(text: str) -> list[dict[str, Any]]:
    """A legacy ``Call stack`` arg (frames innermost first, ``;``-separated) → frames."""
    return [parse_frame(f) for f in text.split(";") if f.strip()]


def python_parents(py: pd.DataFrame) -> np.ndarray:
    """Per python_function row: the row its ``Python parent id`` names, or -1.

    A link is kept only when the parent frame is on the same thread, encloses the child and comes
    strictly before it in (start, longest first, row) order. That order is total, so the kept links
    can never form a cycle and every walk up them ends (a trace may say that two frames are each
    other's parent)."""
    n = len(py)
    ids = py["py_id"].to_numpy(dtype=np.int64)
    row_of_id = pd.Series(np.arange(n), index=ids)
    row_of_id = row_of_id[(row_of_id.index >= 0) & ~row_of_id.index.duplicated(keep="first")]
    par = (
        row_of_id.reindex(py["py_parent_id"].to_numpy(dtype=np.int64)).fillna(-1).to_numpy().astype(np.int64)
    )
    ok = par >= 0
    q = np.maximum(par, 0)
    ts = py["ts"].to_numpy(dtype=np.float64)
    end = py["end"].to_numpy(dtype=np.float64)
    me = np.arange(n)
    before = (ts[q] < ts) | ((ts[q] == ts) & ((end[q] > end) | ((end[q] == end) & (q < me))))
    ok &= before & (end[q] + nesting_tolerance(py) >= end)
    ok &= (py["pid"].to_numpy()[q] == py["pid"].to_numpy()) & (
        py["tid"].to_numpy()[q] == py["tid"].to_numpy()
    )
    return np.where(ok, par, -1)


def python_frames(profile, op_rows: np.ndarray) -> list[tuple[str, ...]]:
    """For each op: names of the python_function ranges enclosing it on its thread, innermost first:
    the innermost enclosing range, then its ``Python parent id`` chain (``python_parents``: links that
    cannot cycle), at most ``MAX_FRAMES`` frames."""
    py = profile.python
    out: list[tuple[str, ...]] = [() for _ in op_rows]
    if not len(py) or op_rows.size == 0:
        return out
    names = py["name"].astype(str).to_numpy()
    py_parent = python_parents(py)
    chains: dict[int, tuple[str, ...]] = {}

    def chain(j: int) -> tuple[str, ...]:
        if j not in chains:
            found = []
            k = j
            while k >= 0 and len(found) < MAX_FRAMES:
                found.append(names[k])
                k = int(py_parent[k])
            chains[j] = tuple(found)
        return chains[j]

    for i, j in enumerate(innermost_frames(profile, np.asarray(op_rows)).tolist()):
        if j >= 0:
            out[i] = chain(j)
    return out


def instance_rows(profile, name: str, input_shape: str) -> np.ndarray:
    """Rows in ``ops`` of the calls one row of the table grouped by input shape stands for (its name
    and shape label as the table shows them)."""
    rows = operator_rows(profile)
    sel = (rows["name"] == name) & (rows["input_shape"] == input_shape)
    return rows["op"].to_numpy()[sel.to_numpy()]


def operator_stacks(profile, name: str, input_shape: str | None = None) -> list[dict[str, Any]]:
    """The calls of one operator (optionally one input shape) grouped by call stack.

    Each entry: ``frames`` (innermost first, each {file, line, function}), ``calls`` and the summed
    figures of the operator table. Calls without a stack form one entry with ``frames == []``.
    """
    rows = operator_rows(profile)
    sel = rows["name"] == name
    if input_shape is not None:
        sel &= rows["input_shape"] == input_shape
    rows = rows[sel]
    if rows.empty:
        return []
    op_idx = rows["op"].to_numpy()
    legacy = name_index.values(profile, "ops", "call_stack")[op_idx]
    legacy = np.where(np.isin(legacy, ["nan", "None"]), "", legacy)
    py_frames = python_frames(profile, op_idx) if len(profile.python) else [() for _ in op_idx]
    keys = [leg if leg else "\n".join(pf) for leg, pf in zip(legacy, py_frames, strict=True)]
    rows = rows.assign(stack_key=keys, legacy=legacy)
    out = []
    for key, grp in rows.groupby("stack_key", sort=False):
        if grp["legacy"].iloc[0]:
            frames = parse_call_stack(grp["legacy"].iloc[0])
        else:
            frames = [parse_frame(f) for f in str(key).split("\n") if f]
        sums = {f"{c}_us": float(grp[c].sum()) for c in _SUMS}
        out.append(
            {
                "frames": frames,
                "calls": len(grp),
                **sums,
                "tc_eligible": bool(grp["tc_eligible"].any()),
                "tc_self_ratio": sums["tc_self_us"] / sums["device_self_us"]
                if sums["device_self_us"]
                else 0.0,
                "tc_total_ratio": sums["tc_total_us"] / sums["device_total_us"]
                if sums["device_total_us"]
                else 0.0,
            }
        )
    out.sort(key=lambda e: (-e["device_self_us"], -e["host_total_us"]))
    return out

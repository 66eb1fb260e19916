"""Module view: where each step's time goes per ``nn.Module`` (and per PyTorch Lightning hook).

Two trees are built from the trace's own range events (docs/metrics.md, "Modules"):

- ``modules``: ``python_function`` events named ``nn.Module: <Class>_<k>`` (``with_modules=True`` or
  ``with_stack=True``); when a trace has none, Lightning's ``[pl][module]<type>: <dotted.name>``
  ranges (``PyTorchProfiler(record_module_names=True)``, its default).
- ``hooks``: Lightning's ``[pl][profile]<action>`` ranges (``[LightningModule]…``, ``[Strategy]…``,
  ``[Callback]…``, ``[_TrainingEpochLoop].train_dataloader_next``, ``run_training_batch``...), and the
  same names written without the ``[pl][profile]`` prefix.

Rules, per thread: instances nest by time (sorted by start, longest first; an instance overhanging the
enclosing one is cut at its end); a node is (thread, parent node, name), so the same class at two
paths is two nodes and a recursive call is a child node of its own. An instance belongs to the step
whose host range holds its start and is cut at that step's end. Per node and step:

- occurrences = instances; host total = Σ their durations (the union: instances of one node on one
  thread never overlap, since an overlapping one would be nested and so a child node);
- host self = host total − Σ host total of the direct child nodes;
- device total = Σ durations of the device activities launched from inside the instances (the
  launching runtime call's start, else the linked op's start, lies in an instance's range on its
  thread); device self = device total − Σ device total of the direct child nodes.

The modules tree also holds a ``<name>.backward`` node per module with backward functions
(analysis/modules/backward.py): nodes have a ``kind`` (``forward``/``backward``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from torch_tb_profiler.analysis.core import names as name_index
from torch_tb_profiler.analysis.core.cache import memoized
from torch_tb_profiler.analysis.core.steps import steps as step_table
from torch_tb_profiler.analysis.graphs.replays import replayed_copies
from torch_tb_profiler.analysis.modules import backward as module_backward
from torch_tb_profiler.analysis.ops import operators
from torch_tb_profiler.model import intervals as iv
from torch_tb_profiler.model.graph_replays import on_replay_thread

TREES = ("modules", "hooks")
INSTANCE_COLUMNS = (
    "node",
    "parent",
    "step",
    "ts",
    "end",
    "host",
    "host_child",
    "device",
    "device_child",
    "origin",
)

PY_INSTANCE = re.compile(r"^(?P<cls>.+?)_\d+$")
PL_MODULE = re.compile(r"^\[pl\]\[module\](?P<type>[^:]*): (?P<name>.*)$")
PL_PROFILE = "[pl][profile]"
PL_HOOK = re.compile(r"^\[(LightningModule|LightningDataModule|Strategy|Callback|Precision|_\w*Loop)\]")


@dataclass
class ModuleTree:
    """``nodes``: id (= row), parent (-1 at roots), name, cls, event (the trace's own event name; ""
    for backward nodes), pid, tid, kind (``forward``, or ``backward`` for ``<name>.backward`` nodes),
    forward (a backward node's forward node, else -1), depth, order (pre-order position).
    ``instances`` (forward ones sorted by thread, start, longest first, then the backward ones; a
    parent's row precedes its children's): node, parent (instance row, -1 at roots), step (row of the
    step table, -1 outside every step), ts, end (cut; a backward instance's first backward op start
    and last end), host, host_child, device, device_child, origin (a backward instance's forward
    instance, else the row itself). ``backward``: the backward ops behind the backward instances."""

    source: str  # "nn.Module", "lightning" or "" (none)
    nodes: pd.DataFrame
    instances: pd.DataFrame
    backward: module_backward.BackwardPart | None = None


def tree(profile, which: str = "modules") -> ModuleTree:
    return memoized(profile, f"modules.tree.{which}", lambda: _build(profile, which))


def has_modules(profile) -> bool:
    """Whether the trace has module ranges (read from the events: the tree, whose backward nodes need
    the operator table, is built only when asked)."""
    return memoized(profile, "modules.has.modules", lambda: len(_module_events(profile)[1]) > 0)


def has_hooks(profile) -> bool:
    return memoized(profile, "modules.has.hooks", lambda: len(_hook_events(profile)[1]) > 0)


def has_module_view(profile) -> bool:
    """The Module view applies: module ranges or Lightning hooks."""
    return has_modules(profile) or has_hooks(profile)


# ---- events --------------------------------------------------------------------------------------


def _py_module(name: str) -> tuple[str, str]:
    """``nn.Module: Conv2d_1`` -> (``Conv2d_1``, ``Conv2d``)."""
    display = name[len("nn.Module: ") :]
    m = PY_INSTANCE.match(display)
    return display, m.group("cls") if m else display


def _pl_module(name: str) -> tuple[str, str]:
    """``[pl][module]torch.nn.modules.linear.Linear: encoder.0`` -> (``encoder.0``, ``Linear``)."""
    m = PL_MODULE.match(name)
    if m is None:
        return name[len("[pl][module]") :], ""
    return m.group("name"), m.group("type").rsplit(".", 1)[-1]


def _hook(name: str) -> tuple[str, str]:
    """``[pl][profile][Strategy]S.backward`` -> (``[Strategy]S.backward``, ``Strategy``)."""
    display = name[len(PL_PROFILE) :] if name.startswith(PL_PROFILE) else name
    m = PL_HOOK.match(display)
    return display, m.group(1) if m else "Trainer"


def _parsed(names: np.ndarray, parse) -> tuple[np.ndarray, np.ndarray]:
    """(display names, classes) of each name, ``parse`` run once per distinct name."""
    codes, uniques = pd.factorize(pd.Series(names, dtype=object))
    pairs = [parse(str(u)) for u in uniques]
    display = np.asarray([d for d, _ in pairs], dtype=object)
    classes = np.asarray([c for _, c in pairs], dtype=object)
    return display[codes], classes[codes]


def _module_events(profile) -> tuple[str, pd.DataFrame]:
    py = profile.python
    if len(py):
        is_module = name_index.mask(profile, "python", lambda n: n.startswith("nn.Module: "))
        if "py_module_id" in py:
            is_module &= py["py_module_id"].to_numpy() >= 0
        if is_module.any():
            raw = name_index.values(profile, "python")[is_module]
            return "nn.Module", _events(py[is_module], *_parsed(raw, _py_module), raw)
    ops = profile.ops
    if len(ops):
        is_pl = name_index.mask(profile, "ops", lambda n: n.startswith("[pl][module]"))
        if is_pl.any():
            raw = name_index.values(profile, "ops")[is_pl]
            return "lightning", _events(ops[is_pl], *_parsed(raw, _pl_module), raw)
    return "", _events(
        ops.iloc[:0], np.zeros(0, dtype=object), np.zeros(0, dtype=object), np.zeros(0, dtype=object)
    )


def is_hook_name(name: str) -> bool:
    return name.startswith(PL_PROFILE) or bool(PL_HOOK.match(name))


def _hook_events(profile) -> tuple[str, pd.DataFrame]:
    ops = profile.ops
    sel = name_index.mask(profile, "ops", is_hook_name) if len(ops) else np.zeros(0, dtype=bool)
    raw = name_index.values(profile, "ops")[sel] if len(ops) else np.zeros(0, dtype=object)
    return ("lightning" if len(raw) else ""), _events(ops[sel], *_parsed(raw, _hook), raw)


def _events(frame: pd.DataFrame, display: np.ndarray, classes: np.ndarray, raw: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "pid": frame["pid"].astype(str).to_numpy(dtype=object),
            "tid": frame["tid"].astype(str).to_numpy(dtype=object),
            "ts": frame["ts"].to_numpy(dtype=np.float64),
            "end": frame["end"].to_numpy(dtype=np.float64),
            "name": np.asarray(display, dtype=object),
            "cls": np.asarray(classes, dtype=object),
            "event": np.asarray(raw, dtype=object),
        }
    )


# ---- the tree ------------------------------------------------------------------------------------


def _build(profile, which: str) -> ModuleTree:
    source, ev = _module_events(profile) if which == "modules" else _hook_events(profile)
    ev = ev.assign(dur=ev["end"] - ev["ts"]).sort_values(
        ["pid", "tid", "ts", "dur"], ascending=[True, True, True, False], kind="stable"
    )
    ev = ev.reset_index(drop=True)
    n = len(ev)
    if n == 0:  # no ranges: answer without computing the steps (the views list asks every profile)
        nodes = pd.DataFrame(
            {
                "id": [],
                "parent": [],
                "name": [],
                "cls": [],
                "event": [],
                "pid": [],
                "tid": [],
                "kind": [],
                "forward": [],
                "depth": [],
                "order": [],
            }
        ).astype(
            {"id": np.int64, "parent": np.int64, "forward": np.int64, "depth": np.int64, "order": np.int64}
        )
        inst = pd.DataFrame({c: np.zeros(0) for c in INSTANCE_COLUMNS}).astype(
            {"node": np.int64, "parent": np.int64, "step": np.int64, "origin": np.int64}
        )
        return ModuleTree(source=source, nodes=nodes, instances=inst)
    ts = ev["ts"].to_numpy().copy()
    end = ev["end"].to_numpy().copy()
    # steps: the one whose host range holds the start; cut at its end
    st = step_table(profile)
    h_start = st["host_start"].to_numpy(dtype=np.float64)
    h_end = st["host_end"].to_numpy(dtype=np.float64)
    step = iv.holding((h_start, h_end), ts)
    limit = h_end
    # copies of capture-time modules on a graph replay thread are at device time: they take the
    # device-extended step that holds them, and have no host time (docs/metrics.md, "Graph captures")
    replayed = on_replay_thread(ev["tid"].to_numpy())
    if replayed.any() and len(st):
        d_start, d_end = st["start"].to_numpy(dtype=np.float64), st["end"].to_numpy(dtype=np.float64)
        step = np.where(replayed, iv.holding((d_start, d_end), ts), step)
        limit = np.where(replayed, d_end[np.maximum(step, 0)], h_end[np.maximum(step, 0)])
    elif len(h_end):
        limit = h_end[np.maximum(step, 0)]
    inside = step >= 0
    end = np.where(inside, np.minimum(end, limit), end) if len(h_end) else end

    thread = pd.factorize(ev["pid"] + "/" + ev["tid"])[0]
    parent_inst, node_of, node_parent, node_first, end = _nest(
        thread, pd.factorize(ev["name"])[0], ts, end, step
    )
    host = np.where(replayed, 0.0, np.maximum(end - ts, 0.0))
    device = _device_inside(profile, ev["pid"].to_numpy(), ev["tid"].to_numpy(), ts, end)
    has_parent = parent_inst >= 0
    host_child = np.zeros(n)
    device_child = np.zeros(n)
    np.add.at(host_child, parent_inst[has_parent], host[has_parent])
    np.add.at(device_child, parent_inst[has_parent], device[has_parent])
    nodes = ev.iloc[node_first][["name", "cls", "event", "pid", "tid"]].reset_index(drop=True)
    nodes.insert(0, "parent", node_parent)
    nodes["kind"] = "forward"
    nodes["forward"] = np.int64(-1)
    instances = pd.DataFrame(
        {
            "node": node_of,
            "parent": parent_inst,
            "step": step.astype(np.int64),
            "ts": ts,
            "end": end,
            "host": host,
            "host_child": host_child,
            "device": device,
            "device_child": device_child,
            "origin": np.arange(n, dtype=np.int64),
        }
    )
    part = None
    if which == "modules":
        part = module_backward.build(profile, nodes, instances)
        nodes, instances = _append_backward(nodes, instances, part)
    nodes.insert(0, "id", np.arange(len(nodes), dtype=np.int64))
    nodes["depth"] = _depths(nodes["parent"].to_numpy(dtype=np.int64))
    nodes["order"] = _preorder(nodes["parent"].to_numpy(dtype=np.int64))
    return ModuleTree(source=source, nodes=nodes, instances=instances, backward=part)


def _append_backward(
    nodes: pd.DataFrame, inst: pd.DataFrame, part: module_backward.BackwardPart
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The forward nodes and instances followed by the backward ones, ids and rows offset."""
    if not len(part.nodes):
        return nodes, inst
    b_nodes = part.nodes.copy()
    b_nodes["parent"] = np.where(b_nodes["parent"] >= 0, b_nodes["parent"] + len(nodes), -1)
    b_inst = part.instances.copy()
    b_inst["node"] += len(nodes)
    b_inst["parent"] = np.where(b_inst["parent"] >= 0, b_inst["parent"] + len(inst), -1)
    return (
        pd.concat([nodes, b_nodes[nodes.columns]], ignore_index=True),
        pd.concat([inst, b_inst[inst.columns]], ignore_index=True),
    )


def _nest(
    thread: np.ndarray, name: np.ndarray, ts: np.ndarray, end: np.ndarray, step: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Instances sorted by (thread, start, longest first) -> each one's enclosing instance, its node,
    and per node its parent node and first instance; ``end`` cut at the enclosing instance's end."""
    n = len(ts)
    th, nm, start, stop, stp = thread.tolist(), name.tolist(), ts.tolist(), end.tolist(), step.tolist()
    parent = [-1] * n
    node_of = [-1] * n
    keys: dict[tuple[int, int, int], int] = {}
    node_parent: list[int] = []
    node_first: list[int] = []
    stack: list[int] = []
    for i in range(n):
        if stack and th[stack[-1]] != th[i]:
            stack.clear()
        while stack and start[i] >= stop[stack[-1]]:
            stack.pop()
        if stack and stp[stack[-1]] != stp[i]:
            stack.clear()  # a step boundary: instances of another step never nest
        parent_node = -1
        if stack:
            p = stack[-1]
            parent[i] = p
            parent_node = node_of[p]
            if stop[i] > stop[p]:
                stop[i] = stop[p]  # an overhanging instance is cut at the enclosing one's end
        key = (th[i], parent_node, nm[i])
        node = keys.get(key)
        if node is None:
            node = keys[key] = len(node_parent)
            node_parent.append(parent_node)
            node_first.append(i)
        node_of[i] = node
        stack.append(i)
    as_int = np.asarray
    return (
        as_int(parent, dtype=np.int64),
        as_int(node_of, dtype=np.int64),
        as_int(node_parent, dtype=np.int64),
        as_int(node_first, dtype=np.int64),
        np.asarray(stop, dtype=np.float64),
    )


def _depths(parent: np.ndarray) -> np.ndarray:
    """Depth of each node (parents come before their children)."""
    depth = np.zeros(len(parent), dtype=np.int64)
    for node, p in enumerate(parent.tolist()):
        if p >= 0:
            depth[node] = depth[p] + 1
    return depth


def _preorder(parent: np.ndarray) -> np.ndarray:
    """Position of each node in a depth-first walk (children in order of first appearance)."""
    children: dict[int, list[int]] = {}
    for node, p in enumerate(parent.tolist()):
        children.setdefault(p, []).append(node)
    order = np.zeros(len(parent), dtype=np.int64)
    todo = list(reversed(children.get(-1, [])))
    pos = 0
    while todo:
        node = todo.pop()
        order[node] = pos
        pos += 1
        todo.extend(reversed(children.get(node, [])))
    return order


def launch_points(profile) -> pd.DataFrame:
    """Each device activity's launch point: pid, tid, ts of the runtime call that launched it, else of
    the op it is linked to; dur = the activity's duration. Activities with neither are left out."""

    def build() -> pd.DataFrame:
        dev = profile.device
        if not len(dev):
            return pd.DataFrame({"pid": [], "tid": [], "ts": [], "dur": []})
        rt = dev["runtime"].to_numpy(dtype=np.int64)
        op = dev["op"].to_numpy(dtype=np.int64)
        rts, ops = profile.runtimes, profile.ops
        # a replayed kernel merged with its capture: launched, at device time, by its capture-time op
        copy = (op >= 0) & (replayed_copies(profile)[np.maximum(op, 0)] if len(ops) else False)
        by_rt = (rt >= 0) & ~copy
        by_op = ~by_rt & (op >= 0)

        def col(frame: pd.DataFrame, name: str, rows: np.ndarray) -> np.ndarray:
            return (
                frame[name].astype(str).to_numpy(dtype=object)[rows]
                if name != "ts"
                else frame[name].to_numpy()[rows]
            )

        parts = []
        for frame, rows, mask in ((rts, rt, by_rt), (ops, op, by_op)):
            if mask.any():
                r = rows[mask]
                parts.append(
                    pd.DataFrame(
                        {
                            "pid": col(frame, "pid", r),
                            "tid": col(frame, "tid", r),
                            "ts": col(frame, "ts", r).astype(np.float64),
                            "dur": dev["dur"].to_numpy(dtype=np.float64)[mask],
                        }
                    )
                )
        if not parts:
            return pd.DataFrame({"pid": [], "tid": [], "ts": [], "dur": []})
        return pd.concat(parts, ignore_index=True).sort_values(["pid", "tid", "ts"], kind="stable")

    return memoized(profile, "modules.launch_points", build)


def _device_inside(profile, pid: np.ndarray, tid: np.ndarray, ts: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Σ duration of the device activities launched in [ts, end) on each instance's thread."""
    out = np.zeros(len(ts))
    points = launch_points(profile)
    if not len(points) or not len(ts):
        return out
    queries = pd.DataFrame({"pid": pid, "tid": tid})
    groups = points.groupby(["pid", "tid"], sort=False).indices
    for key, rows in queries.groupby(["pid", "tid"], sort=False).indices.items():
        found = groups.get(key)
        if found is None:
            continue
        pts = points["ts"].to_numpy()[found]
        cum = np.concatenate([[0.0], np.cumsum(points["dur"].to_numpy()[found])])
        lo = np.searchsorted(pts, ts[rows], side="left")
        hi = np.searchsorted(pts, end[rows], side="left")
        out[rows] = cum[hi] - cum[lo]
    return out


# ---- answers -------------------------------------------------------------------------------------


def step_choices(profile) -> list[dict[str, Any]]:
    st = step_table(profile)
    return [
        {"number": int(n), "name": str(m), "duration_us": float(b - a)}
        for n, m, a, b in zip(st["number"], st["name"], st["host_start"], st["host_end"], strict=True)
    ]


def step_rows(profile, step: int | None) -> np.ndarray:
    """Rows of the step table selected by a step number (None: all steps); empty when unknown."""
    numbers = step_table(profile)["number"].to_numpy(dtype=np.int64)
    if step is None:
        return np.arange(len(numbers))
    return np.flatnonzero(numbers == step)


def figures(profile, which: str, step: int | None) -> pd.DataFrame:
    """One row per node with an instance in the selected step(s), in pre-order: the node columns and
    occurrences, host_total_us, host_self_us, device_total_us, device_self_us, step_share_pct,
    longest_us."""
    t = tree(profile, which)
    rows = step_rows(profile, step)
    inst = t.instances[t.instances["step"].isin(rows)]
    st = step_table(profile)
    step_us = float((st["host_end"].to_numpy()[rows] - st["host_start"].to_numpy()[rows]).sum())
    grouped = inst.assign(
        host_self=inst["host"] - inst["host_child"], device_self=inst["device"] - inst["device_child"]
    ).groupby("node")
    agg = grouped.agg(
        occurrences=("host", "size"),
        host_total_us=("host", "sum"),
        host_self_us=("host_self", "sum"),
        device_total_us=("device", "sum"),
        device_self_us=("device_self", "sum"),
        longest_us=("host", "max"),
    )
    out = t.nodes.merge(agg, left_on="id", right_index=True, how="inner")
    out["host_self_us"] = out["host_self_us"].clip(lower=0.0)
    out["device_self_us"] = out["device_self_us"].clip(lower=0.0)
    out["step_share_pct"] = out["host_total_us"] / step_us * 100 if step_us > 0 else 0.0
    out["occurrences"] = out["occurrences"].astype(np.int64)
    return out.sort_values("order", kind="stable").reset_index(drop=True)


def thread_labels(profile, nodes: pd.DataFrame) -> dict[str, str]:
    """ "pid/tid" -> a readable thread label (the trace's thread name, else "thread <tid>")."""
    out = {}
    for pid, tid in set(zip(nodes["pid"], nodes["tid"], strict=True)):
        out[f"{pid}/{tid}"] = profile.meta.thread_names.get((pid, tid)) or f"thread {tid}"
    return out


def main_thread(profile, nodes: pd.DataFrame) -> str | None:
    """The step thread (where ProfilerStep#N ranges are), else the thread with the most nodes."""
    steps = profile.ops[profile.ops["name"].astype(str).str.startswith("ProfilerStep#")]
    if len(steps):
        return f"{steps['pid'].iloc[0]}/{steps['tid'].iloc[0]}"
    if not len(nodes):
        return None
    keys = nodes["pid"].astype(str) + "/" + nodes["tid"].astype(str)
    return str(keys.value_counts().index[0])


def operators_inside(profile, which: str, node: int, step: int | None) -> pd.DataFrame:
    """Operator-table rows (operators.op_stats) that start inside the node's instances of the
    selected step(s) (for a backward node: the rows within its backward ops' subtrees), grouped by
    name: calls, host/device self/total (µs), sorted by host total."""
    t = tree(profile, which)
    inst = t.instances[(t.instances["node"] == node) & t.instances["step"].isin(step_rows(profile, step))]
    cols = ["name", "calls", "host_self_us", "host_total_us", "device_self_us", "device_total_us"]
    ops = profile.ops
    if not len(inst) or not len(ops):
        return pd.DataFrame({c: [] for c in cols})
    meta = t.nodes.iloc[node]
    stats = operators.op_stats(profile)
    if meta["kind"] == "backward":
        keep = _backward_rows(t, inst.index.to_numpy(), ops["last"].to_numpy(dtype=np.int64))
        keep = keep[stats["row"].to_numpy()[keep]]
    else:
        keep = _rows_inside(ops, stats, meta, inst)
    frame = pd.DataFrame(
        {
            "name": name_index.values(profile, "ops")[keep],
            "host_self_us": stats["host_self"].to_numpy()[keep],
            "host_total_us": stats["host_total"].to_numpy()[keep],
            "device_self_us": stats["device_self"].to_numpy()[keep],
            "device_total_us": stats["device_total"].to_numpy()[keep],
        }
    )
    out = frame.groupby("name", sort=False).agg(
        calls=("host_total_us", "size"),
        host_self_us=("host_self_us", "sum"),
        host_total_us=("host_total_us", "sum"),
        device_self_us=("device_self_us", "sum"),
        device_total_us=("device_total_us", "sum"),
    )
    out = out.reset_index().sort_values(["host_total_us", "name"], ascending=[False, True], kind="stable")
    return out[cols].reset_index(drop=True)


def _rows_inside(ops: pd.DataFrame, stats: pd.DataFrame, meta: pd.Series, inst: pd.DataFrame) -> np.ndarray:
    """Operator-table rows on the node's thread that start inside one of ``inst``."""
    on_thread = (ops["pid"].astype(str).to_numpy() == meta["pid"]) & (
        ops["tid"].astype(str).to_numpy() == meta["tid"]
    )
    sel = np.flatnonzero(on_thread & stats["row"].to_numpy())
    op_ts = ops["ts"].to_numpy(dtype=np.float64)[sel]
    starts = inst["ts"].to_numpy()
    ends = inst["end"].to_numpy()
    order = np.argsort(starts)
    starts, ends = starts[order], ends[order]
    return sel[iv.holding((starts, ends), op_ts) >= 0]


def _backward_rows(t: ModuleTree, rows: np.ndarray, last: np.ndarray) -> np.ndarray:
    """Rows of ``ops`` in the subtrees of the backward ops behind backward instance rows ``rows``."""
    part = t.backward
    if part is None:
        return np.zeros(0, dtype=np.int64)
    k = rows - (len(t.instances) - len(part.instances))  # row within the backward part
    heads = np.unique(np.concatenate([part.ops[a:b] for a, b in zip(part.lo[k], part.hi[k], strict=True)]))
    if not len(heads):
        return heads.astype(np.int64)
    return np.unique(np.concatenate([np.arange(h, last[h]) for h in heads.tolist()]))


def summary(profile, depth: int = 2) -> list[dict[str, Any]]:
    """The module tree over all steps down to ``depth`` levels (summary --json ``modules``)."""
    if not has_modules(profile):
        return []
    fig = figures(profile, "modules", None)
    fig = fig[fig["depth"] < depth]
    keys = [
        "id",
        "parent",
        "depth",
        "name",
        "cls",
        "kind",
        "occurrences",
        "host_total_us",
        "host_self_us",
        "device_total_us",
        "device_self_us",
        "step_share_pct",
    ]
    return fig[keys].to_dict("records")

"""Tables -> Profile: the per-thread op tree, op <-> runtime <-> device links, steps, flows.

The rules are written down in docs/architecture.md ("Links", "Op tree rule").
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from torch_tb_profiler.model.device_work import lost_launches, lost_launches_note
from torch_tb_profiler.model.devices import reconcile
from torch_tb_profiler.model.graph_replays import (
    Merger,
    with_replay_ranges,
    with_replayed_modules,
    with_replayed_ops,
)
from torch_tb_profiler.model.profile import Profile, TraceMeta
from torch_tb_profiler.model.step_ranges import step_table
from torch_tb_profiler.trace.events import DecodedTrace
from torch_tb_profiler.trace.tables import Tables, build_tables
from torch_tb_profiler.trace.utf8 import utf8_data, utf8_text

# overhang tolerated as float rounding of ns timestamps written as µs (not a partial overlap); at epoch
# µs a float64 resolves only 0.25 µs, so the tolerance grows with the timestamps (nesting_tolerance)
ROUNDING_US = 0.002

_PLAIN_PASSES = 32  # parent steps tried one by one before binary lifting (EnclosingOp.up_while)


def build_profile(
    decoded: DecodedTrace,
    run: str,
    worker: str,
    span: str,
    source: str,
    merger: Merger | None = None,
) -> Profile:
    """``merger``: what the tables' graph replays ran at capture time (ingest/parse.py's captures)."""
    events, decoded.events = decoded.events, []
    event_count = len(events)
    tables = build_tables(events, decoded.time_base)  # empties the list: events are released table by table
    return profile_from_tables(
        tables, decoded.top, decoded.repairs, event_count, run, worker, span, source, merger=merger
    )


def profile_from_tables(
    tables: Tables,
    top: dict[str, Any],
    repairs: list[str],
    event_count: int,
    run: str,
    worker: str,
    span: str,
    source: str,
    merger: Merger | None = None,
) -> Profile:
    """The model over a file's tables; ``top`` is its metadata keys, ``repairs`` what decoding fixed;
    ``merger``: what its graph replays ran at capture time (analysis/captures/), placed on replay threads."""
    merge = merger(tables, top) if merger is not None else None
    meta = _meta(top, [*repairs, *tables.warnings], tables, event_count=event_count)
    tol = nesting_tolerance(tables.ops, tables.runtimes)
    raw_ops, launches, replay_rows = with_replay_ranges(tables.ops, tables.runtimes, tables.device)
    raw_ops, merged_rows = with_replayed_ops(raw_ops, merge)
    ops, partial = op_tree(raw_ops, tol)
    meta.partial_overlaps = partial
    # rows of ops were re-ordered by the tree build: remap references into ops
    new_row = np.empty(len(ops), dtype=np.int64)
    new_row[ops["_orig"].to_numpy()] = np.arange(len(ops))
    ops = ops.drop(columns="_orig")
    comms = tables.comms.copy()
    comms["op"] = new_row[comms["op"].to_numpy()] if len(comms) else comms["op"]

    finder = EnclosingOp(ops)
    runtimes = tables.runtimes.reset_index(drop=True)
    runtimes["op"], runtimes["host_op"] = _runtime_ops(ops, runtimes, finder, tol)
    if launches.size:  # a graph launch call belongs to its own replay range (graph_replays.py)
        runtimes.loc[launches, "op"] = runtimes.loc[launches, "host_op"] = new_row[replay_rows]
    device_order = np.argsort(tables.device["ts"].to_numpy(), kind="stable")
    device = tables.device.take(device_order).reset_index(drop=True)
    device_map = _device_map(tables, meta)
    gpu_annotations, syncs = tables.gpu_annotations, tables.syncs
    if device_map:  # one id per physical device (model/devices.py)
        device, gpu_annotations, syncs = (
            _renumbered(t, device_map) for t in (device, gpu_annotations, syncs)
        )
    device["runtime"], device["op"] = _device_links(ops, runtimes, device, tol)
    if merge is not None:
        meta.graph_captures = merge.report
    if merge is not None and len(merge.kernel_ops):  # a replayed kernel belongs to its capture-time op
        position = np.empty(len(device_order), dtype=np.int64)
        position[device_order] = np.arange(len(device_order))
        rows, owners = merge.kernel_ops[:, 0], merge.kernel_ops[:, 1]
        device.loc[position[rows], "op"] = new_row[merged_rows[owners]]
        _with_capture_launches(device, position, merge.kernel_launches)
    lost = lost_launches(runtimes, device)
    if lost:
        meta.warnings.append(lost_launches_note(lost))
    memory = tables.memory.sort_values("ts", kind="stable").reset_index(drop=True)
    memory["op"] = finder.find(memory["pid"].to_numpy(), memory["tid"].to_numpy(), memory["ts"].to_numpy())
    return Profile(
        run=run,
        worker=worker,
        span=span,
        source=source,
        meta=meta,
        ops=ops,
        runtimes=runtimes,
        device=device,
        gpu_annotations=gpu_annotations.sort_values("ts", kind="stable").reset_index(drop=True),
        python=with_replayed_modules(tables.python, merge)
        .sort_values(["pid", "tid", "ts"], kind="stable")
        .reset_index(drop=True),
        comms=comms,
        memory=memory,
        syncs=syncs,
        flows=_fwdbwd(tables.flow_points, ops, finder),
        steps=step_table(ops, meta.warnings),
        others=tables.others,
        counters=tables.counters.sort_values(["name", "key", "ts"], kind="stable").reset_index(drop=True),
    )


def _with_capture_launches(device: pd.DataFrame, position: np.ndarray, launches: np.ndarray) -> None:
    """``capture`` (index into the merge report's captures) and ``capture_launch`` (row of that capture
    trace's runtimes) per replayed kernel, -1 elsewhere: where the timeline opens the capture at its launch."""
    capture = np.full(len(device), -1, dtype=np.int64)
    launch = np.full(len(device), -1, dtype=np.int64)
    if launches.size:
        at = position[launches[:, 0]]
        capture[at], launch[at] = launches[:, 1], launches[:, 2]
    device["capture"], device["capture_launch"] = capture, launch


def _device_map(tables: Tables, meta: TraceMeta) -> dict[int, int]:
    """Written device id -> reconciled id of the device activities (only ids that change); the map
    is kept in ``meta.device_ids``, an ambiguity in ``meta.warnings``."""
    activity = [t["device"].to_numpy(np.int64) for t in (tables.device, tables.gpu_annotations, tables.syncs)]
    mem = tables.memory
    on_accelerator = mem["device_type"].to_numpy(np.int64) != 0
    memory_ids = mem["device_id"].to_numpy(np.int64)[on_accelerator]
    property_ids = [p["id"] for p in meta.device_properties if isinstance(p.get("id"), int)]
    mapping, warning = reconcile(
        np.unique(np.concatenate(activity)).tolist(),
        np.unique(memory_ids).tolist(),
        property_ids,
        agent_indices=_rocm_evidence(tables, meta),
    )
    if warning:
        meta.warnings.append(warning)
    meta.device_ids = [[w, r] for w, r in sorted(mapping.items())]
    return mapping


def _rocm_evidence(tables: Tables, meta: TraceMeta) -> bool:
    """Whether the trace comes from ROCm, whose roctracer writes kernels' HSA agent indices: HIP
    runtime calls (recorded under ``cuda_runtime`` too), HIP memory records (c10 type 6) or a
    ``hip_*_version`` / ``roctracer_version`` key."""
    if any(str(k).startswith(("hip_", "roctracer")) for k in meta.top_level):
        return True
    if (tables.memory["device_type"].to_numpy(np.int64) == 6).any():
        return True
    names = tables.runtimes["name"].unique() if len(tables.runtimes) else []
    return any(str(n).startswith("hip") for n in names)


def _renumbered(table: pd.DataFrame, mapping: dict[int, int]) -> pd.DataFrame:
    if not len(table):
        return table
    ids = table["device"].to_numpy(np.int64)
    return table.assign(device=pd.Series(ids).replace(mapping).to_numpy(np.int64))


def _device_properties(props: Any, warnings: list[str]) -> list[dict[str, Any]]:
    """``deviceProperties`` as the analyses may read it: a list of dicts whose ``name`` is a string and
    whose other values are finite numbers (ids and counts whole numbers within int64); any other value
    is dropped with a warning naming the entry and the key."""
    if not isinstance(props, list):
        warnings.append(f"deviceProperties is {type(props).__name__}, not a list: ignored")
        return []
    out = []
    for i, entry in enumerate(props):
        if not isinstance(entry, dict):
            warnings.append(f"deviceProperties[{i}] is {type(entry).__name__}, not an object: ignored")
            continue
        clean: dict[str, Any] = {}
        for key, value in entry.items():
            if _valid_property(key, value):
                clean[key] = value
            else:
                shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
                warnings.append(f"deviceProperties[{i}].{key} = {shown} is not a valid value: ignored")
        out.append(clean)
    return out


_WHOLE_KEYS = frozenset(("id", "totalGlobalMem", "computeMajor", "computeMinor", "numSms"))
_NUMBER_KEYS = frozenset(
    (
        "maxThreadsPerBlock",
        "maxThreadsPerMultiprocessor",
        "regsPerBlock",
        "regsPerMultiprocessor",
        "warpSize",
        "sharedMemPerBlock",
        "sharedMemPerMultiprocessor",
        "sharedMemPerBlockOptin",
    )
)


def _valid_property(key: str, value: Any) -> bool:
    """Keys the analyses read must hold what they expect; others pass as they are."""
    if key == "name":
        return isinstance(value, str)
    whole = isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63
    if key in _WHOLE_KEYS:
        return whole
    if key in _NUMBER_KEYS:
        return whole or (isinstance(value, float) and bool(np.isfinite(value)))
    return True


def _meta(top: dict[str, Any], repairs: list[str], tables: Tables, event_count: int) -> TraceMeta:
    top = utf8_data(dict(top))  # a lone surrogate in a name would make every answer holding it unwritable
    warnings = [utf8_text(w) for w in repairs]
    props = _device_properties(top.pop("deviceProperties", None) or [], warnings)
    legacy = top.pop("computeProperties", None) or []
    if not props and legacy:  # a 2021 fixture spelling
        props = [
            {
                "id": p.get("id", i),
                "name": p.get("name", ""),
                "totalGlobalMem": p.get("totalGlobalMem"),
                "computeMajor": p.get("major"),
                "computeMinor": p.get("minor"),
                "numSms": p.get("multiProcessorCount"),
            }
            for i, p in enumerate(legacy)
            if isinstance(p, dict)
        ]
        props = _device_properties(props, warnings)
    dist = top.pop("distributedInfo", None)
    base = top.pop("baseTimeNanoseconds", None)
    return TraceMeta(
        device_properties=props,
        distributed_info=dist if isinstance(dist, dict) else None,
        schema_version=top.pop("schemaVersion", None),
        base_time_ns=int(base) if isinstance(base, (int, float)) else None,
        trace_name=top.pop("traceName", None),
        display_time_unit=top.pop("displayTimeUnit", None),
        framework=top.pop("Framework", None),
        top_level=top,
        counts=tables.counts,
        unknown_categories=tables.unknown_categories,
        warnings=warnings,
        process_names=tables.process_names,
        thread_names=tables.thread_names,
        profiler_spans=tables.scaffold,
        event_count=event_count,
        time_base_us=tables.time_base,
    )


def nesting_tolerance(*tables: pd.DataFrame) -> float:
    """The overhang (µs) below which one range still counts as inside another: twice the float64
    spacing at the largest timestamp (a start and an end rounded apart), at least ``ROUNDING_US``."""
    biggest = max((float(np.abs(t["end"].to_numpy()).max()) for t in tables if len(t)), default=0.0)
    return max(ROUNDING_US, 2.0 * float(np.spacing(biggest)))


def op_tree(ops: pd.DataFrame, tol: float = ROUNDING_US) -> tuple[pd.DataFrame, int]:
    """Sort ops by thread then (ts, -dur) and give each its parent row, depth and ``last`` (one past
    the last row of its subtree: rows are in depth-first order, so a subtree is rows [i, last))."""
    n = len(ops)
    pid_codes = pd.factorize(ops["pid"].to_numpy(), sort=True)[0].astype(np.int64)
    tid_codes = pd.factorize(ops["tid"].to_numpy(), sort=True)[0].astype(np.int64)
    # np.lexsort is stable and sorts by its last key first: pid, tid (as strings), ts, longest first
    order = np.lexsort((-ops["dur"].to_numpy(), ops["ts"].to_numpy(), tid_codes, pid_codes))
    ops = ops.take(order).reset_index(drop=True)
    ops["_orig"] = order
    thread = pid_codes[order] * (int(tid_codes.max(initial=0)) + 1) + tid_codes[order]
    cuts = [0, *(np.flatnonzero(np.diff(thread)) + 1).tolist(), n]
    parent = [-1] * n
    depth = [0] * n
    last = [n] * n
    partial = 0
    ts = ops["ts"].tolist()
    end = ops["end"].tolist()
    for lo, hi in itertools.pairwise(cuts):
        rows: list[int] = []  # the open events, outermost first, and their ends
        ends: list[float] = []
        for i in range(lo, hi):
            start, stop = ts[i], end[i]
            while ends and start >= ends[-1]:
                ends.pop()
                last[rows.pop()] = i
            if ends and stop > ends[-1] + tol:
                # it overhangs the innermost open range: a partial overlap, unless it merely starts
                # where that range ends (within rounding) and is its next sibling
                if start < ends[-1] - tol:
                    partial += 1
                while ends and stop > ends[-1] + tol:
                    ends.pop()
                    last[rows.pop()] = i
            if rows:
                parent[i] = rows[-1]
                depth[i] = len(rows)
            rows.append(i)
            ends.append(stop)
        for r in rows:
            last[r] = hi
    ops["parent"] = np.asarray(parent, dtype=np.int64)
    ops["depth"] = np.asarray(depth, dtype=np.int64)
    ops["last"] = np.asarray(last, dtype=np.int64)
    return ops, partial


class EnclosingOp:
    """Vectorised lookup of the deepest op on a thread whose range contains a time."""

    def __init__(self, ops: pd.DataFrame) -> None:
        """``ops`` as ``op_tree`` leaves them: sorted by thread, then (ts, -dur), with ``parent``."""
        self.ts = ops["ts"].to_numpy()
        self.end = ops["end"].to_numpy()
        self.parent = ops["parent"].to_numpy()
        self._ups: list[np.ndarray] | None = None
        # rows by start time; stable, so among equal starts the thread's later (deeper) row comes last
        order = np.argsort(self.ts, kind="stable")
        self._by_start = pd.DataFrame(
            {
                "ts": self.ts[order].astype(np.float64),
                "pid": ops["pid"].to_numpy()[order],
                "tid": ops["tid"].to_numpy()[order],
                "row": order.astype(np.int64),
            }
        )

    def find(self, pid: np.ndarray, tid: np.ndarray, t: np.ndarray) -> np.ndarray:
        """For each (pid, tid, t): the row of the deepest op on that thread with ts <= t < end, or -1."""
        result = np.full(len(t), -1, dtype=np.int64)
        if not len(t) or not len(self._by_start):
            return result
        times = np.asarray(t, dtype=np.float64)
        queries = pd.DataFrame(
            {
                "ts": times,
                "pid": pd.Series(pid, dtype=object).astype(str).to_numpy(),
                "tid": pd.Series(tid, dtype=object).astype(str).to_numpy(),
                "q": np.arange(len(times)),
            }
        ).sort_values("ts", kind="stable")
        # the op of the same thread that starts last at or before t is on the path to the deepest op
        # containing t (rows are depth-first); walk up its ancestors until one contains t
        last = pd.merge_asof(queries, self._by_start, on="ts", by=["pid", "tid"], direction="backward")
        result[last["q"].to_numpy()] = last["row"].fillna(-1).to_numpy().astype(np.int64)
        return self.up_while(result, lambda c, sel: ~(self.end[c] > times[sel]))

    def up_while(self, cand: np.ndarray, bad: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
        """Move each candidate op up to its parent while ``bad(ops, positions)`` holds (-1: none left).

        ``bad`` must only turn false going up (an ancestor ends no earlier than its descendants).
        A few plain passes settle almost every candidate; the rest (deep chains: one pass per level
        would be quadratic) jump by binary lifting over ancestors, log2(depth) passes."""
        cand = cand.copy()
        todo = np.flatnonzero(cand >= 0)
        for _ in range(_PLAIN_PASSES):
            if not todo.size:
                return cand
            move = bad(cand[todo], todo)
            todo = todo[move]
            cand[todo] = self.parent[cand[todo]]
            todo = todo[cand[todo] >= 0]
        if todo.size:
            cand[todo] = self._lift(cand[todo], todo, bad)
        return cand

    def _lift(
        self, c: np.ndarray, pos: np.ndarray, bad: Callable[[np.ndarray, np.ndarray], np.ndarray]
    ) -> np.ndarray:
        """For each op c (at query positions pos): its nearest ancestor-or-self that is not bad."""
        c = c.copy()
        moving = np.flatnonzero(bad(c, pos))
        for up in reversed(self._ancestors()):
            nxt = up[c[moving]]
            has = nxt >= 0
            idx = moving[has]
            jump = bad(nxt[has], pos[idx])
            c[idx[jump]] = nxt[has][jump]
        # c is now the topmost bad ancestor of each moving candidate: the answer is its parent
        c[moving] = self.parent[c[moving]]
        return c

    def _ancestors(self) -> list[np.ndarray]:
        """ups[k][i] = the 2^k-th ancestor of op i (-1 past the root), as many levels as the depth needs."""
        if self._ups is None:
            ups = [self.parent]
            while (ups[-1] >= 0).any():
                prev = ups[-1]
                ups.append(np.where(prev >= 0, prev[np.maximum(prev, 0)], -1))
            self._ups = ups
        return self._ups


def _runtime_ops(
    ops: pd.DataFrame, runtimes: pd.DataFrame, finder: EnclosingOp, tol: float
) -> tuple[np.ndarray, np.ndarray]:
    """Per runtime call: the op it is linked to (device time goes there) and its host op.

    The host op is the deepest op on the call's thread that encloses the whole call. The link is the
    op with the call's External id when that op encloses the call on the same thread (it is then the
    host op or one of its ancestors); otherwise the host op. An External id never reaches an op
    elsewhere: some builds write a call's correlation id as its External id, colliding with
    unrelated ops."""
    if not len(runtimes):
        empty = np.empty(0, dtype=np.int64)
        return empty, empty
    pid, tid = runtimes["pid"].to_numpy(), runtimes["tid"].to_numpy()
    rt_ts, rt_end = runtimes["ts"].to_numpy(), runtimes["end"].to_numpy()
    host = finder.find(pid, tid, rt_ts)
    # the deepest op holding the call's start may end before the call does (overhang beyond rounding)
    host = finder.up_while(host, lambda c, sel: rt_end[sel] > finder.end[c] + tol)
    link = host.copy()
    ext = runtimes["ext_id"].to_numpy()
    has_ext = np.flatnonzero(ext >= 0)
    if has_ext.size and len(ops):
        cand = _latest_op_with_ext(ops, ext[has_ext], rt_ts[has_ext], pid[has_ext], tid[has_ext])
        ok = cand >= 0
        c = np.maximum(cand, 0)
        ok &= (ops["ts"].to_numpy()[c] <= rt_ts[has_ext] + tol) & (
            rt_end[has_ext] <= ops["end"].to_numpy()[c] + tol
        )
        link[has_ext[ok]] = cand[ok]
    return link, host


def _latest_op_with_ext(
    ops: pd.DataFrame,
    ext: np.ndarray,
    t: np.ndarray,
    pid: np.ndarray | None = None,
    tid: np.ndarray | None = None,
) -> np.ndarray:
    """For each (ext, t[, pid, tid]): the row of the op with that External id (on that thread when
    pid/tid are given) that starts last at or before t; -1 when none."""
    keys = ["ext_id"] if pid is None else ["ext_id", "pid", "tid"]
    right = pd.DataFrame(
        {
            "ts": ops["ts"].to_numpy(dtype=np.float64),
            "ext_id": ops["ext_id"].to_numpy(),
            "row": np.arange(len(ops)),
        }
    )
    left = pd.DataFrame({"ts": np.asarray(t, dtype=np.float64), "ext_id": ext, "q": np.arange(len(ext))})
    if pid is not None:
        right["pid"], right["tid"] = ops["pid"].to_numpy(), ops["tid"].to_numpy()
        left["pid"], left["tid"] = pid, tid
    right = right[right["ext_id"] >= 0].sort_values("ts", kind="stable")
    left = left.sort_values("ts", kind="stable")
    merged = pd.merge_asof(left, right, on="ts", by=keys, direction="backward")
    out = np.full(len(ext), -1, dtype=np.int64)
    out[merged["q"].to_numpy()] = merged["row"].fillna(-1).to_numpy().astype(np.int64)
    return out


def _device_links(
    ops: pd.DataFrame, runtimes: pd.DataFrame, device: pd.DataFrame, tol: float
) -> tuple[np.ndarray, np.ndarray]:
    runtime = _lookup(_first_row_by(runtimes["corr"].to_numpy()), device["corr"].to_numpy())
    runtime_op = runtimes["op"].to_numpy()
    op = np.where(runtime >= 0, runtime_op[np.maximum(runtime, 0)] if len(runtime_op) else -1, -1)
    # no launching call in the trace: the device event's own External id, if that op started
    # before the activity did (an op cannot launch work that ran before it)
    orphan = np.flatnonzero((runtime < 0) & (device["ext_id"].to_numpy() >= 0))
    if orphan.size and len(ops):
        op[orphan] = _latest_op_with_ext(
            ops, device["ext_id"].to_numpy()[orphan], device["ts"].to_numpy()[orphan] + tol
        )
    return runtime, op.astype(np.int64)


def _first_row_by(keys: np.ndarray) -> pd.Series:
    """key -> first row having it (keys < 0 mean none)."""
    series = pd.Series(np.arange(len(keys)), index=keys)
    series = series[series.index >= 0]
    return series[~series.index.duplicated(keep="first")]


def _lookup(mapping: pd.Series, keys: np.ndarray) -> np.ndarray:
    if not len(keys):
        return np.empty(0, dtype=np.int64)
    found = mapping.reindex(keys)
    return found.fillna(-1).to_numpy().astype(np.int64)


def _fwdbwd(points: pd.DataFrame, ops: pd.DataFrame, finder: EnclosingOp) -> pd.DataFrame:
    """fwdbwd flows: the start binds to the op starting there, the end to the op enclosing it."""
    empty = pd.DataFrame({"flow_id": pd.Series([], dtype=object), "fwd_op": [], "bwd_op": []})
    if points.empty:
        return empty.astype({"fwd_op": np.int64, "bwd_op": np.int64})
    points = points.assign(
        op=finder.find(points["pid"].to_numpy(), points["tid"].to_numpy(), points["ts"].to_numpy())
    )
    starts = points[points["ph"] == "s"].drop_duplicates("flow_id").set_index("flow_id")["op"]
    finishes = points[points["ph"] == "f"].drop_duplicates("flow_id").set_index("flow_id")["op"]
    ids = starts.index.union(finishes.index)
    return pd.DataFrame(
        {
            "flow_id": np.asarray(ids, dtype=object),
            "fwd_op": starts.reindex(ids).fillna(-1).to_numpy().astype(np.int64),
            "bwd_op": finishes.reindex(ids).fillna(-1).to_numpy().astype(np.int64),
        }
    )

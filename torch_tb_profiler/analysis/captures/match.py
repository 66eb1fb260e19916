"""Replayed kernels matched to the launches that captured them (docs/metrics.md, "Graph captures").

A capture trace records the capture phase: between a ``*StreamBeginCapture`` and ``*StreamEndCapture``
call on a thread (a *segment*), the ops run as usual and launch kernels, which are recorded into the graph
instead of running (their launch calls have no device activity in the capture trace). A replay trace runs
the graph: one graph launch call, and the graph's kernels all carry its correlation id.

Each replay (graph launch, its kernels in start order) is matched to one segment:

- by graph node id, where the replayed kernels and the capture's launch calls both carry them: a kernel
  is its node's launch;
- otherwise by order and name: within a graph, kernels replay in capture order, so the replay's kernel
  names must be the segment's launch names in order, some launches possibly left over (captured, never
  replayed): the replay is a subsequence of the segment, matched greedily from the start.

A segment *fits* when every replayed kernel is matched. Among fitting segments: when the replay trace
has as many replays as one capture has segments, replay i takes segment i of that capture if it fits;
then captures whose batch size is the one the replay trace's step annotations state; then the fewest
leftovers. When several remain and they do not give every kernel the same launching op (name and input
shape), the replay is *ambiguous* and reported, never guessed; the same holds for a replay no segment
fits. Kernels of an unmatched replay stay on its ``graph replay`` range.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from torch_tb_profiler.analysis.ops.operators import python_frames
from torch_tb_profiler.model.build import nesting_tolerance
from torch_tb_profiler.model.graph_replays import REPLAY_THREAD, ReplayMerge, graph_launches
from torch_tb_profiler.model.profile import Profile
from torch_tb_profiler.model.step_ranges import SGLANG_BATCH, VLLM_ITERATION
from torch_tb_profiler.trace.tables import Tables

KERNEL_LAUNCH = re.compile(
    r"^(cuda|cu|hip)(Ext)?(Module)?(Ext)?LaunchKernel|^(cuda|hip)LaunchCooperativeKernel"
)
BEGIN_CAPTURE = re.compile(r"StreamBeginCapture")
END_CAPTURE = re.compile(r"StreamEndCapture")
MAX_REASONS = 20  # unmatched replays listed one by one; the rest are counted


@dataclass
class CaptureTrace:
    """One capture trace and what ``execution_details.json`` says of it."""

    file: str
    profile: Profile
    batch_size: int | None = None
    mode: str | None = None


@dataclass
class Segment:
    """One stream capture of a capture trace: its kernel launch calls in order."""

    capture: int  # index into the captures
    number: int  # its order among the capture's segments
    start: float
    end: float
    launches: np.ndarray  # rows of the capture's runtimes
    names: list[str]
    node_ids: np.ndarray
    ops: np.ndarray  # the launching op of each launch (row of the capture's ops, -1)


@dataclass
class _Fit:
    segment: Segment
    positions: np.ndarray  # per replayed kernel: the index of its launch in the segment
    leftovers: int
    signature: tuple = field(default=())


def segments(capture: Profile, index: int) -> list[Segment]:
    """The stream captures of a capture trace; a trace without begin/end calls is one segment per thread."""
    rts = capture.runtimes
    if not len(rts):
        return []
    names = rts["name"].astype(str).to_numpy()
    launched = _matches(names, KERNEL_LAUNCH) & (rts["kernel"].astype(str).to_numpy() != "")
    executed = (
        np.isin(rts["corr"].to_numpy(), capture.device["corr"].to_numpy()) if len(capture.device) else False
    )
    captured = launched & ~executed
    thread = rts["pid"].astype(str).to_numpy() + "/" + rts["tid"].astype(str).to_numpy()
    ts, end = rts["ts"].to_numpy(dtype=np.float64), rts["end"].to_numpy(dtype=np.float64)
    begins, ends = _matches(names, BEGIN_CAPTURE), _matches(names, END_CAPTURE)
    spans: list[tuple[str, float, float]] = []
    for t in np.unique(thread):
        on = thread == t
        b = np.sort(ts[on & begins])
        e = np.sort(end[on & ends])
        if not b.size and not e.size:
            spans.append((t, -np.inf, np.inf))
        for start in b:
            later = e[e >= start]
            if later.size:
                spans.append((t, float(start), float(later[0])))
    out = []
    for number, (t, start, stop) in enumerate(sorted(spans, key=lambda s: s[1])):
        rows = np.flatnonzero(captured & (thread == t) & (ts >= start) & (end <= stop))
        rows = rows[np.argsort(ts[rows], kind="stable")]
        if rows.size:
            out.append(
                Segment(
                    capture=index,
                    number=number,
                    start=start,
                    end=stop,
                    launches=rows,
                    names=rts["kernel"].astype(str).to_numpy()[rows].tolist(),
                    node_ids=rts["graph_node_id"].to_numpy()[rows],
                    ops=rts["op"].to_numpy()[rows],
                )
            )
    return out


def plan_merge(tables: Tables, captures: list[CaptureTrace]) -> ReplayMerge | None:
    """The capture-time ops of every matched replay, copied for the replay trace's model (None without a
    capture or a replay)."""
    rts, dev = tables.runtimes, tables.device
    launches = graph_launches(rts)
    if not captures or not launches.size:
        return None
    segs = [s for i, c in enumerate(captures) for s in segments(c.profile, i)]
    kernels = _replayed_kernels(rts, dev, launches)
    batch = _stated_batch(tables.ops)
    per_capture = {i: [s for s in segs if s.capture == i] for i in range(len(captures))}
    copies: list[dict[str, Any]] = []
    kernel_ops: list[tuple[int, int]] = []
    matched = [0] * len(captures)
    leftovers = [0] * len(captures)
    reasons: list[str] = []
    unmatched = 0
    for i, rows in enumerate(kernels):
        choice, why = _choose(i, len(kernels), rows, dev, segs, per_capture, captures, batch)
        if choice is None:
            unmatched += 1
            if len(reasons) < MAX_REASONS:
                reasons.append(f"replay {i + 1} ({rows.size} kernels): {why}")
            continue
        c = choice.segment.capture
        matched[c] += 1
        leftovers[c] += choice.leftovers
        _copy_ops(captures[c].profile, choice, rows, dev, int(launches[i]), rts, copies, kernel_ops)
    if unmatched > len(reasons):
        reasons.append(f"{unmatched - len(reasons)} more replay(s) unmatched")
    report = {
        "captures": [
            {
                "file": c.file,
                "batch_size": c.batch_size,
                "mode": c.mode,
                "segments": len(per_capture[i]),
                "matched_replays": matched[i],
                "leftover_launches": leftovers[i],
            }
            for i, c in enumerate(captures)
        ],
        "unmatched": reasons,
        "unmatched_replays": unmatched,
    }
    ops = pd.DataFrame(copies) if copies else pd.DataFrame(columns=[*tables.ops.columns, "replay"])
    pairs = np.asarray(kernel_ops, dtype=np.int64).reshape(-1, 2)
    return ReplayMerge(ops=ops, kernel_ops=pairs, report=report)


def _matches(names: np.ndarray, pattern: re.Pattern[str]) -> np.ndarray:
    distinct, codes = np.unique(names, return_inverse=True)
    verdict = np.fromiter((bool(pattern.search(n)) for n in distinct), dtype=bool, count=len(distinct))
    return verdict[codes] if len(distinct) else np.zeros(0, dtype=bool)


def _replayed_kernels(rts: pd.DataFrame, dev: pd.DataFrame, launches: np.ndarray) -> list[np.ndarray]:
    """Per graph launch: its kernels' rows in the raw device table, in start order."""
    if not len(dev):
        return [np.zeros(0, dtype=np.int64) for _ in launches]
    is_kernel = (dev["kind"] == "kernel").to_numpy()
    corr = dev["corr"].to_numpy()
    ts = dev["ts"].to_numpy(dtype=np.float64)
    order = np.lexsort((ts, corr))
    sorted_corr = corr[order]
    out = []
    for c in rts["corr"].to_numpy()[launches]:
        lo, hi = np.searchsorted(sorted_corr, c, "left"), np.searchsorted(sorted_corr, c, "right")
        rows = order[lo:hi]
        out.append(rows[is_kernel[rows]])
    return out


def _stated_batch(ops: pd.DataFrame) -> int | None:
    """The one batch size the trace's step annotations state (vLLM's scheduled tokens, SGLang's bs)."""
    sizes = set()
    for name in pd.unique(ops["name"]) if len(ops) else []:
        if m := VLLM_ITERATION.match(name):
            sizes.add(int(m.group("total")))
        elif (m := SGLANG_BATCH.match(name)) and m.group("bs"):
            sizes.add(int(m.group("bs")))
    return sizes.pop() if len(sizes) == 1 else None


def _fit(segment: Segment, names: list[str], node_ids: np.ndarray) -> _Fit | None:
    if node_ids.size and (node_ids >= 0).all() and (segment.node_ids >= 0).all():
        where = {int(n): k for k, n in enumerate(segment.node_ids.tolist())}
        if not all(int(n) in where for n in node_ids.tolist()):
            return None
        positions = np.array([where[int(n)] for n in node_ids.tolist()], dtype=np.int64)
        return _Fit(segment, positions, len(segment.names) - len(set(positions.tolist())))
    positions = np.empty(len(names), dtype=np.int64)
    k = 0
    for j, name in enumerate(names):
        while k < len(segment.names) and segment.names[k] != name:
            k += 1
        if k == len(segment.names):
            return None
        positions[j] = k
        k += 1
    return _Fit(segment, positions, len(segment.names) - len(names))


def _choose(
    i: int,
    replays: int,
    rows: np.ndarray,
    dev: pd.DataFrame,
    segs: list[Segment],
    per_capture: dict[int, list[Segment]],
    captures: list[CaptureTrace],
    batch: int | None,
) -> tuple[_Fit | None, str]:
    if not rows.size:
        return None, "no kernel of this replay is in the trace"
    names = dev["name"].astype(str).to_numpy()[rows].tolist()
    node_ids = dev["graph_node_id"].to_numpy()[rows] if "graph_node_id" in dev.columns else np.zeros(0)
    fits = [f for s in segs if (f := _fit(s, names, node_ids)) is not None]
    if not fits:
        return None, "no capture's launches fit: " + _closest(segs, names, captures)
    # replay i <-> segment i of a capture with as many segments as the trace has replays
    for own in per_capture.values():
        if len(own) == replays > 1:
            same = [f for f in fits if f.segment is own[i]]
            if same:
                return same[0], ""
    if batch is not None and any(captures[f.segment.capture].batch_size == batch for f in fits):
        fits = [f for f in fits if captures[f.segment.capture].batch_size == batch]
    fewest = min(f.leftovers for f in fits)
    fits = [f for f in fits if f.leftovers == fewest]
    if len(fits) > 1:
        signatures = {_signature(captures[f.segment.capture].profile, f) for f in fits}
        if len(signatures) > 1:
            files = sorted({captures[f.segment.capture].file for f in fits})
            return None, f"ambiguous: {len(fits)} captures fit with different ops ({', '.join(files)})"
    return fits[0], ""


def _signature(capture: Profile, fit: _Fit) -> tuple:
    """The launching op (name, input shape) of each kernel under this fit."""
    ops = capture.ops
    rows = fit.segment.ops[fit.positions]
    names = ops["name"].astype(str).to_numpy()
    dims = ops["input_dims"].astype(str).to_numpy()
    return tuple((names[r], dims[r]) if r >= 0 else ("", "") for r in rows.tolist())


def _closest(segs: list[Segment], names: list[str], captures: list[CaptureTrace]) -> str:
    """Where the best-fitting segment first disagrees with the replay (for the report)."""
    if not segs:
        return "the capture traces hold no captured kernel launch"
    best, where = None, -1
    for s in segs:
        agree = 0
        for a, b in zip(names, s.names, strict=False):
            if a != b:
                break
            agree += 1
        if agree > where:
            best, where = s, agree
    assert best is not None
    file = captures[best.capture].file
    if where >= len(best.names):
        return f"{file} capture {best.number + 1} launched {len(best.names)} kernels, the replay ran {len(names)}"
    return (
        f"{file} capture {best.number + 1} agrees on {where} of {len(names)} kernels; then the replay ran "
        f"'{names[where][:80]}', the capture launched '{best.names[where][:80]}'"
    )


def _copy_ops(
    capture: Profile,
    fit: _Fit,
    rows: np.ndarray,
    dev: pd.DataFrame,
    launch: int,
    rts: pd.DataFrame,
    copies: list[dict[str, Any]],
    kernel_ops: list[tuple[int, int]],
) -> None:
    """Copy the launching ops of one matched replay (and their ancestors inside the capture segment)."""
    ops = capture.ops
    parent = ops["parent"].to_numpy()
    o_ts, o_end = ops["ts"].to_numpy(dtype=np.float64), ops["end"].to_numpy(dtype=np.float64)
    tol = nesting_tolerance(ops)
    seg = fit.segment
    inside = (o_ts >= seg.start - tol) & (o_end <= seg.end + tol)
    k_ts, k_end = dev["ts"].to_numpy(dtype=np.float64)[rows], dev["end"].to_numpy(dtype=np.float64)[rows]
    hull: dict[int, list[float]] = {}
    launcher = seg.ops[fit.positions]
    for j, op in enumerate(launcher.tolist()):
        o = op
        while o >= 0 and inside[o]:
            span = hull.get(o)
            if span is None:
                hull[o] = [k_ts[j], k_end[j]]
            else:
                span[0], span[1] = min(span[0], k_ts[j]), max(span[1], k_end[j])
            o = int(parent[o])
    if not hull:
        return
    chosen = np.array(sorted(hull), dtype=np.int64)  # depth-first order: parents before children
    stacks = _stacks(capture, chosen)
    first = len(copies)
    row_of = {int(c): first + n for n, c in enumerate(chosen.tolist())}
    pid, tid = str(rts["pid"].iloc[launch]), f"{rts['tid'].iloc[launch]}{REPLAY_THREAD}"
    for n, c in enumerate(chosen.tolist()):
        start, stop = hull[c]
        copies.append(
            {
                "name": str(ops["name"].iloc[c]),
                "ts": start,
                "dur": stop - start,
                "end": stop,
                "pid": pid,
                "tid": tid,
                "cat": str(ops["cat"].iloc[c]),
                "ext_id": -1,
                "seq": -1,
                "fwd_tid": -1,
                "input_dims": str(ops["input_dims"].iloc[c]),
                "input_types": str(ops["input_types"].iloc[c]),
                "call_stack": stacks[n],
                "replay": launch,
            }
        )
    for j, op in enumerate(launcher.tolist()):
        if op >= 0 and op in row_of:
            kernel_ops.append((int(rows[j]), row_of[op]))


def _stacks(capture: Profile, rows: np.ndarray) -> list[str]:
    """Each op's call stack at capture time, as a legacy ``Call stack`` (frames innermost first, ``;``)."""
    legacy = capture.ops["call_stack"].astype(str).to_numpy()[rows]
    frames = python_frames(capture, rows) if len(capture.python) else [() for _ in rows]
    return [
        leg if leg not in ("", "nan", "None") else ";".join(f) for leg, f in zip(legacy, frames, strict=True)
    ]

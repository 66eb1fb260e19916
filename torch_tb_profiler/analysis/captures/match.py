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

import bisect
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from torch_tb_profiler.analysis.ops.operators import MAX_FRAMES, python_parents
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
# "rank0", "rank_3", "rank-12" in a file name, not inside a word ("frank1")
RANK_IN_NAME = re.compile(r"(?:^|[^a-z])rank[_-]?(\d+)", re.IGNORECASE)
MAX_REASONS = 20  # unmatched replays listed one by one; the rest are counted


@dataclass
class CaptureTrace:
    """One capture trace and what ``execution_details.json`` says of it."""

    file: str
    profile: Profile
    batch_size: int | None = None
    mode: str | None = None
    rank: int | None = None  # the rank it was recorded on (trace_rank), None when it does not say


@dataclass
class Segment:
    """One stream capture of a capture trace: its kernel launch calls in order."""

    capture: int  # index into the captures
    number: int  # its order among the capture's segments that launched kernels
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


def segments(capture: Profile, index: int) -> list[Segment]:
    """The stream captures of a capture trace; a trace without begin/end calls is one segment per thread."""
    rts = capture.runtimes
    if not len(rts):
        return []
    names = rts["name"].astype(str).to_numpy()
    # a launch names its kernel (ROCm) or its graph node (CUDA, where the profiler writes it)
    named = (rts["kernel"].astype(str).to_numpy() != "") | (rts["graph_node_id"].to_numpy() >= 0)
    launched = _matches(names, KERNEL_LAUNCH) & named
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
    for t, start, stop in sorted(spans, key=lambda s: s[1]):
        rows = np.flatnonzero(captured & (thread == t) & (ts >= start) & (end <= stop))
        rows = rows[np.argsort(ts[rows], kind="stable")]
        if rows.size:
            out.append(
                Segment(
                    capture=index,
                    number=len(out),
                    start=start,
                    end=stop,
                    launches=rows,
                    names=rts["kernel"].astype(str).to_numpy()[rows].tolist(),
                    node_ids=rts["graph_node_id"].to_numpy()[rows],
                    ops=rts["op"].to_numpy()[rows],
                )
            )
    return out


def trace_rank(top: dict[str, Any], file: str) -> int | None:
    """The rank a trace was recorded on: its ``distributedInfo.rank``, else a ``rank<N>`` in its file name."""
    info = top.get("distributedInfo")
    rank = info.get("rank") if isinstance(info, dict) else None
    if isinstance(rank, int) and not isinstance(rank, bool) and rank >= 0:
        return rank
    found = RANK_IN_NAME.search(posixpath.basename(file))
    return int(found.group(1)) if found else None


def usable_captures(captures: list[CaptureTrace], rank: int | None) -> list[bool]:
    """Per capture: whether it may take the replays of a trace of ``rank``. A capture recorded on another
    rank never does; when some capture is of the trace's own rank, the captures that state no rank are
    left out too (each rank captures its own graphs)."""
    if rank is None:
        return [True] * len(captures)
    own = any(c.rank == rank for c in captures)
    return [c.rank == rank or (c.rank is None and not own) for c in captures]


def plan_merge(tables: Tables, captures: list[CaptureTrace], rank: int | None = None) -> ReplayMerge | None:
    """The capture-time ops of every matched replay, copied for the replay trace's model (None without a
    capture or a replay); ``rank``: the trace's (trace_rank), for usable_captures."""
    rts, dev = tables.runtimes, tables.device
    launches = graph_launches(rts)
    if not captures or not launches.size:
        return None
    usable = usable_captures(captures, rank)
    segs = [s for i, c in enumerate(captures) if usable[i] for s in segments(c.profile, i)]
    kernels = _replayed_kernels(rts, dev, launches)
    replay = _Replays(
        names=dev["name"].astype(str).to_numpy() if len(dev) else np.zeros(0, dtype=object),
        node_ids=dev["graph_node_id"].to_numpy() if "graph_node_id" in dev.columns else np.zeros(len(dev)),
        ts=dev["ts"].to_numpy(dtype=np.float64),
        end=dev["end"].to_numpy(dtype=np.float64),
        count=len(kernels),
        batch=_stated_batch(tables.ops),
    )
    per_capture = {i: [s for s in segs if s.capture == i] for i in range(len(captures))}
    copies = _Copies(captures)
    matched = [0] * len(captures)
    leftovers = [0] * len(captures)
    reasons: list[str] = []
    unmatched = 0
    for i, rows in enumerate(kernels):
        choice, why = _choose(i, rows, replay, segs, per_capture, captures)
        if choice is None:
            unmatched += 1
            if len(reasons) < MAX_REASONS:
                reasons.append(f"replay {i + 1} ({rows.size} kernels): {why}")
            continue
        matched[choice.segment.capture] += 1
        leftovers[choice.segment.capture] += choice.leftovers
        copies.add(choice, rows, replay, int(launches[i]), rts)
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
                "rank": c.rank,
                "used": usable[i],
            }
            for i, c in enumerate(captures)
        ],
        "unmatched": reasons,
        "unmatched_replays": unmatched,
    }
    return ReplayMerge(
        ops=copies.frame(tables.ops.columns),
        kernel_ops=copies.kernel_ops(),
        kernel_launches=copies.kernel_launches(),
        report=report,
        python=copies.python_frame(),
    )


@dataclass
class _Replays:
    """The replay trace's device columns, read once."""

    names: np.ndarray
    node_ids: np.ndarray
    ts: np.ndarray
    end: np.ndarray
    count: int  # graph launches
    batch: int | None  # the one batch size its step ranges state
    fits: dict[tuple, list[_Fit]] = field(default_factory=dict)  # by (kernel names, node ids)


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
    n = len(names)
    if names == segment.names[:n]:  # the usual case: the replay is the capture (or its start)
        return _Fit(segment, np.arange(n, dtype=np.int64), len(segment.names) - n)
    positions = np.empty(n, dtype=np.int64)
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
    rows: np.ndarray,
    replay: _Replays,
    segs: list[Segment],
    per_capture: dict[int, list[Segment]],
    captures: list[CaptureTrace],
) -> tuple[_Fit | None, str]:
    if not rows.size:
        return None, "no kernel of this replay is in the trace"
    names = replay.names[rows].tolist()
    node_ids = replay.node_ids[rows]
    key = (tuple(names), node_ids.tobytes())
    fits = replay.fits.get(key)
    if fits is None:  # replays of one graph run the same kernels: fit them once
        fits = replay.fits[key] = [f for s in segs if (f := _fit(s, names, node_ids)) is not None]
    if not fits:
        return None, "no capture's launches fit: " + _closest(segs, names, captures)
    # replay i <-> segment i of a capture with as many segments as the trace has replays
    for own in per_capture.values():
        if len(own) == replay.count > 1:
            same = [f for f in fits if f.segment is own[i]]
            if same:
                return same[0], ""
    if replay.batch is not None and any(captures[f.segment.capture].batch_size == replay.batch for f in fits):
        fits = [f for f in fits if captures[f.segment.capture].batch_size == replay.batch]
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


class _Copies:
    """The copies of capture-time ops made so far, as columns; per capture, what every copy of an op
    shares (name, shapes, stack), and per segment each launch's chain of ops inside it."""

    def __init__(self, captures: list[CaptureTrace]) -> None:
        self.captures = captures
        self.columns: dict[str, list[np.ndarray]] = {c: [] for c in _COPIED}
        self.pairs: list[np.ndarray] = []
        self.launch_rows: list[np.ndarray] = []  # (replayed kernel, capture, the capture's launch call)
        self.rows = 0
        self._chains: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._facts: dict[int, dict[str, np.ndarray]] = {}
        self._frame_cache: dict[int, dict[int, tuple[str, list[int]]]] = {}
        self._by_rows: dict[tuple[int, bytes], tuple[np.ndarray, _Enclosing]] = {}
        self.python_columns: dict[str, list[np.ndarray]] = {c: [] for c in _PYTHON_COPIED}
        self._frames: dict[int, _FrameFinder] = {}

    def add(self, fit: _Fit, rows: np.ndarray, replay: _Replays, launch: int, rts: pd.DataFrame) -> None:
        """Copy the ops that launched one matched replay's kernels, and their ancestors inside the
        segment, each spanning the device time of the kernels under it."""
        offsets, chain_ops = self._chain(fit.segment)
        positions = fit.positions
        counts = offsets[positions + 1] - offsets[positions]
        if not counts.sum():
            return
        starts = np.repeat(offsets[positions], counts)
        entry = starts + (np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts))
        ops = chain_ops[entry]
        k_ts, k_end = np.repeat(replay.ts[rows], counts), np.repeat(replay.end[rows], counts)
        chosen, group = np.unique(ops, return_inverse=True)  # capture rows: depth-first, parents first
        lo = np.full(chosen.size, np.inf)
        hi = np.full(chosen.size, -np.inf)
        np.minimum.at(lo, group, k_ts)
        np.maximum.at(hi, group, k_end)
        facts = self._op_facts(fit.segment.capture)
        n = chosen.size
        add = self.columns
        for column in ("name", "cat", "input_dims", "input_types", "concrete_inputs"):
            add[column].append(facts[column][chosen])
        add["flops"].append(facts["flops"][chosen])
        stacks, enclosing = self._frames_of(fit.segment.capture, chosen)
        add["call_stack"].append(stacks)
        add["ts"].append(lo)
        add["dur"].append(hi - lo)
        add["end"].append(hi)
        where = (str(rts["pid"].iat[launch]), f"{rts['tid'].iat[launch]}{REPLAY_THREAD}")
        add["pid"].append(np.full(n, where[0], dtype=object))
        add["tid"].append(np.full(n, where[1], dtype=object))
        self._add_modules(enclosing, lo, hi, where)
        add["replay"].append(np.full(n, launch, dtype=np.int64))
        # each kernel -> the copy of its launching op (the first op of its chain)
        has_op = counts > 0
        launcher = chain_ops[offsets[positions[has_op]]]
        copy_row = self.rows + np.searchsorted(chosen, launcher)
        self.pairs.append(np.stack([rows[has_op], copy_row], axis=1))
        capture = np.full(rows.size, fit.segment.capture, dtype=np.int64)
        self.launch_rows.append(np.stack([rows, capture, fit.segment.launches[positions]], axis=1))
        self.rows += n

    def frame(self, columns: pd.Index) -> pd.DataFrame:
        data = {c: np.concatenate(v) if v else np.zeros(0) for c, v in self.columns.items()}
        out = pd.DataFrame(data)
        for column in ("ext_id", "seq", "fwd_tid"):
            out[column] = np.full(len(out), -1, dtype=np.int64)
        return out[[c for c in [*columns, "replay"] if c in out.columns]]

    def kernel_ops(self) -> np.ndarray:
        return np.concatenate(self.pairs).astype(np.int64) if self.pairs else np.zeros((0, 2), dtype=np.int64)

    def kernel_launches(self) -> np.ndarray:
        if not self.launch_rows:
            return np.zeros((0, 3), dtype=np.int64)
        return np.concatenate(self.launch_rows).astype(np.int64)

    def _chain(self, seg: Segment) -> tuple[np.ndarray, np.ndarray]:
        """Per launch of the segment (CSR offsets): its op and that op's ancestors inside the segment."""
        key = id(seg)
        if key not in self._chains:
            ops = self.captures[seg.capture].profile.ops
            parent = ops["parent"].to_numpy()
            o_ts, o_end = ops["ts"].to_numpy(dtype=np.float64), ops["end"].to_numpy(dtype=np.float64)
            tol = nesting_tolerance(ops)
            inside = (o_ts >= seg.start - tol) & (o_end <= seg.end + tol)
            flat: list[int] = []
            offsets = [0]
            for op in seg.ops.tolist():
                o = op
                while o >= 0 and inside[o]:
                    flat.append(o)
                    o = int(parent[o])
                offsets.append(len(flat))
            self._chains[key] = (np.asarray(offsets, dtype=np.int64), np.asarray(flat, dtype=np.int64))
        return self._chains[key]

    def _op_facts(self, capture: int) -> dict[str, np.ndarray]:
        """Name, category and shapes of every op of a capture."""
        if capture not in self._facts:
            ops = self.captures[capture].profile.ops
            columns = ("name", "cat", "input_dims", "input_types", "concrete_inputs")
            self._facts[capture] = {c: ops[c].astype(str).to_numpy() for c in columns}
            self._facts[capture]["flops"] = ops["flops"].to_numpy(dtype=np.float64)
        return self._facts[capture]

    def _frames_of(self, capture: int, rows: np.ndarray) -> tuple[np.ndarray, _Enclosing]:
        """The call stacks at capture time of some ops of a capture, and the ``nn.Module`` ranges
        enclosing them; each op's made once, and the answer for a set of ops once (replays of one graph
        copy the same ops again and again)."""
        key = (capture, rows.tobytes())
        if key in self._by_rows:
            return self._by_rows[key]
        known = self._frame_cache.setdefault(capture, {})
        missing = np.array([r for r in rows.tolist() if r not in known], dtype=np.int64)
        if capture not in self._frames:
            self._frames[capture] = _FrameFinder(self.captures[capture].profile)
        finder = self._frames[capture]
        if missing.size:
            stacks = finder.stacks(missing, finder.frames(missing))
            for r, stack, mods in zip(missing.tolist(), stacks, finder.modules(missing), strict=True):
                known[r] = (stack, mods)
        answer = (
            np.asarray([known[r][0] for r in rows.tolist()], dtype=object),
            _Enclosing.of([known[r][1] for r in rows.tolist()], finder.python),
        )
        self._by_rows[key] = answer
        return answer

    def _add_modules(self, enclosing: _Enclosing, lo: np.ndarray, hi: np.ndarray, where: tuple) -> None:
        """Copies of the module ranges enclosing the copied ops, each spanning the ops it encloses."""
        n = enclosing.rows.size
        if not n:
            return
        start = np.full(n, np.inf)
        stop = np.full(n, -np.inf)
        np.minimum.at(start, enclosing.module, lo[enclosing.op])
        np.maximum.at(stop, enclosing.module, hi[enclosing.op])
        cols = self.python_columns
        cols["name"].append(enclosing.names)
        cols["ts"].append(start)
        cols["dur"].append(stop - start)
        cols["end"].append(stop)
        cols["pid"].append(np.full(n, where[0], dtype=object))
        cols["tid"].append(np.full(n, where[1], dtype=object))
        cols["py_id"].append(np.full(n, -1, dtype=np.int64))
        cols["py_parent_id"].append(np.full(n, -1, dtype=np.int64))
        cols["py_module_id"].append(enclosing.module_ids)

    def python_frame(self) -> pd.DataFrame | None:
        if not self.python_columns["name"]:
            return None
        return pd.DataFrame({c: np.concatenate(v) for c, v in self.python_columns.items()})


@dataclass
class _Enclosing:
    """The ``nn.Module`` ranges of a capture enclosing a set of copied ops: per (op, module) pair the op's
    index in the set and the module's among ``rows`` (the capture's python rows, sorted)."""

    op: np.ndarray
    module: np.ndarray
    rows: np.ndarray
    names: np.ndarray
    module_ids: np.ndarray

    @staticmethod
    def of(modules: list[list[int]], python: pd.DataFrame) -> _Enclosing:
        counts = np.fromiter((len(m) for m in modules), dtype=np.int64, count=len(modules))
        op = np.repeat(np.arange(len(modules), dtype=np.int64), counts)
        flat = np.fromiter((r for m in modules for r in m), dtype=np.int64, count=int(counts.sum()))
        rows, module = np.unique(flat, return_inverse=True)
        return _Enclosing(
            op=op,
            module=module.astype(np.int64),
            rows=rows,
            names=python["name"].astype(str).to_numpy()[rows],
            module_ids=python["py_module_id"].to_numpy()[rows].astype(np.int64),
        )


_PYTHON_COPIED = ("name", "ts", "dur", "end", "pid", "tid", "py_id", "py_parent_id", "py_module_id")
_COPIED = (
    "name",
    "ts",
    "dur",
    "end",
    "pid",
    "tid",
    "cat",
    "input_dims",
    "input_types",
    "concrete_inputs",
    "flops",
    "call_stack",
    "replay",
)


class _FrameFinder:
    """An op's call stack at capture time, as a legacy ``Call stack`` (frames innermost first, ``;``): its
    own ``Call stack`` arg, else the ``python_function`` ranges enclosing it on its thread, found from the
    latest range starting at or before it up its ``Python parent id`` links (``python_parents``), without
    building the whole python tree."""

    def __init__(self, profile: Profile) -> None:
        self.ops = profile.ops
        py = profile.python  # sorted by pid, tid, ts (model/build.py)
        self.names = py["name"].astype(str).to_numpy()
        self.ts, self.end = py["ts"].to_numpy(dtype=np.float64), py["end"].to_numpy(dtype=np.float64)
        self.parent = python_parents(py) if len(py) else np.zeros(0, dtype=np.int64)
        self.python = py
        self._modules: dict[tuple[int, int], np.ndarray] = {}
        self._as_lists: tuple[list[float], list[float], list[int]] | None = None
        module_ids = py["py_module_id"].to_numpy() if "py_module_id" in py else np.full(len(py), -1)
        codes, distinct = pd.factorize(self.names)  # names repeat: test each distinct one once
        named = np.fromiter(
            (str(n).startswith("nn.Module: ") for n in distinct), dtype=bool, count=len(distinct)
        )
        self.is_module = (named[codes] if len(distinct) else np.zeros(len(py), dtype=bool)) & (
            module_ids >= 0
        )
        self.tol = nesting_tolerance(py, self.ops)
        threads = py["pid"].astype(str).to_numpy() + "/" + py["tid"].astype(str).to_numpy()
        self.slices: dict[str, tuple[int, int]] = {}
        if len(py):
            cuts = np.flatnonzero(threads[1:] != threads[:-1]) + 1
            for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, len(py)], strict=True):
                self.slices[str(threads[lo])] = (int(lo), int(hi))

    def _places(self, rows: np.ndarray) -> Iterator[tuple[tuple[int, int], float, float]]:
        """Per op: the slice of its thread's python ranges, its start and its end."""
        ops = self.ops
        thread = ops["pid"].astype(str).to_numpy()[rows] + "/" + ops["tid"].astype(str).to_numpy()[rows]
        o_ts, o_end = ops["ts"].to_numpy(dtype=np.float64)[rows], ops["end"].to_numpy(dtype=np.float64)[rows]
        for t, start, stop in zip(thread, o_ts, o_end, strict=True):
            yield self.slices.get(str(t), (0, 0)), float(start), float(stop)

    def frames(self, rows: np.ndarray) -> list[list[int]]:
        """Per op: the rows of the python ranges enclosing it, innermost first."""
        ts, end, parent = self._lists()
        out = []
        chains: dict[int, list[int]] = {}  # by range: its chain, shared by the ops inside it
        for (lo, hi), start, stop in self._places(rows):
            j = bisect.bisect_right(ts, start + self.tol, lo, hi) - 1
            while j >= lo and end[j] + self.tol < stop:
                j = parent[j]
            out.append(self._chain_from(j, parent, chains))
        return out

    @staticmethod
    def _chain_from(j: int, parent: list[int], chains: dict[int, list[int]]) -> list[int]:
        """Range ``j`` and its ancestors, innermost first, at most MAX_FRAMES. The chain of every range
        walked is kept, so a walk up stops at the first range an earlier op's walk reached."""
        path = []
        k = j
        while k >= 0 and k not in chains:
            path.append(k)
            k = parent[k]
        full = path + (chains[k] if k >= 0 else [])
        for i, row in enumerate(path):
            chains[row] = full[i : i + MAX_FRAMES]
        return chains[j] if j >= 0 else []

    def _lists(self) -> tuple[list[float], list[float], list[int]]:
        """The columns as Python lists: a walk up parent links reads one item at a time."""
        if self._as_lists is None:
            self._as_lists = (self.ts.tolist(), self.end.tolist(), self.parent.tolist())
        return self._as_lists

    def modules(self, rows: np.ndarray) -> list[list[int]]:
        """Per op: the rows of the ``nn.Module`` ranges that enclose it in time on its thread (parent
        links can be missing in a trace; time cannot)."""
        out = []
        for (lo, hi), start, stop in self._places(rows):
            mods = self.module_rows(lo, hi)
            hold = (self.ts[mods] <= start + self.tol) & (self.end[mods] + self.tol >= stop)
            out.append(mods[hold].tolist())
        return out

    def module_rows(self, lo: int, hi: int) -> np.ndarray:
        key = (lo, hi)
        if key not in self._modules:
            self._modules[key] = lo + np.flatnonzero(self.is_module[lo:hi])
        return self._modules[key]

    def stacks(self, rows: np.ndarray, chains: list[list[int]]) -> list[str]:
        legacy = self.ops["call_stack"].astype(str).to_numpy()[rows]
        joined: dict[int, str] = {}  # by chain: frames() shares one list between the ops of a call

        def text(chain: list[int]) -> str:
            key = id(chain)
            if key not in joined:
                joined[key] = ";".join(self.names[chain].tolist())
            return joined[key]

        return [
            leg if leg not in ("", "nan", "None") else text(chain)
            for leg, chain in zip(legacy, chains, strict=True)
        ]

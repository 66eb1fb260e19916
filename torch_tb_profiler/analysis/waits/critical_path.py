"""The critical path of a step, lightweight (docs/metrics.md, "Critical path").

Walked backwards from the end of the step's device-extended window (analysis/core/steps.py) to its
start, the cursor only moving back, so the segments are contiguous and add up to the step exactly:

- When the device works past the host's last launch, the path starts at the device activity that ends
  last (the window's time after it, when the host's step range runs longer, is ``host``); else on the
  host, at the thread of the last launch call.
- At a device activity: a ``device`` segment over it. What it waited for is the later to finish of
  (a) the activity before it on its stream and (b) its launch call. The time between that and the
  activity's start is ``launch`` (queueing after the call) or ``idle`` (after the stream's previous
  activity); from a launch call the path goes to the host: a ``launch`` segment over the call.
- On the host at time t on a thread: the latest synchronising call (``…Synchronize``) of that thread
  ending before t makes a ``host`` segment from its end to t and a ``sync`` segment over the call (the
  host waited for the device there); without one, the rest of the window back to the step start is
  ``host``.

``by_kind`` sums the segments per kind; ``bound_by`` names the kind with the most time in one sentence.
Each segment names the event it lies on (``event``, a timeline id: ``dev:ROW`` for device, idle and
queueing segments — on that activity's stream — and ``rt:ROW`` for launch, sync and host segments — on
that call's thread), so the timeline can draw the path (views/timeline.py ``/timeline/critical_path``).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pandas as pd

from torch_tb_profiler.analysis.core import names
from torch_tb_profiler.analysis.core.cache import memoized
from torch_tb_profiler.analysis.core.steps import steps as step_table
from torch_tb_profiler.model import Profile

KINDS = ("host", "launch", "device", "sync", "idle")
MAX_HOPS = 20_000  # per step; past it the rest of the step is one "host" segment (docs/metrics.md)
MAX_SEGMENTS = 200  # per step in the answer: consecutive segments of one kind merged beyond it


def critical_paths(profile: Profile) -> list[dict[str, Any]]:
    """Per step: {step, start_us, end_us, duration_us, by_kind {kind: µs}, bound_by, segments [{kind,
    name, start_us, end_us, event}]}; [] for a profile without device activity."""
    return memoized(profile, "waits.critical_path", lambda: _paths(profile))


def summary(profile: Profile) -> list[dict[str, Any]] | None:
    """``analyses.critical_path``: the per-step figures without the segments."""
    paths = critical_paths(profile)
    return [{k: v for k, v in p.items() if k not in _DETAIL_KEYS} for p in paths] if paths else None


_DETAIL_KEYS = ("segments", "start_us", "end_us")
# a segment: kind, name, start, end, and the event it lies on ("dev:ROW", "rt:ROW" or "": none)
Segment = tuple[str, str, float, float, str]


class _Walk:
    def __init__(self, profile: Profile) -> None:
        dev, rt = profile.device, profile.runtimes
        self.d_ts = dev["ts"].to_numpy(np.float64)
        self.d_end = dev["end"].to_numpy(np.float64)
        self.d_rt = dev["runtime"].to_numpy(np.int64)
        self.d_names = dev["name"].to_numpy()
        key = dev["device"].to_numpy(np.int64) * (1 << 32) + dev["stream"].to_numpy(np.int64)
        # per stream: rows by end, to find the activity before one
        self.by_stream = _grouped(key, self.d_end)
        self.d_key = key
        self.r_ts = rt["ts"].to_numpy(np.float64)
        self.r_end = rt["end"].to_numpy(np.float64)
        self.r_tid = rt["tid"].to_numpy()
        self.r_names = rt["name"].to_numpy()
        is_sync = (
            names.mask(profile, "runtimes", lambda n: "Synchronize" in n) if len(rt) else np.zeros(0, bool)
        )
        sync_rows = np.flatnonzero(is_sync)
        self.syncs = {
            tid: (sync_rows[rows], ends)
            for tid, (rows, ends) in _grouped(self.r_tid[sync_rows], self.r_end[sync_rows]).items()
        }

    def step(self, lo: float, hi: float) -> list[Segment]:
        segs: list[Segment] = []
        cursor = hi
        thread = -1  # the host call the path was last at: host segments lie on its thread

        def add(kind: str, name: str, start: float, table: str = "", row: int = -1) -> None:
            """A segment from ``start`` to the cursor, lying on row ``row`` of ``table`` ("dev", "rt");
            its event id is written only when the segment is kept (this runs several times a hop)."""
            nonlocal cursor, thread
            start = max(start, lo)
            if table == "rt":
                thread = row
            if start < cursor:
                if kind == "host":
                    event = f"rt:{thread}" if thread >= 0 else ""
                else:
                    event = f"{table}:{row}" if table else ""
                segs.append((kind, name, start, cursor, event))
                cursor = start

        in_window = np.flatnonzero((self.d_end <= hi + 1e-6) & (self.d_end > lo))
        launched = self.d_rt[in_window]
        last_call = int(launched[np.argmax(self.r_end[launched])]) if (launched >= 0).any() else -1
        node: tuple[str, int] | None = None
        if in_window.size:
            last = int(in_window[np.argmax(self.d_end[in_window])])
            host_until = self.r_end[last_call] if last_call >= 0 else -np.inf
            node = ("device", last) if self.d_end[last] >= host_until else ("host", last_call)
        thread = last_call
        if node is not None and node[0] == "device":
            add("host", "", self.d_end[node[1]])  # the host range holds the step open past the device
        hops = 0
        while node is not None and cursor > lo and hops < MAX_HOPS:
            hops += 1
            kind, row = node
            if kind == "device":
                add("idle", "", self.d_end[row], "dev", row)
                add("device", str(self.d_names[row]), self.d_ts[row], "dev", row)
                node = self._before_activity(row, add)
            else:
                node = self._before_host(row, cursor, lo, add)
        add("host", "", lo)  # what is left before the first hop: the host's time
        return segs[::-1]

    def _before_activity(self, row: int, add) -> tuple[str, int] | None:
        start = self.d_ts[row]
        rows, ends = self.by_stream[int(self.d_key[row])]
        i = int(np.searchsorted(ends, start, side="right")) - 1
        prev = int(rows[i]) if i >= 0 else -1
        if prev == row:
            prev = int(rows[i - 1]) if i >= 1 else -1
        call = int(self.d_rt[row])
        prev_end = self.d_end[prev] if prev >= 0 else -np.inf
        if call >= 0 and self.r_end[call] >= prev_end:
            add("launch", f"queued after {self.r_names[call]}", self.r_end[call], "dev", row)
            add("launch", str(self.r_names[call]), self.r_ts[call], "rt", call)
            return ("host", call)
        if prev >= 0:
            add("idle", "", prev_end, "dev", row)
            return ("device", prev)
        return None

    def _before_host(self, call: int, cursor: float, lo: float, add) -> tuple[str, int] | None:
        tid = self.r_tid[call] if call >= 0 else None
        if tid is None or tid not in self.syncs:
            return None
        rows, ends = self.syncs[tid]
        i = int(np.searchsorted(ends, cursor, side="right")) - 1
        if i < 0 or ends[i] <= lo:
            return None
        sync = int(rows[i])
        add("host", "", self.r_end[sync], "rt", call)
        add("sync", str(self.r_names[sync]), self.r_ts[sync], "rt", sync)
        return ("host", sync)


def _grouped(keys: np.ndarray, ends: np.ndarray) -> dict[Any, tuple[np.ndarray, np.ndarray]]:
    """Per distinct key: its rows ordered by end, and those ends (one sort for all keys)."""
    if not keys.size:
        return {}
    codes, uniques = pd.factorize(keys)
    order = np.lexsort((ends, codes))
    bounds = np.flatnonzero(np.r_[True, codes[order][1:] != codes[order][:-1], True])
    return {uniques[codes[order[a]]]: (order[a:b], ends[order[a:b]]) for a, b in itertools.pairwise(bounds)}


def step_path(profile: Profile, number: int) -> tuple[dict[str, Any], list[Segment]] | None:
    """Step ``number``'s entry of :func:`critical_paths` and every segment of its walk (not merged:
    the timeline draws them, views/timeline.py); None when the profile has no such step or no device
    activity."""
    if not len(profile.device):
        return None
    windows = step_table(profile)
    at = np.flatnonzero(windows["number"].to_numpy() == number)
    if not at.size:
        return None
    lo, hi = float(windows["start"].iloc[at[0]]), float(windows["end"].iloc[at[0]])
    segs = _walk(profile).step(lo, hi)
    return _entry(number, lo, hi, segs), segs


def _walk(profile: Profile) -> _Walk:
    return memoized(profile, "waits.critical_path.walk", lambda: _Walk(profile))


def _paths(profile: Profile) -> list[dict[str, Any]]:
    if not len(profile.device):
        return []
    walk = _walk(profile)
    windows = step_table(profile)
    return [
        _entry(int(number), float(lo), float(hi), walk.step(float(lo), float(hi)))
        for number, lo, hi in zip(windows["number"], windows["start"], windows["end"], strict=True)
    ]


def _entry(number: int, lo: float, hi: float, segs: list[Segment]) -> dict[str, Any]:
    by_kind = {k: 0.0 for k in KINDS}
    for kind, _, start, end, _event in segs:
        by_kind[kind] += float(end - start)
    duration = hi - lo
    return {
        "step": int(number),
        "start_us": lo,
        "end_us": hi,
        "duration_us": duration,
        "by_kind": by_kind,
        "bound_by": _sentence(by_kind, duration, segs),
        "segments": [
            {"kind": k, "name": n, "start_us": float(s), "end_us": float(e), "event": ev or None}
            for k, n, s, e, ev in _merged(segs)
        ],
    }


def _merged(segs: list[Segment]) -> list[Segment]:
    """At most MAX_SEGMENTS segments: past it, consecutive segments of one kind are merged (names
    dropped; the event kept when they lie on one event, else the first one's, so the timeline still
    draws the merged segment on a track of that kind), then runs of equal count become one segment of
    their dominant kind with no event; they stay contiguous and cover the step (``by_kind`` is computed
    before this, from every segment)."""
    if len(segs) <= MAX_SEGMENTS:
        return segs
    out: list[Segment] = []
    for kind, name, start, end, event in segs:
        if out and out[-1][0] == kind:
            out[-1] = (kind, "", out[-1][2], end, out[-1][4])
        else:
            out.append((kind, name, start, end, event))
    if len(out) <= MAX_SEGMENTS:
        return out
    bounds = np.linspace(0, len(out), MAX_SEGMENTS + 1).astype(int)
    coarse: list[Segment] = []
    for a, b in itertools.pairwise(bounds):
        run = out[a:b]
        time = {k: sum(e - s for kk, _, s, e, _ev in run if kk == k) for k in KINDS}
        coarse.append((max(KINDS, key=lambda k: time[k]), "", run[0][2], run[-1][3], ""))
    return coarse


_WHAT = {
    "host": "Host-bound (the host's own work)",
    "launch": "Launch-bound (launch calls and the queueing after them)",
    "device": "Device-bound (device activities one after another)",
    "sync": "Synchronisation-bound (the host waiting for the device)",
    "idle": "Dependency-bound (the device waiting on earlier work)",
}


def _sentence(by_kind: dict[str, float], duration: float, segs) -> str:
    if duration <= 0:
        return "The step has no duration."
    kind = max(KINDS, key=lambda k: by_kind[k])
    top = max((s for s in segs if s[0] == kind and s[1]), key=lambda s: s[3] - s[2], default=None)
    where = f" (longest: {top[1][:120]}, {top[3] - top[2]:.1f} µs)" if top else ""
    return f"{_WHAT[kind]}: {100 * by_kind[kind] / duration:.0f} % of the step{where}."

"""The timeline index: every timed event of a profile on a track and a row, sorted for window queries.

Built once per profile from the model's tables (never from the JSON) and kept in ``profile.cache``.
Rules (docs/metrics.md, "Timeline"):

- Tracks: one per host thread (ops, runtime calls, ``python_function`` ranges and other host events
  of that (pid, tid)), one per device stream (kernels, memcpy, memset, syncs), one per device stream
  for its GPU annotations, and counter tracks per device.
- Depth on a thread: the number of the thread's events open when the event starts (a sweep over
  starts and ends; at one time, ends come first, and a zero-length event ends right after its own
  start, before the starts that follow it: it holds nothing). On a
  properly nested thread this is the nesting depth of the op tree. Stream events don't nest: depth 0.
- No event is dropped: an event that overlaps the previous event of its own row without nesting
  goes to an extra row below the track's nesting rows (first one free, greedy by start time); the
  track counts them as ``moved``.
- Arrays are sorted by (track, row, start); on one row events never overlap, so their ends are
  sorted too, and the events overlapping a window are one slice per row (two binary searches).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from torch_tb_profiler.analysis.core.accelerator import accelerator
from torch_tb_profiler.analysis.core.cache import memoized
from torch_tb_profiler.analysis.core.range_profiler import range_devices, range_rows
from torch_tb_profiler.analysis.memory import usage as mem
from torch_tb_profiler.analysis.timeline.counters import counter_series, trace_range
from torch_tb_profiler.analysis.waits import queues
from torch_tb_profiler.model import Profile

KINDS = ("op", "rt", "dev", "py", "sync", "ann", "other")
TABLES = {
    "op": "ops",
    "rt": "runtimes",
    "dev": "device",
    "py": "python",
    "sync": "syncs",
    "ann": "gpu_annotations",
    "other": "others",
}
_HOST_KINDS = ("op", "rt", "py", "other")
NESTING_KINDS = ("thread", "python", "annotations")  # track kinds whose events nest (streams' don't)
# start-before-end slack on one row: float64 rounding of ns timestamps written as µs
_ROUNDING_US = 0.002


@dataclass
class Track:
    id: int
    group: str
    kind: str  # "thread" | "stream" | "annotations" | "counter"
    name: str
    rows: int = 0
    extra_rows: int = 0
    moved: int = 0
    events: int = 0
    unit: str = ""
    max: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "group": self.group, "kind": self.kind, "name": self.name}
        if self.kind == "counter":
            out.update(unit=self.unit, max=self.max, events=self.events)
        else:
            out.update(rows=self.rows, extra_rows=self.extra_rows, moved=self.moved, events=self.events)
        return out


@dataclass
class Series:
    ts: np.ndarray
    values: np.ndarray


@dataclass
class TimelineIndex:
    start_us: float
    end_us: float
    groups: list[dict[str, str]]
    tracks: list[Track]
    # per event, sorted by (track, depth, ts)
    ts: np.ndarray
    end: np.ndarray
    name: np.ndarray  # int32 code into names
    kind: np.ndarray  # uint8 index into KINDS
    row: np.ndarray  # int32 row in the kind's table
    track: np.ndarray  # uint16
    depth: np.ndarray  # uint16
    names: np.ndarray  # object array of str
    # segments: runs of one (track, depth); seg_lo/seg_hi slice the arrays above
    seg_track: np.ndarray
    seg_depth: np.ndarray
    seg_lo: np.ndarray
    seg_hi: np.ndarray
    position: dict[str, np.ndarray]  # kind -> row -> position in the arrays above
    counters: dict[int, Series] = field(default_factory=dict)
    _self: np.ndarray | None = field(default=None, repr=False)

    @property
    def event_count(self) -> int:
        return int(self.ts.size)

    def nbytes(self) -> int:
        arrays = [self.ts, self.end, self.name, self.kind, self.row, self.track, self.depth]
        arrays += list(self.position.values())
        return int(sum(a.nbytes for a in arrays))

    def segments_of(self, tracks: list[int] | None) -> np.ndarray:
        if tracks is None:
            return np.arange(self.seg_lo.size)
        return np.flatnonzero(np.isin(self.seg_track, np.asarray(tracks, dtype=np.int64)))


INDEX_KEY = "timeline.index"  # the memo key in profile.cache (also filled from the persisted index)


def index(profile: Profile) -> TimelineIndex:
    return memoized(profile, INDEX_KEY, lambda: build_index(profile))


# ---- building --------------------------------------------------------------------------------------


def build_index(profile: Profile) -> TimelineIndex:
    parts = []  # (kind code, table rows, ts, end, names, track key)
    host_pid: list[np.ndarray] = []
    host_tid: list[np.ndarray] = []
    for k in _HOST_KINDS:
        t = getattr(profile, TABLES[k])
        host_pid.append(t["pid"].to_numpy(object))
        host_tid.append(t["tid"].to_numpy(object))
    pid_all = np.concatenate(host_pid) if host_pid else np.empty(0, object)
    tid_all = np.concatenate(host_tid) if host_tid else np.empty(0, object)
    # the tables hold pid/tid as interned str objects: factorize them as they are (a str copy of a
    # million objects costs more than the whole sweep); equal names from mixed types meet in code_of
    pid_codes, pid_uniq = pd.factorize(pid_all, sort=False)
    tid_codes, tid_uniq = pd.factorize(tid_all, sort=False)
    pid_names = [str(x) for x in pid_uniq]
    tid_names = [str(x) for x in tid_uniq]
    host_key = pid_codes.astype(np.int64) * max(1, len(tid_names)) + tid_codes
    offset = 0
    keys: list[tuple] = []  # distinct track keys, each a tuple describing the track
    key_codes: dict[tuple, int] = {}

    def code_of(key: tuple) -> int:
        if key not in key_codes:
            key_codes[key] = len(keys)
            keys.append(key)
        return key_codes[key]

    for k in _HOST_KINDS:
        t = getattr(profile, TABLES[k])
        n = len(t)
        hk = host_key[offset : offset + n]
        offset += n
        if not n:
            continue
        # range-profiler ranges are written with pid = device id: drawn on their device, not a host
        ranges = range_rows(t) if k == "other" else np.zeros(n, dtype=bool)
        host = ~ranges
        inv, uniq = pd.factorize(hk[host], sort=False)  # hashing: a sort (np.unique) costs 3x more here
        width = max(1, len(tid_names))
        # python_function ranges get a track of their own beside their thread: they overlap ops
        # without nesting (a record_function's __enter__ opens before its annotation and closes inside)
        track_kind = "python" if k == "py" else "thread"
        lookup = np.array(
            [
                code_of((track_kind, str(pid_names[u // width]), str(tid_names[u % width])))
                for u in uniq.tolist()
            ],
            dtype=np.int64,
        )
        codes = np.empty(n, dtype=np.int64)
        codes[host] = lookup[inv.ravel()]
        if ranges.any():
            devs = range_devices(t[ranges])
            codes[ranges] = [code_of(("ranges", int(d), 0)) for d in devs.tolist()]
        parts.append((KINDS.index(k), t, codes))
    for k, track_kind in (("dev", "stream"), ("sync", "stream"), ("ann", "annotations")):
        t = getattr(profile, TABLES[k])
        if not len(t):
            continue
        dev = t["device"].to_numpy(np.int64)
        stream = t["stream"].to_numpy(np.int64) if "stream" in t else np.zeros(len(t), np.int64)
        if k == "ann":
            stream = _annotation_streams(t, stream)
        span = int(stream.max() - stream.min()) + 1
        inv, uniq = pd.factorize((dev - dev.min()) * span + (stream - stream.min()), sort=False)
        first = _first_of(inv, len(uniq))
        pairs = zip(dev[first].tolist(), stream[first].tolist(), strict=True)
        lookup = np.array([code_of((track_kind, d, s)) for d, s in pairs], dtype=np.int64)
        parts.append((KINDS.index(k), t, lookup[inv.ravel()]))

    # track order: host processes (numeric pid first), their threads; then devices, their streams
    def sort_key(key: tuple) -> tuple:
        if key[0] in ("thread", "python"):
            return (0, _num_key(key[1]), _num_key(key[2]), key[0] == "python")
        return (1, (0, key[1], ""), (0, key[2], ""), 0 if key[0] == "stream" else 1)

    order = sorted(range(len(keys)), key=lambda i: sort_key(keys[i]))
    track_of_code = np.empty(len(keys), dtype=np.int64)
    track_of_code[order] = np.arange(len(keys))
    ordered_keys = [keys[i] for i in order]

    kind = (
        np.concatenate([np.full(len(t), c, np.uint8) for c, t, _ in parts])
        if parts
        else np.empty(0, np.uint8)
    )
    row = (
        np.concatenate([np.arange(len(t), dtype=np.int32) for _, t, _ in parts])
        if parts
        else np.empty(0, np.int32)
    )
    track = np.concatenate([track_of_code[tk] for _, _, tk in parts]) if parts else np.empty(0, np.int64)
    ts = np.concatenate([t["ts"].to_numpy(np.float64) for _, t, _ in parts]) if parts else np.empty(0)
    end = np.concatenate([t["end"].to_numpy(np.float64) for _, t, _ in parts]) if parts else np.empty(0)
    end = np.maximum(end, ts)  # a negative duration draws as zero length
    names_obj = (
        np.concatenate([t["name"].to_numpy(object) for _, t, _ in parts]) if parts else np.empty(0, object)
    )
    name_codes, names = pd.factorize(names_obj, use_na_sentinel=False)
    names = np.asarray(["" if u is None else str(u) for u in names], dtype=object)

    nests = np.array([k[0] in NESTING_KINDS for k in ordered_keys], dtype=bool)
    depth = _nesting_depth(track, ts, end, nests[track] if track.size else np.zeros(0, bool))
    depth, moved_mask, nest_rows = _extra_rows(track, depth, ts, end, nests)

    final = np.lexsort((ts, depth, track))
    ts, end, track, depth = ts[final], end[final], track[final], depth[final]
    kind, row, name_codes, moved_mask = kind[final], row[final], name_codes[final], moved_mask[final]

    groups, tracks = _describe(profile, ordered_keys, track, depth, moved_mask, nest_rows)
    rng = _range(profile, ts, end)
    idx = assemble(
        rng,
        groups,
        tracks,
        {
            "ts": ts,
            "end": end,
            "name": name_codes.astype(np.int32),
            "kind": kind,
            "row": row,
            "track": track.astype(np.uint16),
            "depth": depth.astype(np.uint16),
        },
        names,
        {k: len(getattr(profile, TABLES[k])) for k in KINDS},
    )
    _add_counters(profile, idx)
    return idx


EVENT_ARRAYS = ("ts", "end", "name", "kind", "row", "track", "depth")


def assemble(
    span: tuple[float, float],
    groups: list[dict[str, str]],
    tracks: list[Track],
    events: dict[str, np.ndarray],
    names: np.ndarray,
    table_rows: dict[str, int],
    counters: dict[int, Series] | None = None,
) -> TimelineIndex:
    """An index from its event arrays (EVENT_ARRAYS, sorted by track, row, start), deriving the row
    segments and the id lookups; ``table_rows``: the rows of each kind's table. Used by build_index and
    by the persisted index (ingest/index_timeline.py), which stores only what this does not derive."""
    track, depth, kind, row = events["track"], events["depth"], events["kind"], events["row"]
    seg_lo, seg_hi = _segments(track, depth)
    position = {}
    for c, k in enumerate(KINDS):
        rows_of_kind = np.flatnonzero(kind == c)
        pos = np.full(table_rows[k], -1, dtype=np.int64)
        pos[row[rows_of_kind]] = rows_of_kind
        position[k] = pos
    return TimelineIndex(
        start_us=span[0],
        end_us=span[1],
        groups=groups,
        tracks=tracks,
        **events,
        names=names,
        seg_track=track[seg_lo].astype(np.int64),
        seg_depth=depth[seg_lo].astype(np.int64),
        seg_lo=seg_lo,
        seg_hi=seg_hi,
        position=position,
        counters=counters if counters is not None else {},
    )


def _first_of(codes: np.ndarray, n: int) -> np.ndarray:
    """For codes 0..n-1 (each present), the position of each one's first occurrence."""
    first = np.full(n, len(codes), dtype=np.int64)
    np.minimum.at(first, codes, np.arange(len(codes)))
    return first


def _num_key(text: str) -> tuple[int, int, str]:
    return (0, int(text), "") if text.lstrip("-").isdigit() else (1, 0, text)


def _nesting_depth(track: np.ndarray, ts: np.ndarray, end: np.ndarray, nests: np.ndarray) -> np.ndarray:
    """Events open on the same track when each starts (see the module doc); 0 where ``nests`` is False."""
    n = ts.size
    depth = np.zeros(n, dtype=np.int64)
    sel = np.flatnonzero(nests)
    if not sel.size:
        return depth
    # event order: (track, ts, longest first) -> rank used to break ties between starts
    rank = np.empty(sel.size, dtype=np.int64)
    rank[np.lexsort((ts[sel] - end[sel], ts[sel], track[sel]))] = np.arange(sel.size)
    # a zero-length event closes right after its own start: it holds nothing, and the events that
    # start at its time after it (in rank order) are its siblings, as in the op tree (model.build)
    zero = end[sel] <= ts[sel]
    p_track = np.r_[track[sel], track[sel]]
    p_time = np.r_[ts[sel], end[sel]]
    p_type = np.r_[np.ones(sel.size, np.int8), np.where(zero, 1, 0).astype(np.int8)]
    p_rank = np.r_[rank, rank]
    p_after = np.r_[np.zeros(sel.size, np.int8), np.ones(sel.size, np.int8)]
    order = np.lexsort((p_after, p_rank, p_type, p_time, p_track))
    is_start = order < sel.size
    delta = np.where(is_start, 1, -1)
    before = np.cumsum(delta) - delta  # open events before this point (each track nets to zero)
    depth[sel[order[is_start]]] = before[is_start]
    return depth


def _segments(track: np.ndarray, depth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first, past-last) positions of each run of one (track, depth) in arrays sorted by them."""
    if not track.size:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    change = np.flatnonzero((track[1:] != track[:-1]) | (depth[1:] != depth[:-1])) + 1
    return np.r_[0, change].astype(np.int64), np.r_[change, track.size].astype(np.int64)


def row_above(ts: np.ndarray, track: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """For arrays sorted by (track, depth, ts): per event, the position of the last event one row up
    on its track that starts at or before it (its parent when rows nest), -1 if none."""
    out = np.full(ts.size, -1, dtype=np.int64)
    lo, hi = _segments(track, depth)
    seg_of = {(int(track[a]), int(depth[a])): (a, b) for a, b in zip(lo.tolist(), hi.tolist(), strict=True)}
    for (tr, d), (a, b) in seg_of.items():
        above = seg_of.get((tr, d - 1)) if d > 0 else None
        if above is None:
            continue
        pa, pb = above
        cand = pa + np.searchsorted(ts[pa:pb], ts[a:b], side="right") - 1
        out[a:b] = np.where(cand >= pa, cand, -1)
    return out


def _slack(end: np.ndarray) -> np.ndarray:
    return np.maximum(_ROUNDING_US, 2 * np.spacing(end))


def _extra_rows(
    track: np.ndarray, depth: np.ndarray, ts: np.ndarray, end: np.ndarray, nests: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Depth with events that don't fit their row moved below their track's rows; which moved; and
    per track, its nesting rows (the rows of the events that stayed; extra rows come after them).

    An event doesn't fit when, on a nesting track, the event it sits under ends before it does (a
    partial overlap), or when it starts before the previous event of its row ends."""
    moved = np.zeros(ts.size, dtype=bool)
    nest_rows = np.zeros(nests.size, dtype=np.int64)
    if not ts.size:
        return depth, moved, nest_rows
    order = np.lexsort((ts, depth, track))
    s_ts, s_end, s_track, s_depth = ts[order], end[order], track[order], depth[order]
    parent = row_above(s_ts, s_track, s_depth)
    nested = nests[s_track] & (s_depth > 0)
    overhangs = (parent < 0) | (s_end[np.maximum(parent, 0)] < s_end - _slack(s_end))
    moved[order[nested & overhangs]] = True
    alive = order[~moved[order]]
    for _ in range(64):  # each pass removes the events overlapping their kept predecessor
        t, d = track[alive], depth[alive]
        same = np.r_[False, (t[1:] == t[:-1]) & (d[1:] == d[:-1])]
        prev_end = end[alive][:-1]
        hit = (
            same & np.r_[False, ts[alive][1:] < prev_end - np.maximum(_ROUNDING_US, 2 * np.spacing(prev_end))]
        )
        if not hit.any():
            break
        moved[alive[hit]] = True
        alive = alive[~hit]
    else:  # pathological: settle the rest one by one
        keep_end: dict[tuple[int, int], float] = {}
        for i in alive.tolist():
            key = (int(track[i]), int(depth[i]))
            if ts[i] < keep_end.get(key, -np.inf) - _ROUNDING_US:
                moved[i] = True
            else:
                keep_end[key] = end[i]
    np.maximum.at(nest_rows, track[~moved], depth[~moved] + 1)
    if not moved.any():
        return depth, moved, nest_rows
    depth = depth.copy()
    idx = np.flatnonzero(moved)
    idx = idx[np.lexsort((ts[idx], track[idx]))]
    lanes: dict[int, list[float]] = {}
    for i in idx.tolist():
        tr = int(track[i])
        ends = lanes.setdefault(tr, [])
        for lane, last in enumerate(ends):
            if ts[i] >= last:
                ends[lane] = end[i]
                break
        else:
            lane = len(ends)
            ends.append(end[i])
        depth[i] = nest_rows[tr] + lane
    return depth, moved, nest_rows


def _describe(
    profile: Profile,
    keys: list[tuple],
    track: np.ndarray,
    depth: np.ndarray,
    moved: np.ndarray,
    nest_rows: np.ndarray,
) -> tuple[list[dict[str, str]], list[Track]]:
    meta = profile.meta
    n = len(keys)
    events = np.bincount(track, minlength=n) if track.size else np.zeros(n, np.int64)
    rows = np.zeros(n, np.int64)
    if track.size:
        np.maximum.at(rows, track, depth.astype(np.int64) + 1)
    moved_count = np.bincount(track[moved], minlength=n) if moved.any() else np.zeros(n, np.int64)
    groups: list[dict[str, str]] = []
    seen: set[str] = set()
    tracks: list[Track] = []
    for i, key in enumerate(keys):
        if key[0] in ("thread", "python"):
            pid, tid = key[1], key[2]
            gid, gname, gkind = f"p:{pid}", f"Process {pid}", "host"
            pname = meta.process_names.get(pid)
            if pname:
                gname += f" ({pname})"
            name = meta.thread_names.get((pid, tid)) or f"Thread {tid}"
            if key[0] == "python":
                name += " Python"
        else:
            dev, stream = key[1], key[2]
            gid, gname, gkind = f"d:{dev}", _device_name(profile, dev), "device"
            name = f"Stream {stream}" if stream >= 0 else "No stream"
            if key[0] == "annotations":  # GPU user annotations, beside their stream when it is known
                name = f"Stream {stream} annotations" if stream >= 0 else "Annotations"
            if key[0] == "ranges":
                name = "Range profiler (counters; times not measured)"
        if gid not in seen:
            seen.add(gid)
            groups.append({"id": gid, "name": gname, "kind": gkind})
        extra = int(rows[i] - nest_rows[i]) if moved_count[i] else 0
        tracks.append(
            Track(
                id=i,
                group=gid,
                kind=key[0],
                name=name,
                rows=int(rows[i]),
                extra_rows=extra,
                moved=int(moved_count[i]),
                events=int(events[i]),
            )
        )
    return groups, tracks


def _annotation_streams(t: pd.DataFrame, stream: np.ndarray) -> np.ndarray:
    """Kineto writes a GPU annotation's stream as its tid, not in its args: take a numeric tid there."""
    missing = stream < 0
    if not missing.any() or "tid" not in t:
        return stream
    tid = pd.to_numeric(pd.Series(t["tid"].to_numpy(object)[missing]).astype(str), errors="coerce")
    out = stream.copy()
    out[missing] = tid.fillna(-1).to_numpy(np.float64).astype(np.int64)
    return out


def _device_label(profile: Profile, device: int) -> str:
    """ "GPU 0", "MTIA 9": the device's kind, as the Overview names it, and its id."""
    acc = accelerator(profile)
    return f"{acc.kind if acc.platform else 'Device'} {device}"


def _device_name(profile: Profile, device: int) -> str:
    """ "GPU 0 (NVIDIA H100)", "MTIA 9": the device's label and name."""
    props = profile.meta.device_property(device)
    label = _device_label(profile, device)
    return f"{label} ({props['name']})" if props.get("name") else label


def _range(profile: Profile, ts: np.ndarray, end: np.ndarray) -> tuple[float, float]:
    lo, hi = np.inf, -np.inf
    span = trace_range(profile)
    if span is not None:
        lo, hi = span
    if ts.size:
        lo, hi = min(lo, float(ts.min())), max(hi, float(end.max()))
    if not np.isfinite(lo):
        return 0.0, 1.0
    return float(lo), float(hi if hi > lo else lo + 1.0)


def _add_counters(profile: Profile, idx: TimelineIndex) -> None:
    """GPU utilization / SM efficiency (trace_counters), memory per device, queue length per stream and
    copy bandwidth per device (waits/queues.py), the trace's own counters."""
    series: list[tuple[str, str, str, np.ndarray, np.ndarray]] = []  # group, name, unit, ts, values
    for c in counter_series(profile):
        series.append((f"d:{c.device}", c.name, "ratio", c.ts, c.values))
    for label, dev_type, dev_id, t, allocated, reserved in mem.device_series(profile):
        on_device = dev_type != 0 and dev_id >= 0
        group = f"d:{dev_id}" if on_device else _first_host_group(idx)
        if on_device and label == f"GPU{dev_id}":
            label = _device_label(profile, dev_id)  # "GPU 0 Allocated" beside "GPU 0 Utilization"
        for what, values in (("Allocated", allocated), ("Reserved", reserved)):
            ok = ~np.isnan(values)
            if ok.any():
                series.append((group, f"{label} {what}", "bytes", t[ok], values[ok]))
    for q in queues.counter_tracks(profile, queues.TIMELINE_POINTS):  # issue 25: queue, copy bandwidth
        series.append((f"d:{q['device']}", q["name"], q["unit"], q["ts"], q["values"]))
    host_groups = {g["id"] for g in idx.groups if g["kind"] == "host"}
    for (pid, cname, key), (t, values) in trace_counter_series(profile).items():
        group = f"p:{pid}" if f"p:{pid}" in host_groups else _first_host_group(idx)
        series.append((group, cname if key == cname else f"{cname} {key}", "", t, values))
    known = {g["id"] for g in idx.groups}
    for group, cname, unit, t, values in series:
        finite = values[np.isfinite(values)]
        if not np.any(finite):
            continue  # no data, or zero throughout (a CPU that reserves nothing): no track
        if group not in known:
            known.add(group)
            dev = group.split(":", 1)[1]
            idx.groups.append(
                {
                    "id": group,
                    "name": _device_name(profile, int(dev)) if dev.isdigit() else group,
                    "kind": "device",
                }
            )
        tid = len(idx.tracks)
        idx.tracks.append(
            Track(
                tid,
                group,
                "counter",
                cname,
                unit=unit,
                max=float(finite.max()) if finite.size else 0.0,
                events=t.size,
            )
        )
        order = np.argsort(t, kind="stable")
        idx.counters[tid] = Series(t[order], values[order])
    # counter tracks right after the last track of their group
    position = {g["id"]: i for i, g in enumerate(idx.groups)}
    idx.groups.sort(key=lambda g: (g["kind"] != "host", position[g["id"]]))


def _first_host_group(idx: TimelineIndex) -> str:
    for g in idx.groups:
        if g["kind"] == "host":
            return g["id"]
    return "p:counters"


def trace_counter_series(profile: Profile) -> dict[tuple[str, str, str], tuple[np.ndarray, np.ndarray]]:
    """The trace's own ``ph: "C"`` counters, one series per args key: (pid, name, key) -> (ts, values)."""
    table = profile.counters
    out = {}
    for (pid, cname, key), grp in table.groupby(["pid", "name", "key"], sort=True):
        out[(str(pid), str(cname), str(key))] = (
            grp["ts"].to_numpy(np.float64),
            grp["value"].to_numpy(np.float64),
        )
    return out

"""Questions asked of the timeline index: an event id's position, an event in brief, self times,
search by name, the longest instance, and the aggregates of an area (docs/metrics.md, "Timeline")."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any

import msgspec
import numpy as np
import pandas as pd

from torch_tb_profiler.analysis.timeline.index import KINDS, NESTING_KINDS, TimelineIndex, row_above

_ID = re.compile(r"^([a-z]+):(\d+)$")
_encode = msgspec.json.Encoder().encode  # as the routes write an answer: a search page's size


def parse_id(text: str) -> tuple[str, int]:
    """``"kind:row"`` -> (kind, row); ValueError when malformed."""
    m = _ID.match(text)
    if not m or m.group(1) not in KINDS:
        raise ValueError(f"an event id is '<kind>:<row>' with kind one of {', '.join(KINDS)}; got '{text}'")
    return m.group(1), int(m.group(2))


def locate(idx: TimelineIndex, kind: str, row: int) -> int:
    """Position of an event in the index, -1 when there is none."""
    pos = idx.position.get(kind)
    if pos is None or not 0 <= row < pos.size:
        return -1
    return int(pos[row])


def brief(idx: TimelineIndex, p: int) -> dict[str, Any]:
    return {
        "id": f"{KINDS[idx.kind[p]]}:{int(idx.row[p])}",
        "name": str(idx.names[idx.name[p]]),
        "track": int(idx.track[p]),
        "depth": int(idx.depth[p]),
        "start_us": float(idx.ts[p]),
        "dur_us": float(idx.end[p] - idx.ts[p]),
    }


def self_times(idx: TimelineIndex) -> np.ndarray:
    """Per event: its duration minus that of the events directly under it on its track's nesting
    rows (NaN for events of tracks whose rows don't nest: device streams)."""
    if idx._self is not None:
        return idx._self
    dur = idx.end - idx.ts
    nesting = np.array([t.kind in NESTING_KINDS for t in idx.tracks], dtype=bool)
    nest_rows = np.array([t.rows - t.extra_rows for t in idx.tracks], dtype=np.int64)
    track = idx.track.astype(np.int64)
    parent = row_above(idx.ts, track, idx.depth.astype(np.int64))
    child = nesting[track] & (idx.depth < nest_rows[track]) & (parent >= 0)
    child &= idx.end[np.maximum(parent, 0)] >= idx.ts
    children = np.zeros(idx.ts.size)
    np.add.at(children, parent[child], dur[child])
    out = dur - children
    out[~nesting[track]] = np.nan
    idx._self = out
    return out


@dataclass(frozen=True)
class SearchPage:
    """One page of a search's matches (in start-time order): ``matches`` are ranks
    ``offset .. offset + len(matches) - 1`` of ``total``; ``from_rank``: the rank of the first match
    starting at or after the time asked for (``total`` when none does), None when none was asked."""

    total: int
    offset: int
    from_rank: int | None
    matches: list[dict[str, Any]]


def search(
    idx: TimelineIndex,
    query: str,
    exact: bool,
    limit: int,
    within: tuple[float, float] | None = None,
    offset: int | None = None,
    from_us: float | None = None,
    max_bytes: int | None = None,
) -> SearchPage:
    """Events whose name contains (or, ``exact``, equals) ``query``, case-insensitive, by start time;
    with ``within`` = (start, end) only those overlapping that range. The page of at most ``limit``
    matches (and ``max_bytes`` of their JSON, at least one) from rank ``offset``; without ``offset``, from
    ``from_rank`` when ``from_us`` is given (the first match at or after that time, as Enter in a search
    box goes to; the first match when none is), else from the first."""
    hits = search_positions(idx, query, exact, within)
    total = int(hits.size)
    from_rank = None if from_us is None else int(np.searchsorted(idx.ts[hits], from_us, side="left"))
    if offset is None:
        offset = from_rank if from_rank is not None and from_rank < total else 0
    offset = min(offset, total)
    page, size = [], 0
    for p in hits[offset : offset + limit]:
        item = brief(idx, int(p))
        if max_bytes is not None:
            size += len(_encode(item)) + 1
            if page and size > max_bytes:
                break
        page.append(item)
    return SearchPage(total, offset, from_rank, page)


def search_positions(
    idx: TimelineIndex, query: str, exact: bool, within: tuple[float, float] | None = None
) -> np.ndarray:
    """The positions (in the index's event arrays) of ``search``'s matches, in its order."""
    q = query.lower()
    hit_names = np.flatnonzero(
        np.fromiter(
            ((n.lower() == q) if exact else (q in n.lower()) for n in idx.names), bool, idx.names.size
        )
    )
    if not hit_names.size:
        return np.empty(0, dtype=np.int64)
    hits = np.flatnonzero(np.isin(idx.name, hit_names))
    if within is not None:
        hits = hits[(idx.ts[hits] <= within[1]) & (idx.end[hits] >= within[0])]
    return hits[np.argsort(idx.ts[hits], kind="stable")]


def longest(
    idx: TimelineIndex,
    name: str | None,
    kind: str,
    at_us: float | None = None,
    rows: np.ndarray | None = None,
) -> dict[str, Any] | None:
    """The longest event named ``name`` (any name when None) of that kind ("op", "kernel" for device
    events, "any"); with ``at_us``, among those running at that time the one that started last (the
    innermost; the longest of those starting together): "Show in timeline" for one instance, such as the
    op that made an allocation or a straggler's collective call. ``rows`` (rows of the kind's table)
    narrows to the instances of one table row grouped finer than by name (by input shape, by op and
    launch shape)."""
    if name is not None:
        codes = np.flatnonzero(idx.names == name)
        if not codes.size:
            return None
        hits = np.flatnonzero(idx.name == codes[0])
    else:
        hits = np.arange(idx.ts.size)
    if kind == "op":
        hits = hits[idx.kind[hits] == KINDS.index("op")]
    elif kind == "kernel":
        hits = hits[idx.kind[hits] == KINDS.index("dev")]
    if rows is not None:
        hits = hits[np.isin(idx.row[hits], rows)]
    if at_us is not None:
        hits = hits[(idx.ts[hits] <= at_us) & (idx.end[hits] >= at_us)]
    if not hits.size:
        return None
    dur = idx.end[hits] - idx.ts[hits]
    if at_us is None:
        return brief(idx, int(hits[int(np.argmax(dur))]))
    return brief(idx, int(hits[np.lexsort((dur, idx.ts[hits]))[-1]]))


def aggregate(idx: TimelineIndex, start: float, end: float, tracks: list[int] | None) -> dict[str, Any]:
    sel = []
    for s in idx.segments_of(tracks).tolist():
        lo, hi = int(idx.seg_lo[s]), int(idx.seg_hi[s])
        a = lo + int(np.searchsorted(idx.end[lo:hi], start, side="left"))
        b = lo + int(np.searchsorted(idx.ts[lo:hi], end, side="right"))
        if b > a:
            sel.append(np.arange(a, b))
    hits = np.concatenate(sel) if sel else np.zeros(0, np.int64)
    rows = []
    if hits.size:
        frame = pd.DataFrame(
            {"name": idx.name[hits], "dur": idx.end[hits] - idx.ts[hits], "own": self_times(idx)[hits]}
        )
        grouped = frame.groupby("name", sort=False).agg(
            count=("dur", "size"), total=("dur", "sum"), own=("own", lambda s: s.sum(min_count=1))
        )
        for code, r in grouped.sort_values("total", ascending=False, kind="stable").iterrows():
            rows.append(
                {
                    "name": str(idx.names[int(code)]),
                    "count": int(r["count"]),
                    "total_us": float(r["total"]),
                    "self_us": None if pd.isna(r["own"]) else float(r["own"]),
                    "mean_us": float(r["total"]) / int(r["count"]),
                }
            )
    return {"start_us": start, "end_us": end, "events": int(hits.size), "rows": rows}


MAX_PLACED_SEGMENTS = 2000  # one step's critical path drawn on the timeline (docs/api.md)


def path_places(idx: TimelineIndex, path: dict[str, Any], segments: list[tuple]) -> dict[str, Any]:
    """One step's critical path (``path`` and every segment of its walk, analysis/waits/critical_path.py)
    placed on the timeline: each segment gains ``track`` and ``depth`` — the row of the event it lies on,
    host segments the top row of their thread — or None for both when it lies on none. Consecutive
    segments of one kind on one row are one (``count`` says how many, the name kept when they share
    it); past MAX_PLACED_SEGMENTS, runs of equal count become one segment of their dominant kind on the
    row of that kind's longest segment in the run."""
    placed: list[dict[str, Any]] = []
    for kind, name, start, end, event in segments:
        track = depth = None
        if event:
            p = locate(idx, *parse_id(event))
            if p >= 0:
                track = int(idx.track[p])
                depth = 0 if kind == "host" else int(idx.depth[p])
        last = placed[-1] if placed else None
        if last and last["kind"] == kind and last["track"] == track and last["depth"] == depth:
            last["end_us"] = float(end)
            last["count"] += 1
            if last["name"] != name:
                last["name"] = ""
            continue
        placed.append(
            {
                "kind": kind,
                "name": name,
                "start_us": float(start),
                "end_us": float(end),
                "event": event or None,
                "track": track,
                "depth": depth,
                "count": 1,
            }
        )
    if len(placed) > MAX_PLACED_SEGMENTS:
        placed = _coarse(placed)
    return {**path, "segments": placed}


def _coarse(placed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    bounds = np.linspace(0, len(placed), MAX_PLACED_SEGMENTS + 1).astype(int)
    out = []
    for a, b in itertools.pairwise(bounds):
        run = placed[a:b]
        time: dict[str, float] = {}
        for seg in run:
            time[seg["kind"]] = time.get(seg["kind"], 0.0) + seg["end_us"] - seg["start_us"]
        kind = max(time, key=lambda k: time[k])
        top = max((s for s in run if s["kind"] == kind), key=lambda s: s["end_us"] - s["start_us"])
        start, end, count = run[0]["start_us"], run[-1]["end_us"], sum(s["count"] for s in run)
        out.append({**top, "name": "", "start_us": start, "end_us": end, "count": count})
    return out

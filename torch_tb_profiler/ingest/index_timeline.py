"""The timeline index (analysis/timeline/index.py) as part of the persisted index: a re-opened profile whose
index file holds it draws its Trace view without building it again (0.9 s of CPU for a 1 GB trace,
right when the page is loading). Stored when the profile had it built before its index was written,
which the plugin does for the profile each run opens on (plugin._on_loaded).

Stored: the per-event arrays (analysis.timeline.EVENT_ARRAYS, exact dtypes), the name dictionary,
the counter series (one table: track id, time, value), and in the header the range, groups, tracks
and each kind's table length. The row segments and id lookups are derived on reading
(``timeline.assemble``), as the build derives them.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd

from torch_tb_profiler.analysis.timeline import index as tl
from torch_tb_profiler.model import Profile

EVENTS, NAMES, COUNTERS = "timeline.events", "timeline.names", "timeline.counters"
TABLES = (EVENTS, NAMES, COUNTERS)


def to_parts(profile: Profile) -> tuple[dict[str, Any], dict[str, pd.DataFrame]] | None:
    """(header entry, tables) of the profile's timeline index, or None when it has not been built."""
    idx = profile.cache.get(tl.INDEX_KEY)
    if not isinstance(idx, tl.TimelineIndex):
        return None
    ids = sorted(idx.counters)
    sizes = [idx.counters[t].ts.size for t in ids]
    counters = pd.DataFrame(
        {
            "track": np.repeat(np.asarray(ids, dtype=np.int32), sizes),
            "ts": np.concatenate([idx.counters[t].ts for t in ids]) if ids else np.empty(0),
            "value": np.concatenate([idx.counters[t].values for t in ids]) if ids else np.empty(0),
        }
    )
    header = {
        "span": [idx.start_us, idx.end_us],
        "groups": idx.groups,
        "tracks": [dataclasses.asdict(t) for t in idx.tracks],
        "table_rows": {k: int(idx.position[k].size) for k in tl.KINDS},
    }
    tables = {
        EVENTS: pd.DataFrame({name: getattr(idx, name) for name in tl.EVENT_ARRAYS}),
        NAMES: pd.DataFrame({"name": idx.names.astype(object)}),
        COUNTERS: counters,
    }
    return header, tables


def check(header: Any, tables: dict[str, pd.DataFrame], profile: Profile) -> None:
    """The stored index belongs to the profile read with it: rows within its tables (index_schema)."""
    from torch_tb_profiler.ingest import index_schema

    sizes = {k: len(getattr(profile, tl.TABLES[k])) for k in tl.KINDS}
    index_schema.check_timeline(header, tables, sizes, tl.KINDS)


def from_parts(header: dict[str, Any], tables: dict[str, pd.DataFrame]) -> tl.TimelineIndex:
    """The index stored by ``to_parts`` (KeyError/ValueError/TypeError on a malformed one)."""
    events_table = tables[EVENTS]
    events = {name: events_table[name].to_numpy() for name in tl.EVENT_ARRAYS}
    tracks = [tl.Track(**t) for t in header["tracks"]]
    counters: dict[int, tl.Series] = {}
    table = tables[COUNTERS]
    track_col = table["track"].to_numpy()
    bounds = np.flatnonzero(np.diff(track_col)) + 1
    for lo, hi in zip(np.r_[0, bounds].tolist(), np.r_[bounds, track_col.size].tolist(), strict=True):
        if hi > lo:
            counters[int(track_col[lo])] = tl.Series(
                table["ts"].to_numpy()[lo:hi], table["value"].to_numpy()[lo:hi]
            )
    for t in tracks:  # a counter track without samples has no row in the table
        if t.kind == "counter" and t.id not in counters:
            counters[t.id] = tl.Series(np.empty(0), np.empty(0))
    names = np.asarray(tables[NAMES]["name"].to_numpy(), dtype=object)
    start, end = header["span"]
    idx = tl.assemble(
        (float(start), float(end)), header["groups"], tracks, events, names, header["table_rows"], counters
    )
    if any(t.id != i for i, t in enumerate(tracks)) or (idx.name.size and int(idx.name.max()) >= names.size):
        raise ValueError("stored timeline index is inconsistent")
    return idx

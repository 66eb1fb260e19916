"""The Trace view's routes: the timeline's tracks, windows of events, one event, search, aggregates, and
one step's critical path placed on the tracks.

All answers come from the per-profile timeline index (analysis/timeline/index.py); the trace JSON never goes
to the page. Formats in docs/api.md ("Timeline").
"""

from __future__ import annotations

import gzip
import struct
from typing import Any

import msgspec
import numpy as np
from werkzeug.wrappers import Request, Response

from torch_tb_profiler.analysis.core.steps import device_steps
from torch_tb_profiler.analysis.ops import kernels, operators
from torch_tb_profiler.analysis.timeline import index as tl
from torch_tb_profiler.analysis.timeline import queries, windows
from torch_tb_profiler.analysis.timeline.events import details
from torch_tb_profiler.analysis.waits import critical_path as paths
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.model import Profile
from torch_tb_profiler.views.common import (
    bad_request,
    choice_param,
    float_param,
    int_param,
    not_found,
    param,
    profile_param,
)

MAGIC = b"TLW2"
SEARCH_MAX_BYTES = 4 * 1024 * 1024  # one search answer's JSON, whatever the names' lengths (docs/api.md)
_encode = msgspec.json.Encoder().encode  # as json_response writes it
# binary columns, in order: (Window attribute, dtype); widest first so that every column stays aligned
COLUMNS = (
    ("ts", "<f8"),
    ("dur", "<f4"),
    ("row", "<i4"),
    ("name", "<u4"),
    ("count", "<u4"),
    ("major", "<u4"),
    ("track", "<u2"),
    ("depth", "<u2"),
    ("kind", "u1"),
)


def timeline_profile(request: Request, store: RunStore) -> Profile:
    """The profile named by run, worker and span, or with ``capture=<file>`` one of its run's graph capture
    traces (the Trace view opens a replayed kernel's capture there)."""
    capture = request.args.get("capture")
    if not capture:
        return profile_param(request, store)
    span = request.args.get("span") or None
    return store.capture_profile(param(request, "run"), param(request, "worker"), span, capture)


def _index(request: Request, store: RunStore) -> tl.TimelineIndex:
    return tl.index(timeline_profile(request, store))


def _range_params(request: Request) -> tuple[float, float]:
    range_ = _optional_range(request)
    if range_ is None:
        raise bad_request("'start_us' and 'end_us' are required")
    return range_


def _optional_range(request: Request) -> tuple[float, float] | None:
    """``start_us`` and ``end_us`` (both or neither; end > start), or None when both are absent."""
    start, end = float_param(request, "start_us"), float_param(request, "end_us")
    if start is None and end is None:
        return None
    if start is None or end is None:
        raise bad_request("'start_us' and 'end_us' are required together")
    if not end > start:
        raise bad_request(f"'end_us' must be greater than 'start_us'; got {start:g} .. {end:g}")
    return start, end


def _tracks_param(request: Request, idx: tl.TimelineIndex) -> list[int] | None:
    """``tracks=0,3,5-9``: track ids and inclusive ranges of them; absent or empty: every track."""
    raw = request.args.get("tracks")
    if raw is None or raw.strip() == "":
        return None
    out: list[int] = []
    for part in raw.split(","):
        lo_text, dash, hi_text = part.partition("-")
        try:
            lo = int(lo_text)
            hi = int(hi_text) if dash else lo
        except ValueError:
            raise bad_request(
                f"'tracks' must be comma-separated track ids or ranges a-b; got '{part}'"
            ) from None
        for track in (lo, hi):
            if not 0 <= track < len(idx.tracks):
                raise bad_request(f"unknown track {track} (this profile has tracks 0..{len(idx.tracks) - 1})")
        if hi < lo:
            raise bad_request(f"track range '{part}' runs backwards")
        out.extend(range(lo, hi + 1))
    return out


def tracks(request: Request, store: RunStore) -> dict[str, Any]:
    profile = timeline_profile(request, store)
    idx = tl.index(profile)
    steps = profile.steps
    # the Overview's step times extend each step to the end of its device work: give both
    extended = {s["number"]: s for s in device_steps(profile)}
    return {
        "start_us": idx.start_us,
        "end_us": idx.end_us,
        "event_count": idx.event_count,
        "moved": sum(t.moved for t in idx.tracks),
        "kinds": list(tl.KINDS),
        "groups": idx.groups,
        "tracks": [t.as_dict() for t in idx.tracks],
        "steps": [
            {
                "number": int(n),
                "name": str(name),
                "start_us": float(ts),
                "end_us": float(end),
                **(
                    {"device_start_us": extended[int(n)]["start"], "device_end_us": extended[int(n)]["end"]}
                    if int(n) in extended
                    else {}
                ),
            }
            for n, name, ts, end in zip(
                steps["number"], steps["name"], steps["ts"], steps["end"], strict=True
            )
        ],
    }


def window(request: Request, store: RunStore) -> Any:
    start, end = _range_params(request)
    px = int_param(request, "px", 2000, lo=1, hi=windows.MAX_PX)
    fmt = choice_param(request, "format", ("bin", "json"), "bin")
    idx = _index(request, store)
    w = windows.window(idx, start, end, px, _tracks_param(request, idx))
    counters = {str(k): {"ts": s.ts, "values": s.values} for k, s in w.counters.items()}
    if fmt == "json":
        ids = [
            None if r < 0 else f"{tl.KINDS[k]}:{r}"
            for k, r in zip(w.kind.tolist(), w.row.tolist(), strict=True)
        ]
        items = [
            {
                "track": tr,
                "depth": d,
                "start_us": t,
                "dur_us": du,
                "name": w.names[n] or f"{c} events",
                "count": c,
                "id": i,
                **({"major": w.names[m]} if c > 1 else {}),
            }
            for tr, d, t, du, n, c, i, m in zip(
                w.track.tolist(),
                w.depth.tolist(),
                w.ts.tolist(),
                w.dur.tolist(),
                w.name.tolist(),
                w.count.tolist(),
                ids,
                w.major.tolist(),
                strict=True,
            )
        ]
        return {
            "start_us": start,
            "end_us": end,
            "px": px,
            "resolution_us": w.resolution_us,
            "coarsened": w.coarsened,
            "count": len(items),
            "items": items,
            "counters": counters,
        }
    return _binary(request, w, counters)


def _binary(request: Request, w: windows.Window, counters: dict[str, Any]) -> Response:
    header = {
        "start_us": w.start_us,
        "end_us": w.end_us,
        "px": w.px,
        "resolution_us": w.resolution_us,
        "coarsened": w.coarsened,
        "count": int(w.ts.size),
        "names": w.names,
        "kinds": list(tl.KINDS),
        "counters": counters,
    }
    text = msgspec.json.encode(header, enc_hook=lambda o: o.tolist() if isinstance(o, np.ndarray) else o)
    text += b" " * (-(8 + len(text)) % 8)
    parts = [MAGIC, struct.pack("<I", len(text)), text]
    parts += [np.ascontiguousarray(getattr(w, attr), dtype=dtype).tobytes() for attr, dtype in COLUMNS]
    body = b"".join(parts)
    headers = {"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"}
    if "gzip" in request.headers.get("Accept-Encoding", "") and len(body) > 1024:
        body = gzip.compress(body, compresslevel=1)
        headers["Content-Encoding"] = "gzip"
    return Response(body, mimetype="application/octet-stream", headers=headers)


def event(request: Request, store: RunStore) -> dict[str, Any]:
    raw = param(request, "id")
    try:
        kind, row = queries.parse_id(raw)
    except ValueError as e:
        raise bad_request(str(e)) from None
    profile = timeline_profile(request, store)
    idx = tl.index(profile)
    position = queries.locate(idx, kind, row)
    if position < 0:
        raise not_found(f"no event '{raw}' in this profile")
    return details(profile, idx, kind, row, position)


def search(request: Request, store: RunStore) -> dict[str, Any]:
    query = param(request, "q")
    limit = int_param(request, "limit", 1000, lo=1, hi=windows.MAX_ITEMS)
    exact = choice_param(request, "exact", ("0", "1"), "0") == "1"
    within = _optional_range(request)
    offset = int_param(request, "offset", 0, lo=0, hi=2**62) if request.args.get("offset") else None
    from_us = float_param(request, "from_us")
    found = queries.search(
        _index(request, store), query, exact, limit, within, offset, from_us, max_bytes=SEARCH_MAX_BYTES
    )
    end = found.offset + len(found.matches)
    out: dict[str, Any] = {
        "query": query,
        "total": found.total,
        "offset": found.offset,
        "truncated": end < found.total,
        "next_offset": end if end < found.total else None,
        "matches": found.matches,
    }
    if found.from_rank is not None:
        out["from_rank"] = found.from_rank
    if within is not None:
        out.update(start_us=within[0], end_us=within[1])
    return out


_LAUNCH_TEXT = ("op_name", "grid", "block")
_LAUNCH_INT = ("regs", "shmem")


def _instance_rows(request: Request, store: RunStore, name: str | None, kind: str) -> np.ndarray | None:
    """The rows of one table row grouped finer than by name: an operator's ``input_shape``, a
    kernel's op and launch shape (``op_name``, ``grid``, ``block``, ``regs``, ``shmem``); None for
    neither."""
    shape = request.args.get("input_shape")
    launch: dict[str, str | int] = {k: request.args[k] for k in _LAUNCH_TEXT if k in request.args}
    launch.update({k: int_param(request, k, -1, lo=-1) for k in _LAUNCH_INT if k in request.args})
    if shape is None and not launch:
        return None
    if name is None:
        raise bad_request("'input_shape' and the launch keys need a 'name'")
    profile = timeline_profile(request, store)
    if shape is not None:
        if kind != "op" or launch:
            raise bad_request("'input_shape' goes with kind=op (and no launch keys)")
        return operators.instance_rows(profile, name, shape)
    if kind != "kernel":
        raise bad_request(f"the launch keys ({', '.join(_LAUNCH_TEXT + _LAUNCH_INT)}) go with kind=kernel")
    return kernels.instance_rows(profile, name, launch)


def longest(request: Request, store: RunStore) -> dict[str, Any]:
    at_us = float_param(request, "at_us")
    name = param(request, "name") if at_us is None or request.args.get("name") else None
    kind = choice_param(request, "kind", ("any", "op", "kernel"), "any")
    rows = _instance_rows(request, store, name, kind)
    found = queries.longest(_index(request, store), name, kind, at_us, rows)
    if found is None:
        what = f"{'' if kind == 'any' else kind + ' '}event" + (
            f" named '{name}'" if name is not None else ""
        )
        if rows is not None:
            what += " of that shape" if kind == "op" else " of that op and launch shape"
        when = f" running at {at_us} µs" if at_us is not None else ""
        raise not_found(f"no {what}{when} in this profile")
    return found


def aggregate(request: Request, store: RunStore) -> dict[str, Any]:
    start, end = _range_params(request)
    idx = _index(request, store)
    return queries.aggregate(idx, start, end, _tracks_param(request, idx))


def critical_path(request: Request, store: RunStore) -> dict[str, Any]:
    """``step``'s critical path (docs/metrics.md "Critical path") with each segment's track and row."""
    step = int_param(request, "step", None, lo=-(1 << 62), hi=1 << 62)
    profile = timeline_profile(request, store)
    found = paths.step_path(profile, step)
    if found is None:
        raise not_found(f"no critical path for step {step} in this profile (steps need device activity)")
    entry, segments = found
    return queries.path_places(tl.index(profile), entry, segments)


ROUTES = {
    "/timeline": window,
    "/timeline/tracks": tracks,
    "/timeline/event": event,
    "/timeline/search": search,
    "/timeline/longest": longest,
    "/timeline/aggregate": aggregate,
    "/timeline/critical_path": critical_path,
}

"""Memory view routes: devices, curve, allocation events, per-operator statistics.

Every route takes run, worker, span (see docs/api.md, "Memory"); ``device`` defaults to the first
device (accelerators first); ``start``/``end`` are µs on the trace's clock.
"""

from __future__ import annotations

from typing import Any

from werkzeug.wrappers import Request

from torch_tb_profiler.analysis.core.cache import memoized
from torch_tb_profiler.analysis.memory import usage as M
from torch_tb_profiler.analysis.memory.downsample import DEFAULT_MAX_POINTS
from torch_tb_profiler.analysis.timeline import index as tl
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.views.common import (
    bad_request,
    choice_param,
    float_param,
    int_param,
    not_found,
    profile_param,
)


def _profile_with_memory(request: Request, store: RunStore) -> Any:
    profile = profile_param(request, store)
    if len(profile.memory) == 0:
        raise not_found(f"worker '{profile.worker}' has no memory records (profile with profile_memory=True)")
    return profile


def _device(request: Request, profile: Any) -> str | None:
    """The requested device, else the first one (as the frontend picks it: one cache key for both)."""
    labels = [d["device"] for d in M.devices(profile)]
    device = request.args.get("device") or None
    if device is None:
        return labels[0] if labels else None
    if device not in labels:
        raise bad_request(f"no memory records for device '{device}'; devices: {', '.join(labels)}")
    return device


def _range(request: Request) -> tuple[float | None, float | None]:
    start, end = float_param(request, "start"), float_param(request, "end")
    if start is not None and end is not None and start > end:
        raise bad_request(f"'start' ({start}) must not be after 'end' ({end})")
    return start, end


def devices(request: Request, store: RunStore) -> list[dict]:
    return M.devices(_profile_with_memory(request, store))


def curve(request: Request, store: RunStore) -> dict:
    profile = _profile_with_memory(request, store)
    start, end = _range(request)
    max_points = int_param(request, "max_points", DEFAULT_MAX_POINTS, lo=16, hi=200_000)
    out = M.curve(profile, _device(request, profile), start, end, max_points)
    # the one time origin of every view: the profile start the timeline counts from (memoized; the
    # warm-up builds it once the overview is served)
    out["origin_ts"] = tl.index(profile).start_us
    return out


def events(request: Request, store: RunStore) -> dict:
    profile = _profile_with_memory(request, store)
    start, end = _range(request)
    min_bytes = float_param(request, "min_bytes") or 0.0
    return M.events(
        profile,
        _device(request, profile),
        start,
        end,
        min_bytes=min_bytes,
        sort=choice_param(request, "sort", M.EVENT_SORTS, "size"),
        offset=int_param(request, "offset", 0),
        limit=int_param(request, "limit", 1000, lo=1, hi=100_000),
    )


def stats(request: Request, store: RunStore) -> dict:
    profile = _profile_with_memory(request, store)
    start, end = _range(request)
    device = _device(request, profile)
    # the same range is asked for again as the user pages and sorts: keep the answer for each range
    key = f"views.memory.stats:{device}:{start}:{end}"
    return memoized(profile, key, lambda: M.operator_stats(profile, device, start, end))


ROUTES = {
    "/memory/devices": devices,
    "/memory/curve": curve,
    "/memory/events": events,
    "/memory/stats": stats,
}

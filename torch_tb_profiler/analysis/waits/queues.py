"""Queue length per stream and copy bandwidth over time (docs/metrics.md, "Queue length and copy
bandwidth").

- **Queue length** of (device, stream) at time t: the launches (``launches.launches``) on that stream
  whose launch call has started (call ts ≤ t) and whose activity has not (activity ts > t). An activity
  that starts before its call (clock skew) never counts (its interval is empty): the value is never < 0.
  A step function: ``values[i]`` holds from ``times[i]`` to ``times[i+1]``. Span: from the stream's first
  call start to its last activity end; ``mean`` = ∫ queue dt / span (time-weighted), ``max`` and the first
  time it is reached (``time_at_max_us``).
- **Copy bandwidth** of a device at time t: Σ bytes / dur over its copies and sets (kind memcpy, memset,
  dur > 0) running at t, in GB/s (10⁹ bytes/s); span from the first copy's start to the last copy's end;
  ``mean`` = Σ bytes / span.
- Tracks are downsampled to at most ``MAX_POINTS`` points keeping each chunk's maximum (``downsample``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from torch_tb_profiler.analysis.core.accelerator import accelerator
from torch_tb_profiler.analysis.waits.launches import launches
from torch_tb_profiler.model import Profile

MAX_POINTS = 2000
TIMELINE_POINTS = 50_000  # the Trace view's tracks: finer, the window sampling draws them per pixel


def step_function(starts: np.ndarray, ends: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Σ weight over intervals [start, end) as (times, values); values[-1] is the value after the last
    time (0). Intervals with end ≤ start are dropped."""
    keep = ends > starts
    s, e, w = starts[keep], ends[keep], weights[keep]
    t = np.concatenate((s, e))
    dv = np.concatenate((w, -w))
    order = np.argsort(t, kind="stable")
    t, dv = t[order], dv[order]
    times, first = np.unique(t, return_index=True)
    values = np.add.reduceat(dv, first).cumsum() if len(t) else np.zeros(0)
    return times, np.where(np.abs(values) < 1e-9, 0.0, values)


def _summary(times: np.ndarray, values: np.ndarray, lo: float, hi: float) -> dict[str, float]:
    if not len(times) or hi <= lo:
        return {"max": 0.0, "mean": 0.0, "time_at_max_us": lo}
    widths = np.diff(np.concatenate((times, [max(hi, times[-1])])))
    i = int(np.argmax(values))
    return {
        "max": float(values[i]),
        "mean": float((values * widths).sum() / (hi - lo)),
        "time_at_max_us": float(times[i]),
    }


def queue_tracks(profile: Profile) -> dict[tuple[int, int], tuple[np.ndarray, np.ndarray, float, float]]:
    """(device, stream) -> (times, values, span start, span end)."""
    f = launches(profile)
    out = {}
    end = profile.device["end"].to_numpy(np.float64)
    for (dev, stream), g in f.groupby(["device", "stream"], sort=True):
        enter, leave = g["call_ts"].to_numpy(), g["ts"].to_numpy()
        times, values = step_function(enter, leave, np.ones(len(g)))
        out[(int(dev), int(stream))] = (
            times,
            values,
            float(enter.min()),
            float(end[g["row"].to_numpy()].max()),
        )
    return out


def bandwidth_tracks(profile: Profile) -> dict[int, tuple[np.ndarray, np.ndarray, float, float]]:
    """device -> (times, GB/s values, span start, span end) of its copies and sets."""
    d = profile.device
    out = {}
    if not len(d):
        return out
    copies = d[d["kind"].isin(["memcpy", "memset"]).to_numpy() & (d["dur"].to_numpy() > 0)]
    for dev, g in copies.groupby("device", sort=True):
        ts, end = g["ts"].to_numpy(np.float64), g["end"].to_numpy(np.float64)
        nbytes = np.nan_to_num(g["bytes"].to_numpy(np.float64))
        rate = nbytes / (end - ts) / 1e3  # bytes/µs → GB/s
        times, values = step_function(ts, end, rate)
        out[int(dev)] = (times, values, float(ts.min()), float(end.max()))
    return out


def bandwidth_summary(profile: Profile) -> dict[str, dict[str, float]]:
    """device -> {max, mean, time_at_max_us} in GB/s."""
    return {str(dev): _summary(t, v, lo, hi) for dev, (t, v, lo, hi) in bandwidth_tracks(profile).items()}


def downsample(
    times: np.ndarray, values: np.ndarray, limit: int = MAX_POINTS
) -> tuple[np.ndarray, np.ndarray]:
    """At most ``limit`` points: the points cut into ``limit`` chunks of consecutive points, each kept as
    its (first) largest point — so the track's maximum survives."""
    n = len(times)
    if n <= limit:
        return times, values
    chunk = np.arange(n) * limit // n
    order = np.lexsort((np.arange(n), -values, chunk))
    first = order[np.r_[True, chunk[order][1:] != chunk[order][:-1]]]
    first.sort()
    return times[first], values[first]


def counter_tracks(profile: Profile, limit: int = MAX_POINTS) -> list[dict[str, Any]]:
    """Counter tracks {name, device, unit, ts, values}: ``GPU 0 Stream 7 Queue length`` per stream and
    ``GPU 0 Copy bandwidth`` (GB/s) per device, each at most ``limit`` points (the Trace view's
    tracks: ``TIMELINE_POINTS``). A track ends with its value after the last time (0)."""
    kind = accelerator(profile).kind
    out = []
    for (dev, stream), (t, v, _, _) in queue_tracks(profile).items():
        t, v = downsample(t, v, limit)
        out.append(
            {
                "name": f"{kind} {dev} Stream {stream} Queue length",
                "device": dev,
                "unit": "queued",
                "ts": t,
                "values": v,
            }
        )
    for dev, (t, v, _, _) in bandwidth_tracks(profile).items():
        t, v = downsample(t, v, limit)
        out.append(
            {"name": f"{kind} {dev} Copy bandwidth", "device": dev, "unit": "GB/s", "ts": t, "values": v}
        )
    return out


def summary(profile: Profile) -> dict[str, dict[str, float]] | None:
    """``analyses.queue``: "<device>:<stream>" -> {max, mean, time_at_max_us}; None without launches."""
    tracks = queue_tracks(profile)
    if not tracks:
        return None
    return {f"{dev}:{stream}": _summary(t, v, lo, hi) for (dev, stream), (t, v, lo, hi) in tracks.items()}

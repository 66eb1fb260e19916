"""CUPTI range-profiler traces: per-kernel counters, not a device timeline (docs/metrics.md).

Kineto's range profiler (activity ``cuda_profiler_range``) replays each kernel to read its CUPTI
metrics and writes one event per range (per kernel in auto-range mode) named after the kernel, with
the counters as args, ``pid`` = the device id. It cannot run with the other CUDA activities, so the
trace has no kernel events; and the events' times are not measured: Kineto cuts the profiling span
into equal slices, one per range. So these events are neither kernel time nor a timeline of the
device: they are counted and drawn on their device as ranges, and every kernel figure stays unknown.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from torch_tb_profiler.analysis.core.cache import memoized

CATEGORY = "cuda_profiler_range"


def range_rows(others: pd.DataFrame) -> np.ndarray:
    """Which rows of the ``others`` table are range-profiler ranges."""
    if not len(others):
        return np.zeros(0, dtype=bool)
    return others["cat"].to_numpy(object) == CATEGORY


def range_devices(others: pd.DataFrame) -> np.ndarray:
    """The device id of each range row (its pid; -1 when not a number)."""
    pid = pd.to_numeric(others["pid"], errors="coerce").fillna(-1)
    return pid.to_numpy(np.int64)


def summary(profile: Any) -> dict[str, Any] | None:
    """{"ranges", "devices", "note"} when the trace holds range-profiler counters, else None."""
    return memoized(profile, "range_profiler.summary", lambda: _summary(profile))


def _summary(profile: Any) -> dict[str, Any] | None:
    mask = range_rows(profile.others)
    if not mask.any():
        return None
    devices = sorted({int(d) for d in range_devices(profile.others[mask]) if d >= 0})
    kernels = int((profile.device["kind"] == "kernel").sum()) if len(profile.device) else 0
    where = ", ".join(f"GPU {d}" for d in devices) or "an unnamed device"
    note = (
        f"This trace holds CUPTI range-profiler counters: {int(mask.sum())} kernel range(s) on {where}. "
        "The range profiler replays each kernel to count its metrics and records no kernel times "
        "(the ranges' times are the profiling span cut into equal slices), so "
        + (
            "kernel time, utilization and the Kernel view are not available."
            if not kernels
            else "the ranges are not counted as kernel time."
        )
    )
    return {"ranges": int(mask.sum()), "devices": devices, "note": note}

"""The temporal breakdown per device, whole profile and per step (docs/metrics.md, "Temporal breakdown").

For a device and a window (the whole profile: the device's first activity start to its last end; a
step: its device-extended window, analysis/core/steps.py):

- ``compute_us``: the time covered by the union of its kernels that are not communication
  (analysis/device/breakdown.py's communication test);
- ``non_compute_us``: the time covered by its copies, sets and communication kernels and *not* by a
  compute kernel (time where both run counts once, as compute);
- ``idle_us``: the rest of the window (no activity at all); synchronisation events are not device time.

The three add up to the window's length. Shares are of the window.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from torch_tb_profiler.analysis.core.cache import memoized
from torch_tb_profiler.analysis.core.steps import steps as step_table
from torch_tb_profiler.analysis.device.breakdown import comm_kernel_mask
from torch_tb_profiler.model import Profile
from torch_tb_profiler.model import intervals as iv


def temporal_rows(profile: Profile) -> list[dict[str, Any]]:
    """Rows {device, step (None: whole profile), window_us, idle_us, compute_us, non_compute_us and
    their shares}; [] for a profile without device activity."""
    return memoized(profile, "waits.temporal.rows", lambda: _rows(profile))


def _rows(profile: Profile) -> list[dict[str, Any]]:
    dev = profile.device
    if not len(dev):
        return []
    device = dev["device"].to_numpy(dtype=np.int64)
    ts = dev["ts"].to_numpy(dtype=np.float64)
    end = dev["end"].to_numpy(dtype=np.float64)
    kernel = (dev["kind"] == "kernel").to_numpy()
    compute = kernel & ~comm_kernel_mask(profile)
    windows = step_table(profile)
    out: list[dict[str, Any]] = []
    for d in np.unique(device):
        on = device == d
        busy = iv.union(ts[on], end[on])
        comp = iv.union(ts[on & compute], end[on & compute])
        other = iv.subtract(iv.union(ts[on & ~compute], end[on & ~compute]), comp)
        spans = [(None, float(ts[on].min()), float(end[on].max()))]
        spans += [
            (int(n), float(lo), float(hi))
            for n, lo, hi in zip(windows["number"], windows["start"], windows["end"], strict=True)
        ]
        for step, lo, hi in spans:
            length = max(hi - lo, 0.0)
            c = iv.total(iv.clip(comp, lo, hi))
            nc = iv.total(iv.clip(other, lo, hi))
            idle = max(length - iv.total(iv.clip(busy, lo, hi)), 0.0)
            out.append(
                {
                    "device": int(d),
                    "step": step,
                    "window_us": length,
                    "idle_us": idle,
                    "compute_us": c,
                    "non_compute_us": nc,
                    "idle_share": idle / length if length > 0 else None,
                    "compute_share": c / length if length > 0 else None,
                    "non_compute_share": nc / length if length > 0 else None,
                }
            )
    return out

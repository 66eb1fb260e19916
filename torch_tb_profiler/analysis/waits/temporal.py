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
        lo = np.r_[ts[on].min(), windows["start"].to_numpy(np.float64)]
        hi = np.r_[end[on].max(), windows["end"].to_numpy(np.float64)]
        length = np.maximum(hi - lo, 0.0)
        c = iv.overlap_with_each(comp, lo, hi)
        nc = iv.overlap_with_each(other, lo, hi)
        idle = np.maximum(length - iv.overlap_with_each(busy, lo, hi), 0.0)
        steps: list[int | None] = [None, *(int(n) for n in windows["number"])]
        with np.errstate(divide="ignore", invalid="ignore"):
            shares = {
                k: np.where(length > 0, v / length, np.nan) for k, v in (("idle", idle), ("c", c), ("nc", nc))
            }
        for i, step in enumerate(steps):
            out.append(
                {
                    "device": int(d),
                    "step": step,
                    "window_us": float(length[i]),
                    "idle_us": float(idle[i]),
                    "compute_us": float(c[i]),
                    "non_compute_us": float(nc[i]),
                    "idle_share": _share(shares["idle"][i]),
                    "compute_share": _share(shares["c"][i]),
                    "non_compute_share": _share(shares["nc"][i]),
                }
            )
    return out


def _share(value: float) -> float | None:
    return None if np.isnan(value) else float(value)

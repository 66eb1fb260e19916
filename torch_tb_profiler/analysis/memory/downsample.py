"""Peak-preserving downsampling of step curves for display.

The time range is cut into B equal buckets (one per display column). From every bucket we keep,
for each series, the first and last point and the points holding its minimum and maximum. So:

- the global maximum (the peak) and minimum of every series are kept, with their exact times;
- the value entering and leaving each bucket is exact, so any change spanning more than one bucket
  (the display resolution) is drawn where it happens;
- inside one bucket the drawn vertical extent equals the true one (min..max), so no spike or
  step narrower than a column disappears.

At most 4 points per series per bucket are kept (first/last shared), i.e. ≤ B·(2 + 2·k) points
for k series. Unlike LTTB (the original plugin), nothing is chosen by area, so the peak can never
be shaved.
"""

from __future__ import annotations

import numpy as np

DEFAULT_MAX_POINTS = 4096


def downsample_indices(
    t: np.ndarray, series: list[np.ndarray], max_points: int = DEFAULT_MAX_POINTS
) -> np.ndarray:
    """Sorted row indices to keep; t must be sorted ascending. NaN values are never chosen as extremes."""
    n = int(t.size)
    if n <= max_points:
        return np.arange(n)
    per_bucket = 2 + 2 * len(series)
    buckets = max(1, max_points // per_bucket)
    t0, t1 = float(t[0]), float(t[-1])
    if t1 > t0:
        b = np.minimum(((t - t0) / (t1 - t0) * buckets).astype(np.int64), buckets - 1)
    else:
        b = np.zeros(n, dtype=np.int64)
    # rows where a new bucket starts (t is sorted, so each bucket is one contiguous run)
    starts = np.flatnonzero(np.r_[True, b[1:] != b[:-1]])
    ends = np.r_[starts[1:], n] - 1
    keep = [starts, ends]
    for y in series:
        y = np.asarray(y, dtype=np.float64)
        keep.append(_first_extreme(y, starts, np.fmax))
        keep.append(_first_extreme(y, starts, np.fmin))
    idx = np.unique(np.concatenate(keep))
    return idx


def _first_extreme(y: np.ndarray, starts: np.ndarray, ufunc) -> np.ndarray:
    """Per run of rows beginning at starts, the first row holding the run's max (np.fmax) or min."""
    if np.isnan(y).all():
        return starts
    extreme = ufunc.reduceat(y, starts)  # fmax/fmin ignore NaN unless the whole run is NaN
    run = np.repeat(np.arange(starts.size), np.diff(np.r_[starts, y.size]))
    hit = np.flatnonzero(y == extreme[run])
    if hit.size == 0:
        return starts
    # first hit per run; runs that are all NaN have no hit and fall back to their first row
    first_hit_of_run = np.full(starts.size, -1, dtype=np.int64)
    hit_runs = run[hit]
    first = np.r_[True, hit_runs[1:] != hit_runs[:-1]]
    first_hit_of_run[hit_runs[first]] = hit[first]
    return np.where(first_hit_of_run >= 0, first_hit_of_run, starts)

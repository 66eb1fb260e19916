"""Frequent kernel sequences (docs/metrics.md, "Frequent kernel sequences").

Per device stream, its kernels in start order; a *sequence* is N consecutive kernels (N from 2 to 16,
default 5), identified by their names. The occurrences of one sequence on one stream are counted left
to right without sharing a kernel (in "A A A A" the sequence "A A" occurs twice, not three times). A
sequence is reported when it occurs at least twice; its total is the kernels' device time summed over
the counted occurrences; rows are ranked by that total (ties: more occurrences first, then names).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from torch_tb_profiler.analysis.core.cache import memoized
from torch_tb_profiler.model import Profile

DEFAULT_LENGTH = 5
MIN_LENGTH, MAX_LENGTH = 2, 16
TOP = 20


def sequences(profile: Profile, length: int = DEFAULT_LENGTH, top: int = TOP) -> list[dict[str, Any]]:
    """The ``top`` sequences of ``length`` kernels by total device time: rows {names, count, total_us,
    mean_us (per occurrence), ops (the distinct operators launching them), device, stream, first_ts}."""
    if not MIN_LENGTH <= length <= MAX_LENGTH:
        raise ValueError(f"a sequence is {MIN_LENGTH} to {MAX_LENGTH} kernels long; got {length}")
    return memoized(profile, f"waits.sequences.{length}.{top}", lambda: _sequences(profile, length, top))


def _sequences(profile: Profile, n: int, top: int) -> list[dict[str, Any]]:
    dev = profile.device
    kernels = dev[(dev["kind"] == "kernel").to_numpy()]
    if len(kernels) < 2 * n:
        return []
    order = np.lexsort((kernels["ts"].to_numpy(np.float64), kernels["stream"], kernels["device"]))
    k = kernels.iloc[order]
    codes, names = pd.factorize(k["name"], sort=False)
    device = k["device"].to_numpy(np.int64)
    stream = k["stream"].to_numpy(np.int64)
    group = np.cumsum(np.r_[True, (device[1:] != device[:-1]) | (stream[1:] != stream[:-1])]) - 1
    windows = np.lib.stride_tricks.sliding_window_view(codes, n)
    valid = group[: len(windows)] == group[n - 1 :]  # a window never spans two streams
    starts = np.flatnonzero(valid)
    if not starts.size:
        return []
    # one key per (stream, names): the stream's group id as the first column
    keys = np.column_stack([group[starts], windows[starts]])
    # group identical rows: a lexsort over the integer columns (np.unique(axis=0) sorts them as bytes, slower)
    order = np.lexsort(keys.T[::-1])
    ordered = keys[order]
    new = np.r_[True, (ordered[1:] != ordered[:-1]).any(axis=1)]
    sorted_id = np.cumsum(new) - 1
    inverse = np.empty(len(keys), dtype=np.int64)
    inverse[order] = sorted_id
    uniq, counts = ordered[new], np.bincount(sorted_id)
    repeated = counts[inverse] >= 2
    starts, inverse = starts[repeated], inverse[repeated]
    if not starts.size:
        return []
    kept = _non_overlapping(starts, inverse, n)
    starts, inverse = starts[kept], inverse[kept]
    dur = k["dur"].to_numpy(np.float64)
    csum = np.r_[0.0, np.cumsum(dur)]
    window_us = csum[starts + n] - csum[starts]
    count = np.bincount(inverse, minlength=len(uniq))
    total = np.bincount(inverse, weights=window_us, minlength=len(uniq))
    first = np.full(len(uniq), np.iinfo(np.int64).max)
    np.minimum.at(first, inverse, starts)
    candidates = np.flatnonzero(count >= 2)
    by_figures = candidates[np.lexsort((-count[candidates], -total[candidates]))]
    cut = min(top, by_figures.size)
    if cut:  # keep every candidate tied with the last one kept: names break those ties below
        last = by_figures[cut - 1]
        tied = (total[by_figures] == total[last]) & (count[by_figures] == count[last])
        cut = max(cut, int(np.flatnonzero(tied).max()) + 1)
    ranked = sorted(
        by_figures[:cut], key=lambda u: (-total[u], -count[u], [str(names[c]) for c in uniq[u, 1:]])
    )
    op_names = profile.ops["name"].to_numpy()
    op_rows = k["op"].to_numpy(np.int64)
    ts = k["ts"].to_numpy(np.float64)
    out = []
    for u in ranked[:top]:
        at = int(first[u])
        rows = _occurrence_ops(op_rows, starts[inverse == u], n)
        launched = set(op_names[rows[rows >= 0]].tolist())
        out.append(
            {
                "names": [str(names[c]) for c in uniq[u, 1:]],
                "count": int(count[u]),
                "total_us": float(total[u]),
                "mean_us": float(total[u] / count[u]),
                "ops": sorted(launched),
                "device": int(device[at]),
                "stream": int(stream[at]),
                "first_ts": float(ts[at]),
            }
        )
    return out


def _non_overlapping(starts: np.ndarray, key: np.ndarray, n: int) -> np.ndarray:
    """Mask of the occurrences kept when each key's are counted left to right without sharing a kernel.
    Only keys with an occurrence closer than ``n`` to the one before need the sequential pass."""
    order = np.lexsort((starts, key))
    s, kk = starts[order], key[order]
    close = np.r_[False, (kk[1:] == kk[:-1]) & (s[1:] - s[:-1] < n)]
    keep = np.ones(s.size, dtype=bool)
    for u in np.unique(kk[close]):
        idx = np.flatnonzero(kk == u)
        last = -n
        for i in idx:
            if s[i] - last >= n:
                last = s[i]
            else:
                keep[i] = False
    mask = np.empty(s.size, dtype=bool)
    mask[order] = keep
    return mask


def _occurrence_ops(op_rows: np.ndarray, starts: np.ndarray, n: int) -> np.ndarray:
    """The op rows of every kernel of the given occurrences."""
    return np.unique(op_rows[(starts[:, None] + np.arange(n)[None, :]).reshape(-1)])

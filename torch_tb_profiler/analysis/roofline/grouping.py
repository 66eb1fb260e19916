"""Group-by over integer codes with numpy: the roofline tables group hundreds of thousands of calls by
name and shape, where pandas' per-group Python aggregations (a sum that must stay NaN when any part
is unknown, a most-common dtype) take seconds on a 1 GB trace."""

from __future__ import annotations

import numpy as np
import pandas as pd


def group_ids(*codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dense group ids (0..G-1, in order of first appearance) of the rows' code tuples, and each
    group's first row."""
    ids = np.zeros(len(codes[0]), dtype=np.int64)
    for c in codes:
        width = int(c.max()) + 2 if len(c) else 1
        ids = pd.factorize(ids * width + (c.astype(np.int64) + 1))[0].astype(np.int64)
    n = int(ids.max()) + 1 if len(ids) else 0
    first = np.full(n, len(ids), dtype=np.int64)
    np.minimum.at(first, ids, np.arange(len(ids)))
    return ids, first


def total(ids: np.ndarray, n: int, values: np.ndarray, nan_when: str = "any") -> np.ndarray:
    """Per group the sum of ``values``; NaN where ``nan_when`` is "any" (a part is unknown: the total
    is unknown) or "all" (no part is known)."""
    values = np.asarray(values, dtype=np.float64)
    missing = np.isnan(values)
    sums = np.bincount(ids, weights=np.where(missing, 0.0, values), minlength=n)
    lacking = np.bincount(ids, weights=missing.astype(np.float64), minlength=n)
    if nan_when == "any":
        return np.where(lacking > 0, np.nan, sums)
    counts = np.bincount(ids, minlength=n)
    return np.where(lacking >= counts, np.nan, sums)


def most_common(ids: np.ndarray, n: int, values: np.ndarray) -> np.ndarray:
    """Per group the most common non-empty string of ``values`` ("" when none; a tie goes to the value
    seen first in the table)."""
    out = np.full(n, "", dtype=object)
    values = np.asarray(values, dtype=object)
    keep = (values != "") & pd.notna(values)
    if not keep.any():
        return out
    codes, uniques = pd.factorize(values[keep])
    k = len(uniques)
    pair, counts = np.unique(ids[keep] * k + codes, return_counts=True)
    group, value = pair // k, pair % k
    order = np.lexsort((value, -counts, group))  # per group: most counts, then first-seen value
    starts = np.flatnonzero(np.r_[True, group[order][1:] != group[order][:-1]])
    best = order[starts]
    out[group[best]] = uniques[value[best]]
    return out

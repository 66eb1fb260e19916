"""Per-GPU summary: utilization, Est. SM efficiency, Est. achieved occupancy, tensor-core share.

W = [first step start, last step end] (device-extended steps). For the kernels of one device
(docs/metrics.md, "GPU metrics"):

- utilization = |(∪ kernel ranges) ∩ W| / |W|
- Est. SM efficiency = Σ over the pieces of W between consecutive kernel boundaries of
  min(1, Σ ``blocks per SM`` of the kernels running then) × piece length, / |W|
- Est. achieved occupancy = Σ occupancy_k × |k ∩ W| / Σ |k ∩ W| over the kernels with an
  ``est. achieved occupancy %`` value
- tensor-core share = time of tensor-core kernels / time of all kernels on the device (whole profile),
  a lower bound: the kernels whose name does not say (``tensor_cores.UNKNOWN``) are reported as a share
  of their own

A figure the trace cannot give is None, never 0: SM efficiency when no kernel carries ``blocks per
SM``, occupancy when none carries ``est. achieved occupancy %``, compute capability off CUDA, the
tensor-core (AMD: matrix-core) share on devices whose kernel names we cannot classify
(analysis/core/accelerator.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from torch_tb_profiler.analysis.core.accelerator import accelerator
from torch_tb_profiler.analysis.core.cache import memoized
from torch_tb_profiler.analysis.core.steps import window
from torch_tb_profiler.analysis.device import tensor_cores
from torch_tb_profiler.model import intervals as iv


def kernels(profile) -> pd.DataFrame:
    dev = profile.device
    if not len(dev):
        return dev
    return dev[dev["kind"].to_numpy() == "kernel"]


def utilization(ts: np.ndarray, end: np.ndarray, lo: float, hi: float) -> float:
    if hi <= lo:
        return 0.0
    return iv.total(iv.clip(iv.union(ts, end), lo, hi)) / (hi - lo)


def sm_efficiency_pieces(
    ts: np.ndarray, end: np.ndarray, blocks_per_sm: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sweep line over kernel boundaries: pieces [start, end) with min(1, Σ concurrent ``blocks per SM``)."""
    value = np.nan_to_num(np.asarray(blocks_per_sm, dtype=np.float64), nan=0.0)
    keep = (value > 0) & (end > ts)
    ts, end, value = ts[keep], end[keep], value[keep]
    if ts.size == 0:
        return np.empty(0), np.empty(0), np.empty(0)
    points = np.concatenate([ts, end])
    delta = np.concatenate([value, -value])
    order = np.argsort(points, kind="stable")
    points, level = points[order], np.cumsum(delta[order])
    # piece j = [points[j], points[j+1]) runs at level[j] (all changes at points[j] applied)
    return points[:-1], points[1:], np.minimum(np.maximum(level[:-1], 0.0), 1.0)


def sm_efficiency(
    ts: np.ndarray, end: np.ndarray, blocks_per_sm: np.ndarray, lo: float, hi: float
) -> float | None:
    """Concurrent ``blocks per SM`` add up, capped at 1, averaged over [lo, hi); None when no kernel
    has a ``blocks per SM`` value (the trace cannot say)."""
    if np.isnan(np.asarray(blocks_per_sm, dtype=np.float64)).all():
        return None
    if hi <= lo:
        return 0.0
    seg_lo, seg_hi, weight = sm_efficiency_pieces(ts, end, blocks_per_sm)
    return float(np.sum(weight * (np.clip(seg_hi, lo, hi) - np.clip(seg_lo, lo, hi))) / (hi - lo))


def known_occupancy(occupancy: np.ndarray, warps_per_sm: np.ndarray) -> np.ndarray:
    """Est. achieved occupancy % with Kineto's placeholder 0 as NaN (docs/metrics.md, "GPU metrics").

    Kineto writes the figure as a whole percent, and 0 when CUPTI's occupancy calculator fails (e.g. a
    kernel with more than 48 KiB of dynamic shared memory). A kernel with at least one warp per SM keeps
    at least 1 of at most 64 warp slots busy, over 1 %: its 0 is the placeholder. Below one warp per SM
    a computed value can truncate to 0 (under 1 %) and is kept; without ``warps per SM`` a 0 is unknown.
    """
    occ = np.asarray(occupancy, dtype=np.float64)
    warps = np.asarray(warps_per_sm, dtype=np.float64)
    placeholder = (occ == 0) & ~(warps < 1)  # NaN warps compare False: unknown too
    return np.where(placeholder, np.nan, occ)


def achieved_occupancy(
    ts: np.ndarray, end: np.ndarray, occupancy: np.ndarray, lo: float, hi: float
) -> float | None:
    occ = np.asarray(occupancy, dtype=np.float64)
    clipped = np.maximum(np.minimum(end, hi) - np.maximum(ts, lo), 0.0)
    has = ~np.isnan(occ) & (clipped > 0)
    weight = clipped[has].sum()
    if weight <= 0:
        return None
    return float(np.sum(occ[has] * clipped[has]) / weight)


def tensor_core_share(names: pd.Series, dur: np.ndarray, platform: str | None = "CUDA") -> float:
    """Time of the kernels the platform's rule says used matrix units / time of all kernels."""
    classes = np.fromiter(
        (tensor_cores.kernel_matrix_class(str(n), platform) for n in names), np.int8, len(names)
    )
    return tensor_cores.matrix_share(classes, dur)[0]


def gpu_summary(profile) -> list[dict[str, Any]]:
    """One dict per GPU that ran kernels (device id order); percentages in 0..100 (cached)."""
    return memoized(profile, "gpu_metrics.summary", lambda: _gpu_summary(profile))


def _gpu_summary(profile) -> list[dict[str, Any]]:
    k = kernels(profile)
    if not len(k):
        return []
    w = window(profile)
    lo, hi = w if w is not None else (float(k["ts"].min()), float(k["end"].max()))
    acc = accelerator(profile)
    out = []
    device = k["device"].to_numpy(dtype=np.int64)
    classes = tensor_cores.matrix_classes(profile)[profile.device["kind"].to_numpy() == "kernel"]
    for dev_id in np.unique(device):
        if dev_id < 0:
            continue
        sel = device == dev_id
        ts = k["ts"].to_numpy(dtype=np.float64)[sel]
        end = k["end"].to_numpy(dtype=np.float64)[sel]
        props = profile.meta.device_property(int(dev_id))
        occ = achieved_occupancy(
            ts,
            end,
            known_occupancy(k["occupancy"].to_numpy()[sel], k["warps_per_sm"].to_numpy()[sel]),
            lo,
            hi,
        )
        sm = sm_efficiency(ts, end, k["blocks_per_sm"].to_numpy()[sel], lo, hi)
        tc, unknown = tensor_cores.matrix_share(classes[sel], end - ts) if acc.matrix_units else (None, None)
        out.append(
            {
                "id": int(dev_id),
                "name": props.get("name"),
                "memory_bytes": props.get("totalGlobalMem"),
                "compute_capability": _compute_capability(props) if acc.has_compute_capability else None,
                # numSms counts SMs on CUDA and compute units (CUs) on ROCm: each under its own name
                "num_sms": props.get("numSms") if acc.platform == "CUDA" else None,
                "compute_units": props.get("numSms") if acc.platform == "ROCm" else None,
                "utilization_pct": 100.0 * utilization(ts, end, lo, hi),
                "sm_efficiency_pct": None if sm is None else 100.0 * sm,
                "achieved_occupancy_pct": occ,
                "tensor_core_pct": None if tc is None else 100.0 * tc,
                # the kernels whose name does not say: tensor_core_pct is a lower bound by this much
                "tensor_core_unknown_pct": None if unknown is None else 100.0 * unknown,
                "kernel_time_us": float(np.sum(end - ts)),
            }
        )
    return out


def _compute_capability(props: dict[str, Any]) -> str | None:
    major, minor = props.get("computeMajor"), props.get("computeMinor")
    if major is None:
        return None
    return f"{major}.{minor if minor is not None else 0}"

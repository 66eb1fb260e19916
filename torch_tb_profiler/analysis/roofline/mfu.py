"""MFU (model FLOPs utilisation) per step and per profile.

Per step s (device-extended steps, analysis/core/steps.py) with duration T_s (µs): F_s = Σ FLOPs of
the kernels that start in the step (each kernel's own Inductor count, else its holder's FLOPs split by
kernel time over the holder's kernels: attribution.py); MFU_s = F_s / (T_s · 10^-6 · P · 10^12) with P
the peak of the profile's **dominant dtype** (the dtype with the most kernel time among kernels of
known FLOPs; fp32 on tensor cores counts as tf32 on CUDA, figures.peak_dtype). Per profile: mean =
Σ F_s / (Σ T_s · P) (the time-weighted mean). known_flops_share = kernel time with known FLOPs / all
kernel time, in the steps. Fractions 0–1; None where the device, its peak or the steps are unknown.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pandas as pd

from torch_tb_profiler.analysis.core import names
from torch_tb_profiler.analysis.core.accelerator import accelerator
from torch_tb_profiler.analysis.core.cache import memoized
from torch_tb_profiler.analysis.core.steps import steps
from torch_tb_profiler.analysis.device.tensor_cores import kernel_uses_tensor_cores
from torch_tb_profiler.analysis.roofline import attribution as A
from torch_tb_profiler.analysis.roofline import peaks as P
from torch_tb_profiler.analysis.roofline.figures import device, peak_dtype


def mfu(profile) -> dict[str, Any]:
    """{dtype, peak_tflops, per_step: [{step, flops, us, mfu}], mean, known_flops_share, reason}."""
    env = os.environ.get(P.PEAKS_ENV, "")
    return memoized(profile, f"roofline.mfu.{env}", lambda: _mfu(profile))


def _mfu(profile) -> dict[str, Any]:
    dev_table = profile.device
    out: dict[str, Any] = {
        "dtype": None,
        "peak_tflops": None,
        "per_step": [],
        "mean": None,
        "known_flops_share": None,
        "reason": None,
    }
    s = steps(profile)
    if not len(s) or not len(dev_table):
        out["reason"] = "no steps with device work"
        return out
    sel = dev_table["kind"].to_numpy() == "kernel"
    k = dev_table[sel]
    kw = A.kernel_work(profile)
    flops = kw["flops"].to_numpy(dtype=np.float64)
    known = ~np.isnan(flops)
    dur = k["dur"].to_numpy(dtype=np.float64)
    ts = k["ts"].to_numpy(dtype=np.float64)
    dev = device(profile)
    platform = accelerator(profile).platform
    tc = names.mask(profile, "device", kernel_uses_tensor_cores)[sel]
    # the peak each kernel's work is measured against, decided once per distinct (dtype, tensor cores)
    d_codes, d_values = pd.factorize(kw["dtype"].to_numpy(dtype=object))
    pair, pairs = pd.factorize(d_codes.astype(np.int64) * 2 + tc)
    lut = []
    for p in pairs:
        d = str(d_values[p // 2]) if p >= 0 else ""
        lut.append(peak_dtype(d, float(p % 2), dev, platform) if d else "")
    p_codes, p_values = pd.factorize(
        np.asarray(lut, dtype=object)[pair] if len(pair) else np.zeros(0, object)
    )
    time_by = np.bincount(p_codes[known], weights=dur[known], minlength=len(p_values))
    weights = {str(d): float(t) for d, t in zip(p_values, time_by, strict=True) if d and t > 0}
    dominant = max(weights, key=weights.__getitem__) if weights else None
    peak = (dev.get("peaks") or {}).get(dominant) if dominant else None
    out["dtype"], out["peak_tflops"] = dominant, peak
    start, end = s["start"].to_numpy(dtype=np.float64), s["end"].to_numpy(dtype=np.float64)
    step_of = np.searchsorted(start, ts, side="right") - 1
    inside = (step_of >= 0) & (ts < end[np.maximum(step_of, 0)])
    n = len(s)
    f_step = np.bincount(step_of[inside & known], weights=flops[inside & known], minlength=n)
    t_known = np.bincount(step_of[inside & known], weights=dur[inside & known], minlength=n)
    t_all = np.bincount(step_of[inside], weights=dur[inside], minlength=n)
    span = end - start
    for i, number in enumerate(s["number"].to_numpy()):
        value = float(f_step[i] / (span[i] * peak * 1e6)) if peak and span[i] > 0 and t_known[i] > 0 else None
        out["per_step"].append(
            {"step": int(number), "flops": float(f_step[i]), "us": float(span[i]), "mfu": value}
        )
    total_all = float(t_all.sum())
    out["known_flops_share"] = float(t_known.sum()) / total_all if total_all > 0 else None
    if peak and span.sum() > 0 and t_known.sum() > 0:
        out["mean"] = float(f_step.sum() / (span.sum() * peak * 1e6))
    elif not dev.get("matched_peak_name"):
        out["reason"] = dev.get("how") or "unknown device"
    elif not weights:
        out["reason"] = "no kernel with known FLOPs"
    else:
        out["reason"] = f"the device has no {dominant} peak"
    return out

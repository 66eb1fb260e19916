"""Kernel launch statistics (docs/metrics.md, "Kernel launches").

A *launch* is a device activity (kernel, copy, set) linked to the host runtime call that submitted it
(``device.runtime`` ≥ 0: cudaLaunchKernel[ExC], cuLaunchKernel[Ex], hipLaunchKernel,
hipExtModuleLaunchKernel, hipModuleLaunchKernel, copy and set calls…). Per launch:

- ``cpu_us``: the call's duration; ``gpu_us``: the activity's duration;
- ``delay_us``: activity start − end of its call, 0 when negative (clock skew, or a call that returns
  after the work began);
- *short*: ``gpu_us < cpu_us`` (the device finished sooner than the host took to submit: launch-bound).

Per kernel name and per op: count, p50/p95 of the three durations (numpy's linear percentiles) and
``short_share`` (short launches / launches). Outliers: delays above the ``OUTLIER_PERCENTILE``-th
percentile of the profile's delays, the ``MAX_OUTLIERS`` largest. Launch-bound time of a step:
Σ (cpu_us − gpu_us) over its short launches (the launch call starting in the step's device-extended
[start, end)): host submission time the device did not cover with work.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from torch_tb_profiler.analysis.core.cache import memoized
from torch_tb_profiler.analysis.core.steps import steps as step_table
from torch_tb_profiler.model import Profile

OUTLIER_PERCENTILE = 99.0
MAX_OUTLIERS = 20
TOP_NAMES = 50  # the summary keeps the names with the most GPU time


def launches(profile: Profile) -> pd.DataFrame:
    """One row per launch: device row, runtime row, op, name, kind, device, stream, ts (activity),
    call_ts, call_end, cpu_us, gpu_us, delay_us, short."""
    return memoized(profile, "waits.launches", lambda: _launches(profile))


def _launches(profile: Profile) -> pd.DataFrame:
    d = profile.device
    rt = d["runtime"].to_numpy(np.int64) if len(d) else np.zeros(0, np.int64)
    rows = np.flatnonzero(rt >= 0)
    r = rt[rows]
    call_ts = profile.runtimes["ts"].to_numpy(np.float64)[r]
    call_end = profile.runtimes["end"].to_numpy(np.float64)[r]
    ts = d["ts"].to_numpy(np.float64)[rows]
    cpu = call_end - call_ts
    gpu = d["dur"].to_numpy(np.float64)[rows]
    return pd.DataFrame(
        {
            "row": rows,
            "runtime": r,
            "op": d["op"].to_numpy(np.int64)[rows],
            "name": d["name"].to_numpy()[rows],
            "call": profile.runtimes["name"].to_numpy()[r],
            "kind": d["kind"].to_numpy()[rows],
            "device": d["device"].to_numpy(np.int64)[rows],
            "stream": d["stream"].to_numpy(np.int64)[rows],
            "ts": ts,
            "call_ts": call_ts,
            "call_end": call_end,
            "cpu_us": cpu,
            "gpu_us": gpu,
            "delay_us": np.maximum(ts - call_end, 0.0),
            "short": gpu < cpu,
        }
    )


def _stats(frame: pd.DataFrame, key: str) -> pd.DataFrame:
    """count, p50/p95 of cpu/gpu/delay, short_share and total gpu_us per value of ``key``."""
    g = frame.groupby(key, sort=False, observed=True)
    out = pd.DataFrame(
        {"count": g.size(), "gpu_total_us": g["gpu_us"].sum(), "short_share": g["short"].mean()}
    )
    for col in ("cpu_us", "gpu_us", "delay_us"):
        q = g[col].quantile([0.5, 0.95]).unstack()
        out[f"{col}_p50"], out[f"{col}_p95"] = q[0.5], q[0.95]
    return out.sort_values(["gpu_total_us", "count"], ascending=False, kind="stable")


def by_kernel(profile: Profile) -> pd.DataFrame:
    """Per device-activity name (index ``name``)."""
    return _stats(launches(profile), "name")


def by_op(profile: Profile) -> pd.DataFrame:
    """Per op name (``ops.name`` of ``device.op``; launches outside every op are left out)."""
    f = launches(profile)
    f = f[f["op"].to_numpy() >= 0]
    f = f.assign(op_name=profile.ops["name"].to_numpy()[f["op"].to_numpy()])
    return _stats(f, "op_name")


def outliers(
    profile: Profile, percentile: float = OUTLIER_PERCENTILE, limit: int = MAX_OUTLIERS
) -> list[dict]:
    """Launches whose delay is above the ``percentile``-th percentile of all delays, largest first."""
    f = launches(profile)
    if not len(f):
        return []
    delay = f["delay_us"].to_numpy()
    above = np.flatnonzero(delay > np.percentile(delay, percentile))
    top = above[np.argsort(-delay[above], kind="stable")][: max(0, int(limit))]
    sel = f.iloc[top]
    return [
        {
            "ts": float(t),
            "kernel": str(n),
            "call": str(c),
            "delay_us": float(dl),
            "row": int(rw),
            "runtime": int(ru),
            "op": int(o),
        }
        for t, n, c, dl, rw, ru, o in zip(
            sel["ts"],
            sel["name"],
            sel["call"],
            sel["delay_us"],
            sel["row"],
            sel["runtime"],
            sel["op"],
            strict=True,
        )
    ]


def launch_bound_by_step(profile: Profile) -> list[dict]:
    """Per step: number, launch_bound_us = Σ (cpu_us − gpu_us) over short launches whose call starts in
    the step's [start, end), and the count of those launches."""
    f = launches(profile)
    s = step_table(profile)
    if not len(s):
        return []
    starts, ends = s["start"].to_numpy(np.float64), s["end"].to_numpy(np.float64)
    short = f[f["short"].to_numpy()]
    t = short["call_ts"].to_numpy()
    i = np.searchsorted(starts, t, side="right") - 1
    ok = (i >= 0) & (t < ends[np.maximum(i, 0)])
    slack = (short["cpu_us"] - short["gpu_us"]).to_numpy()
    total = np.bincount(i[ok], weights=slack[ok], minlength=len(s))
    count = np.bincount(i[ok], minlength=len(s))
    return [
        {"step": int(n), "launch_bound_us": float(v), "short_launches": int(c)}
        for n, v, c in zip(s["number"], total, count, strict=True)
    ]


def summary(profile: Profile) -> dict[str, Any] | None:
    """``analyses.launch``: the ``TOP_NAMES`` names with most GPU time; None without launches."""
    f = launches(profile)
    if not len(f):
        return None
    t = by_kernel(profile).head(TOP_NAMES)
    cols = [
        "cpu_us_p50",
        "cpu_us_p95",
        "gpu_us_p50",
        "gpu_us_p95",
        "delay_us_p50",
        "delay_us_p95",
        "short_share",
    ]
    return {
        str(name): {"count": int(row["count"]), **{c: float(row[c]) for c in cols}}
        for name, row in t.iterrows()
    }

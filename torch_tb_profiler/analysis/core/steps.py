"""Training steps as the overview (and per-step distributed figures) see them.

API: ``steps(profile) -> pandas.DataFrame`` with one row per step in time order and the columns

- ``number`` (int, the N of ``ProfilerStep#N``; 0 for the fallback step), ``name`` (str),
- ``start``, ``end`` (float µs): the step's range *extended to its device work* (below),
- ``host_start``, ``host_end``: the host ``ProfilerStep#N`` range (or the fallback range),
- ``device_ops`` (int): device activities launched by runtime calls inside the host range.

The result is cached on the profile; treat it as read-only. ``device_steps(profile)`` gives the
same rows as a list of dicts (number, name, start, end) and ``window(profile)`` the span of all steps. Definitions (docs/metrics.md, "Steps"):

- Steps are the ``ProfilerStep#N`` host ranges, each cut at the end of the profile's data (``data_end``:
  the later of the profiler span's end and the last other event's end) when it runs past it — the
  profiler stopped inside a step that never closed; steps left empty by the cut are dropped. A ``gpu_user_annotation`` named ``ProfilerStep#N`` is
  the device projection of a step, never a step of its own. With no ``ProfilerStep`` at all there is
  one step, number 0, spanning every host range in the profile (op, runtime), else every device range.
- Device extension, when any runtime call lying wholly inside a step's host range launched device
  activities: step i starts at max(host start, end of step i-1) and ends at max(host end, last end of
  the device activities launched from inside it, its start). Step 0's lower bound is its host start
  raised to the latest end of the device activities launched outside every step that end before step
  0's first device activity begins.
- Tail trim (device extension applied and more than one step): drop trailing steps that launched no
  device activity, then drop the new last step when it launched fewer than 80% as many device
  activities as the step before it (a step cut short by the end of profiling).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from torch_tb_profiler.analysis.core.cache import memoized

COLUMNS = ["number", "name", "start", "end", "host_start", "host_end", "device_ops"]
TAIL_RATIO = 0.8


def steps(profile) -> pd.DataFrame:
    return memoized(profile, "steps.steps", lambda: _compute(profile))


def device_steps(profile) -> list[dict]:
    """The steps as plain dicts: number, name, start, end (µs, device-extended)."""
    s = steps(profile)
    return [
        {"number": int(n), "name": str(m), "start": float(a), "end": float(b)}
        for n, m, a, b in zip(s["number"], s["name"], s["start"], s["end"], strict=True)
    ]


def step_list(profile) -> list[dict]:
    """Per step: name, kind (train, prefill, decode, mixed: model/step_ranges.py), the context and
    generation tokens its range states (None when it states none), its device-extended duration ``us``
    and ``us_per_token`` = us / (context + generation tokens) when those are stated and not 0."""
    out = []
    facts = profile.steps.set_index("number") if len(profile.steps) else None
    for row in steps(profile).itertuples(index=False):
        kind, ctx, gen = "train", -1, -1
        if facts is not None and row.number in facts.index:
            fact = facts.loc[row.number]
            kind = str(fact.get("kind", "train"))
            ctx, gen = int(fact.get("context_tokens", -1)), int(fact.get("generation_tokens", -1))
        us = float(row.end - row.start)
        tokens = ctx + gen if ctx >= 0 and gen >= 0 else 0
        out.append(
            {
                "name": str(row.name),
                "kind": kind,
                "context_tokens": ctx if ctx >= 0 else None,
                "generation_tokens": gen if gen >= 0 else None,
                "us": us,
                "us_per_token": us / tokens if tokens > 0 else None,
            }
        )
    return out


def window(profile) -> tuple[float, float] | None:
    """[first step start, last step end], or None when the profile has no step."""
    s = steps(profile)
    if s.empty:
        return None
    return float(s["start"].iloc[0]), float(s["end"].iloc[-1])


def data_end(profile) -> float | None:
    """Where the profile's data ends (µs): the later of the ``PyTorch Profiler`` span's end and the
    last end of any op (``ProfilerStep#N`` ranges excluded), runtime call or device activity; None
    when the profile has neither."""
    ends = [end for name, _, end in profile.meta.profiler_spans if str(name).startswith("PyTorch Profiler")]
    ops = profile.ops
    if len(ops):
        not_step = ~ops["name"].isin(profile.steps["name"]).to_numpy() if len(profile.steps) else slice(None)
        if np.any(not_step):
            ends.append(float(ops["end"].to_numpy()[not_step].max()))
    ends += [float(t["end"].max()) for t in (profile.runtimes, profile.device) if len(t)]
    return max(ends) if ends else None


def _host_steps(profile) -> pd.DataFrame:
    table = profile.steps
    if len(table):
        host = pd.DataFrame(
            {
                "number": table["number"].to_numpy(dtype=np.int64),
                "name": table["name"].astype(str).to_numpy(),
                "host_start": table["ts"].to_numpy(dtype=np.float64),
                "host_end": table["end"].to_numpy(dtype=np.float64),
            }
        )
        host = host.sort_values(["host_start", "number"], kind="stable").reset_index(drop=True)
        # a step that never closed (the profiler stopped inside it) ends where the data ends
        limit = data_end(profile)
        if limit is not None:
            host["host_end"] = np.maximum(host["host_start"], np.minimum(host["host_end"], limit))
            empty = (host["host_end"] <= host["host_start"]).to_numpy()
            if empty.any() and not empty.all():
                host = host[~empty].reset_index(drop=True)
        return host
    # fallback: one step over all host ranges (ops, runtime calls), else all device ranges
    for tables in ((profile.ops, profile.runtimes), (profile.device,)):
        ranges = [t for t in tables if len(t)]
        if ranges:
            return pd.DataFrame(
                {
                    "number": [0],
                    "name": ["0"],
                    "host_start": [min(float(t["ts"].min()) for t in ranges)],
                    "host_end": [max(float(t["end"].max()) for t in ranges)],
                }
            )
    return pd.DataFrame({"number": [], "name": [], "host_start": [], "host_end": []})


def _compute(profile) -> pd.DataFrame:
    host = _host_steps(profile)
    n = len(host)
    if n == 0:
        return pd.DataFrame({c: [] for c in COLUMNS}).astype(
            {"number": np.int64, "start": float, "end": float, "host_start": float, "host_end": float}
        )
    h_start = host["host_start"].to_numpy()
    h_end = host["host_end"].to_numpy()

    dev = profile.device
    rts = profile.runtimes
    dev_rt = dev["runtime"].to_numpy(dtype=np.int64) if len(dev) else np.zeros(0, np.int64)
    launched = dev_rt >= 0
    # the step whose host range holds each launching runtime call entirely (-1: none)
    step_of_dev = np.full(len(dev), -1, dtype=np.int64)
    if launched.any():
        rt_ts = rts["ts"].to_numpy(dtype=np.float64)[dev_rt[launched]]
        rt_end = rts["end"].to_numpy(dtype=np.float64)[dev_rt[launched]]
        k = np.searchsorted(h_start, rt_ts, side="right") - 1
        ok = k >= 0
        ok[ok] &= rt_end[ok] <= h_end[k[ok]]
        step_of_dev[np.flatnonzero(launched)] = np.where(ok, k, -1)

    matched = step_of_dev >= 0
    d_ts = dev["ts"].to_numpy(dtype=np.float64) if len(dev) else np.zeros(0)
    d_end = dev["end"].to_numpy(dtype=np.float64) if len(dev) else np.zeros(0)
    count = np.bincount(step_of_dev[matched], minlength=n)
    dev_first = np.full(n, np.inf)
    dev_last = np.full(n, -np.inf)
    np.minimum.at(dev_first, step_of_dev[matched], d_ts[matched])
    np.maximum.at(dev_last, step_of_dev[matched], d_end[matched])

    start = h_start.copy()
    end = h_end.copy()
    keep = n
    if matched.any():
        prev_end = h_start[0]
        if count[0] > 0:
            early = ~matched & (d_end < dev_first[0])
            if early.any():
                prev_end = max(prev_end, float(d_end[early].max()))
        for i in range(n):  # sequential: each step starts where the previous one ended
            start[i] = max(prev_end, h_start[i])
            end[i] = max(h_end[i], dev_last[i], start[i])
            prev_end = end[i]
        if n > 1:
            with_device = np.flatnonzero(count > 0)
            keep = int(with_device[-1]) + 1
            if keep > 1 and count[keep - 1] < TAIL_RATIO * count[keep - 2]:
                keep -= 1

    out = pd.DataFrame(
        {
            "number": host["number"].to_numpy(dtype=np.int64),
            "name": host["name"].to_numpy(),
            "start": start,
            "end": end,
            "host_start": h_start,
            "host_end": h_end,
            "device_ops": count.astype(np.int64),
        }
    )
    return out.iloc[:keep].reset_index(drop=True)

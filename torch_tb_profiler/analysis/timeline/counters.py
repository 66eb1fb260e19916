"""Counter tracks added to the trace for the timeline: per-device utilization and Est. SM efficiency.

Tracks are named by the device kind (``GPU 0 Utilization``, ``MTIA 9 Utilization``); the SM-efficiency
track exists only on CUDA devices whose kernels carry ``blocks per SM`` (a CUPTI figure: never drawn
as 0 on ROCm or MTIA).

- Range R: the profiler's own span (``PyTorch Profiler (0)``), else the span of all host and device
  events.
- **GPU i Utilization**: R is cut into ⌊|R| / B⌋ buckets of B µs, B the smallest power of ten giving at
  most 100 buckets; the last bucket runs to R's end (absorbs the remainder). A bucket's value is the time covered by the union of
  device i's kernels inside it divided by its length (the same union as the overview's utilization).
- **GPU i Est. SM Efficiency**: the sweep-line pieces of ``gpu_metrics.sm_efficiency_pieces`` (the
  overview's definition): each piece with a value > 0 gives the value at its start and 0 at its end.
- Each track starts with the points 1 then 0 at R's start (pins the viewer's scale to 0..1) and the
  utilization track ends with 0 at R's end, as the original plugin wrote them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from torch_tb_profiler.analysis.core.accelerator import accelerator
from torch_tb_profiler.analysis.device.gpu_metrics import kernels, sm_efficiency_pieces
from torch_tb_profiler.model import Profile
from torch_tb_profiler.model import intervals as iv

MAX_BUCKETS = 100


def trace_range(profile: Profile) -> tuple[float, float] | None:
    spans = [
        (ts, end) for name, ts, end in profile.meta.profiler_spans if name.startswith("PyTorch Profiler")
    ]
    if spans:
        return min(s for s, _ in spans), max(e for _, e in spans)
    starts = [t["ts"].min() for t in (profile.ops, profile.device, profile.runtimes) if len(t)]
    ends = [t["end"].max() for t in (profile.ops, profile.device, profile.runtimes) if len(t)]
    if not starts:
        return None
    return float(min(starts)), float(max(ends))


def bucket_size(length: float) -> float:
    """The smallest power of ten (µs, at least 1) that cuts ``length`` into at most 100 buckets."""
    size = 1.0
    while length // size > MAX_BUCKETS:
        size *= 10
    return size


@dataclass
class CounterSeries:
    """One counter track of device ``device``: ``values[i]`` holds from ``ts[i]`` to the next sample."""

    name: str
    key: str
    device: int
    ts: np.ndarray
    values: np.ndarray


def counter_series(profile: Profile) -> list[CounterSeries]:
    """Per device: utilization (bucket starts, then 0 at R's end) and SM efficiency (value, 0 at a piece's end)."""
    k = kernels(profile)
    rng = trace_range(profile)
    if not len(k) or rng is None or rng[1] <= rng[0]:
        return []
    lo, hi = rng
    size = bucket_size(hi - lo)
    starts = lo + size * np.arange(max(1, int((hi - lo) // size)))
    ends = starts + size
    ends[-1] = hi
    out: list[CounterSeries] = []
    acc = accelerator(profile)
    for device in sorted(int(d) for d in k["device"].unique()):
        on = k[k["device"].to_numpy() == device]
        ts, end = on["ts"].to_numpy(), on["end"].to_numpy()
        busy = iv.overlap_with_each(iv.union(ts, end), starts, ends) / (ends - starts)
        out.append(
            CounterSeries(
                f"{acc.kind} {device} Utilization",
                f"{acc.kind} Utilization",
                device,
                np.concatenate(([lo], starts, [hi])),
                np.concatenate(([0.0], busy, [0.0])),
            )
        )
        blocks_per_sm = on["blocks_per_sm"].to_numpy(dtype=np.float64)
        if not acc.sm_figures or np.isnan(blocks_per_sm).all():
            continue  # the trace gives no SM efficiency: no track (the Overview shows "–")
        seg_lo, seg_hi, value = sm_efficiency_pieces(ts, end, blocks_per_sm)
        keep = value > 0
        pairs_ts = np.column_stack((seg_lo[keep], seg_hi[keep])).ravel()
        pairs_val = np.column_stack((value[keep], np.zeros(int(keep.sum())))).ravel()
        out.append(
            CounterSeries(
                f"GPU {device} Est. SM Efficiency",
                "Est. SM Efficiency",
                device,
                np.concatenate(([lo], pairs_ts)).astype(np.float64),
                np.concatenate(([0.0], pairs_val)).astype(np.float64),
            )
        )
    return out


def counter_events(profile: Profile) -> list[dict[str, Any]]:
    """The series as Chrome-trace counter events; each track first gets the points 1 then 0 at R's start.
    Their ts are on the trace's own clock (the profile's ``time_base_us`` added back)."""
    events: list[dict[str, Any]] = []
    base = profile.meta.time_base_us
    for c in counter_series(profile):
        events.append(_counter(c.name, c.device, float(c.ts[0]) + base, c.key, 1))
        events += [
            _counter(c.name, c.device, t + base, c.key, v)
            for t, v in zip(c.ts.tolist(), c.values.tolist(), strict=True)
        ]
    return events


def _counter(name: str, device: int, ts: float, key: str, value: float) -> dict[str, Any]:
    return {"ph": "C", "name": name, "pid": device, "ts": ts, "args": {key: value}}

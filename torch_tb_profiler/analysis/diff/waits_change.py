"""The diff of the why-the-device-waits figures (analysis/waits) that ``--fail-on`` rules read:

- ``temporal:idle``, ``temporal:compute``, ``temporal:non_compute``: per step, the sum over the
  profile's devices of the temporal breakdown's ``idle_us`` / ``compute_us`` / ``non_compute_us``;
  the figure is the mean over steps.
- ``critical_path:KIND`` (KIND host, device, launch, sync, …): per step, the µs of the step's critical
  path in segments of that kind (0 when it has none); the mean over steps.

Noise is the larger half-range of the per-step values on either side, as for the step time: a change
within it is not significant (docs/cli.md, "compare").
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from torch_tb_profiler.analysis.waits import summary as waits
from torch_tb_profiler.model import Profile

TEMPORAL_FIELDS = ("idle", "compute", "non_compute")


def per_step(profile: Profile) -> dict[str, dict[Any, float]]:
    """Figure name → {step: µs} for one profile (empty when the analyses have nothing to say)."""
    out: dict[str, dict[Any, float]] = defaultdict(dict)
    sections = waits.SECTIONS
    temporal = sections["temporal"](profile) if "temporal" in sections else None
    for row in temporal or []:
        if row.get("step") is None:
            continue
        for f in TEMPORAL_FIELDS:
            value = row.get(f"{f}_us")
            if value is not None:
                steps = out[f"temporal:{f}"]
                steps[row["step"]] = steps.get(row["step"], 0.0) + float(value)
    paths = sections["critical_path"](profile) if "critical_path" in sections else None
    for row in paths or []:
        for kind, us in (row.get("by_kind") or {}).items():
            out[f"critical_path:{kind}"][row["step"]] = float(us)
    for name, steps in list(out.items()):  # a kind a step has no segment of counts 0 in that step
        if name.startswith("critical_path:"):
            for row in paths or []:
                steps.setdefault(row["step"], 0.0)
    return dict(out)


def changes(base: Profile, exp: Profile) -> dict[str, dict[str, Any]]:
    """Figure → {baseline, experiment, delta, noise, significant} for every figure either side has."""
    b, e = per_step(base), per_step(exp)
    return {f: _change(b.get(f), e.get(f)) for f in sorted(set(b) | set(e))}


def _change(*sides: dict[Any, float] | None) -> dict[str, Any]:
    means = [sum(s.values()) / len(s) if s else None for s in sides]
    spreads = [(max(s.values()) - min(s.values())) / 2 for s in sides if s]
    noise = max(spreads) if spreads else 0.0
    b, e = means
    delta = (e or 0.0) - (b or 0.0)
    return {"baseline": b, "experiment": e, "delta": delta, "noise": noise, "significant": abs(delta) > noise}


def is_figure(figure: str) -> bool:
    prefix, sep, rest = figure.partition(":")
    if not sep or not rest:
        return False
    return (prefix == "temporal" and rest in TEMPORAL_FIELDS) or (
        prefix == "critical_path" and rest.isidentifier()
    )

"""The text report of ``torch-tb-profiler compare`` (the same figures as ``--json``)."""

from __future__ import annotations

from typing import Any


def _ms(us: float | None) -> str:
    return "n/a" if us is None else f"{us / 1000:.3f} ms"


def _pct(rel: float | None) -> str:
    return "n/a" if rel is None else f"{100 * rel:+.1f}%"


def _signed_ms(us: float | None) -> str:
    return "n/a" if us is None else f"{us / 1000:+.3f} ms"


def _short(name: str, width: int = 90) -> str:
    return name if len(name) <= width else name[: width - 1] + "…"


def _label(s: dict[str, Any]) -> str:
    return f"run {s['run']}  worker {s['worker']}  span {s['span']}  ({s['device_type']}, {s['steps']} steps)"


def _noisy_line(name: str, c: dict[str, Any]) -> str:
    flag = "" if c["delta"] is None else ("" if c["significant"] else "  (within noise)")
    noise = "" if c.get("noise") is None else f"  ±{c['noise'] / 1000:.3f}"
    return (
        f"  {name:<14}{_ms(c['baseline']):>14}{_ms(c['experiment']):>14}{_signed_ms(c['delta']):>14}"
        f"{_pct(c['rel']):>9}{noise}{flag}"
    )


def _device_terms(d: dict[str, Any]) -> tuple[str, str]:
    """The device kind and the matrix units' name of the sides ("GPU", "Matrix Cores" on ROCm)."""
    sides = (d["experiment"], d["baseline"])
    kind = next((s["device_type"] for s in sides if s.get("device_type") not in (None, "CPU")), "GPU")
    names = {s.get("matrix_units") for s in sides} - {None}
    units = names.pop() if len(names) == 1 else "matrix units"
    return kind, units.lower()


def render(d: dict[str, Any], top: int) -> str:
    lines = [f"baseline:   {_label(d['baseline'])}", f"experiment: {_label(d['experiment'])}", ""]
    lines.append(f"  {'':<14}{'baseline':>14}{'experiment':>14}{'change':>14}{'rel':>9}  noise (ms)")
    lines.append(_noisy_line("step time", d["steps"]))
    for cat, c in d["breakdown_us"].items():
        lines.append(_noisy_line(d["labels"].get(cat, cat), c))
    kind, units = _device_terms(d)
    for g in d["gpus"]:
        parts = []
        for key, label in (
            ("utilization_pct", "utilization"),
            ("sm_efficiency_pct", "SM eff."),
            ("achieved_occupancy_pct", "occupancy"),
            ("tensor_core_pct", units),
        ):
            c = g[key]
            if c["baseline"] is None and c["experiment"] is None:
                continue  # neither trace gives it (SM figures off CUDA, matrix units on MTIA…)
            b = "n/a" if c["baseline"] is None else f"{c['baseline']:.1f}%"
            e = "n/a" if c["experiment"] is None else f"{c['experiment']:.1f}%"
            parts.append(f"{label} {b} → {e}")
        paired = "" if g["baseline_id"] in (None, g["id"]) else f" (baseline {kind} {g['baseline_id']})"
        lines.append(f"{kind} {g['id']}{paired}: " + ", ".join(parts))
    m = d.get("mfu") or {}
    if m.get("baseline") is not None or m.get("experiment") is not None:
        b = "n/a" if m["baseline"] is None else f"{100 * m['baseline']:.2f}%"
        e = "n/a" if m["experiment"] is None else f"{100 * m['experiment']:.2f}%"
        rel = "" if m.get("rel") is None else f" ({100 * m['rel']:+.1f}%)"
        lines.append(f"MFU: {b} → {e}{rel}")
    metric = d["sort_metric"]
    if d["operators"][:top]:
        lines.append("")
        lines.append(
            f"operators by |change| of {metric.removesuffix('_us').replace('_', ' ')} (µs per step):"
        )
        lines.append(f"  {'status':<8}{'baseline':>12}{'experiment':>12}{'change':>12}{'rel':>9}  name")
        for o in d["operators"][:top]:
            lines.append(_row(o, metric))
    if d["kernels"][:top]:
        lines.append("")
        lines.append("kernels by |change| of total time (µs per step):")
        lines.append(f"  {'status':<8}{'baseline':>12}{'experiment':>12}{'change':>12}{'rel':>9}  name")
        for k in d["kernels"][:top]:
            lines.append(_row(k, "total_us"))
            if k.get("baseline_name"):
                lines.append(f"  {'':<53}  (was {_short(k['baseline_name'])})")
    for m in d["memory"]:
        c = m["peak_allocated_bytes"]
        other = f" (experiment {m['experiment_device']})" if m.get("experiment_device") else ""
        lines.append(
            f"memory {m['device']}{other}: peak allocated {_bytes(c['baseline'])} → {_bytes(c['experiment'])}"
        )
    dist = d.get("distributed")
    if dist:
        lines.append("")
        lines.append(
            f"distributed (rank {dist['rank']['baseline']} → {dist['rank']['experiment']}), mean per step:"
        )
        for key, c in dist["overlap_us"].items():
            lines.append(_noisy_line(key, {**c, "significant": True}))
        for c in dist["collectives"]:
            lat = c["avg_latency_us"]
            lines.append(
                f"  {c['collective']:<14}avg latency {_ms(lat['baseline'])} → {_ms(lat['experiment'])} ({_pct(lat['rel'])})"
            )
    if d["notes"]:
        lines.append("")
        lines.append("notes:")
        lines.extend(f"  - {n}" for n in d["notes"])
    v = d.get("verdict") or {"failed": [], "passed": []}
    if v["failed"] or v["passed"]:
        lines.append("")
        lines.extend(f"FAIL  {o['rule']}" for o in v["failed"])
        lines.extend(
            f"pass  {o['rule']}" + ("" if o["significant"] else " (within noise)") for o in v["passed"]
        )
    lines.append("")
    return "\n".join(lines)


def _row(r: dict[str, Any], field: str) -> str:
    b = (r["baseline"] or {}).get(field)
    e = (r["experiment"] or {}).get(field)
    fmt = lambda v: "-" if v is None else f"{v:.1f}"  # noqa: E731
    delta = r["delta"][field]
    noisy = delta and not r.get("significant", {}).get(field, True)
    return (
        f"  {r['status']:<8}{fmt(b):>12}{fmt(e):>12}{fmt(delta):>12}{_pct(r['rel'][field]):>9}"
        f"  {_short(r['name'])}" + (f"  (within noise ±{r['noise'][field]:.1f})" if noisy else "")
    )


def _bytes(v: float | None) -> str:
    return "n/a" if v is None else f"{v / 2**20:.1f} MiB"

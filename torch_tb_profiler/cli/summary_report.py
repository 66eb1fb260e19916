"""The text report of ``torch-tb-profiler summary`` (without ``--json``): the same figures as the JSON,
as readable tables. Every time column of a table is in one unit (ms); a figure the trace cannot give
prints as "–"; device columns are left out of CPU-only profiles.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from torch_tb_profiler.analysis.device.breakdown import LABELS

MISSING = "–"
_DEVICE_CATEGORIES = ("kernel", "memcpy", "memset", "runtime")  # always 0 on CPU-only profiles


def ms(us: float | None) -> str:
    return MISSING if us is None else f"{us / 1000:.3f}"


def pct(value: float | None) -> str:
    return MISSING if value is None else f"{value:.2f} %"


def number(value: float | None, spec: str = "{:.2f}") -> str:
    return MISSING if value is None else spec.format(value)


def size(n: float | None) -> str:
    if n is None:
        return MISSING
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if abs(n) >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{n:.0f} B"


def short(name: str, width: int = 100) -> str:
    return name if len(name) <= width else name[: width - 1] + "…"


def table(title: str, headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A titled table: every column right-aligned except the last (names), padded to its widest cell."""
    if not rows:
        return []
    widths = [max(len(headers[i]), *(len(r[i]) for r in rows)) for i in range(len(headers) - 1)]

    def line(cells: Sequence[str]) -> str:
        head = "  ".join(c.rjust(w) for c, w in zip(cells[:-1], widths, strict=True))
        return f"  {head}  {cells[-1]}".rstrip()

    return [title, line(headers), *(line(r) for r in rows), ""]


def _columns(spec: Sequence[tuple[str, Callable[[dict[str, Any]], str]]], items: Sequence[dict[str, Any]]):
    return [h for h, _ in spec], [[f(x) for _, f in spec] for x in items]


def breakdown(p: dict[str, Any]) -> list[str]:
    step, parts = p["step_time_us"], p["breakdown_us"]
    if not parts or not step:
        return []
    rows = []
    for key, value in parts.items():
        if p["device_type"] == "CPU" and key in _DEVICE_CATEGORIES:
            continue
        if key == "communication" and not value:
            continue
        rows.append([ms(value), pct(100 * value / step), LABELS.get(key, key)])
    return table("Step-time breakdown (mean per step)", ["ms", "share", "category"], rows)


def devices(p: dict[str, Any]) -> list[str]:
    units = p.get("matrix_units")
    spec = [
        ("id", lambda g: str(g["id"])),
        ("utilization", lambda g: pct(g["utilization_pct"])),
        *_cupti(p, ("est. SM efficiency", lambda g: pct(g["sm_efficiency_pct"]))),
        *_cupti(p, ("est. occupancy", lambda g: pct(g["achieved_occupancy_pct"]))),
        *([(f"{units} (at least)", lambda g: pct(g["tensor_core_pct"]))] if units else []),
        # kernels whose names do not say: the share above is a lower bound by this much
        *(
            [("not classified", lambda g: pct(g.get("tensor_core_unknown_pct")))]
            if units and any(g.get("tensor_core_unknown_pct") for g in p["gpus"])
            else []
        ),
        ("name", lambda g: g["name"] or MISSING),
    ]
    return table(f"{p['device_type']} summary", *_columns(spec, p["gpus"]))


def _cupti(p: dict[str, Any], column: tuple[str, Callable[[dict[str, Any]], str]]) -> list[tuple]:
    """A CUPTI figure's column (SM efficiency, blocks per SM, occupancy): only for CUDA devices (a summary
    without ``platform``, from an older index, keeps them)."""
    return [column] if p.get("platform", "CUDA") == "CUDA" else []


def operators(p: dict[str, Any]) -> list[str]:
    on_device = p["device_type"] not in (None, "CPU")
    spec = [
        ("calls", lambda o: str(o["calls"])),
        ("host self ms", lambda o: ms(o["host_self_us"])),
        ("host total ms", lambda o: ms(o["host_total_us"])),
    ]
    if on_device:
        spec += [
            ("device self ms", lambda o: ms(o["device_self_us"])),
            ("device total ms", lambda o: ms(o["device_total_us"])),
        ]
    spec.append(("name", lambda o: short(o["name"])))
    order = "device total" if on_device else "host total"
    return table(f"Top operators by {order} time", *_columns(spec, p["operators"]))


def kernels(p: dict[str, Any]) -> list[str]:
    spec = [
        ("calls", lambda k: str(k["calls"])),
        ("total ms", lambda k: ms(k["total_us"])),
        *_cupti(p, ("blocks/SM", lambda k: number(k["mean_blocks_per_sm"]))),
        *_cupti(p, ("occupancy", lambda k: pct(k["mean_achieved_occupancy_pct"]))),
        ("name", lambda k: short(k["name"])),
    ]
    return table("Top kernels by total time", *_columns(spec, p["kernels"]))


def memory(p: dict[str, Any]) -> list[str]:
    spec = [
        ("peak allocated", lambda m: size(m["peak_allocated_bytes"])),
        ("peak reserved", lambda m: size(m["peak_reserved_bytes"])),
        ("device", lambda m: str(m["device"])),
    ]
    return table("Memory (peak over the profile)", *_columns(spec, p.get("memory") or []))


def modules(p: dict[str, Any]) -> list[str]:
    on_device = p["device_type"] not in (None, "CPU")
    spec = [
        ("occurrences", lambda m: str(m["occurrences"])),
        ("host total ms", lambda m: ms(m["host_total_us"])),
        ("host self ms", lambda m: ms(m["host_self_us"])),
    ]
    if on_device:
        spec += [
            ("device total ms", lambda m: ms(m["device_total_us"])),
            ("device self ms", lambda m: ms(m["device_self_us"])),
        ]
    spec += [
        ("% of steps", lambda m: pct(m["step_share_pct"])),
        ("module", lambda m: short("  " * m["depth"] + m["name"])),
    ]
    return table("Modules (all steps, top levels)", *_columns(spec, p.get("modules") or []))


def roofline(p: dict[str, Any]) -> list[str]:
    """The top rows by time lost (operators then kernels), with the device's peaks and MFU."""
    r = p.get("roofline")
    if not r or not (r["ops"] or r["kernels"]):
        return []
    dev = r["device"]
    peak = dev["matched_peak_name"]
    head = (
        f"Roofline: device {dev['name'] or '?'} = {peak}, {dev['tb_per_s']} TB/s"
        if peak
        else (
            f"Roofline: device {dev['name'] or '?'} not in the peaks table (absolute figures only; --peaks FILE)"
        )
    )
    m = r["mfu"]
    mean = MISSING if m["mean"] is None else f"{100 * m['mean']:.2f} % ({m['dtype']})"
    share = MISSING if m["known_flops_share"] is None else f"{100 * m['known_flops_share']:.1f} %"
    lines = [head, f"  MFU {mean}; device time with known FLOPs {share}", ""]
    spec = [
        ("calls", lambda x: str(x["calls"])),
        ("device ms", lambda x: ms(x["device_us"])),
        ("TFLOP/s", lambda x: number(x["tflops_per_s"])),
        ("TB/s", lambda x: number(x["tb_per_s"], "{:.3f}")),
        ("FLOP/B", lambda x: number(x["intensity"], "{:.1f}")),
        ("% roof", lambda x: pct(x["pct_of_roofline"])),
        ("bound", lambda x: x["bound"] or MISSING),
        ("lost ms", lambda x: ms(x["time_lost_us"])),
        ("name", lambda x: short(x["name"] + (f" {x['input_dims']}" if x.get("input_dims") else ""))),
    ]
    lines += table("Roofline: operators by time lost", *_columns(spec, r["ops"]))
    lines += table("Roofline: kernels by time lost", *_columns(spec, r["kernels"]))
    return lines


def distributed(section: dict[str, Any] | None) -> list[str]:
    if not section:
        return []
    spec = [
        ("rank", lambda w: MISSING if w["rank"] is None else str(w["rank"])),
        ("computation", lambda w: ms(w["computation_us"])),
        ("overlap", lambda w: ms(w["overlap_us"])),
        ("communication", lambda w: ms(w["communication_us"])),
        ("other", lambda w: ms(w["other_us"])),
        ("synchronizing", lambda w: ms(w["synchronizing_us"])),
        ("transferring", lambda w: ms(w["transferring_us"])),
        ("run / span / worker", lambda w: f"{w['run']} / {w['span']} / {w['worker']}"),
    ]
    out = table("== Distributed (ms, mean per step)", *_columns(spec, section["workers"]))
    out += [f"warning: {m}" for m in section.get("warnings", [])]
    return out


def profile(p: dict[str, Any]) -> list[str]:
    lines = [f"== run {p['run']}  worker {p['worker']}  span {p['span']}"]
    if p["device_type"] is None:
        return [*lines, *(f"   error: {e}" for e in p["errors"]), ""]
    mean = MISSING if p["step_time_us"] is None else f"{ms(p['step_time_us'])} ms"
    if p.get("note"):
        mean += f" ({p['note']})"
    lines += [f"device: {p['device_type']}   steps: {p['steps']}   mean step: {mean}", ""]
    for part in (breakdown, devices, operators, kernels, roofline, modules, memory):
        lines += part(p)
    if p["recommendations"]:
        lines += ["Recommendations", *(f"  - [{r['id']}] {r['text']}" for r in p["recommendations"]), ""]
    lines += [f"error: {e}" for e in p["errors"]]
    return lines


def render_text(profiles: list[dict[str, Any]], dist: dict[str, Any] | None = None) -> str:
    lines: list[str] = []
    for p in profiles:
        lines += profile(p)
    lines += distributed(dist)
    return "\n".join(lines) + "\n"

"""The Distributed view for many ranks: a rank × step heatmap, distributions over ranks, a job-wide
collectives table.

Everything here is derived from the per-worker figures ``distributed.analyze_job`` already computed
(``overlap``, ``wait``, ``comm_ops``), so it adds no pass over the calls. Sizes are bounded: the heatmap
holds ranks × steps numbers per metric (what it draws), every other part holds at most ``top`` named
ranks per list, whatever the number of ranks. Definitions: docs/metrics.md, "Distributed at scale".
"""

from __future__ import annotations

import math
from typing import Any

# per-step figures of one rank: the four bars (analysis.distributed.OVERLAP_LEGENDS) and the two parts of
# its collective time (synchronizing = waiting for the last rank, transferring)
METRICS = ("computation", "overlap", "communication", "other", "synchronizing", "transferring")
_SOURCE = {
    "computation": "overlap",
    "overlap": "overlap",
    "communication": "overlap",
    "other": "overlap",
    "synchronizing": "wait",
    "transferring": "wait",
}


def _step_key(name: str) -> tuple[int, str]:
    return (int(name), name) if name.lstrip("-").isdigit() else (1 << 62, name)


def step_names(workers: list[dict]) -> list[str]:
    """Every step name of any worker, in step-number order (steps are numbered alike on every rank)."""
    names = {s for w in workers for s in w["steps"]}
    return sorted(names, key=_step_key)


def quantiles(values: list[float]) -> dict[str, float | None]:
    """min, median (the middle value; the mean of the two middle ones for an even count), p95 (nearest
    rank: the ⌈0.95·n⌉-th smallest) and max; all None for no value."""
    if not values:
        return {"min": None, "median": None, "p95": None, "max": None}
    v = sorted(values)
    n = len(v)
    mid = n // 2
    median = v[mid] if n % 2 else (v[mid - 1] + v[mid]) / 2
    return {"min": v[0], "median": median, "p95": v[math.ceil(0.95 * n) - 1], "max": v[-1]}


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)


def _named(rows: list[tuple[float, int, dict]], top: int) -> list[dict]:
    return [{"worker": w["worker"], "rank": w["rank"], "value": value} for value, _i, w in rows[:top]]


def heatmap(job: dict) -> dict:
    """Per metric, one row per worker (in ``job['workers']`` order: by rank) and one column per step of
    ``steps``; a cell is the worker's figure for that step (µs), None when the worker lacks the step."""
    workers = job["workers"]
    steps = step_names(workers)
    cells: dict[str, list[list[float | None]]] = {}
    for metric in METRICS:
        section = job[_SOURCE[metric]]
        rows = []
        for w in workers:
            per_step = section[w["worker"]]["steps"]
            rows.append([per_step[s][metric] if s in per_step else None for s in steps])
        cells[metric] = rows
    return {"steps": steps, "metrics": list(METRICS), "cells": cells}


def distribution(job: dict, top: int) -> dict:
    """Per metric, over ranks of each rank's mean per step: min, median, p95, max, and the ``top``
    ranks with the highest and with the lowest value (ties: lower rank first)."""
    workers = job["workers"]
    out = {}
    for metric in METRICS:
        section = job[_SOURCE[metric]]
        means = [(section[w["worker"]]["mean"][metric], i, w) for i, w in enumerate(workers)]
        values = [(float(v), i, w) for v, i, w in means if v is not None]  # a rank without steps: no value
        highest = sorted(values, key=lambda t: (-t[0], t[1]))
        lowest = sorted(values, key=lambda t: (t[0], t[1]))
        out[metric] = {
            **quantiles([v for v, _i, _w in values]),
            "highest": _named(highest, top),
            "lowest": _named(lowest, top),
        }
    return out


def collectives(job: dict, top: int) -> list[dict]:
    """Per collective over the ranks that call it: ranks, calls and bytes summed over ranks, and the
    distribution over ranks of each rank's latency (``total_latency_us`` of its comm-op row) with the
    ``top`` ranks of highest and of lowest latency. Sorted by the highest median latency first."""
    by_name: dict[str, list[tuple[float, int, dict, dict]]] = {}
    for i, w in enumerate(job["workers"]):
        for row in job["comm_ops"].get(w["worker"], []):
            by_name.setdefault(row["collective"], []).append((float(row["total_latency_us"]), i, w, row))
    out = []
    for name, entries in by_name.items():
        latency = [(v, i, w) for v, i, w, _r in entries]
        busbw = [r["busbw_gbps"] for *_x, r in entries if _finite(r["busbw_gbps"])]
        out.append(
            {
                "collective": name,
                "ranks": len(entries),
                "calls": sum(int(r["calls"]) for *_x, r in entries),
                "total_bytes": sum(float(r["total_bytes"]) for *_x, r in entries),
                "latency_us": quantiles([v for v, _i, _w in latency]),
                "busbw_gbps": quantiles(busbw),
                "highest": _named(sorted(latency, key=lambda t: (-t[0], t[1])), top),
                "lowest": _named(sorted(latency, key=lambda t: (t[0], t[1])), top),
            }
        )
    out.sort(key=lambda r: (-(r["latency_us"]["median"] or 0.0), r["collective"]))
    return out


def scale_sections(job: dict, top: int = 5) -> dict[str, Any]:
    """The parts of the Distributed answer that stay readable at any number of ranks."""
    return {
        "heatmap": heatmap(job),
        "distribution": distribution(job, top),
        "collectives": collectives(job, top),
    }

"""Overview: environment, step-time breakdown per step and on average, GPU summary, recommendations."""

from __future__ import annotations

from typing import Any

import numpy as np

from torch_tb_profiler.analysis.core import range_profiler, steps
from torch_tb_profiler.analysis.core.accelerator import accelerator, lost_launches
from torch_tb_profiler.analysis.core.plain import clean
from torch_tb_profiler.analysis.device import breakdown, gpu_metrics
from torch_tb_profiler.analysis.graphs import replays
from torch_tb_profiler.analysis.modules.tree import has_module_view
from torch_tb_profiler.analysis.overview.recommendations import recommendations
from torch_tb_profiler.model.device_work import lost_launches_note

_VERSION_HINTS = ("version",)


def device_type(profile) -> str:
    """The device kind (analysis/core/accelerator.py): GPU for CUDA and ROCm, MTIA, XPU, HPU, PrivateUse1,
    or CPU when no device did any work (no device activity and no launch)."""
    return accelerator(profile).kind


def categories(profile) -> list[str]:
    """The breakdown categories worth showing: device ones (and Runtime, host calls into a device
    runtime) only for profiles with an accelerator, communication only when there is any."""
    gpu = accelerator(profile).platform is not None
    # a range-profiler trace has no device activity at all: its device times are unknown, not 0
    counters_only = range_profiler.summary(profile) is not None and not len(profile.device)
    avg = breakdown.average(profile)
    shown = []
    for c in breakdown.CATEGORIES:
        if c in breakdown.GPU_CATEGORIES and not gpu:
            continue
        # a CPU run on a GPU host may still call the runtime (cudaGetDeviceCount): shown when it took time
        if c == "runtime" and not gpu and avg["runtime"] <= 0:
            continue
        if c in breakdown.GPU_CATEGORIES and counters_only:
            continue
        if c == "communication" and avg["communication"] <= 0:
            continue
        shown.append(c)
    return shown


def environment(profile) -> dict[str, Any]:
    """Device type, distributed setup and any version strings the trace carries."""
    meta = profile.meta
    env: dict[str, Any] = {"device_type": device_type(profile)}
    info = meta.distributed_info
    if isinstance(info, dict) and info:
        env["distributed"] = {
            k: info[k] for k in ("backend", "rank", "world_size", "pg_count", "nccl_version") if k in info
        }
    versions = {
        str(k): _version(str(k), v)
        for k, v in (meta.top_level or {}).items()
        if any(h in str(k).lower() for h in _VERSION_HINTS) and isinstance(v, str | int | float)
    }
    if meta.schema_version is not None:
        versions.setdefault("schemaVersion", meta.schema_version)
    if versions:
        env["versions"] = versions
    if meta.framework:
        env["framework"] = meta.framework
    return env


def _version(key: str, value: str | int | float) -> str | int | float:
    """CUDA versions are written as integers (12040 = 12.4): show them dotted."""
    if key.lower().startswith("cuda") and isinstance(value, int) and value >= 1000:
        return f"{value // 1000}.{value % 1000 // 10}"
    return value


def step_rows(profile) -> list[dict[str, Any]]:
    table = breakdown.per_step(profile)
    # the host range (ProfilerStep#N, what the Trace view's ruler draws) beside the device-extended one
    host = profile.steps.set_index("number")[["ts", "end"]] if len(profile.steps) else None
    out = []
    for rec in table.to_dict(orient="records"):
        row = {
            "number": int(rec["number"]),
            "name": str(rec["name"]),
            "start_us": float(rec["start"]),
            "end_us": float(rec["end"]),
            "duration_us": float(rec["duration"]),
        }
        if host is not None and int(rec["number"]) in host.index:
            ts, end = host.loc[int(rec["number"])]
            row.update(host_start_us=float(ts), host_end_us=float(end))
        row.update({f"{c}_us": float(rec[c]) for c in breakdown.CATEGORIES})
        out.append(row)
    return out


def inference(profile) -> dict[str, Any] | None:
    """Inference steps at a glance (docs/metrics.md, "Inference steps"): steps per kind, the tokens they
    state and the time per token over the steps that state them; None when every step is a training one."""
    rows = steps.step_list(profile)
    if not rows or all(r["kind"] == "train" for r in rows):
        return None
    counted = [r for r in rows if r["us_per_token"] is not None]
    tokens = sum(r["context_tokens"] + r["generation_tokens"] for r in counted)
    return {
        "steps": {k: sum(1 for r in rows if r["kind"] == k) for k in ("prefill", "decode", "mixed")},
        "context_tokens": sum(r["context_tokens"] for r in counted),
        "generation_tokens": sum(r["generation_tokens"] for r in counted),
        "us_per_token": sum(r["us"] for r in counted) / tokens if tokens else None,
    }


def overview(profile) -> dict[str, Any]:
    """Everything the Overview page shows for one profile (times in µs, percentages 0..100)."""
    avg = breakdown.average(profile)
    empty = breakdown.no_activity(profile)
    duration: float | None = None if empty else avg["duration"]
    average = {
        c: {"us": None, "pct": None}
        if empty
        else {"us": avg[c], "pct": 100.0 * avg[c] / duration if duration else 0.0}
        for c in breakdown.CATEGORIES
    }
    return {
        "device_type": device_type(profile),
        "platform": accelerator(profile).platform,
        "matrix_units": accelerator(profile).matrix_units,
        "environment": environment(profile),
        "categories": categories(profile),
        "labels": dict(breakdown.LABELS),
        "steps": step_rows(profile),
        "step_time_us": duration,
        "average": average,
        "gpus": [_finite(g) for g in gpu_metrics.gpu_summary(profile)],
        "recommendations": recommendations(profile),
        "graphs": replays.overview_note(profile),
        "lost_device_activity": lost_device_activity(profile),
        "inference": inference(profile),
        "range_profiler": range_profiler.summary(profile),
        "note": breakdown.NO_ACTIVITY if empty else None,
    }


def lost_device_activity(profile) -> dict[str, Any] | None:
    """The note when launches have no device record at all (docs/metrics.md, "Device kind"), else None."""
    count = lost_launches(profile)
    return {"launches": count, "text": lost_launches_note(count)} if count else None


def _finite(d: dict[str, Any]) -> dict[str, Any]:
    return {k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in d.items()}


def page(profile) -> dict[str, Any]:
    """The ``/overview`` answer as plain JSON data, but for ``environment.workers`` (a fact of the run, added
    by the route): what the persisted index stores, so a re-opened logdir answers without the profile."""
    data = overview(profile)
    data["environment"]["module_info"] = has_module_view(profile)
    return clean(data)

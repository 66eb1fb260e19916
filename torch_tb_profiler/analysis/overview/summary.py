"""The headless summary of one profile (``torch-tb-profiler summary --json``).

``profile_summary(profile, top)`` builds the whole per-profile dict; a view that wants its figures in
the summary adds a key there (one ``_section`` call), so that a failing section becomes an entry of
``errors`` instead of losing the rest. ``failed_summary`` is the entry for a file that did not load.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torch_tb_profiler.analysis.core import steps
from torch_tb_profiler.analysis.core.accelerator import accelerator
from torch_tb_profiler.analysis.core.plain import clean
from torch_tb_profiler.analysis.device import breakdown, gpu_metrics
from torch_tb_profiler.analysis.graphs import replays
from torch_tb_profiler.analysis.memory import usage as memory
from torch_tb_profiler.analysis.modules import tree as modules
from torch_tb_profiler.analysis.ops import kernels, operators
from torch_tb_profiler.analysis.overview import page as overview
from torch_tb_profiler.analysis.overview.recommendations import recommendations
from torch_tb_profiler.analysis.roofline import summary as roofline
from torch_tb_profiler.analysis.waits import summary as waits

DEFAULT_TOP = 10


def profile_summary(profile, top: int = DEFAULT_TOP) -> dict[str, Any]:
    errors: list[str] = []

    def section(name: str, compute: Callable[[], Any], fallback: Any) -> Any:
        try:
            return clean(compute())
        except Exception as exc:  # one broken section must not hide the others
            errors.append(f"{name}: {type(exc).__name__}: {exc}")
            return fallback

    avg = section("breakdown", lambda: breakdown.average(profile), None)
    empty = section("breakdown", lambda: breakdown.no_activity(profile), False)
    if empty:
        avg = None  # no step to average over: unknown, not 0
    out: dict[str, Any] = {
        "run": profile.run,
        "worker": profile.worker,
        "span": profile.span,
        "device_type": overview.device_type(profile),
        "matrix_units": accelerator(profile).matrix_units,
        "platform": accelerator(profile).platform,
        "steps": section("steps", lambda: len(steps.steps(profile)), 0),
        "step_list": section("step_list", lambda: steps.step_list(profile), []),
        "step_time_us": avg["duration"] if avg else None,
        "breakdown_us": {c: avg[c] for c in breakdown.CATEGORIES} if avg else None,
        "note": breakdown.NO_ACTIVITY if empty else None,
        "gpus": section("gpus", lambda: _gpus(profile), []),
        "operators": section("operators", lambda: _operators(profile, top), []),
        "kernels": section("kernels", lambda: _kernels(profile, top), []),
        "recommendations": section(
            "recommendations",
            lambda: [{"id": r["id"], "text": r["text"]} for r in recommendations(profile)],
            [],
        ),
        "memory": section("memory", lambda: memory.summary(profile), []),
        "modules": section("modules", lambda: modules.summary(profile), []),
        "graphs": section("graphs", lambda: _graphs(profile), None),
        "roofline": section("roofline", lambda: roofline.summary(profile, top), None),
        "analyses": section("analyses", lambda: waits.summary(profile), None),
    }
    out["errors"] = errors
    out["warnings"] = list(profile.meta.warnings)  # what loading repaired, dropped or cut (the UI's too)
    return out


def failed_summary(run: str, worker: str, span: str, message: str) -> dict[str, Any]:
    """The entry of a profile whose file could not be loaded."""
    return {
        "run": run,
        "worker": worker,
        "span": span,
        "device_type": None,
        "matrix_units": None,
        "steps": 0,
        "step_list": [],
        "step_time_us": None,
        "breakdown_us": None,
        "note": None,
        "gpus": [],
        "operators": [],
        "kernels": [],
        "recommendations": [],
        "memory": [],
        "modules": [],
        "graphs": None,
        "roofline": None,
        "analyses": None,
        "errors": [message],
        "warnings": [],
    }


def _gpus(profile) -> list[dict[str, Any]]:
    keys = ("id", "name", "utilization_pct", "sm_efficiency_pct", "achieved_occupancy_pct", "tensor_core_pct")
    keys += ("tensor_core_unknown_pct",)
    return [{k: g.get(k) for k in keys} for g in gpu_metrics.gpu_summary(profile)]


def operator_sort(profile) -> str:
    """Top operators by device time on profiles with an accelerator, by host time on CPU-only ones."""
    return "host_total_us" if accelerator(profile).platform is None else "device_total_us"


def _operators(profile, top: int) -> list[dict[str, Any]]:
    table = operators.top(operators.operator_table(profile, "name"), operator_sort(profile), top)
    keys = ["name", "kind", "calls", "host_self_us", "host_total_us", "device_self_us", "device_total_us"]
    keys += ["replayed_calls", "replayed_device_us"]
    return operators.records(table[keys])


def _kernels(profile, top: int) -> list[dict[str, Any]]:
    table = kernels.kernel_table(profile, "name").head(top)
    keys = ["name", "calls", "total_us", "mean_blocks_per_sm", "mean_achieved_occupancy_pct"]
    keys += ["replayed_calls", "replayed_device_us"]
    return operators.records(table[keys])


def _graphs(profile) -> dict[str, Any] | None:
    """Graph replays (graphs/replays.py); None for a profile without any."""
    stats = replays.replay_stats(profile)
    if not stats["replays"]:
        return None
    keys = ("replays", "replayed_device_us", "attributed_device_us", "unattributed_device_us")
    return {**{k: stats[k] for k in keys}, **replays.merge_report(profile)}

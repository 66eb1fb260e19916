"""Routes every view needs: runs (with loading progress and errors), views, workers, spans."""

from __future__ import annotations

from typing import Any

import msgspec
from werkzeug.wrappers import Request

from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.views.common import int_param, param

# view name -> predicate over a loaded profile; a view is listed when any profile of the run has it
VIEW_ORDER = (
    "Overview",
    "Operator",
    "Kernel",
    "Roofline",
    "Trace",
    "Analysis",
    "Memory",
    "Module",
    "Distributed",
)


def available_views(store: RunStore, run: str) -> list[str]:
    facts = store.facts_of_run(run)  # kept for evicted profiles too: no full profile is read here
    views = ["Overview", "Operator"]
    if any(f.kernels for f in facts):
        views.append("Kernel")
    if any(f.roofline for f in facts):  # some FLOPs can be known
        views.append("Roofline")
    views.append("Trace")
    if any(f.kernels for f in facts):  # the analyses of why the device waits need device activity
        views.append("Analysis")
    if any(f.memory for f in facts):
        views.append("Memory")
    if any(f.module_view for f in facts):
        views.append("Module")
    # Lightning writes one "worker" per stage (fit.training_step, test.test_step...): not ranks
    stages_only = all(f.framework == "pytorch-lightning" for f in facts)
    several = len(store.workers(run)) > 1 and not stages_only
    # one worker of a world of one (vLLM/SGLang single-GPU serving): no job to analyse
    alone = not several and bool(facts) and all(f.world_size == 1 for f in facts)
    if several or (not alone and any(f.comms or f.distributed_info for f in facts)):
        views.append("Distributed")
    if _profile_count(store) >= 2:  # Diff compares any two profiles of the logdir
        views.append("Diff")
    return views


def _profile_count(store: RunStore) -> int:
    return store.profile_count()


RUNS_MAX_BYTES = 1_000_000  # one runs answer (docs/api.md "runs": paged by files)
_MAX_SCAN_WARNINGS = 100


def runs(request: Request, store: RunStore) -> dict[str, Any]:
    offset = int_param(request, "offset", 0, lo=0, hi=2**62)
    warnings = store.scan_warnings
    shown = warnings[:_MAX_SCAN_WARNINGS] + (
        [f"… and {len(warnings) - _MAX_SCAN_WARNINGS} more"] if len(warnings) > _MAX_SCAN_WARNINGS else []
    )
    head = {
        "logdir": store.logdir,
        "scan_error": store.scan_error,
        "scan_warnings": [w[:4000] for w in shown],
        "memory": store.memory(),
    }
    room = RUNS_MAX_BYTES - len(msgspec.json.encode(head)) - 4096
    listed, next_offset, total = store.runs_page(offset, room)
    return {
        **head,
        "loading": store.loading(),
        "offset": offset,
        "next_offset": next_offset,
        "files_total": total,
        "runs": listed,
    }


def views(request: Request, store: RunStore) -> list[str]:
    return available_views(store, param(request, "run"))


def workers(request: Request, store: RunStore) -> list[str]:
    run = param(request, "run")
    names = store.workers(run)
    view = request.args.get("view")
    if view in ("Kernel", "Memory", "Module", "Roofline"):
        attribute = {
            "Kernel": "kernels",
            "Memory": "memory",
            "Module": "module_view",
            "Roofline": "roofline",
        }[view]
        with_view = {f.worker for f in store.facts_of_run(run) if getattr(f, attribute)}
        names = [w for w in names if w in with_view]
    return names


def spans(request: Request, store: RunStore) -> list[str]:
    return store.spans(param(request, "run"), param(request, "worker"))


ROUTES = {"/runs": runs, "/views": views, "/workers": workers, "/spans": spans}

"""Routes every view needs: runs (with loading progress and errors), views, workers, spans."""

from __future__ import annotations

from typing import Any

from werkzeug.wrappers import Request

from torch_tb_profiler.analysis.modules import has_module_view
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.views.common import param

# view name -> predicate over a loaded profile; a view is listed when any profile of the run has it
VIEW_ORDER = ("Overview", "Operator", "Kernel", "Trace", "Memory", "Module", "Distributed")


def available_views(store: RunStore, run: str) -> list[str]:
    profiles = store.profiles_of_run(run)
    views = ["Overview", "Operator"]
    if any(len(p.kernels) for p in profiles):
        views.append("Kernel")
    views.append("Trace")
    if any(len(p.memory) for p in profiles):
        views.append("Memory")
    if any(has_module_view(p) for p in profiles):
        views.append("Module")
    # Lightning writes one "worker" per stage (fit.training_step, test.test_step...): not ranks
    stages_only = all(p.meta.framework == "pytorch-lightning" for p in profiles)
    several = len(store.workers(run)) > 1 and not stages_only
    if several or any(len(p.comms) or p.meta.distributed_info for p in profiles):
        views.append("Distributed")
    if _profile_count(store) >= 2:  # Diff compares any two profiles of the logdir
        views.append("Diff")
    return views


def _profile_count(store: RunStore) -> int:
    return sum(len(store.spans(r, w)) for r in store.run_names() for w in store.workers(r))


def runs(request: Request, store: RunStore) -> dict[str, Any]:
    listed = store.runs()
    return {
        "logdir": store.logdir,
        "scan_error": store.scan_error,
        "scan_warnings": store.scan_warnings,
        "loading": any(r["state"] == "loading" for r in listed),
        "runs": listed,
    }


def views(request: Request, store: RunStore) -> list[str]:
    return available_views(store, param(request, "run"))


def workers(request: Request, store: RunStore) -> list[str]:
    run = param(request, "run")
    names = store.workers(run)
    view = request.args.get("view")
    if view in ("Kernel", "Memory"):
        column = "kernels" if view == "Kernel" else "memory"
        with_view = {p.worker for p in store.profiles_of_run(run) if len(getattr(p, column))}
        names = [w for w in names if w in with_view]
    elif view == "Module":
        with_view = {p.worker for p in store.profiles_of_run(run) if has_module_view(p)}
        names = [w for w in names if w in with_view]
    return names


def spans(request: Request, store: RunStore) -> list[str]:
    return store.spans(param(request, "run"), param(request, "worker"))


ROUTES = {"/runs": runs, "/views": views, "/workers": workers, "/spans": spans}

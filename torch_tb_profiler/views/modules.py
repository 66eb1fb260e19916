"""``/modules`` (the module or Lightning-hook tree with per-node figures for one step or all) and
``/modules/operators`` (the operators inside one node)."""

from __future__ import annotations

from typing import Any

from werkzeug.wrappers import Request

from torch_tb_profiler.analysis.core.plain import clean
from torch_tb_profiler.analysis.modules import lightning
from torch_tb_profiler.analysis.modules import tree as mod
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.model import Profile
from torch_tb_profiler.views.common import bad_request, choice_param, int_param, not_found, profile_param

NODE_KEYS = (
    "id",
    "parent",
    "depth",
    "name",
    "cls",
    "kind",
    "forward",
    "event",
    "thread",
    "occurrences",
    "host_total_us",
    "host_self_us",
    "device_total_us",
    "device_self_us",
    "step_share_pct",
    "longest_us",
)


def _step_param(request: Request, profile: Profile) -> int | None:
    """``step``: ``all`` (default) or the N of a ProfilerStep#N of this profile."""
    raw = request.args.get("step") or "all"
    if raw == "all":
        return None
    try:
        number = int(raw)
    except ValueError:
        raise bad_request(f"'step' must be 'all' or a step number; got '{raw}'") from None
    if not len(mod.step_rows(profile, number)):
        raise not_found(f"no step {number} in this profile")
    return number


def _tree_param(request: Request, profile: Profile) -> str:
    default = "modules" if mod.has_modules(profile) or not mod.has_hooks(profile) else "hooks"
    which = choice_param(request, "tree", mod.TREES, default)
    if not len(mod.tree(profile, which).nodes):
        what = "module ranges (record with with_modules=True)" if which == "modules" else "Lightning hooks"
        raise not_found(f"no {what} in this profile")
    return which


def modules(request: Request, store: RunStore) -> dict[str, Any]:
    profile = profile_param(request, store)
    which = _tree_param(request, profile)
    step = _step_param(request, profile)
    fig = mod.figures(profile, which, step)
    fig["thread"] = fig["pid"].astype(str) + "/" + fig["tid"].astype(str)
    return clean(
        {
            "tree": which,
            "source": mod.tree(profile, which).source,
            "step": "all" if step is None else step,
            "steps": mod.step_choices(profile),
            "has_modules": mod.has_modules(profile),
            "has_hooks": mod.has_hooks(profile),
            "has_device": bool(profile.has_device),
            "main_thread": mod.main_thread(profile, fig),
            "threads": mod.thread_labels(profile, fig),
            "nodes": fig[list(NODE_KEYS)].to_dict("records"),
            "hook_steps": lightning.breakdown(profile) if which == "hooks" else [],
        }
    )


def module_operators(request: Request, store: RunStore) -> dict[str, Any]:
    profile = profile_param(request, store)
    which = _tree_param(request, profile)
    step = _step_param(request, profile)
    nodes = mod.tree(profile, which).nodes
    if not request.args.get("node"):
        raise bad_request("missing query parameter 'node'")
    node = int_param(request, "node", 0, lo=0, hi=max(len(nodes) - 1, 0))
    rows = mod.operators_inside(profile, which, node, step)
    return clean(
        {
            "tree": which,
            "node": node,
            "name": str(nodes["name"].iloc[node]),
            "step": "all" if step is None else step,
            "rows": rows.to_dict("records"),
        }
    )


ROUTES = {"/modules": modules, "/modules/operators": module_operators}

"""``/operators`` (grouped table and top-N per measure) and ``/operators/stack`` (call stacks of one
operator)."""

from __future__ import annotations

from typing import Any

from werkzeug.wrappers import Request

from torch_tb_profiler.analysis import operators as ops
from torch_tb_profiler.analysis.summary import clean
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.views.common import choice_param, int_param, not_found, param, profile_param

TOP_MEASURES = ("device_self_us", "device_total_us", "host_self_us", "host_total_us")


def operators(request: Request, store: RunStore) -> dict[str, Any]:
    group_by = choice_param(request, "group_by", ops.GROUP_BY, "name")
    sort = choice_param(request, "sort", ops.SORT_KEYS, "host_total_us")
    top_n = int_param(request, "top", 10, lo=0, hi=10_000)
    limit = int_param(request, "limit", 0, lo=0, hi=10_000_000)
    profile = profile_param(request, store)
    table = ops.operator_table(profile, group_by)
    by_name = ops.operator_table(profile, "name")
    rows = ops.top(table, sort, limit if limit else len(table))
    return clean(
        {
            "group_by": group_by,
            "sort": sort,
            "total_rows": len(table),
            "rows": ops.records(rows),
            "top": {m: ops.records(ops.top(by_name, m, top_n)[["name", m]]) for m in TOP_MEASURES},
        }
    )


def operator_stack(request: Request, store: RunStore) -> dict[str, Any]:
    group_by = choice_param(request, "group_by", ops.GROUP_BY, "name")
    name = param(request, "name")
    input_shape = param(request, "input_shape") if group_by == "name_input_shape" else None
    profile = profile_param(request, store)
    stacks = ops.operator_stacks(profile, name, input_shape)
    if not stacks:
        what = f"operator {name!r}" + (
            f" with input shape {input_shape!r}" if input_shape is not None else ""
        )
        raise not_found(f"no {what} in this profile")
    return clean({"name": name, "input_shape": input_shape, "stacks": stacks})


ROUTES = {"/operators": operators, "/operators/stack": operator_stack}

"""``/operators`` (grouped table and top-N per measure) and ``/operators/stack`` (call stacks of one
operator)."""

from __future__ import annotations

from typing import Any

from werkzeug.wrappers import Request

from torch_tb_profiler.analysis.core.accelerator import accelerator
from torch_tb_profiler.analysis.core.plain import clean
from torch_tb_profiler.analysis.ops import operators as ops
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.views.common import (
    choice_param,
    int_param,
    not_found,
    param,
    profile_param,
    rows_containing,
)

TOP_MEASURES = ("device_self_us", "device_total_us", "host_self_us", "host_total_us")


DEFAULT_LIMIT = 10_000  # a page a browser table shows at once (it virtualizes the rows)
MAX_LIMIT = 100_000
ORDERS = ("desc", "asc")


def operators(request: Request, store: RunStore) -> dict[str, Any]:
    """One bounded page of the grouped table (``offset``/``limit``, optionally only the rows whose
    name — or input shape — contains ``q``), the top-N lists and each measure's total."""
    group_by = choice_param(request, "group_by", ops.GROUP_BY, "name")
    sort = choice_param(request, "sort", ops.SORT_KEYS, "host_total_us")
    order = choice_param(request, "order", ORDERS, "desc")
    top_n = int_param(request, "top", 10, lo=0, hi=10_000)
    offset = int_param(request, "offset", 0, lo=0, hi=1 << 40)
    limit = int_param(request, "limit", DEFAULT_LIMIT, lo=1, hi=MAX_LIMIT)
    query = param(request, "q", "")
    profile = profile_param(request, store)
    table = ops.operator_table(profile, group_by)
    by_name = ops.operator_table(profile, "name")
    matched = rows_containing(table, query, ("name", "input_shape"))
    ordered = matched.sort_values([sort, "name"], ascending=[order == "asc", True], kind="stable")
    return clean(
        {
            "group_by": group_by,
            "sort": sort,
            "order": order,
            "q": query,
            "offset": offset,
            "limit": limit,
            "total_rows": len(table),
            "matched_rows": len(matched),
            # false: no call recorded input dims, every row's input_shape is "" (record_shapes=True)
            "has_input_shapes": ops.has_input_shapes(profile),
            "rows": ops.records(ordered.iloc[offset : offset + limit]),
            "top": {m: ops.records(ops.top(by_name, m, top_n)[["name", m]]) for m in TOP_MEASURES},
            "totals": {m: float(by_name[m].sum()) if len(by_name) else 0.0 for m in TOP_MEASURES},
            # the TC columns mean something only where kernel names tell (analysis/core/accelerator.py)
            "matrix_units": accelerator(profile).matrix_units,
        }
    )


def operator_stack(request: Request, store: RunStore) -> dict[str, Any]:
    group_by = choice_param(request, "group_by", ops.GROUP_BY, "name")
    name = param(request, "name")
    # "" (or no input_shape) is a row's real label: the calls that recorded no input dims
    input_shape = request.args.get("input_shape", "") if group_by == "name_input_shape" else None
    profile = profile_param(request, store)
    stacks = ops.operator_stacks(profile, name, input_shape)
    if not stacks:
        what = f"operator {name!r}" + (
            f" with input shape {input_shape!r}" if input_shape is not None else ""
        )
        raise not_found(f"no {what} in this profile")
    return clean({"name": name, "input_shape": input_shape, "stacks": stacks})


ROUTES = {"/operators": operators, "/operators/stack": operator_stack}

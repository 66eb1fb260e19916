"""``/kernels``: one bounded page of the kernel table (by name, or by name + operator + launch
configuration; searched, sorted, ``offset``/``limit``), the top-N kernels by total time, the
kernels' total and tensor-core time and the tensor-core time share."""

from __future__ import annotations

from typing import Any

from werkzeug.wrappers import Request

from torch_tb_profiler.analysis.core.accelerator import accelerator
from torch_tb_profiler.analysis.core.plain import clean
from torch_tb_profiler.analysis.ops import kernels as k
from torch_tb_profiler.analysis.ops.operators import records
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.views.common import choice_param, int_param, param, profile_param, rows_containing
from torch_tb_profiler.views.operators import DEFAULT_LIMIT, MAX_LIMIT, ORDERS


def kernels(request: Request, store: RunStore) -> dict[str, Any]:
    """Rows ``offset … offset+limit-1`` of the rows whose kernel (or launching operator) name contains
    ``q``, sorted by ``sort`` in ``order`` (ties by name); ``top`` and ``totals`` cover every kernel."""
    group_by = choice_param(request, "group_by", k.GROUP_BY, "name")
    sort = choice_param(request, "sort", k.SORT_KEYS, "total_us")
    order = choice_param(request, "order", ORDERS, "desc")
    top_n = int_param(request, "top", 10, lo=0, hi=10_000)
    offset = int_param(request, "offset", 0, lo=0, hi=1 << 40)
    limit = int_param(request, "limit", DEFAULT_LIMIT, lo=1, hi=MAX_LIMIT)
    query = param(request, "q", "")
    profile = profile_param(request, store)
    table = k.kernel_table(profile, group_by)
    matched = rows_containing(table, query, ("name", "op_name"))
    ordered = matched.sort_values([sort, "name"], ascending=[order == "asc", True], kind="stable")
    by_name = k.kernel_table(profile, "name")
    units = accelerator(profile).matrix_units
    total = float(by_name["total_us"].sum()) if len(by_name) else 0.0
    tc = float(by_name.loc[by_name["tc_used"].astype(bool), "total_us"].sum()) if len(by_name) else 0.0
    unknown = (
        float(by_name.loc[by_name["tc_unknown"].astype(bool), "total_us"].sum()) if len(by_name) else 0.0
    )
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
            "rows": records(ordered.iloc[offset : offset + limit]),
            "top": records(by_name.head(top_n)[["name", "total_us"]]),
            "kernel_count": len(by_name),  # kernel names: the top-N pie's "Other (k)"
            # every kernel's time, and that of the ones on matrix units (None where names cannot tell)
            "totals": {
                "total_us": total,
                "tc_us": tc if units else None,
                # kernels whose name does not say whether they used the matrix units (tc_us is a lower bound)
                "tc_unknown_us": unknown if units else None,
            },
            # None where kernel names cannot be classified (MTIA, XPU, HPU, PrivateUse1)
            "tensor_core_share": k.tensor_core_share(profile) if units else None,
            # the share is a lower bound: kernels whose name does not say take this share of the time
            "tensor_core_unknown_share": k.tensor_core_unknown_share(profile) if units else None,
            "matrix_units": units,
        }
    )


ROUTES = {"/kernels": kernels}

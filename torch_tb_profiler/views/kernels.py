"""``/kernels``: the kernel table (by name, or by name + operator + launch configuration), the top-N
kernels by total time and the tensor-core time share."""

from __future__ import annotations

from typing import Any

from werkzeug.wrappers import Request

from torch_tb_profiler.analysis import kernels as k
from torch_tb_profiler.analysis.accelerator import accelerator
from torch_tb_profiler.analysis.operators import records
from torch_tb_profiler.analysis.summary import clean
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.views.common import choice_param, int_param, profile_param


def kernels(request: Request, store: RunStore) -> dict[str, Any]:
    group_by = choice_param(request, "group_by", k.GROUP_BY, "name")
    sort = choice_param(request, "sort", k.SORT_KEYS, "total_us")
    top_n = int_param(request, "top", 10, lo=0, hi=10_000)
    limit = int_param(request, "limit", 0, lo=0, hi=10_000_000)
    profile = profile_param(request, store)
    table = k.kernel_table(profile, group_by)
    ordered = table.sort_values([sort, "name"], ascending=[False, True], kind="stable")
    by_name = k.kernel_table(profile, "name")
    units = accelerator(profile).matrix_units
    return clean(
        {
            "group_by": group_by,
            "sort": sort,
            "total_rows": len(table),
            "rows": records(ordered.head(limit) if limit else ordered),
            "top": records(by_name.head(top_n)[["name", "total_us"]]),
            # None where kernel names cannot be classified (MTIA, XPU, HPU, PrivateUse1)
            "tensor_core_share": k.tensor_core_share(profile) if units else None,
            "matrix_units": units,
        }
    )


ROUTES = {"/kernels": kernels}

"""``/roofline``: the device and its peaks, roofline figures per operator (holders) or per kernel,
sorted and bounded, and MFU per step (analysis/roofline, docs/metrics.md "Roofline")."""

from __future__ import annotations

from typing import Any

from werkzeug.wrappers import Request

from torch_tb_profiler.analysis.core.plain import clean
from torch_tb_profiler.analysis.roofline import figures as F
from torch_tb_profiler.analysis.roofline.mfu import mfu
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.views.common import choice_param, int_param, profile_param
from torch_tb_profiler.views.operators import MAX_LIMIT, ORDERS

DEFAULT_LIMIT = 1000


def roofline(request: Request, store: RunStore) -> dict[str, Any]:
    """Rows ``offset … offset+limit-1`` by ``sort`` in ``order`` (unknown figures last), the device,
    the ridge point per dtype (TFLOP/s ÷ TB/s = FLOP/byte) and MFU."""
    by = choice_param(request, "by", F.BY, "ops")
    sort = choice_param(request, "sort", F.SORT_KEYS, "time_lost_us")
    order = choice_param(request, "order", ORDERS, "desc")
    offset = int_param(request, "offset", 0, lo=0, hi=1 << 40)
    limit = int_param(request, "limit", DEFAULT_LIMIT, lo=1, hi=MAX_LIMIT)
    profile = profile_param(request, store)
    table = {"ops": F.op_rows, "ops_total": F.op_total_rows, "kernels": F.kernel_rows}[by](profile)
    ordered = table.sort_values(
        [sort, "name"], ascending=[order == "asc", True], kind="stable", na_position="last"
    )
    dev = F.device(profile)
    bw = dev.get("tb_per_s")
    known = table["flops"].notna() | table["bytes"].notna() if len(table) else table["flops"]
    return clean(
        {
            "by": by,
            "sort": sort,
            "order": order,
            "offset": offset,
            "limit": limit,
            "total_rows": len(table),
            "device": dev,
            "ridge": {d: p / bw for d, p in (dev.get("peaks") or {}).items()} if bw else {},
            "rows": F.records(ordered.iloc[offset : offset + limit]),
            "totals": {
                "device_us": float(table["device_us"].sum()) if len(table) else 0.0,
                "known_us": float(table.loc[known, "device_us"].sum()) if len(table) else 0.0,
                "time_lost_us": float(table["time_lost_us"].sum(min_count=1)) if len(table) else None,
            },
            "mfu": mfu(profile),
        }
    )


ROUTES = {"/roofline": roofline}

"""The roofline part of ``summary --json`` (per profile ``roofline``) and of the diff (``mfu``)."""

from __future__ import annotations

from typing import Any

from torch_tb_profiler.analysis.roofline import figures as F
from torch_tb_profiler.analysis.roofline.mfu import mfu

ROW_KEYS = (
    "name",
    "input_dims",
    "dtype",
    "calls",
    "flops",
    "bytes",
    "device_us",
    "tflops_per_s",
    "tb_per_s",
    "intensity",
    "pct_of_roofline",
    "bound",
    "time_lost_us",
    "source",
)


def summary(profile, top: int) -> dict[str, Any]:
    """{device, ops, kernels, mfu}: the top rows by time lost (docs/api.md, "Headless summary")."""
    dev = F.device(profile)
    out_rows = {}
    for key, table in (("ops", F.op_rows(profile)), ("kernels", F.kernel_rows(profile))):
        rows = F.records(table, top)
        out_rows[key] = [{k: r.get(k) for k in ROW_KEYS} for r in rows]
    m = mfu(profile)
    return {
        "device": {
            "name": dev["name"],
            "matched_peak_name": dev["matched_peak_name"],
            "peaks": dev["peaks"],
            "tb_per_s": dev["tb_per_s"],
            "source": dev["source"],
        },
        **out_rows,
        "mfu": {
            "per_step": [{"step": s["step"], "mfu": s["mfu"]} for s in m["per_step"]],
            "mean": m["mean"],
            "known_flops_share": m["known_flops_share"],
            "dtype": m["dtype"],
        },
    }

"""Kernel view: device kernels grouped by name, or by name + operator + launch configuration.

Definitions (docs/metrics.md, "Kernels"): memcpy and memset are not kernels. Per group: calls,
total/mean/max/min duration (µs); mean blocks per SM and mean Est. achieved occupancy are averages
weighted by kernel duration over the calls that carry the value (None when none does); tensor cores
used per the platform's rule (``tensor_cores.matrix_classes``). The operator of a kernel is the operator that
launched it (``device.op``, through cuda_runtime or cuda_driver calls); "" when nothing launched it.
Replayed calls / replayed device: the calls (and their µs) that ran in graph replays (graphs/replays.py).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from torch_tb_profiler.analysis.core import names
from torch_tb_profiler.analysis.core.cache import memoized
from torch_tb_profiler.analysis.device import tensor_cores
from torch_tb_profiler.analysis.device.gpu_metrics import known_occupancy
from torch_tb_profiler.analysis.graphs.replays import replayed_mask
from torch_tb_profiler.analysis.ops.operators import op_stats

GROUP_BY = ("name", "name_op_launch")
LAUNCH_KEYS = ["name", "op_name", "grid", "block", "regs", "shmem"]
SORT_KEYS = ("total_us", "calls", "mean_us", "max_us", "min_us")


def kernel_rows(profile) -> pd.DataFrame:
    """One row per kernel: name, op (row in ops, -1), op_name, grid, block, regs, shmem, dur,
    blocks_per_sm, occupancy, tc (bool), op_tc_eligible (bool)."""
    return memoized(profile, "kernels.rows", lambda: _kernel_rows(profile))


def _kernel_rows(profile) -> pd.DataFrame:
    dev = profile.device
    sel = dev["kind"].to_numpy() == "kernel" if len(dev) else np.zeros(0, dtype=bool)
    k = dev[sel]
    op = k["op"].to_numpy(dtype=np.int64)
    has_op = op >= 0
    safe = np.where(has_op, op, 0)
    op_codes, op_values = names.factorized(profile, "ops")
    eligible = op_stats(profile)["tc_eligible"].to_numpy() if len(profile.ops) else np.zeros(0, dtype=bool)
    op_code = np.where(has_op, op_codes[safe], -1) if len(op_codes) else np.full(len(k), -1)
    op_labels = np.append(op_values, "")  # code -1 -> ""
    name_codes, name_values = names.factorized(profile, "device")
    grid_codes, grid_values = names.factorized(profile, "device", "grid")
    block_codes, block_values = names.factorized(profile, "device", "block")
    return pd.DataFrame(
        {
            "name": name_values[name_codes[sel]],
            "op": op,
            "op_name": op_labels[op_code],
            "grid": grid_values[grid_codes[sel]],
            "block": block_values[block_codes[sel]],
            "regs": _int_or_missing(k["regs"]),
            "shmem": _int_or_missing(k["shmem"]),
            "dur": k["dur"].to_numpy(dtype=np.float64),
            "blocks_per_sm": k["blocks_per_sm"].to_numpy(dtype=np.float64),
            "occupancy": known_occupancy(k["occupancy"].to_numpy(), k["warps_per_sm"].to_numpy()),
            "tc": tensor_cores.uses_mask(profile)[sel],
            "tc_unknown": (tensor_cores.matrix_classes(profile) == tensor_cores.UNKNOWN)[sel],
            "op_tc_eligible": np.where(has_op, eligible[safe], False)
            if len(eligible)
            else np.zeros(len(k), bool),
            "replayed": replayed_mask(profile)[sel],
            # integer keys for grouping
            "name_code": name_codes[sel],
            "op_code": op_code,
            "grid_code": grid_codes[sel],
            "block_code": block_codes[sel],
        }
    )


def instance_rows(profile, name: str, launch: dict[str, str | int]) -> np.ndarray:
    """Rows in ``device`` of the launches one row of the table grouped by op and launch shape stands
    for: the kernel ``name`` and the given ``LAUNCH_KEYS`` values as the table shows them (``op_name``
    "" for no op, ``regs``/``shmem`` -1 when not recorded)."""
    rows = kernel_rows(profile)
    sel = (rows["name"] == name).to_numpy().copy()
    for key, value in launch.items():
        sel &= (rows[key] == value).to_numpy()
    if not len(profile.device):
        return np.zeros(0, np.int64)
    return np.flatnonzero(profile.device["kind"].to_numpy() == "kernel")[sel]


def _int_or_missing(col: pd.Series) -> np.ndarray:
    """regs/shmem as int64 with -1 for missing (the model may store them as float with NaN)."""
    values = pd.to_numeric(col, errors="coerce").to_numpy(dtype=np.float64)
    return np.where(np.isnan(values), -1, values).astype(np.int64)


def kernel_table(profile, group_by: str = "name") -> pd.DataFrame:
    """Grouped kernel table sorted by total time (desc)."""
    if group_by not in GROUP_BY:
        raise ValueError(f"group_by must be one of {GROUP_BY}")
    return memoized(profile, f"kernels.table.{group_by}", lambda: _group(kernel_rows(profile), group_by))


def _group(rows: pd.DataFrame, group_by: str) -> pd.DataFrame:
    keys = ["name"] if group_by == "name" else LAUNCH_KEYS
    cols = [
        *keys,
        "calls",
        "total_us",
        "mean_us",
        "max_us",
        "min_us",
        "mean_blocks_per_sm",
        "mean_achieved_occupancy_pct",
        "tc_used",
        "tc_unknown",
        "replayed_calls",
        "replayed_device_us",
    ]
    if group_by != "name":
        cols.append("op_tc_eligible")
    if rows.empty:
        return pd.DataFrame({c: [] for c in cols})
    rows = rows.assign(
        bps_w=np.nan_to_num(rows["blocks_per_sm"].to_numpy() * rows["dur"].to_numpy()),
        bps_d=np.where(np.isnan(rows["blocks_per_sm"].to_numpy()), 0.0, rows["dur"].to_numpy()),
        occ_w=np.nan_to_num(rows["occupancy"].to_numpy() * rows["dur"].to_numpy()),
        occ_d=np.where(np.isnan(rows["occupancy"].to_numpy()), 0.0, rows["dur"].to_numpy()),
        bps_n=~np.isnan(rows["blocks_per_sm"].to_numpy()),
        replayed_dur=np.where(rows["replayed"].to_numpy(), rows["dur"].to_numpy(), 0.0),
        occ_n=~np.isnan(rows["occupancy"].to_numpy()),
    )
    codes = (
        ["name_code"]
        if group_by == "name"
        else ["name_code", "op_code", "grid_code", "block_code", "regs", "shmem"]
    )
    g = rows.groupby(codes, sort=False)  # integer keys: much faster than grouping strings
    agg = g.agg(
        calls=("dur", "size"),
        total_us=("dur", "sum"),
        max_us=("dur", "max"),
        min_us=("dur", "min"),
        bps_w=("bps_w", "sum"),
        bps_d=("bps_d", "sum"),
        bps_n=("bps_n", "sum"),
        occ_w=("occ_w", "sum"),
        occ_d=("occ_d", "sum"),
        occ_n=("occ_n", "sum"),
        tc_used=("tc", "any"),
        tc_unknown=("tc_unknown", "all"),  # the name does not say (the platform's rule)
        replayed_calls=("replayed", "sum"),
        replayed_device_us=("replayed_dur", "sum"),
        op_tc_eligible=("op_tc_eligible", "any"),
    )
    agg = pd.concat([g[keys].first(), agg], axis=1).reset_index(drop=True)
    agg["mean_us"] = agg["total_us"] / agg["calls"]
    agg["mean_blocks_per_sm"] = _weighted(agg["bps_w"], agg["bps_d"], agg["bps_n"])
    agg["mean_achieved_occupancy_pct"] = _weighted(agg["occ_w"], agg["occ_d"], agg["occ_n"])
    agg = agg.sort_values(["total_us", "name"], ascending=[False, True], kind="stable").reset_index(drop=True)
    return agg[cols]


def _weighted(num: pd.Series, den: pd.Series, count: pd.Series) -> np.ndarray:
    """Σ value·dur / Σ dur over the calls with a value; NaN when no call has one (0 when they all
    lasted 0 µs)."""
    n = num.to_numpy(dtype=np.float64)
    d = den.to_numpy(dtype=np.float64)
    out = np.divide(n, d, out=np.zeros_like(n), where=d > 0)
    return np.where(count.to_numpy() > 0, out, np.nan)


def tensor_core_share(profile) -> float:
    """Time of tensor-core kernels / time of all kernels (0..1; 0 without kernels): a lower bound."""
    return _shares(profile)[0]


def tensor_core_unknown_share(profile) -> float:
    """Time of the kernels whose name does not say / time of all kernels (0..1)."""
    return _shares(profile)[1]


def _shares(profile) -> tuple[float, float]:
    rows = kernel_rows(profile)
    total = float(rows["dur"].sum()) if len(rows) else 0.0
    if total <= 0:
        return 0.0, 0.0
    dur = rows["dur"]
    return float(dur[rows["tc"]].sum()) / total, float(dur[rows["tc_unknown"]].sum()) / total

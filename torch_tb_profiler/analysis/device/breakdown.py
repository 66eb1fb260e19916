"""Step-time breakdown: where each step's wall time went (docs/metrics.md, "Step-time breakdown").

Each category is a union of time ranges:

| category | ranges |
|---|---|
| kernel | device kernels that are not communication kernels |
| memcpy / memset | device memcpy / memset activities |
| communication | communication kernels (NCCL/RCCL names, collective args, or launched by a communication op) and the host communication ops (``nccl:*``, ``gloo:*``, ops carrying collective metadata) |
| runtime | host→device API calls (cuda_runtime, cuda_driver, legacy Runtime, ...) |
| dataloader | ``enumerate(DataLoader)#…__next__`` and ``enumerate(DataPipe)#…`` host ranges |
| cpu_exec | every other host range in ``ops`` (cpu ops, user annotations, legacy python), ProfilerStep ranges excluded |

Within a step, categories claim time in the order above: each takes its ranges ∩ the part of the step
not yet claimed; what nobody claimed is ``other``. So the eight figures sum to the step duration.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from torch_tb_profiler.analysis.core import names
from torch_tb_profiler.analysis.core.cache import memoized
from torch_tb_profiler.analysis.core.steps import steps
from torch_tb_profiler.analysis.graphs.replays import host_ranges
from torch_tb_profiler.model import intervals as iv

CATEGORIES = ("kernel", "memcpy", "memset", "communication", "runtime", "dataloader", "cpu_exec", "other")
LABELS = {
    "kernel": "Kernel",
    "memcpy": "Memcpy",
    "memset": "Memset",
    "communication": "Communication",
    "runtime": "Runtime",
    "dataloader": "DataLoader",
    "cpu_exec": "CPU Exec",
    "other": "Other",
}
GPU_CATEGORIES = ("kernel", "memcpy", "memset")

_COMM_KERNEL_PREFIXES = ("nccl", "rccl")
_COMM_OP_PREFIXES = ("nccl:", "gloo:")


def is_dataloader_name(name: str) -> bool:
    return (name.startswith("enumerate(DataLoader)#") and name.endswith(".__next__")) or name.startswith(
        "enumerate(DataPipe)#"
    )


def is_profiler_step_name(name: str) -> bool:
    return name.startswith("ProfilerStep#")


def dataloader_ops(profile) -> np.ndarray:
    """Rows of ``ops`` that are DataLoader ranges."""
    return names.mask(profile, "ops", is_dataloader_name)


def profiler_step_ops(profile) -> np.ndarray:
    """Rows of ``ops`` that are step ranges: ``ProfilerStep#N``, or the inference iterations that are the
    profile's steps (model/step_ranges.py)."""
    mask = names.mask(profile, "ops", is_profiler_step_name)
    if len(profile.steps) and len(profile.ops):
        step_names = set(profile.steps["name"].astype(str))
        mask = mask | names.mask(profile, "ops", lambda n: n in step_names)
    return mask


def comm_op_mask(profile) -> np.ndarray:
    """Host ops that are communication: nccl:*/gloo:* ranges and ops with collective metadata."""
    ops = profile.ops
    mask = names.mask(profile, "ops", lambda n: n.startswith(_COMM_OP_PREFIXES)).copy()
    comms = getattr(profile, "comms", None)
    if comms is not None and len(comms):
        rows = comms["op"].to_numpy(dtype=np.int64)
        mask[rows[(rows >= 0) & (rows < len(ops))]] = True
    return mask


def comm_kernel_mask(profile) -> np.ndarray:
    """Device kernels that are communication (see the module docstring)."""
    dev = profile.device
    if not len(dev):
        return np.zeros(0, dtype=bool)
    kernel = (dev["kind"] == "kernel").to_numpy()
    mask = names.mask(profile, "device", lambda n: n.lower().startswith(_COMM_KERNEL_PREFIXES))
    if "collective" in dev.columns:
        mask = mask | names.mask(
            profile, "device", lambda v: v not in ("", "nan", "None"), column="collective"
        )
    op = dev["op"].to_numpy(dtype=np.int64)
    has_op = op >= 0
    if has_op.any():
        comm_ops = comm_op_mask(profile)
        mask = mask | (has_op & comm_ops[np.where(has_op, op, 0)])
    return kernel & mask


def origin(profile) -> float:
    """A time origin for interval arithmetic (µs): the earliest step start, else 0.

    Traces store absolute epoch µs (~1.7e15), where float64 steps are 0.25 µs; ns-resolution traces
    then have ranges one ulp long, too fine for midpoint tests. Ranges are shifted by this origin first.
    """
    s = steps(profile)
    return float(s["start"].min()) if len(s) else 0.0


def category_ranges(profile) -> dict[str, iv.Intervals]:
    """The union of ranges of each category before the priority rule, shifted by ``origin`` (cached)."""
    return memoized(profile, "breakdown.category_ranges", lambda: _category_ranges(profile))


def _category_ranges(profile) -> dict[str, iv.Intervals]:
    dev = profile.device
    ops = profile.ops
    rts = profile.runtimes
    t0 = origin(profile)

    def union(table: pd.DataFrame, mask: np.ndarray | None = None) -> iv.Intervals:
        if not len(table):
            return iv.EMPTY
        ts = table["ts"].to_numpy(dtype=np.float64) - t0
        end = table["end"].to_numpy(dtype=np.float64) - t0
        if mask is not None:
            ts, end = ts[mask], end[mask]
        return iv.union(ts, end)

    kind = dev["kind"].to_numpy() if len(dev) else np.zeros(0, dtype=object)
    comm_k = comm_kernel_mask(profile)
    host = host_ranges(profile)  # copies of capture-time ops onto graph replays ran no host code
    comm_host = (comm_op_mask(profile) & host) if len(ops) else np.zeros(0, dtype=bool)
    loader = dataloader_ops(profile) & host
    step_rows = profiler_step_ops(profile)
    comm = union(dev, comm_k)
    host_comm = union(ops, comm_host)
    return {
        "kernel": union(dev, (kind == "kernel") & ~comm_k),
        "memcpy": union(dev, kind == "memcpy"),
        "memset": union(dev, kind == "memset"),
        "communication": iv.union(
            np.concatenate([comm[0], host_comm[0]]), np.concatenate([comm[1], host_comm[1]])
        ),
        "runtime": union(rts),
        "dataloader": union(ops, loader),
        "cpu_exec": union(ops, host & ~loader & ~step_rows & ~comm_host),
    }


def per_step(profile) -> pd.DataFrame:
    """One row per step: number, name, start, end, duration and the eight categories (µs)."""
    return memoized(profile, "breakdown.per_step", lambda: _per_step(profile))


def _per_step(profile) -> pd.DataFrame:
    s = steps(profile)
    starts = s["start"].to_numpy(dtype=np.float64)
    ends = s["end"].to_numpy(dtype=np.float64)
    out = pd.DataFrame(
        {
            "number": s["number"].to_numpy(),
            "name": s["name"].to_numpy(),
            "start": starts,
            "end": ends,
            "duration": ends - starts,
        }
    )
    if s.empty:
        for c in CATEGORIES:
            out[c] = np.zeros(0)
        return out
    ranges = category_ranges(profile)
    t0 = origin(profile)
    rel_starts, rel_ends = starts - t0, ends - t0
    # category k gets |U_k ∩ step| − |U_(k−1) ∩ step| with U_k the union of the first k categories:
    # the priority rule without set differences (steps do not overlap)
    claimed = iv.EMPTY
    covered_before = np.zeros(len(s))
    for c in CATEGORIES[:-1]:
        claimed = iv.union(
            np.concatenate([claimed[0], ranges[c][0]]), np.concatenate([claimed[1], ranges[c][1]])
        )
        covered = iv.overlap_with_each(claimed, rel_starts, rel_ends)
        out[c] = np.maximum(covered - covered_before, 0.0)
        covered_before = covered
    claimed_total = covered_before
    out["other"] = np.maximum(out["duration"].to_numpy() - claimed_total, 0.0)
    return out


NO_ACTIVITY = "no activity in this trace"  # why a profile without any range has no step figure


def no_activity(profile) -> bool:
    """No step: the trace holds no range (op, runtime call or device activity) to make one of, so its
    step time and breakdown are not 0 but unknown (``null``, with ``NO_ACTIVITY``)."""
    return per_step(profile).empty


def average(profile) -> dict[str, float]:
    """Mean over steps of the step duration and of each category (µs); zeros with no step."""
    table = per_step(profile)
    keys = ("duration", *CATEGORIES)
    if table.empty:
        return {k: 0.0 for k in keys}
    return {k: float(table[k].mean()) for k in keys}

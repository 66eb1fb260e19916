"""Memory view: per-device curves and peaks, allocation events, per-operator statistics.

Reads the ``memory`` table (one row per ``[memory]`` record), ``ops`` (names and the op tree) and
``meta.device_properties``. Definitions are in docs/metrics.md ("Memory"). Everything is vectorised:
a trace with 1 M records answers in well under a second after a one-off preparation per profile.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from torch_tb_profiler.analysis.core.cache import memoized
from torch_tb_profiler.analysis.memory.downsample import DEFAULT_MAX_POINTS, downsample_indices
from torch_tb_profiler.trace.schema import DEVICE_TYPE_NAMES

# host ranges that are not operators: their records belong to the nearest enclosing operator
_NON_OPERATOR_PREFIXES = (
    "ProfilerStep#",
    "Optimizer.",
    "enumerate(DataLoader)#",
    "enumerate(DataPipe)#",
)
_NON_OPERATOR_NAMES = frozenset({"DataParallel.forward", "DistributedDataParallel.forward"})
EMPTY_PREFIX = "aten::empty"


# c10 device types whose devices are GPUs: CUDA, and HIP (ROCm builds that record HIP memory as such)
GPU_DEVICE_TYPES = (1, 6)


def device_label(device_type: int, device_id: int) -> str:
    """'CPU', 'GPU0' (CUDA as the original plugin, and HIP), 'XPU1', 'PrivateUse1 0', 'Device type 42 #3'."""
    if device_type == 0:
        return "CPU"
    if device_type in GPU_DEVICE_TYPES:
        return f"GPU{device_id}" if device_id >= 0 else "GPU"
    name = DEVICE_TYPE_NAMES.get(device_type)
    if name is None:
        return f"Device type {device_type}" + (f" #{device_id}" if device_id >= 0 else "")
    if device_id < 0:
        return name
    return f"{name} {device_id}" if name[-1].isdigit() else f"{name}{device_id}"


@dataclass
class _Device:
    label: str
    device_type: int
    device_id: int
    rows: np.ndarray  # rows of the memory table, sorted by (ts, row)


@dataclass
class _Prepared:
    devices: dict[str, _Device]
    ts: np.ndarray
    nbytes: np.ndarray
    allocated: np.ndarray
    reserved: np.ndarray
    addr: np.ndarray
    operator: np.ndarray  # per record: row in ops of its operator, -1 = none
    op_names: np.ndarray  # ops.name as object array
    op_parent: np.ndarray
    is_operator: np.ndarray
    pairs: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)  # per device, memo


_CACHE_KEY = "memory.prepared"


def _prepare(profile: Any) -> _Prepared:
    return memoized(profile, _CACHE_KEY, lambda: _prepared(profile))


def _prepared(profile: Any) -> _Prepared:
    mem: pd.DataFrame = profile.memory
    ops: pd.DataFrame = profile.ops
    ts = mem["ts"].to_numpy(np.float64)
    dtype = mem["device_type"].to_numpy(np.int64)
    did = np.maximum(mem["device_id"].to_numpy(np.int64), -1)  # ids below -1 mean "none" too
    order = np.lexsort((np.arange(ts.size), ts))
    devices: dict[str, _Device] = {}
    if ts.size:
        # one int64 key per (type, id): a 1-D unique is much faster than a row-wise one
        key = (dtype[order] << 32) + (did[order] + 1)
        keys, inverse = np.unique(key, return_inverse=True)
        for k, kv in enumerate(keys.tolist()):
            t, d = kv >> 32, (kv & 0xFFFFFFFF) - 1
            label = device_label(int(t), int(d))
            if label in devices:  # CUDA and HIP records of one id: the HIP device keeps its c10 name
                label = f"HIP{d}" if t == 6 else label
            devices[label] = _Device(label, int(t), int(d), order[inverse == k])
    is_op, to_operator = operator_rows(ops)
    mem_op = mem["op"].to_numpy(np.int64) if "op" in mem else np.full(ts.size, -1)
    if ts.size and to_operator.size:
        operator = np.where(mem_op >= 0, to_operator[np.maximum(mem_op, 0)], -1)
    else:  # no ops at all: no record has an operator
        operator = np.full(ts.size, -1, dtype=np.int64)
    return _Prepared(
        devices=dict(sorted(devices.items(), key=lambda kv: (_device_rank(kv[1]), kv[0]))),
        ts=ts,
        nbytes=mem["bytes"].to_numpy(np.float64),
        allocated=mem["total_allocated"].to_numpy(np.float64),
        reserved=mem["total_reserved"].to_numpy(np.float64),
        addr=mem["addr"].to_numpy(np.int64),
        operator=operator,
        op_names=ops["name"].to_numpy(object),
        op_parent=ops["parent"].to_numpy(np.int64),
        is_operator=is_op,
    )


def device_series(profile: Any) -> list[tuple[str, int, int, np.ndarray, np.ndarray, np.ndarray]]:
    """Per device: (label, device type, device id, ts, total allocated, total reserved), in time order."""
    p = _prepare(profile)
    return [
        (d.label, d.device_type, d.device_id, p.ts[d.rows], p.allocated[d.rows], p.reserved[d.rows])
        for d in p.devices.values()
    ]


def _device_rank(dev: _Device) -> tuple[int, int, int]:
    # accelerators first (the original defaults to the first GPU), then CPU, then unknown types
    if dev.device_type == 0:
        return (1, 0, 0)
    if dev.device_type in DEVICE_TYPE_NAMES:
        return (0, dev.device_type, dev.device_id)
    return (2, dev.device_type, dev.device_id)


def operator_rows(ops: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(is_operator per op row, nearest operator ancestor-or-self per op row or -1).

    An *operator* is a ``cpu_op`` range (legacy ``Operator`` included) other than ProfilerStep#N,
    Optimizer.*, DataLoader/DataPipe iteration and (Distributed)DataParallel.forward, and other than
    an only child named like its parent (merged into the parent).
    """
    n = len(ops)
    if n == 0:
        return np.zeros(0, dtype=bool), np.zeros(0, dtype=np.int64)
    # name tests on the distinct names only (a trace has few distinct names and many ops)
    codes, uniques = pd.factorize(ops["name"].astype(str))
    uniq = [str(u) for u in uniques]
    excluded_name = np.array(
        [u.startswith(_NON_OPERATOR_PREFIXES) or u in _NON_OPERATOR_NAMES for u in uniq], dtype=bool
    )
    excluded = excluded_name[codes] if n else np.zeros(0, dtype=bool)
    is_op = np.asarray(ops["cat"] == "cpu_op", dtype=bool) & ~excluded
    parent = ops["parent"].to_numpy(np.int64)
    depth = ops["depth"].to_numpy(np.int64)
    # an only child with its parent's name is the same call recorded twice (e.g. aten::div
    # dispatching to aten::div): it merges into the parent, as in the original plugin
    has_parent = parent >= 0
    children = np.bincount(parent[has_parent], minlength=n)
    dup = np.zeros(n, dtype=bool)
    rows = np.flatnonzero(has_parent)
    dup[rows] = (children[parent[rows]] == 1) & (codes[rows] == codes[parent[rows]])
    is_op = is_op & ~dup
    nearest = np.where(is_op, np.arange(n), -1)
    # resolve top-down: a row that is not an operator takes its parent's answer
    by_depth = np.argsort(depth, kind="stable")
    bounds = np.searchsorted(depth[by_depth], np.arange(depth.max() + 2))
    for d in range(1, depth.max() + 1):
        rows = by_depth[bounds[d] : bounds[d + 1]]
        rows = rows[~is_op[rows] & (parent[rows] >= 0)]
        nearest[rows] = nearest[parent[rows]]
    return is_op, nearest


def _select(p: _Prepared, device: str | None) -> _Device:
    if not p.devices:
        raise LookupError("this profile has no memory records")
    if device is None:
        return next(iter(p.devices.values()))
    if device not in p.devices:
        raise LookupError(f"no memory records for device '{device}'; devices: {', '.join(p.devices)}")
    return p.devices[device]


def _total_memory(profile: Any, dev: _Device) -> int | None:
    """totalGlobalMem from deviceProperties (matched by id) for the trace's accelerator: CUDA when
    the trace has CUDA records, else the only other accelerator type (XPU, HPU, …); else None."""
    accelerators = {d.device_type for d in _prepare(profile).devices.values() if d.device_type != 0}
    target = 1 if 1 in accelerators else (next(iter(accelerators)) if len(accelerators) == 1 else None)
    if dev.device_type != target:
        return None
    props = getattr(profile.meta, "device_properties", None) or []
    for i, prop in enumerate(props):
        if not isinstance(prop, dict):
            continue
        pid = prop.get("id", i)
        if pid == dev.device_id and prop.get("totalGlobalMem") is not None:
            return int(prop["totalGlobalMem"])
    return None


def _peak(values: np.ndarray, ts: np.ndarray) -> tuple[float | None, float | None]:
    if values.size == 0 or np.isnan(values).all():
        return None, None
    i = int(np.nanargmax(values))
    return float(values[i]), float(ts[i])


def devices(profile: Any) -> list[dict]:
    """Every device with memory records: label, type, id, record count, peaks, total memory."""
    p = _prepare(profile)
    out = []
    for dev in p.devices.values():
        rows = dev.rows
        peak_alloc, peak_ts = _peak(p.allocated[rows], p.ts[rows])
        peak_res, _ = _peak(p.reserved[rows], p.ts[rows])
        out.append(
            {
                "device": dev.label,
                "device_type": dev.device_type,
                "device_type_name": DEVICE_TYPE_NAMES.get(dev.device_type, str(dev.device_type)),
                "device_id": dev.device_id,
                "records": int(rows.size),
                "has_totals": peak_alloc is not None,
                "peak_allocated_bytes": peak_alloc,
                "peak_allocated_ts": peak_ts,
                "peak_reserved_bytes": peak_res,
                "total_memory_bytes": _total_memory(profile, dev),
            }
        )
    return out


def summary(profile: Any) -> list[dict]:
    """The ``memory`` entry of ``summary --json``."""
    return [
        {
            "device": d["device"],
            "peak_allocated_bytes": d["peak_allocated_bytes"],
            "peak_reserved_bytes": d["peak_reserved_bytes"],
        }
        for d in devices(profile)
    ]


def curve(
    profile: Any,
    device: str | None = None,
    start: float | None = None,
    end: float | None = None,
    max_points: int = DEFAULT_MAX_POINTS,
) -> dict:
    """Allocated/reserved step curve of one device (µs, bytes), downsampled to at most max_points.

    A time range selects the records in [start, end] at full resolution (downsampled only if still
    above max_points); the value in force at ``start`` is prepended so the step plot starts right.
    Records without totals (PyTorch < 1.10) give a *relative* allocated curve: the running sum of
    ``Bytes`` since the first record (``relative`` true, reserved unknown).
    """
    p = _prepare(profile)
    dev = _select(p, device)
    rows = dev.rows
    ts = p.ts[rows]
    allocated, reserved = p.allocated[rows], p.reserved[rows]
    relative = bool(rows.size) and bool(np.isnan(allocated).all())
    if relative:
        allocated = np.cumsum(p.nbytes[rows])
    lo = 0 if start is None else int(np.searchsorted(ts, start, side="left"))
    hi = ts.size if end is None else int(np.searchsorted(ts, end, side="right"))
    carry = lo > 0 and start is not None  # prepend the level in force when the window opens
    first = lo - 1 if carry else lo
    t = ts[first:hi].copy()
    alloc, res = allocated[first:hi], reserved[first:hi]
    if carry:
        t[0] = start
    keep = downsample_indices(t, [alloc, res], max_points)
    peak_alloc, peak_ts = _peak(p.allocated[rows], ts)
    peak_res, _ = _peak(reserved, ts)
    rel_peak, rel_peak_ts = _peak(allocated, ts) if relative else (None, None)
    return {
        "device": dev.label,
        "devices": list(p.devices),
        "first_ts": float(ts[0]) if ts.size else None,
        "points_in_range": int(t.size),
        "downsampled": bool(keep.size < t.size),
        "relative": relative,
        "peak_allocated_bytes": peak_alloc,
        "peak_allocated_ts": peak_ts,
        "peak_increase_bytes": rel_peak,
        "peak_increase_ts": rel_peak_ts,
        "peak_reserved_bytes": peak_res,
        "total_memory_bytes": _total_memory(profile, dev),
        "ts": t[keep],
        "allocated": _nan_to_none(alloc[keep]),
        "reserved": _nan_to_none(res[keep]),
    }


def _nan_to_none(a: np.ndarray) -> list:
    return [None if math.isnan(v) else v for v in a.tolist()]


def pair_allocations(ts: np.ndarray, addr: np.ndarray, nbytes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pair each allocation with the next free at the same address (records of one device).

    Returns (alloc_row, free_row) arrays of equal length, -1 where a side is missing: an allocation
    never freed in the window has free_row -1; a free whose allocation precedes the window has
    alloc_row -1. Records with no address (< 0, PyTorch < 1.10) or 0 bytes are ignored.
    """
    valid = np.flatnonzero((addr >= 0) & (nbytes != 0))
    if valid.size == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    order = valid[np.lexsort((valid, ts[valid], addr[valid]))]
    a = addr[order]
    is_alloc = nbytes[order] > 0
    same_next = np.r_[a[1:] == a[:-1], False]
    # an alloc followed (at the same address) by a free is a pair
    paired = is_alloc & same_next & np.r_[~is_alloc[1:], False]
    alloc_rows = order[paired]
    free_rows = order[np.flatnonzero(paired) + 1]
    freed_by_pair = np.zeros(order.size, dtype=bool)
    freed_by_pair[np.flatnonzero(paired) + 1] = True
    lone_alloc = order[is_alloc & ~paired]
    lone_free = order[~is_alloc & ~freed_by_pair]
    alloc_out = np.concatenate([alloc_rows, lone_alloc, np.full(lone_free.size, -1)])
    free_out = np.concatenate([free_rows, np.full(lone_alloc.size, -1), lone_free])
    return alloc_out.astype(np.int64), free_out.astype(np.int64)


def _record_op_label(p: _Prepared, rec_rows: np.ndarray) -> list[str]:
    """Operator names of records; aten::empty* as 'parent (aten::empty…)'; '' when none."""
    op = np.where(rec_rows >= 0, p.operator[np.maximum(rec_rows, 0)], -1)
    labels = []
    names, parent, is_op = p.op_names, p.op_parent, p.is_operator
    for o in op.tolist():
        if o < 0:
            labels.append("")
            continue
        name = names[o]
        if name.startswith(EMPTY_PREFIX):
            q = parent[o]
            while q >= 0 and not is_op[q]:
                q = parent[q]
            if q >= 0:
                name = f"{names[q]} ({name})"
        labels.append(name)
    return labels


EVENT_SORTS = ("size", "alloc_time", "free_time", "duration")


def events(
    profile: Any,
    device: str | None = None,
    start: float | None = None,
    end: float | None = None,
    min_bytes: float = 0,
    sort: str = "size",
    offset: int = 0,
    limit: int = 1000,
) -> dict:
    """Allocation events of one device: operator, size, alloc/free time, duration.

    An event is listed when its lifetime [alloc, free] meets [start, end] (an unknown side counts as
    open-ended) and its size is at least min_bytes. ``total`` counts all matching events; rows are the
    page [offset, offset + limit) in the chosen order (size, duration descending; times ascending).
    """
    if sort not in EVENT_SORTS:
        raise ValueError(f"sort must be one of {', '.join(EVENT_SORTS)}")
    p = _prepare(profile)
    dev = _select(p, device)
    rows = dev.rows
    if dev.label not in p.pairs:
        a_local, f_local = pair_allocations(p.ts[rows], p.addr[rows], p.nbytes[rows])
        p.pairs[dev.label] = (
            np.where(a_local >= 0, rows[np.maximum(a_local, 0)], -1),
            np.where(f_local >= 0, rows[np.maximum(f_local, 0)], -1),
        )
    a_rows, f_rows = p.pairs[dev.label]
    a_ts = np.where(a_rows >= 0, p.ts[np.maximum(a_rows, 0)], np.nan)
    f_ts = np.where(f_rows >= 0, p.ts[np.maximum(f_rows, 0)], np.nan)
    size = np.where(a_rows >= 0, p.nbytes[np.maximum(a_rows, 0)], -p.nbytes[np.maximum(f_rows, 0)])
    keep = size >= min_bytes
    if start is not None:
        keep &= np.isnan(f_ts) | (f_ts >= start)
    if end is not None:
        keep &= np.isnan(a_ts) | (a_ts <= end)
    idx = np.flatnonzero(keep)
    dur = f_ts - a_ts
    if sort == "size":
        idx = idx[np.argsort(-size[idx], kind="stable")]
    elif sort == "duration":  # never-freed events (unknown duration) last
        idx = idx[np.argsort(np.where(np.isnan(dur[idx]), -np.inf, -dur[idx]), kind="stable")]
    else:
        key = a_ts if sort == "alloc_time" else f_ts
        idx = idx[np.argsort(np.where(np.isnan(key[idx]), np.inf, key[idx]), kind="stable")]
    page = idx[offset : offset + limit]
    labels = _record_op_label(p, np.where(a_rows[page] >= 0, a_rows[page], f_rows[page]))
    rows_out = [
        {
            "operator": labels[i],
            "bytes": float(size[k]),
            "alloc_ts": None if math.isnan(a_ts[k]) else float(a_ts[k]),
            "free_ts": None if math.isnan(f_ts[k]) else float(f_ts[k]),
            "duration": None if math.isnan(dur[k]) else float(dur[k]),
            "never_freed": bool(math.isnan(f_ts[k])),
            "alloc_unknown": bool(math.isnan(a_ts[k])),
        }
        for i, k in enumerate(page.tolist())
    ]
    return {
        "device": dev.label,
        "total": int(idx.size),
        "never_freed": int(np.isnan(f_ts[idx]).sum()),
        "offset": offset,
        "rows": rows_out,
        "has_addresses": bool((p.addr[rows] >= 0).any()),
    }


STAT_FIELDS = (
    "calls",
    "size_increase",
    "self_size_increase",
    "alloc_count",
    "self_alloc_count",
    "alloc_size",
    "self_alloc_size",
)


def operator_stats(
    profile: Any, device: str | None = None, start: float | None = None, end: float | None = None
) -> dict:
    """Per-operator memory statistics of one device, aggregated by operator name.

    Each record in [start, end] counts for its operator (self) and for every enclosing op (total):
    size increase = Σ bytes (frees negative), allocation count/size = number/Σ of positive records.
    Calls = operator instances of that name overlapping [start, end]. Names with all-zero memory
    figures are left out.
    """
    p = _prepare(profile)
    dev = _select(p, device)
    ops = profile.ops
    n_ops = len(ops)
    rec = dev.rows
    ts = p.ts[rec]
    in_range = np.ones(rec.size, dtype=bool)
    if start is not None:
        in_range &= ts >= start
    if end is not None:
        in_range &= ts <= end
    rec = rec[in_range]
    op = p.operator[rec]
    attributed = op >= 0
    op, nbytes = op[attributed], p.nbytes[rec][attributed]
    positive = nbytes > 0
    self_incr = np.bincount(op, weights=nbytes, minlength=n_ops)
    self_cnt = np.bincount(op, weights=positive.astype(np.float64), minlength=n_ops)
    self_size = np.bincount(op, weights=np.where(positive, nbytes, 0.0), minlength=n_ops)
    totals = _subtree_sums(ops, np.stack([self_incr, self_cnt, self_size], axis=1))
    is_op = p.is_operator
    alive = is_op.copy()
    if start is not None:
        alive &= ops["end"].to_numpy(np.float64) >= start
    if end is not None:
        alive &= ops["ts"].to_numpy(np.float64) <= end
    frame = pd.DataFrame(
        {
            "name": p.op_names,
            "calls": alive.astype(np.int64),
            "size_increase": totals[:, 0],
            "self_size_increase": self_incr,
            "alloc_count": totals[:, 1],
            "self_alloc_count": self_cnt,
            "alloc_size": totals[:, 2],
            "self_alloc_size": self_size,
        }
    )[alive]
    agg = frame.groupby("name", sort=True).sum()
    figures = agg.drop(columns="calls")
    agg = agg[(figures != 0).any(axis=1)]
    rows = [
        {"name": name, **{k: (int(v) if k in ("calls",) or "count" in k else float(v)) for k, v in r.items()}}
        for name, r in zip(agg.index.tolist(), agg.to_dict("records"), strict=True)
    ]
    return {
        "device": dev.label,
        "records_in_range": int(rec.size),
        "records_without_operator": int((~attributed).sum()),
        "rows": rows,
    }


def _subtree_sums(ops: pd.DataFrame, self_values: np.ndarray) -> np.ndarray:
    """For each op row, the sum of self_values over its subtree (itself and all descendants)."""
    total = self_values.copy()
    if len(ops) == 0:
        return total
    parent = ops["parent"].to_numpy(np.int64)
    depth = ops["depth"].to_numpy(np.int64)
    by_depth = np.argsort(depth, kind="stable")
    bounds = np.searchsorted(depth[by_depth], np.arange(depth.max() + 2))
    for d in range(depth.max(), 0, -1):  # deepest first: children add into parents
        rows = by_depth[bounds[d] : bounds[d + 1]]
        rows = rows[parent[rows] >= 0]
        np.add.at(total, parent[rows], total[rows])
    return total

"""One timeline event in full: its args, call stack and linked events (the Trace view's details panel).

Links follow the model's rules (docs/architecture.md, "Links"): an op's runtime calls are the runtime
rows whose ``op`` is it, a runtime call's device events are the device rows whose ``runtime`` is it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from torch_tb_profiler.analysis.device.gpu_metrics import known_occupancy
from torch_tb_profiler.analysis.ops import operators
from torch_tb_profiler.analysis.timeline.index import TABLES, TimelineIndex
from torch_tb_profiler.analysis.timeline.queries import brief, locate, self_times
from torch_tb_profiler.model import Profile

MAX_LINKS = 64  # per relation; a kernel-heavy op may launch thousands
MAX_PY_DEPTH = 256  # python parent chains are walked at most this far (a trace may hold a cycle)

# (column, label) shown as args, per kind; empty, NaN and negative ids are left out
_ARGS = {
    "op": [
        ("ext_id", "External id"),
        ("seq", "Sequence number"),
        ("fwd_tid", "Fwd thread id"),
        ("input_dims", "Input Dims"),
        ("input_types", "Input type"),
    ],
    "rt": [("ext_id", "External id"), ("corr", "correlation")],
    "dev": [
        ("device", "device"),
        ("stream", "stream"),
        ("corr", "correlation"),
        ("ext_id", "External id"),
        ("grid", "grid"),
        ("block", "block"),
        ("regs", "registers per thread"),
        ("shmem", "shared memory"),
        ("blocks_per_sm", "blocks per SM"),
        ("warps_per_sm", "warps per SM"),
        ("occupancy", "est. achieved occupancy %"),
        ("bytes", "bytes"),
        ("bandwidth", "memory bandwidth (GB/s)"),
        ("collective", "Collective name"),
        ("in_nelems", "In msg nelems"),
        ("out_nelems", "Out msg nelems"),
        ("dtype", "dtype"),
        ("group_size", "Group size"),
        ("pg_name", "Process Group Name"),
    ],
    "py": [
        ("py_id", "Python id"),
        ("py_parent_id", "Python parent id"),
        ("py_module_id", "Python module id"),
    ],
    "sync": [("device", "device"), ("stream", "stream"), ("corr", "correlation"), ("kind", "sync kind")],
    "ann": [("device", "device"), ("stream", "stream"), ("ext_id", "External id")],
    "other": [],
}
_CATEGORY = {"rt": "runtime", "py": "python_function", "sync": "cuda_sync", "ann": "gpu_user_annotation"}


def details(profile: Profile, idx: TimelineIndex, kind: str, row: int, position: int) -> dict[str, Any]:
    table = getattr(profile, TABLES[kind])
    record = table.iloc[row]
    out = brief(idx, position)
    category = record.get("cat") if "cat" in table else None
    if kind == "dev":
        category = record["kind"]
    own = self_times(idx)[position]
    out.update(
        kind=kind,
        category=str(category) if category else _CATEGORY.get(kind, kind),
        self_us=None if math.isnan(own) else float(own),
        args=_args(kind, record),
        frames=_frames(profile, kind, row),
        links=_links(profile, idx, kind, row),
    )
    if kind == "dev":
        _capture_of(profile, row, out)
    if kind == "op" and len(profile.comms):
        comm = profile.comms[profile.comms["op"].to_numpy() == row]
        if len(comm):
            for column, value in comm.iloc[0].items():
                if column != "op" and _shown(value):
                    out["args"][str(column)] = _plain(value)
    return out


def _capture_of(profile: Profile, row: int, out: dict[str, Any]) -> None:
    """A replayed kernel whose capture was merged: the op that captured it, its shapes and its call stack
    at capture time (docs/metrics.md, "Graph captures")."""
    op = int(profile.device["op"].iat[row])
    if op < 0 or "replay" not in profile.ops.columns or int(profile.ops["replay"].iat[op]) < 0:
        return
    record = profile.ops.iloc[op]
    out["args"]["captured by"] = str(record["name"])
    for column, label in (("input_dims", "capture input dims"), ("input_types", "capture input types")):
        if _shown(record[column]):
            out["args"][label] = _plain(record[column])
    out["frames"] = _frames(profile, "op", op)
    launch = _capture_launch(profile, row)
    if launch is not None:
        out["capture"] = launch


def _capture_launch(profile: Profile, row: int) -> dict[str, Any] | None:
    """Where a replayed kernel was launched at capture time: the capture trace's file name (a profile of
    its own: ``capture=<file>`` on the per-profile routes) and the id of its launch call there."""
    if "capture_launch" not in profile.device.columns:
        return None
    capture, launch = int(profile.device["capture"].iat[row]), int(profile.device["capture_launch"].iat[row])
    captures = (profile.meta.graph_captures or {}).get("captures", [])
    if capture < 0 or launch < 0 or capture >= len(captures):
        return None
    return {"file": str(captures[capture]["file"]), "launch": f"rt:{launch}"}


def _shown(value: Any) -> bool:
    if value is None or (isinstance(value, str) and value in ("", "nan", "None")):
        return False
    if isinstance(value, (float, np.floating)) and math.isnan(value):
        return False
    return not (isinstance(value, (int, np.integer)) and value < 0)


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _args(kind: str, record: Any) -> dict[str, Any]:
    return {
        label: _plain(record[col])
        for col, label in _ARGS[kind]
        if col in record and _shown(record[col]) and not (col == "occupancy" and _placeholder(record))
    }


def _placeholder(record: Any) -> bool:
    """Kineto's occupancy 0 where CUPTI could not compute it (gpu_metrics.known_occupancy): not a figure."""
    return bool(
        np.isnan(known_occupancy(np.array([record["occupancy"]]), np.array([record["warps_per_sm"]]))[0])
    )


def _frames(profile: Profile, kind: str, row: int) -> list[dict[str, Any]]:
    if kind == "op":
        legacy = str(profile.ops["call_stack"].iat[row]) if "call_stack" in profile.ops else ""
        if legacy and legacy not in ("nan", "None"):
            return operators.parse_call_stack(legacy)
        frames = operators.python_frames(profile, np.array([row]))[0] if len(profile.python) else ()
        return [operators.parse_frame(f) for f in frames]
    if kind == "py":
        py = profile.python
        row_of_id = dict(zip(py["py_id"].tolist(), range(len(py)), strict=True))
        parents = py["py_parent_id"].to_numpy()
        chain, seen, r = [], set(), row
        while r is not None and r not in seen and len(chain) < MAX_PY_DEPTH:
            seen.add(r)
            chain.append(operators.parse_frame(str(py["name"].iat[r])))
            r = row_of_id.get(int(parents[r])) if int(parents[r]) >= 0 else None
        return chain
    return []


def _links(profile: Profile, idx: TimelineIndex, kind: str, row: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []

    def add(relation: str, link_kind: str, rows: np.ndarray | list[int]) -> None:
        for r in list(rows)[:MAX_LINKS]:
            p = locate(idx, link_kind, int(r))
            if p >= 0:
                out.append({"relation": relation, **brief(idx, p)})

    if kind == "op":
        launched = np.flatnonzero(profile.runtimes["op"].to_numpy() == row)
        add("launches", "rt", launched)
        add("kernel", "dev", np.flatnonzero(profile.device["op"].to_numpy() == row))
    elif kind == "rt":
        op = int(profile.runtimes["op"].iat[row])
        if op >= 0:
            add("operator", "op", [op])
        add("kernel", "dev", np.flatnonzero(profile.device["runtime"].to_numpy() == row))
    elif kind == "dev":
        runtime, op = int(profile.device["runtime"].iat[row]), int(profile.device["op"].iat[row])
        if runtime >= 0:
            add("launched by", "rt", [runtime])
        if op >= 0:
            add("operator", "op", [op])
    return out

"""Find the collective calls of one worker, whatever the PyTorch generation.

A *comm op* is a host range that denotes a collective: legacy ``nccl:*`` / ``gloo:*`` annotations,
``c10d::*`` ops, and ops carrying collective args (``record_param_comms``), except non-collectives
such as ``wait``. One *call* is an outermost comm op (no comm op above it); its comm descendants
(e.g. c10d::allreduce_ > record_param_comms > nccl:all_reduce) describe the same call.

Per call: collective name, process group, sequence number, element counts and dtype when the trace
has them (2.x), else the size from the ops' input shapes (legacy); its device kernels (kernels
linked to any op of the call, or whose launch lies inside the call's host range); the latency
(union of its kernels, or the host range when it ran on the CPU, e.g. gloo).
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pandas as pd

from torch_tb_profiler.analysis.distributed import comm_bytes as cb
from torch_tb_profiler.analysis.distributed import p2p
from torch_tb_profiler.model import intervals as iv

COMM_KERNEL = re.compile(r"^(?:nccl|rccl|hccl|xccl)|ncclKernel|ncclDevKernel", re.I)

CALL_COLUMNS = [
    "op",
    "collective",
    "pg",
    "seq",
    "group_size",
    "bytes",
    "dtype",
    "host_ts",
    "host_end",
    "pid",
    "tid",
    "kernels",
    "dev_ts",
    "dev_end",
    "latency",
    "on_device",
    "peer",
]


def _json(text: Any) -> Any:
    if not isinstance(text, str) or not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _comm_op_rows(ops: pd.DataFrame, comms: pd.DataFrame) -> np.ndarray:
    names = ops["name"].astype(str)
    by_name = names.str.match(cb.LIBRARY_PREFIX).to_numpy(bool)
    is_comm = by_name.copy()
    if len(comms):
        is_comm[comms["op"].to_numpy(np.int64)] = True
    rows = np.flatnonzero(is_comm)
    # drop non-collectives (wait, init, coalescing markers): by name for named ops, by arg for the rest
    coll_of = {}
    if len(comms):
        coll_of = dict(zip(comms["op"].tolist(), comms["collective"].astype(str).tolist(), strict=True))
    keep = []
    for r in rows.tolist():
        name = coll_of.get(r) if not by_name[r] else names.iat[r]
        if name is None or cb.is_collective(name):
            keep.append(r)
    return np.array(keep, dtype=np.int64)


def comm_kernel_mask(device: pd.DataFrame, call_ops: set[int] | None = None) -> np.ndarray:
    """Device rows that are communication kernels (by collective args, name, or link to a call)."""
    if len(device) == 0:
        return np.zeros(0, dtype=bool)
    kernel = np.asarray(device["kind"] == "kernel", dtype=bool)
    # the name test runs on distinct names only (kernels repeat a few hundred names)
    codes, uniques = pd.factorize(device["name"].astype(str))
    named = np.array([bool(COMM_KERNEL.search(str(u))) for u in uniques], dtype=bool)[codes]
    mask = named
    if "collective" in device:
        mask = mask | (device["collective"].astype(str) != "").to_numpy(bool)
    if call_ops:
        mask = mask | device["op"].isin(list(call_ops)).to_numpy(bool)
    return kernel & mask


def collective_calls(profile: Any) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """(calls table with CALL_COLUMNS sorted by host time, device rows of all comm kernels,
    op rows of all comm ops including dropped gloo enqueue calls)."""
    ops: pd.DataFrame = profile.ops
    comms: pd.DataFrame = profile.comms
    device: pd.DataFrame = profile.device
    comm_rows = _comm_op_rows(ops, comms)
    parent = ops["parent"].to_numpy(np.int64)
    comm_set = set(comm_rows.tolist())
    # outermost comm op of every comm op
    root_of: dict[int, int] = {}
    for r in comm_rows.tolist():
        top, q = r, parent[r]
        while q >= 0:
            if q in comm_set:
                top = q
            q = parent[q]
        root_of[r] = top
    members: dict[int, list[int]] = {}
    for r, top in root_of.items():
        members.setdefault(top, []).append(r)
    op_to_call = {r: top for r, top in root_of.items()}

    # kernels of each call: by op link, else by the launch's host position inside the call
    kernel_call = np.full(len(device), -1, dtype=np.int64)
    if len(device):
        dev_op = device["op"].to_numpy(np.int64)
        call_of_op = np.full(len(ops) + 1, -1, dtype=np.int64)  # last slot: op -1
        if op_to_call:
            call_of_op[list(op_to_call)] = list(op_to_call.values())
        kernel_call = call_of_op[np.where(dev_op >= 0, dev_op, len(ops))]
        _attach_by_launch_position(profile, ops, members, kernel_call)
    comm_mask = comm_kernel_mask(device, set(op_to_call))
    kernel_call = np.where(comm_mask, kernel_call, -1)

    # gloo (2.x): c10d::* on the caller's thread only enqueues; the work is a gloo:* range on the
    # library's own thread. An enqueue-only call (no kernel, no library range inside) is dropped
    # when the worker has standalone library ranges, so a collective is not counted twice.
    names = ops["name"].astype(str).str.lower()
    is_lib = names.str.startswith(("nccl:", "gloo:")).to_numpy(bool)
    standalone_lib = any(is_lib[top] for top in members)
    if standalone_lib:
        for top in list(members):
            if not is_lib[members[top]].any() and not (kernel_call == top).any():
                del members[top]

    comm_args = comms.set_index("op") if len(comms) else None
    info = getattr(profile.meta, "distributed_info", None) or {}
    records = []
    dev_ts = device["ts"].to_numpy(np.float64) if len(device) else np.empty(0)
    dev_end = device["end"].to_numpy(np.float64) if len(device) else np.empty(0)
    for top in sorted(members, key=lambda r: (ops["ts"].iat[r], r)):
        rows = members[top]
        k = np.flatnonzero(kernel_call == top)
        desc = _describe(ops, rows, comm_args, _kernel_args(device, k))
        peer = p2p.global_rank(desc.pop("peer_local"), desc["pg"], desc.pop("pg_ranks"), info)
        if k.size:
            busy = iv.total(iv.union(dev_ts[k], dev_end[k]))
            d0, d1 = float(dev_ts[k].min()), float(dev_end[k].max())
        else:
            busy = float(ops["dur"].iat[top])
            d0, d1 = np.nan, np.nan
        records.append(
            {
                "op": top,
                **desc,
                "host_ts": float(ops["ts"].iat[top]),
                "host_end": float(ops["end"].iat[top]),
                "pid": ops["pid"].iat[top],
                "tid": ops["tid"].iat[top],
                "kernels": int(k.size),
                "dev_ts": d0,
                "dev_end": d1,
                "latency": busy,
                "on_device": bool(k.size),
                "peer": peer,
            }
        )
    calls = pd.DataFrame.from_records(records, columns=CALL_COLUMNS)
    return calls, np.flatnonzero(comm_mask), comm_rows


def _attach_by_launch_position(
    profile: Any, ops: pd.DataFrame, members: dict[int, list[int]], kernel_call: np.ndarray
) -> None:
    """Kernels whose launch is not linked to an op (e.g. 2023 traces where External id =
    correlation) belong to the call whose host range on the launching thread contains the launch."""
    device = profile.device
    runtimes = profile.runtimes
    if not members or len(runtimes) == 0:
        return
    rt = device["runtime"].to_numpy(np.int64)
    todo = np.flatnonzero((kernel_call < 0) & (rt >= 0))
    if todo.size == 0:
        return
    tops = np.array(sorted(members), dtype=np.int64)
    call_ts = ops["ts"].to_numpy(np.float64)[tops]
    call_end = ops["end"].to_numpy(np.float64)[tops]
    call_thread = (ops["pid"].astype(str) + "/" + ops["tid"].astype(str)).to_numpy(object)[tops]
    r = rt[todo]
    r_ts = runtimes["ts"].to_numpy(np.float64)[r]
    r_thread = (runtimes["pid"].astype(str) + "/" + runtimes["tid"].astype(str)).to_numpy(object)[r]
    for thread in set(r_thread.tolist()):
        on_thread = np.flatnonzero(call_thread == thread)
        if on_thread.size == 0:
            continue
        order = on_thread[np.argsort(call_ts[on_thread], kind="stable")]
        sel = np.flatnonzero(r_thread == thread)
        pos = np.searchsorted(call_ts[order], r_ts[sel], side="right") - 1
        ok = pos >= 0
        inside = np.zeros(sel.size, dtype=bool)
        inside[ok] = r_ts[sel][ok] < call_end[order[pos[ok]]]
        kernel_call[todo[sel[inside]]] = tops[order[pos[inside]]]


def _kernel_args(device: pd.DataFrame, rows: np.ndarray) -> list[pd.Series]:
    """Collective args copied onto the call's kernels (current Kineto), as fallback metadata."""
    if rows.size == 0 or "collective" not in device:
        return []
    # look at the one column first: taking every column of the rows cost ~14 ms per call
    names = device["collective"].to_numpy()[rows]
    hit = [r for r, name in zip(rows.tolist(), names.tolist(), strict=True) if str(name) != ""]
    return [device.iloc[hit[0]]] if hit else []


def _describe(
    ops: pd.DataFrame, rows: list[int], comm_args: pd.DataFrame | None, kernel_args: list[pd.Series]
) -> dict:
    """Collective name, group, seq, size of one call: args of its ops, else args on its kernels,
    else its op names and input shapes; for point-to-point calls the peer's group rank (p2p.py)."""
    coll, pg, seq, group_size, nbytes, dtype = "", "", -1, -1, 0, ""
    peer_local, pg_ranks = -1, ""
    candidates: list[pd.Series] = []
    if comm_args is not None:
        for r in rows:
            if r not in comm_args.index:
                continue
            a = comm_args.loc[r]
            candidates.append(a.iloc[0] if isinstance(a, pd.DataFrame) else a)
    for a in [*candidates, *kernel_args]:
        if not cb.is_collective(str(a["collective"])):
            continue
        coll = cb.collective_name(str(a["collective"]))
        pg = str(a.get("pg_name", "") or "")
        seq = int(a.get("coll_seq", -1))
        group_size = int(a.get("group_size", -1))
        dtype = str(a.get("dtype", ""))
        nbytes = cb.message_bytes(int(a.get("in_nelems", -1)), int(a.get("out_nelems", -1)), dtype)
        if coll in p2p.P2P:
            peer_local = int(a.get("rank", -1))
            pg_ranks = str(a.get("pg_ranks", "") or "")
        break
    names = [str(ops["name"].iat[r]) for r in rows]
    if not coll:
        # prefer the library annotation (nccl:/gloo:), then the c10d op
        named = sorted(names, key=lambda n: (not n.lower().startswith(("nccl:", "gloo:")), n))
        coll = cb.collective_name(named[0])
    if nbytes == 0:
        nbytes, dtype_guess = _bytes_from_shapes(ops, rows)
        dtype = dtype or dtype_guess
    if coll in p2p.P2P and peer_local < 0 and "concrete_inputs" in ops:
        found = (
            p2p.peer_from_concrete_inputs(n, ops["concrete_inputs"].iat[r])
            for n, r in zip(names, rows, strict=True)
        )
        peer_local = max(found, default=-1)
    return {
        "collective": coll,
        "pg": pg,
        "seq": seq,
        "group_size": group_size,
        "bytes": int(nbytes),
        "dtype": dtype,
        "peer_local": peer_local,
        "pg_ranks": pg_ranks,
    }


def _bytes_from_shapes(ops: pd.DataFrame, rows: list[int]) -> tuple[int, str]:
    """Legacy size: the larger of the nccl:/gloo: annotation's summed inputs and any single tensor
    argument of the call's ops (c10d ops list the gathered output, annotations only the input)."""
    best, best_dtype = 0, ""
    for r in rows:
        dims = _json(ops["input_dims"].iat[r])
        types = _json(ops["input_types"].iat[r]) if "input_types" in ops else None
        if not isinstance(dims, list):
            continue
        if not isinstance(types, list):
            types = [""] * len(dims)
        sizes = [cb.tensor_bytes(d, t) for d, t in zip(dims, types, strict=False)]
        is_annotation = str(ops["name"].iat[r]).lower().startswith(("nccl:", "gloo:"))
        candidate = sum(sizes) if is_annotation else max(sizes, default=0)
        if candidate > best:
            best = candidate
            best_dtype = next((t for d, t in zip(dims, types, strict=False) if cb.tensor_bytes(d, t)), "")
    return best, best_dtype

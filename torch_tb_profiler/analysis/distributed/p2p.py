"""Point-to-point calls (send, recv, isend, irecv, batch_isend_irecv): one table of their own.

A send on one rank pairs with a recv on another, so they are not matched across ranks as collectives
are (docs/metrics.md, "Point-to-point"). Per worker and (operation, peer): calls, bytes, time (union
of the calls' intervals), mean time per call, bandwidth = Σ bytes / Σ per-call time (null when the
size is unknown).

The peer is a global rank when the trace says it: ``record_param_comms``' "Rank" arg (the peer's rank
in its process group, PyTorch ≥ 2.1) or the ``dst``/``src`` argument of a ``c10d::send`` /
``c10d::recv_`` op recorded with ``record_shapes`` ("Concrete Inputs"), turned into a global rank by the
group's ranks ("Process Group Ranks" arg, else distributedInfo's ``pg_config``; the default group's ranks
are the global ranks).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from torch_tb_profiler.analysis.distributed import comm_bytes as cb
from torch_tb_profiler.analysis.distributed.interval_groups import grouped_union_total

P2P = frozenset({"send", "recv", "batch_isend_irecv", "send_recv"})
# c10d ops whose 3rd argument is the peer's group rank: send(tensors, pg, dst, tag), recv_(tensors, pg, src, tag)
_PEER_ARG_OPS = frozenset({"send", "recv"})
_PEER_ARG = 2


def is_p2p(collective: str) -> bool:
    return cb.collective_name(collective) in P2P


def p2p_mask(calls: pd.DataFrame) -> np.ndarray:
    """Rows of a calls table (collectives.CALL_COLUMNS) that are point-to-point."""
    if len(calls) == 0:
        return np.zeros(0, dtype=bool)
    return calls["collective"].astype(str).isin(P2P).to_numpy(bool)


def peer_from_concrete_inputs(op_name: str, concrete: Any) -> int:
    """The group rank a c10d::send / c10d::recv_ op names (its Concrete Inputs), else -1."""
    if not op_name.lower().startswith("c10d::") or cb.collective_name(op_name) not in _PEER_ARG_OPS:
        return -1
    try:
        values = json.loads(concrete) if isinstance(concrete, str) and concrete else None
    except ValueError:
        return -1
    if not isinstance(values, list) or len(values) <= _PEER_ARG:
        return -1
    try:
        return int(str(values[_PEER_ARG]).strip())
    except ValueError:
        return -1


def global_rank(local: int, pg: str, pg_ranks: str, info: dict | None) -> int:
    """The global rank of group rank ``local`` in group ``pg``; -1 when the group's ranks are unknown."""
    if local < 0:
        return -1
    ranks: Any = None
    if pg_ranks:
        try:
            ranks = json.loads(pg_ranks)
        except ValueError:
            ranks = None
    if not isinstance(ranks, list):
        for g in (info or {}).get("pg_config") or []:
            if isinstance(g, dict) and str(g.get("pg_name", "")) == pg:
                ranks = g.get("ranks")
                break
    if isinstance(ranks, list) and ranks:
        return int(ranks[local]) if local < len(ranks) and isinstance(ranks[local], int) else -1
    # the default group ("0", or no name) lists every rank in order
    return local if pg in ("", "0") else -1


def p2p_tables(workers: list[Any]) -> dict[str, list[dict]]:
    """Per worker (WorkerComm with its p2p calls and ``start``/``end`` per call), rows by (operation,
    peer), most time first."""
    out: dict[str, list[dict]] = {}
    for w in workers:
        c = w.calls
        out[w.worker] = _rows(c) if len(c) else []
    return out


def _rows(c: pd.DataFrame) -> list[dict]:
    start = np.where(c["on_device"], c["dev_ts"], c["host_ts"]).astype(np.float64)
    end = np.where(c["on_device"], c["dev_end"], c["host_end"]).astype(np.float64)
    peer = c["peer"].to_numpy(np.int64) if "peer" in c else np.full(len(c), -1, dtype=np.int64)
    keys = pd.MultiIndex.from_arrays([c["collective"].astype(str).to_numpy(), peer])
    codes, uniques = pd.factorize(keys)
    n = len(uniques)
    calls = np.bincount(codes, minlength=n)
    nbytes = np.bincount(codes, weights=c["bytes"].to_numpy(np.float64), minlength=n)
    latency = np.bincount(codes, weights=c["latency"].to_numpy(np.float64), minlength=n)
    union = grouped_union_total(codes.astype(np.int64), start, end, n)
    rows = []
    for g, (op, p) in enumerate(uniques.tolist()):
        k = int(calls[g])
        rows.append(
            {
                "op": str(op),
                "peer": int(p) if p >= 0 else None,
                "calls": k,
                "total_bytes": float(nbytes[g]),
                "avg_bytes": float(nbytes[g]) / k,
                "total_time_us": float(union[g]),
                "avg_time_us": float(latency[g]) / k,
                # unknown size (0 bytes recorded): no bandwidth rather than 0 GB/s
                "bandwidth_gbps": cb.gbps(float(nbytes[g]), float(latency[g])) if nbytes[g] > 0 else None,
            }
        )
    rows.sort(key=lambda r: (-r["total_time_us"], r["op"], r["peer"] if r["peer"] is not None else -1))
    return rows

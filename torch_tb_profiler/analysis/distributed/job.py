"""Distributed view: the workers of a run as one job.

Two stages keep memory bounded for many ranks: ``summarize_worker(worker, profile)`` reduces one
profile to a small ``WorkerComm`` (collective calls, per-step overlap figures, GPU info), and
``analyze_job(workers)`` combines them. Definitions are in docs/metrics.md ("Distributed").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from torch_tb_profiler.analysis.core import steps as steps_mod
from torch_tb_profiler.analysis.core.accelerator import accelerator
from torch_tb_profiler.analysis.core.cache import memoized
from torch_tb_profiler.analysis.distributed import comm_bytes as cb
from torch_tb_profiler.analysis.distributed import job_split as jobs
from torch_tb_profiler.analysis.distributed import p2p
from torch_tb_profiler.analysis.distributed.collectives import collective_calls
from torch_tb_profiler.analysis.distributed.interval_groups import grouped_union_total
from torch_tb_profiler.model import intervals as iv

_RANK_IN_NAME = (re.compile(r"rank[-_]?(\d+)", re.I), re.compile(r"worker[-_]?(\d+)", re.I))
_NOT_COMPUTE_PREFIXES = ("ProfilerStep#", "enumerate(DataLoader)#", "enumerate(DataPipe)#")
OVERLAP_LEGENDS = ("computation", "overlap", "communication", "other")


@dataclass
class WorkerComm:
    """What the job analysis needs from one worker (no reference to its Profile)."""

    worker: str
    rank: int | None
    world_size: int | None
    backend: str
    pg_config: list[dict]
    calls: pd.DataFrame  # collective calls (collectives.CALL_COLUMNS) + "step"
    steps: list[str]
    step_bounds: list[tuple[float, float]]
    overlap: list[list[float]]  # per step: [computation−overlap, overlap, communication−overlap, other]
    node: str
    process: str
    gpus: dict[str, dict]
    warnings: list[str] = field(default_factory=list)
    process_name: str = ""


def worker_rank(worker: str, distributed_info: dict | None) -> tuple[int | None, int | None]:
    """(rank, world size) from distributedInfo, else rank from the worker name ('rank-3', 'worker3'),
    never from a Lightning worker's name (its rank there is the local rank: distributed_jobs.py)."""
    info = distributed_info or {}
    rank = info.get("rank")
    world = info.get("world_size")
    if not isinstance(rank, int):
        rank = None
        for pattern in _RANK_IN_NAME if jobs.name_rank_allowed(worker) else ():
            m = pattern.search(worker)
            if m:
                rank = int(m.group(1))
                break
    return rank, world if isinstance(world, int) else None


def _steps(profile: Any) -> tuple[list[str], list[tuple[float, float]]]:
    """The device-extended steps of analysis.steps (shared with the overview), named by number."""
    table = steps_mod.steps(profile)
    names = [str(int(n)) for n in table["number"].tolist()]
    bounds = list(
        zip(table["start"].astype(float).tolist(), table["end"].astype(float).tolist(), strict=True)
    )
    return names, bounds


def _cpu_computation(profile: Any, calls: pd.DataFrame, comm_op_rows: set[int]) -> iv.Intervals:
    """Host computation for CPU-only jobs: per thread, the union of operator ranges (``cpu_op``;
    user annotations are labels that also cover waiting) that are not steps, data loading or part
    of a collective, minus the thread's collective calls; then the union over threads."""
    ops = profile.ops
    if len(ops) == 0:
        return iv.EMPTY
    names = ops["name"].astype(str)
    keep = np.array((ops["cat"] == "cpu_op") & ~names.str.startswith(_NOT_COMPUTE_PREFIXES), dtype=bool)
    if comm_op_rows:
        keep[list(comm_op_rows)] = False
    thread = (ops["pid"].astype(str) + "/" + ops["tid"].astype(str)).to_numpy(object)
    call_thread = (calls["pid"].astype(str) + "/" + calls["tid"].astype(str)).to_numpy(object)
    ts, end = ops["ts"].to_numpy(np.float64), ops["end"].to_numpy(np.float64)
    parts_s, parts_e = [], []
    for t in pd.unique(thread[keep]):
        sel = keep & (thread == t)
        busy = iv.union(ts[sel], end[sel])
        c = calls[call_thread == t]
        if len(c):
            busy = iv.subtract(busy, iv.union(c["host_ts"].to_numpy(), c["host_end"].to_numpy()))
        parts_s.append(busy[0])
        parts_e.append(busy[1])
    if not parts_s:
        return iv.EMPTY
    return iv.union(np.concatenate(parts_s), np.concatenate(parts_e))


def _descendants(ops: pd.DataFrame, roots: Iterable[int]) -> set[int]:
    """Rows of the given ops and all their descendants (comm subtrees are small)."""
    roots = list(roots)
    if not roots:
        return set()
    parent = ops["parent"].to_numpy(np.int64)
    found = set(roots)
    frontier = np.array(roots, dtype=np.int64)
    while frontier.size:
        child = np.flatnonzero(np.isin(parent, frontier))
        child = child[~np.isin(child, list(found))]
        found.update(child.tolist())
        frontier = child
    return found


@dataclass
class RankPart:
    """The name-independent part of a WorkerComm: a pure function of one profile, small enough to be
    stored in the persisted index (index_format.py) and read back without the profile's tables."""

    info: dict  # the trace's distributedInfo ({} when absent)
    host_name: str  # the trace's host_name ("" when absent)
    main_pid: str | None  # the most frequent pid of the host ops, else of the runtime calls (None: neither)
    calls: pd.DataFrame
    steps: list[str]
    step_bounds: list[tuple[float, float]]
    overlap: list[list[float]]
    gpus: dict[str, dict]
    warnings: list[str] = field(default_factory=list)
    process_name: str = ""  # the trace's process_name metadata of main_pid ("" when absent)


def summarize_worker(worker: str, profile: Any) -> WorkerComm:
    """Reduce one worker's profile to what the job analysis needs (memoized on the profile)."""
    return memoized(profile, f"distributed.worker.{worker}", lambda: worker_comm(worker, rank_part(profile)))


def rank_part(profile: Any) -> RankPart:
    """The per-rank figures of one profile (memoized on it; read from the index when it has them)."""
    return memoized(profile, RANK_PART_KEY, lambda: _rank_part(profile))


RANK_PART_KEY = "distributed.rank_part"


def worker_comm(worker: str, part: RankPart) -> WorkerComm:
    """A RankPart under its worker's name (the rank may come from the name, as may node and process)."""
    rank, world = worker_rank(worker, part.info)
    node, process = _node_process(worker, part.host_name, part.main_pid)
    return WorkerComm(
        worker=worker,
        rank=rank,
        world_size=world,
        backend=str(part.info.get("backend", "")),
        pg_config=list(part.info.get("pg_config") or []),
        calls=part.calls,
        steps=part.steps,
        step_bounds=part.step_bounds,
        overlap=part.overlap,
        node=node,
        process=process,
        gpus=part.gpus,
        warnings=part.warnings,
        process_name=part.process_name,
    )


def _rank_part(profile: Any) -> RankPart:
    meta = profile.meta
    info = getattr(meta, "distributed_info", None) or {}
    calls, comm_kernels, comm_ops = collective_calls(profile)
    names, bounds = _steps(profile)
    warnings: list[str] = []

    device = profile.device
    compute_kernel = np.array(device["kind"] == "kernel", dtype=bool)
    compute_kernel[comm_kernels] = False
    dts = device["ts"].to_numpy(np.float64) if len(device) else np.empty(0)
    dend = device["end"].to_numpy(np.float64) if len(device) else np.empty(0)
    comm = iv.union(
        np.concatenate([dts[comm_kernels], calls["host_ts"].to_numpy(np.float64)]),
        np.concatenate([dend[comm_kernels], calls["host_end"].to_numpy(np.float64)]),
    )
    if compute_kernel.any():
        computation = iv.union(dts[compute_kernel], dend[compute_kernel])
    else:
        in_comm = _descendants(profile.ops, comm_ops.tolist())
        computation = _cpu_computation(profile, calls, in_comm)
    both = iv.intersect(computation, comm)
    overlap_rows = []
    for lo, hi in bounds:
        c = iv.total(iv.clip(computation, lo, hi))
        m = iv.total(iv.clip(comm, lo, hi))
        o = iv.total(iv.clip(both, lo, hi))
        overlap_rows.append([c - o, o, m - o, (hi - lo) - c - m + o])

    # step of each call: the step whose host range holds the call's start
    step_of = np.full(len(calls), -1, dtype=np.int64)
    for i, (lo, hi) in enumerate(bounds):
        inside = (calls["host_ts"].to_numpy() >= lo) & (calls["host_ts"].to_numpy() < hi)
        step_of[inside & (step_of < 0)] = i
    calls = calls.drop(columns=["op"]).assign(step=step_of)
    if (step_of < 0).any() and bounds:
        warnings.append(f"{int((step_of < 0).sum())} collective call(s) lie outside every step")

    top = getattr(meta, "top_level", None) or {}
    host = top.get("host_name") if isinstance(top, dict) else None
    host_table = profile.ops if len(profile.ops) else profile.runtimes
    main_pid = str(host_table["pid"].mode().iat[0]) if len(host_table) else None
    process_names = getattr(meta, "process_names", None) or {}
    return RankPart(
        info=dict(info),
        host_name=str(host) if host else "",
        main_pid=main_pid,
        process_name=str(process_names.get(main_pid, "")) if main_pid is not None else "",
        calls=calls,
        steps=names,
        step_bounds=bounds,
        overlap=overlap_rows,
        gpus=_gpu_info(profile),
        warnings=warnings,
    )


def _node_process(worker: str, host_name: str, main_pid: str | None) -> tuple[str, str]:
    """The trace's own identity: node = its ``host_name`` ("" when it has none: a file name's
    ``<a>_<b>`` is not known to be host and pid), process = its main pid; a trace without host
    events is named by its worker."""
    return host_name, main_pid if main_pid is not None else worker


def _gpu_info(profile: Any) -> dict[str, dict]:
    """Per used device (ids of device events), keyed by kind and id ("GPU0", "MTIA9"): name, memory,
    compute capability (CUDA only), SMs (CUDA) or compute units (ROCm)."""
    props = getattr(profile.meta, "device_properties", None) or []
    by_id = {}
    for i, p in enumerate(props):
        if isinstance(p, dict):
            by_id[int(p.get("id", i))] = p
    used = sorted(set(profile.device["device"].astype(int).tolist())) if len(profile.device) else []
    out = {}
    for d in used:
        p = by_id.get(d)
        if p is None:
            continue
        info: dict[str, Any] = {"name": p.get("name")}
        if p.get("totalGlobalMem") is not None:
            info["memory_bytes"] = int(p["totalGlobalMem"])
            info["memory_gb"] = round(int(p["totalGlobalMem"]) / 1024**3, 2)
        if p.get("computeMajor") is not None and accelerator(profile).has_compute_capability:
            info["compute_capability"] = f"{p.get('computeMajor')}.{p.get('computeMinor')}"
        if p.get("numSms") is not None and accelerator(profile).platform in ("CUDA", "ROCm"):
            # SMs on CUDA, compute units on ROCm (the same deviceProperties field)
            info["sms" if accelerator(profile).platform == "CUDA" else "compute_units"] = p.get("numSms")
        out[f"{accelerator(profile).kind}{d}"] = info  # GPU0, MTIA9, …
    return out


# ---------------------------------------------------------------------------------------------
# job level


def _match_rounds(workers: list[WorkerComm], warnings: list[str]) -> pd.DataFrame:
    """All calls of all workers with a ``round`` id: the same collective on different ranks.

    Within each process group, calls are matched by sequence number when every worker's calls in
    that group carry one, else by order among the calls of the same collective in the same step
    (with unequal counts, a warning). A round that misses a worker calling collectives in that group
    is unmatched: its calls count in the comm-op table but not in synchronizing/transfer time.
    """
    if not workers:
        return pd.DataFrame()
    # one table of every worker's calls (columns added as whole arrays: no per-worker frame work)
    lengths = np.array([len(w.calls) for w in workers], dtype=np.int64)
    allc = pd.concat([w.calls for w in workers], ignore_index=True)
    allc["worker_i"] = np.repeat(np.arange(len(workers)), lengths)
    allc["pg"] = allc["pg"].replace("", "default")
    # group size for the bus factor: the call's args, else the world size (else, later, the number of
    # ranks in the round)
    world = np.repeat(np.array([w.world_size or -1 for w in workers], dtype=np.int64), lengths)
    allc["group_size"] = np.where(allc["group_size"] > 0, allc["group_size"], world)
    # issue order: the device stream order when the call ran there, else host order
    allc["issued"] = np.where(allc["on_device"], allc["dev_ts"], allc["host_ts"])
    names = [np.array([*w.steps, ""], dtype=object)[w.calls["step"].to_numpy(np.int64)] for w in workers]
    allc["step_name"] = np.concatenate(names) if names else np.empty(0, dtype=object)
    order = np.lexsort((allc["issued"].to_numpy(np.float64), allc["worker_i"].to_numpy()))
    allc = allc.iloc[order].reset_index(drop=True)
    allc["ordinal"] = allc.groupby(["worker_i", "pg", "collective", "step_name"], sort=False).cumcount()
    if allc.empty:  # no worker called a collective
        return allc.assign(
            key=pd.Series(dtype=object), matched=pd.Series(dtype=bool), round=pd.Series(dtype=np.int64)
        )
    keys = []
    for pg, g in allc.groupby("pg", sort=True):
        if (g["seq"] >= 0).all():
            keys.append(pd.Series([(pg, "", s) for s in g["seq"].tolist()], index=g.index))
            continue
        # no sequence numbers: the k-th call of a collective in a group and step (steps are
        # numbered alike on every rank) matches the k-th elsewhere
        for (coll, step), gc in g.groupby(["collective", "step_name"], sort=True):
            counts = gc.groupby("worker_i").size()
            key = gc["ordinal"]
            if counts.nunique() > 1 or len(counts) < g["worker_i"].nunique():
                detail = ", ".join(f"{workers[i].worker}: {n}" for i, n in counts.items())
                where = f"step {step}" if step else "outside steps"
                warnings.append(
                    f"process group {pg}, {coll}, {where}: workers have different numbers of calls "
                    f"({detail}); only the first {counts.min()} of each are matched"
                )
                key = key.where(gc["ordinal"] < counts.min(), -1)
            keys.append(pd.Series([(pg, f"{coll}@{step}", k) for k in key.tolist()], index=gc.index))
    allc["key"] = pd.concat(keys)
    # a round is matched when every worker that calls collectives in the group took part
    expected = allc.groupby("pg")["worker_i"].transform("nunique")
    present = allc.groupby("key")["worker_i"].transform("nunique")
    allc["matched"] = allc["key"].map(lambda k: k[2] >= 0) & (present == expected)
    allc["round"] = -1
    allc.loc[allc["matched"], "round"] = pd.factorize(allc.loc[allc["matched"], "key"])[0]
    # an unmatched call is a round of its own (its latency and bytes count; its wait is unknown)
    unmatched = ~allc["matched"]
    allc.loc[unmatched, "round"] = allc["round"].max() + 1 + np.arange(int(unmatched.sum()))
    return allc


def analyze_job(workers: list[WorkerComm], max_rounds: int = 200) -> dict:
    """Every figure of the Distributed view for one span. Point-to-point calls (p2p.py) are left out of
    the collective matching and reported in a table of their own."""
    workers = sorted(workers, key=lambda w: (w.rank if w.rank is not None else 1 << 30, w.worker))
    point = [p2p.p2p_mask(w.calls) for w in workers]
    p2p_workers = [replace(w, calls=w.calls[m]) for w, m in zip(workers, point, strict=True)]
    workers = [replace(w, calls=w.calls[~m]) if m.any() else w for w, m in zip(workers, point, strict=True)]
    warnings = [f"{w.worker}: {m}" for w in workers for m in w.warnings]
    world = {w.world_size for w in workers if w.world_size}
    if world and max(world) > len(workers):
        warnings.append(
            f"{len(workers)} of {max(world)} ranks are present; cross-rank figures use the present ranks only"
        )
    calls = _match_rounds(workers, warnings)
    transfer = _transfer_intervals(calls)
    wait_rows = _wait_rows(workers, transfer)
    wait = {
        w.worker: _per_step_and_mean(w.steps, rows, ("synchronizing", "transferring"))
        for w, rows in zip(workers, wait_rows, strict=True)
    }
    return {
        "workers": [
            {
                "worker": w.worker,
                "rank": w.rank,
                "node": w.node,
                "process": w.process,
                "process_name": w.process_name,
                "steps": w.steps,
            }
            for w in workers
        ],
        "world_size": max(world) if world else len(workers),
        "overlap": {w.worker: _per_step_and_mean(w.steps, w.overlap) for w in workers},
        "wait": wait,
        "comm_ops": _comm_tables(workers, transfer),
        "p2p": p2p.p2p_tables(p2p_workers),
        "stragglers": stragglers(transfer, workers, max_rounds),
        "gpu_info": gpu_info(workers),
        "process_groups": _process_groups(workers),
        "warnings": warnings,
    }


def _transfer_intervals(calls: pd.DataFrame) -> pd.DataFrame:
    """Per call: its interval on the device (host when it ran on the CPU), duration, and the
    transfer part (end − the shortest duration of the same round over the ranks, end)."""
    if calls.empty:
        return calls.assign(start=[], end=[], dur=[], min_dur=[], t_start=[])
    start = np.where(calls["on_device"], calls["dev_ts"], calls["host_ts"])
    end = np.where(calls["on_device"], calls["dev_end"], calls["host_end"])
    out = calls.assign(start=start, end=end, dur=end - start)
    out["min_dur"] = out.groupby("round")["dur"].transform("min")
    out["max_dur"] = out.groupby("round")["dur"].transform("max")
    out["ranks_in_round"] = out.groupby("round")["dur"].transform("size")
    out["t_start"] = np.where(out["matched"], out["end"] - out["min_dur"], np.nan)
    return out


def _wait_rows(workers: list[WorkerComm], t: pd.DataFrame) -> list[list[list[float]]]:
    """Per worker and step, [synchronizing, transferring]: transfer = |∪ transfer parts|,
    synchronizing = |∪ call intervals| − transfer (matched calls inside a step only). All workers at
    once: one union per (worker, step) group, without a loop over workers."""
    width = max((len(w.steps) for w in workers), default=0)
    rows = [[[0.0, 0.0] for _ in w.steps] for w in workers]
    if t.empty or width == 0:
        return rows
    m = t[t["matched"] & (t["step"] >= 0)]
    gid = m["worker_i"].to_numpy(np.int64) * width + m["step"].to_numpy(np.int64)
    n = len(workers) * width
    end = m["end"].to_numpy(np.float64)
    total = grouped_union_total(gid, m["start"].to_numpy(np.float64), end, n)
    real = grouped_union_total(gid, m["t_start"].to_numpy(np.float64), end, n)
    for g in np.unique(gid).tolist():
        w_i, step = divmod(g, width)
        rows[w_i][step] = [float(total[g] - real[g]), float(real[g])]
    return rows


def _per_step_and_mean(
    steps: list[str], rows: list[list[float]], legends: tuple[str, ...] = OVERLAP_LEGENDS
) -> dict:
    per_step = {name: dict(zip(legends, r, strict=True)) for name, r in zip(steps, rows, strict=True)}
    # no step: the mean is unknown (null), not 0 (docs/metrics.md, "Empty traces")
    mean = {k: (float(np.mean([r[i] for r in rows])) if rows else None) for i, k in enumerate(legends)}
    return {"steps": per_step, "mean": mean}


def _comm_tables(workers: list[WorkerComm], t: pd.DataFrame) -> dict[str, list[dict]]:
    """Per worker, per collective: calls, bytes, latency (union of the calls' intervals), transfer time
    (union of the transfer parts of matched calls), algbw = Σ bytes / Σ latency, busbw = Σ (bytes × bus
    factor) / Σ latency; sorted by total latency. All workers at once (one group per worker × collective)."""
    out: dict[str, list[dict]] = {w.worker: [] for w in workers}
    if t.empty:
        return out
    codes, names = pd.factorize(t["collective"], sort=True)
    kinds = len(names)
    gid = t["worker_i"].to_numpy(np.int64) * kinds + codes
    n = len(workers) * kinds
    nbytes_all = t["bytes"].to_numpy(np.float64)
    start, end = t["start"].to_numpy(np.float64), t["end"].to_numpy(np.float64)
    matched = t["matched"].to_numpy(bool)
    group_n = np.where(t["group_size"] > 0, t["group_size"], t["ranks_in_round"]).astype(np.int64)
    factors: dict[tuple[int, int], float] = {}
    factor = np.array(
        [
            factors.setdefault((c, k), cb.bus_factor(str(names[c]), k))
            for c, k in zip(codes.tolist(), group_n.tolist(), strict=True)
        ],
        dtype=np.float64,
    )
    calls = np.bincount(gid, minlength=n)
    nbytes = np.bincount(gid, weights=nbytes_all, minlength=n)
    latency_sum = np.bincount(gid, weights=t["latency"].to_numpy(np.float64), minlength=n)
    bus_bytes = np.bincount(gid, weights=nbytes_all * factor, minlength=n)
    union = grouped_union_total(gid, start, end, n)
    transfer = grouped_union_total(gid[matched], t["t_start"].to_numpy(np.float64)[matched], end[matched], n)
    for g in np.flatnonzero(calls).tolist():
        w_i, c = divmod(g, kinds)
        k = int(calls[g])
        # a barrier moves no data, and an unknown size is not 0 bytes: no bandwidth (null), not 0 GB/s
        no_bw = cb.collective_name(str(names[c])) == "barrier" or nbytes[g] <= 0
        out[workers[w_i].worker].append(
            {
                "collective": str(names[c]),
                "calls": k,
                "total_bytes": float(nbytes[g]),
                "avg_bytes": float(nbytes[g]) / k,
                "total_latency_us": float(union[g]),
                "avg_latency_us": float(latency_sum[g]) / k,
                "total_transfer_us": float(transfer[g]),
                "avg_transfer_us": float(transfer[g]) / k,
                "algbw_gbps": None if no_bw else cb.gbps(float(nbytes[g]), float(latency_sum[g])),
                "busbw_gbps": None if no_bw else cb.gbps(float(bus_bytes[g]), float(latency_sum[g])),
            }
        )
    for rows in out.values():
        rows.sort(key=lambda r: -r["total_latency_us"])
    return out


def stragglers(t: pd.DataFrame, workers: list[WorkerComm], max_rounds: int = 200) -> dict:
    """Per collective round with ≥ 2 ranks: the last rank to arrive is the one with the shortest
    call (every other rank waited inside the collective for it); it made the others wait
    max duration − min duration. Clock-skew free: only durations are compared."""
    if t.empty:
        return {"ranks": [], "rounds": [], "round_count": 0}
    multi = t[(t["ranks_in_round"] >= 2) & t["matched"]]
    if multi.empty:
        return {"ranks": [], "rounds": [], "round_count": 0}
    last_idx = multi.sort_values(["round", "dur", "worker_i"]).groupby("round").head(1)
    last_idx = last_idx[last_idx["max_dur"] > last_idx["min_dur"]]
    wait = last_idx["max_dur"] - last_idx["min_dur"]
    per_worker = (
        pd.DataFrame({"worker_i": last_idx["worker_i"], "wait": wait})
        .groupby("worker_i")["wait"]
        .agg(["size", "sum", "max"])
    )
    ranks = []
    for w_i, r in per_worker.iterrows():
        w = workers[int(w_i)]
        ranks.append(
            {
                "worker": w.worker,
                "rank": w.rank,
                "times_last": int(r["size"]),
                "total_wait_caused_us": float(r["sum"]),
                "max_wait_caused_us": float(r["max"]),
            }
        )
    ranks.sort(key=lambda r: (-r["times_last"], -r["total_wait_caused_us"]))
    top = last_idx.assign(wait=wait).sort_values("wait", ascending=False).head(max_rounds)
    rounds = [
        {
            "collective": r.collective,
            "process_group": r.pg,
            "seq": int(r.seq) if r.seq >= 0 else None,
            "ordinal": int(r.ordinal),
            "step": workers[int(r.worker_i)].steps[int(r.step)] if r.step >= 0 else None,
            "last_worker": workers[int(r.worker_i)].worker,
            "last_rank": workers[int(r.worker_i)].rank,
            # the last one's call on its host (its own clock): where "Show in timeline" lands
            "last_start_us": float(r.host_ts),
            "wait_us": float(r.wait),
            "ranks": int(r.ranks_in_round),
        }
        for r in top.itertuples(index=False)
    ]
    return {"ranks": ranks, "rounds": rounds, "round_count": int(multi["round"].nunique())}


def gpu_info(workers: list[WorkerComm]) -> dict:
    """{node: {'Process <pid>': {'GPU<i>': {...}}}} for workers whose traces list their GPUs."""
    out: dict[str, dict] = {}
    for w in sorted(workers, key=lambda w: w.worker):
        if not w.gpus:
            continue
        out.setdefault(w.node, {})[f"Process {w.process}"] = w.gpus
    return out


def _process_groups(workers: list[WorkerComm]) -> list[dict]:
    seen: dict[str, dict] = {}
    for w in workers:
        for pg in w.pg_config:
            if isinstance(pg, dict):
                name = str(pg.get("pg_name", ""))
                seen.setdefault(
                    name,
                    {
                        "name": name,
                        "description": pg.get("pg_desc", pg.get("uid", "")),
                        "backend": pg.get("backend_config", ""),
                        "size": pg.get("pg_size"),
                        "ranks": pg.get("ranks"),
                    },
                )
    return list(seen.values())


def summary(workers: list[WorkerComm]) -> dict:
    """The ``distributed`` entry of ``summary --json`` (means per step)."""
    job = analyze_job(workers)
    rows = []
    for w in job["workers"]:
        o = job["overlap"][w["worker"]]["mean"]
        s = job["wait"][w["worker"]]["mean"]
        rows.append(
            {
                "worker": w["worker"],
                "rank": w["rank"],
                "computation_us": o["computation"],
                "overlap_us": o["overlap"],
                "communication_us": o["communication"],
                "other_us": o["other"],
                "synchronizing_us": s["synchronizing"],
                "transferring_us": s["transferring"],
            }
        )
    return {"workers": rows, "warnings": job["warnings"]}


def split_jobs(workers: list[WorkerComm]) -> list[tuple[str, list[WorkerComm]]]:
    """The jobs among one span's workers (distributed_jobs.split): (job name, its workers)."""
    return jobs.split([(w.worker, w.rank, w) for w in workers])


def cli_section(entries: list[tuple[str, str, WorkerComm]]) -> dict | None:
    """The ``distributed`` key of ``summary --json``: for every job (distributed_jobs.py) of two or
    more workers in a (run, span), one row per worker (means per step) tagged with run, span and job;
    None when there is none."""
    groups: dict[tuple[str, str], list[WorkerComm]] = {}
    for run, span, w in entries:
        groups.setdefault((run, span), []).append(w)
    rows: list[dict] = []
    warnings: list[str] = []
    for (run, span), members in sorted(groups.items()):
        for job, workers in split_jobs(members):
            if len(workers) < 2:
                continue
            where = f"{run} span {span}" + (f" job {job}" if job else "")
            try:
                part = summary(workers)
            except Exception as exc:  # one broken job must not lose the others
                warnings.append(f"{where}: distributed analysis failed: {type(exc).__name__}: {exc}")
                continue
            rows.extend({"run": run, "span": span, "job": job, **r} for r in part["workers"])
            warnings.extend(f"{where}: {m}" for m in part["warnings"])
    return {"workers": rows, "warnings": warnings} if rows or warnings else None

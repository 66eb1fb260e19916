"""Performance recommendations: rules over one profile, each returning its evidence.

Every rule is a function ``(Context) -> Recommendation | None``; triggers and thresholds are listed
in docs/metrics.md ("Recommendations"). Rules 1–7 are the original plugin's (with its bugs fixed:
the memory rule checks each CUDA device against its own memory and never the CPU; GPU lists read
"0, 1 and 2"); the others look for launch-bound, host-bound and synchronising steps, pageable copies,
DataLoader stalls in some steps and poorly occupied top kernels.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from torch_tb_profiler.analysis.core import names
from torch_tb_profiler.analysis.core.accelerator import accelerator, lost_launches
from torch_tb_profiler.analysis.core.cache import memoized
from torch_tb_profiler.analysis.core.steps import steps
from torch_tb_profiler.analysis.device import breakdown, gpu_metrics
from torch_tb_profiler.analysis.ops import kernels
from torch_tb_profiler.model import intervals as iv

DATALOADER_SHARE = 0.05
COMMUNICATION_SHARE = 0.10
LOW_UTILIZATION_PCT = 50.0
MEMORY_PEAK_SHARE = 0.90
HOST_BOUND_SHARE = 0.20
HOST_BUSY_SHARE = 0.10
SHORT_KERNEL_US = 10.0
SHORT_KERNEL_SHARE = 0.5
MIN_KERNELS_PER_STEP = 100
LAUNCH_TO_KERNEL_RATIO = 0.5
SYNC_SHARE = 0.02
PAGEABLE_SHARE = 0.01
STALL_FACTOR = 2.0
STALL_STEP_SHARE = 0.05
LOW_OCCUPANCY_PCT = 20.0
TOP_KERNELS = 5
TOP_KERNEL_MIN_SHARE = 0.05

SYNC_CALLS = frozenset(
    {
        "cudaDeviceSynchronize",
        "cudaStreamSynchronize",
        "cudaEventSynchronize",
        "cudaMemcpy",
        "cudaMemcpy2D",
        "cudaMemcpyToSymbol",
        "cudaMemcpyFromSymbol",
        "cuCtxSynchronize",
        "cuStreamSynchronize",
        "cuEventSynchronize",
        "cuMemcpyDtoH_v2",
        "cuMemcpyHtoD_v2",
        "hipDeviceSynchronize",
        "hipStreamSynchronize",
        "hipEventSynchronize",
        "hipMemcpy",
    }
)


@dataclass
class Recommendation:
    id: str
    title: str
    text: str
    evidence: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "text": self.text, "evidence": self.evidence}


class Context:
    """What the rules read, computed lazily once."""

    def __init__(self, profile) -> None:
        self.profile = profile

    @cached_property
    def steps(self) -> pd.DataFrame:
        return steps(self.profile)

    @cached_property
    def per_step(self) -> pd.DataFrame:
        return breakdown.per_step(self.profile)

    @cached_property
    def avg(self) -> dict[str, float]:
        return breakdown.average(self.profile)

    @cached_property
    def gpus(self) -> list[dict[str, Any]]:
        return gpu_metrics.gpu_summary(self.profile)

    @cached_property
    def op_names(self) -> np.ndarray:
        return names.values(self.profile, "ops")

    def ops_where(self, predicate) -> np.ndarray:
        return names.mask(self.profile, "ops", predicate)

    @cached_property
    def t0(self) -> float:
        return breakdown.origin(self.profile)  # interval arithmetic on relative times (see there)

    @cached_property
    def step_intervals(self) -> iv.Intervals:
        """The steps as an interval set, relative to ``t0``."""
        s = self.steps
        return iv.union(
            s["start"].to_numpy(dtype=np.float64) - self.t0, s["end"].to_numpy(dtype=np.float64) - self.t0
        )

    @cached_property
    def step_time(self) -> float:
        return float(self.per_step["duration"].sum()) if len(self.per_step) else 0.0

    def share(self, key: str) -> float:
        d = self.avg["duration"]
        return self.avg[key] / d if d > 0 else 0.0

    def in_steps(self, ts: np.ndarray, end: np.ndarray) -> np.ndarray:
        """Time of each range that lies inside the steps."""
        return iv.overlap_with_each(self.step_intervals, ts - self.t0, end - self.t0)

    def op_name(self, rows: np.ndarray) -> np.ndarray:
        all_names = self.op_names
        if not len(all_names):
            return np.full(len(rows), "(no operator)", dtype=object)
        return np.where(rows >= 0, all_names[np.maximum(rows, 0)], "(no operator)")


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _us(x: float) -> str:
    return f"{x / 1000:.2f} ms" if x >= 1000 else f"{x:.0f} µs"


def _join(items: list[str]) -> str:
    items = [str(i) for i in items]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _names(items: list[str]) -> str:
    """Operator and annotation names quoted, so that "## forward ##" or "a, b" read as one name."""
    return _join([f"“{i}”" for i in items])


# ---- the original rules -------------------------------------------------------------------------


def dataloader(ctx: Context) -> Recommendation | None:
    share = ctx.share("dataloader")
    if share <= DATALOADER_SHARE:
        return None
    return Recommendation(
        "dataloader",
        "Input loading takes a large part of each step",
        f"{_pct(share)} of the mean step time ({_us(ctx.avg['dataloader'])} of {_us(ctx.avg['duration'])}) "
        "is spent in the DataLoader. Load data in worker processes (DataLoader num_workers > 0, "
        "persistent_workers=True) and prefetch so the next batch is ready when the step starts.",
        {"dataloader_us": ctx.avg["dataloader"], "step_us": ctx.avg["duration"], "share": share},
    )


def data_parallel(ctx: Context) -> Recommendation | None:
    if not ctx.ops_where(lambda n: n == "DataParallel.forward").any() or len(ctx.gpus) < 2:
        return None
    ids = [g["id"] for g in ctx.gpus]
    kind = accelerator(ctx.profile).kind  # GPU, MTIA, XPU, …
    return Recommendation(
        "data_parallel",
        f"DataParallel on several {kind}s",
        f"torch.nn.DataParallel drives {kind}s {_join(ids)} from one process. DistributedDataParallel "
        f"(one process per {kind}) avoids the per-step scatter/gather and the Python GIL contention.",
        {"gpus": ids},
    )


def ddp_without_nccl(ctx: Context) -> Recommendation | None:
    profile = ctx.profile
    info = profile.meta.distributed_info or {}
    backend = str(info.get("backend", "")).lower()
    uses_ddp = bool(ctx.ops_where(lambda n: n == "DistributedDataParallel.forward").any()) or (
        isinstance(info.get("world_size"), int) and info["world_size"] > 1
    )
    gloo_ops = bool(ctx.ops_where(lambda n: n.startswith("gloo:")).any())
    nccl_ops = bool(ctx.ops_where(lambda n: n.startswith("nccl:")).any())
    gloo = ("gloo" in backend and "nccl" not in backend) or (gloo_ops and not nccl_ops)
    capable = [g["id"] for g in ctx.gpus if _cc(g) >= (3, 5)]
    if not (uses_ddp and gloo and capable):
        return None
    return Recommendation(
        "ddp_backend",
        "Distributed training on GPUs without NCCL",
        f"This worker trains distributed with the {backend or 'gloo'} backend although GPUs "
        f"{_join(capable)} support NCCL (compute capability ≥ 3.5). Use backend='nccl' for GPU "
        "tensors: its collectives run on the GPU and use NVLink/InfiniBand.",
        {"backend": backend or "gloo", "gpus": capable},
    )


def communication(ctx: Context) -> Recommendation | None:
    share = ctx.share("communication")
    if share <= COMMUNICATION_SHARE:
        return None
    return Recommendation(
        "communication",
        "Communication takes a large part of each step",
        f"{_pct(share)} of the mean step time ({_us(ctx.avg['communication'])}) is communication that no "
        "computation hides. Consider gradient compression, gradient accumulation over several "
        "micro-batches (no_sync), a larger batch per device, or an optimizer made for large batches (LAMB).",
        {"communication_us": ctx.avg["communication"], "step_us": ctx.avg["duration"], "share": share},
    )


def low_utilization(ctx: Context) -> Recommendation | None:
    low = [g for g in ctx.gpus if g["utilization_pct"] < LOW_UTILIZATION_PCT]
    if not low:
        return None
    ids = [g["id"] for g in low]
    kind = accelerator(ctx.profile).kind  # GPU, MTIA, XPU, … (analysis/core/accelerator.py)
    figures = ", ".join(f"{kind} {g['id']}: {g['utilization_pct']:.1f}%" for g in low)
    return Recommendation(
        "low_gpu_utilization",
        f"Low {kind} utilization",
        f"{kind} utilization over the steps is below {LOW_UTILIZATION_PCT:.0f}% ({figures}). If memory "
        f"allows, a larger batch size gives {kind}{'s' if len(ids) > 1 else ''} {_join(ids)} more work per "
        "kernel and per step.",
        {"gpus": {str(g["id"]): g["utilization_pct"] for g in low}},
    )


def amp(ctx: Context) -> Recommendation | None:
    capable = [g for g in ctx.gpus if _cc(g) >= (7, 0)]
    if not capable:
        return None
    rows = kernels.kernel_rows(ctx.profile)
    total = float(rows["dur"].sum())
    if total <= 0 or bool(rows["tc"].any()):
        return None
    eligible = float(rows["dur"][rows["op_tc_eligible"]].sum()) / total
    if eligible <= 0:
        return None
    return Recommendation(
        "amp",
        "Tensor cores unused",
        f"{_pct(eligible)} of kernel time is launched by operators that can run on tensor cores, but no "
        f"kernel used them (GPU {_join([g['id'] for g in capable])}, compute capability ≥ 7.0). "
        "Automatic mixed precision (torch.autocast with float16 or bfloat16), or TF32 on Ampere and "
        "later (torch.backends.cuda.matmul.allow_tf32), lets these operators use tensor cores.",
        {"eligible_kernel_share": eligible, "kernel_us": total},
    )


def memory_peak(ctx: Context) -> Recommendation | None:
    try:
        from torch_tb_profiler.analysis.memory import usage as memory
    except ImportError:  # pragma: no cover - the memory view ships with the package
        return None
    if not len(ctx.profile.memory):
        return None
    high = []
    for d in memory.devices(ctx.profile):
        peak, total = d.get("peak_allocated_bytes"), d.get("total_memory_bytes")
        if d.get("device_type") == 1 and peak and total and peak > MEMORY_PEAK_SHARE * total:
            high.append({"device": d["device"], "peak_allocated_bytes": peak, "total_memory_bytes": total})
    if not high:
        return None
    figures = ", ".join(
        f"{h['device']}: {h['peak_allocated_bytes'] / 2**30:.2f} of {h['total_memory_bytes'] / 2**30:.2f} GiB"
        for h in high
    )
    return Recommendation(
        "memory_peak",
        "Device memory nearly full",
        f"Peak allocated memory exceeds {MEMORY_PEAK_SHARE:.0%} of device memory ({figures}). "
        "Activation checkpointing (torch.utils.checkpoint) or mixed precision lowers the peak and "
        "leaves room for a larger batch.",
        {"devices": high},
    )


# ---- further rules ------------------------------------------------------------------------------


def host_bound(ctx: Context) -> Recommendation | None:
    """The GPU waits while the host runs operators or launches work (not the DataLoader)."""
    if not ctx.gpus or ctx.avg["duration"] <= 0:
        return None
    waiting = ctx.avg["cpu_exec"] + ctx.avg["runtime"] + ctx.avg["other"]
    share = waiting / ctx.avg["duration"]
    host_busy = (ctx.avg["cpu_exec"] + ctx.avg["runtime"]) / ctx.avg["duration"]
    if share < HOST_BOUND_SHARE or host_busy < HOST_BUSY_SHARE:
        return None
    # the outermost host ranges inside steps that overlap the time the device is idle
    dev = ctx.profile.device
    t0 = ctx.t0
    busy = iv.union(dev["ts"].to_numpy(dtype=np.float64) - t0, dev["end"].to_numpy(dtype=np.float64) - t0)
    idle = iv.subtract(ctx.step_intervals, busy)
    ops = ctx.profile.ops
    parent = ops["parent"].to_numpy(dtype=np.int64)
    op_names = ctx.op_names
    is_step = breakdown.profiler_step_ops(ctx.profile)
    outer = (
        ~is_step & ((parent < 0) | is_step[np.maximum(parent, 0)]) & ~breakdown.dataloader_ops(ctx.profile)
    )
    overlap = iv.overlap_with_each(
        idle,
        ops["ts"].to_numpy(dtype=np.float64)[outer] - t0,
        ops["end"].to_numpy(dtype=np.float64)[outer] - t0,
    )
    by_name = pd.Series(overlap).groupby(op_names[outer]).sum().sort_values(ascending=False).head(3)
    by_name = by_name[by_name > 0]
    top = [{"name": str(n), "idle_overlap_us": float(v)} for n, v in by_name.items()]
    n_steps = max(len(ctx.steps), 1)
    where = f" The host was mostly in {_names([t['name'] for t in top])} then." if top else ""
    acc = accelerator(ctx.profile)
    graphs = f", {acc.graphs}" if acc.graphs else ""
    return Recommendation(
        "host_bound",
        f"{acc.kind} idle while the host works",
        f"In {_pct(share)} of the mean step ({_us(waiting)}) no kernel, copy or set runs on the {acc.kind} while the "
        f"host runs operators or launches work (CPU Exec {_us(ctx.avg['cpu_exec'])}, Runtime "
        f"{_us(ctx.avg['runtime'])}, Other {_us(ctx.avg['other'])}).{where} Move host work out of the step, "
        f"overlap it with device work, or reduce Python overhead (torch.compile{graphs}).",
        {
            "host_wait_us": waiting,
            "share": share,
            "idle_us_per_step": iv.total(idle) / n_steps,
            "top_host_ranges": top,
        },
    )


def launch_bound(ctx: Context) -> Recommendation | None:
    rows = kernels.kernel_rows(ctx.profile)
    if rows.empty or ctx.steps.empty:
        return None
    dev = ctx.profile.device
    k = dev[dev["kind"].to_numpy() == "kernel"]
    inside = ctx.in_steps(k["ts"].to_numpy(dtype=np.float64), k["end"].to_numpy(dtype=np.float64)) > 0
    n_steps = len(ctx.steps)
    per_step = inside.sum() / n_steps
    dur = k["dur"].to_numpy(dtype=np.float64)[inside]
    if per_step < MIN_KERNELS_PER_STEP or dur.size == 0:
        return None
    short = dur < SHORT_KERNEL_US
    short_share = float(short.mean())
    if short_share < SHORT_KERNEL_SHARE:
        return None
    rt = k["runtime"].to_numpy(dtype=np.int64)[inside]
    rts = ctx.profile.runtimes
    launch = rts["dur"].to_numpy(dtype=np.float64)[rt[rt >= 0]] if len(rts) else np.zeros(0)
    launch_total = float(launch.sum())
    if launch_total < LAUNCH_TO_KERNEL_RATIO * float(dur.sum()):
        return None  # the host launches faster than the device works: not launch-bound
    kernel_names = names.values(ctx.profile, "device")[dev["kind"].to_numpy() == "kernel"][inside][short]
    graph = {"CUDA graphs": "a CUDA graph", "HIP graphs": "a HIP graph"}.get(
        accelerator(ctx.profile).graphs or ""
    )
    capture = f", capture the step in {graph}," if graph else ""
    top = pd.Series(kernel_names).value_counts().head(3)
    return Recommendation(
        "launch_bound",
        "Many tiny kernels",
        f"{per_step:.0f} kernels run per step and {_pct(short_share)} of them last under "
        f"{SHORT_KERNEL_US:.0f} µs (mean kernel {dur.mean():.1f} µs, mean launch call "
        f"{launch.mean() if launch.size else 0:.1f} µs, launch calls {_us(launch_total / n_steps)} per step "
        f"against {_us(float(dur.sum()) / n_steps)} of kernels): launch overhead rivals the work. Fuse element-wise "
        f"operations (torch.compile){capture} or use fused optimizers "
        "(foreach/fused=True).",
        {
            "kernels_per_step": float(per_step),
            "short_kernel_share": short_share,
            "mean_kernel_us": float(dur.mean()),
            "mean_launch_us": float(launch.mean()) if launch.size else None,
            "launch_us_per_step": launch_total / n_steps,
            "kernel_us_per_step": float(dur.sum()) / n_steps,
            "top_short_kernels": [{"name": str(n), "calls": int(c)} for n, c in top.items()],
        },
    )


def synchronizing(ctx: Context) -> Recommendation | None:
    rts = ctx.profile.runtimes
    if not len(rts) or ctx.step_time <= 0:
        return None
    call_names = names.values(ctx.profile, "runtimes")
    sync = names.mask(ctx.profile, "runtimes", lambda n: n in SYNC_CALLS)
    if not sync.any():
        return None
    t = ctx.in_steps(rts["ts"].to_numpy(dtype=np.float64)[sync], rts["end"].to_numpy(dtype=np.float64)[sync])
    total = float(t.sum())
    share = total / ctx.step_time
    if share < SYNC_SHARE:
        return None
    calls = pd.DataFrame(
        {
            "name": call_names[sync],
            "op": ctx.op_name(rts["op"].to_numpy(dtype=np.int64)[sync]),
            "t": t,
        }
    )
    calls = calls[calls["t"] > 0]
    by_call = calls.groupby("name")["t"].agg(["size", "sum"]).sort_values("sum", ascending=False)
    by_op = calls.groupby("op")["t"].sum().sort_values(ascending=False).head(3)
    listing = ", ".join(f"{n} ×{int(r['size'])} ({_us(r['sum'])})" for n, r in by_call.iterrows())
    return Recommendation(
        "synchronization",
        "Synchronizing calls inside steps",
        f"The host blocks on the device for {_pct(share)} of step time: {listing}, issued from "
        f"{_names([str(o) for o in by_op.index])}. Avoid .item(), .cpu(), .tolist(), printing tensors "
        "and explicit synchronize() inside the step; keep metrics on the device and read them every N steps.",
        {
            "sync_us": total,
            "share": share,
            "calls": {
                str(n): {"count": int(r["size"]), "us": float(r["sum"])} for n, r in by_call.iterrows()
            },
            "top_ops": {str(o): float(v) for o, v in by_op.items()},
        },
    )


def pageable_copies(ctx: Context) -> Recommendation | None:
    dev = ctx.profile.device
    if not len(dev) or ctx.step_time <= 0:
        return None
    sel = (dev["kind"] == "memcpy").to_numpy() & names.mask(ctx.profile, "device", lambda n: "Pageable" in n)
    if not sel.any():
        return None
    t = ctx.in_steps(dev["ts"].to_numpy(dtype=np.float64)[sel], dev["end"].to_numpy(dtype=np.float64)[sel])
    share = float(t.sum()) / ctx.step_time
    if share < PAGEABLE_SHARE:
        return None
    nbytes = float(np.nansum(dev["bytes"].to_numpy(dtype=np.float64)[sel]))
    ops = pd.Series(ctx.op_name(dev["op"].to_numpy(dtype=np.int64)[sel])).value_counts().head(3)
    return Recommendation(
        "pageable_memcpy",
        "Copies from pageable host memory",
        f"{int(sel.sum())} copies between pageable host memory and the device move {nbytes / 2**20:.1f} MiB "
        f"and take {_pct(share)} of step time (launched by {_names([str(o) for o in ops.index])}). Pinned "
        "memory (DataLoader pin_memory=True, tensor.pin_memory()) with .to(device, non_blocking=True) "
        "makes them faster and lets them overlap computation.",
        {
            "copies": int(sel.sum()),
            "bytes": nbytes,
            "us_in_steps": float(t.sum()),
            "share": share,
            "ops": {str(o): int(c) for o, c in ops.items()},
        },
    )


def dataloader_stalls(ctx: Context) -> Recommendation | None:
    table = ctx.per_step
    if len(table) < 3:
        return None
    dl = table["dataloader"].to_numpy()
    durations = table["duration"].to_numpy()
    median = float(np.median(dl))
    stalled = (dl > STALL_FACTOR * median) & (dl > STALL_STEP_SHARE * durations)
    if not stalled.any() or stalled.sum() > len(table) // 2:
        return None
    which = [
        {"step": str(n), "dataloader_us": float(d), "step_us": float(s)}
        for n, d, s in zip(table["number"][stalled], dl[stalled], durations[stalled], strict=True)
    ]
    listing = ", ".join(f"step {w['step']}: {_us(w['dataloader_us'])}" for w in which)
    return Recommendation(
        "dataloader_stall",
        "DataLoader stalls in some steps",
        f"The DataLoader takes much longer in {len(which)} of {len(table)} steps ({listing}; median "
        f"{_us(median)}). Workers fall behind now and then: raise prefetch_factor or num_workers, use "
        "persistent_workers=True, or check for slow samples and storage hiccups.",
        {"median_dataloader_us": median, "steps": which},
    )


def low_occupancy(ctx: Context) -> Recommendation | None:
    if not accelerator(ctx.profile).sm_figures:
        return None  # blocks per SM and occupancy are CUPTI figures (CUDA)
    table = kernels.kernel_table(ctx.profile, "name")
    if table.empty:
        return None
    total = float(table["total_us"].sum())
    # communication kernels run few blocks by design: rank the compute kernels only
    comm = set(names.values(ctx.profile, "device")[breakdown.comm_kernel_mask(ctx.profile)])
    table = table[~table["name"].isin(comm)]
    flagged = []
    for rec in table.head(TOP_KERNELS).to_dict(orient="records"):
        share = rec["total_us"] / total if total else 0.0
        occ, bps = rec["mean_achieved_occupancy_pct"], rec["mean_blocks_per_sm"]
        low_occ = occ is not None and not np.isnan(occ) and occ < LOW_OCCUPANCY_PCT
        few_blocks = bps is not None and not np.isnan(bps) and bps < 1.0
        if share >= TOP_KERNEL_MIN_SHARE and (low_occ or few_blocks):
            flagged.append(
                {
                    "name": rec["name"],
                    "share": share,
                    "mean_achieved_occupancy_pct": None if occ is None or np.isnan(occ) else float(occ),
                    "mean_blocks_per_sm": None if bps is None or np.isnan(bps) else float(bps),
                }
            )
    if not flagged:
        return None
    listing = "; ".join(
        f"{f['name'][:80]} ({_pct(f['share'])} of kernel time, occupancy "
        f"{_fmt(f['mean_achieved_occupancy_pct'], '{:.0f}%')}, blocks/SM {_fmt(f['mean_blocks_per_sm'], '{:.2f}')})"
        for f in flagged
    )
    return Recommendation(
        "low_occupancy",
        "Top kernels keep the SMs poorly occupied",
        f"Among the {TOP_KERNELS} most expensive kernels: {listing}. Fewer than one block per SM or under "
        f"{LOW_OCCUPANCY_PCT:.0f}% estimated occupancy leaves SMs idle: larger batches or tensor shapes, "
        "another algorithm (torch.backends.cudnn.benchmark=True), or a different data layout "
        "(channels_last) can help.",
        {"kernels": flagged},
    )


def _fmt(value: float | None, spec: str) -> str:
    return "n/a" if value is None else spec.format(value)


def _cc(gpu: dict[str, Any]) -> tuple[int, int]:
    cc = gpu.get("compute_capability")
    if not cc:
        return (0, 0)
    major, _, minor = str(cc).partition(".")
    try:
        return int(major), int(minor or 0)
    except ValueError:
        return (0, 0)


RULES: tuple[Callable[[Context], Recommendation | None], ...] = (
    dataloader,
    data_parallel,
    ddp_without_nccl,
    communication,
    low_utilization,
    amp,
    memory_peak,
    host_bound,
    launch_bound,
    synchronizing,
    pageable_copies,
    dataloader_stalls,
    low_occupancy,
)


def recommendations(profile) -> list[dict[str, Any]]:
    """Every rule that fires, in rule order, as dicts {id, title, text, evidence} (cached)."""
    return memoized(profile, "recommendations", lambda: _recommendations(profile))


# Rules that read device activity: none of them fires on a trace whose device records were lost.
DEVICE_RULES = frozenset(
    {
        data_parallel,
        communication,
        low_utilization,
        amp,
        host_bound,
        launch_bound,
        pageable_copies,
        low_occupancy,
    }
)


def _recommendations(profile) -> list[dict[str, Any]]:
    ctx = Context(profile)
    lost = lost_launches(profile) > 0  # launches without any device record (docs/metrics.md)
    out = []
    for rule in RULES:
        if lost and rule in DEVICE_RULES:
            continue
        found = rule(ctx)
        if found is not None:
            out.append(found.to_dict())
    return out

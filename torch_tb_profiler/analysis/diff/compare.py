"""Diff: one profile (the baseline) against another (the experiment), for the Diff view and
``torch-tb-profiler compare``. Definitions are in docs/metrics.md ("Diff"); in short:

- Step level: per-step durations and the eight breakdown categories (breakdown.per_step) on each
  side, summarised as mean/min/median/max; delta = experiment − baseline of the means; rel =
  delta / baseline mean (None when the baseline is 0). A change is *significant* when |delta| is
  larger than the noise, the larger of the two sides' half-ranges ((max − min) / 2 over steps).
  A side with one step has no spread: its half-range is 0.
- Operators and kernels are joined by name (operators optionally by name + input shape; kernels
  that are left over on both sides are then joined one-to-one by kernel_family.family). Their
  figures are per step: the profile's totals divided by its number of steps. Rows are sorted by
  |delta| of device self time when either side ran on a GPU, else of host self time. Each per-step
  figure has a noise too: the larger of the two sides' half-ranges of the row's per-step values
  (operators by host start in the steps' host ranges, kernels by start in the steps' ranges; a step
  without a call counts 0, except for a kernel's mean, taken over the steps that ran it).
- Waterfall: the mean step time change split into the largest per-operator changes of that same
  self time (top N by |delta|) and "other" = the total change − their sum.
- Memory: peak allocated/reserved per device label; distributed: this profile's own per-step
  overlap figures and collectives (distributed.analyze_job on the one worker).

Anything one side lacks is reported in ``notes`` and as None, never as 0.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

import numpy as np
import pandas as pd

from torch_tb_profiler.analysis.core.accelerator import accelerator
from torch_tb_profiler.analysis.core.cache import memoized
from torch_tb_profiler.analysis.core.plain import clean
from torch_tb_profiler.analysis.core.steps import steps as step_table
from torch_tb_profiler.analysis.device import breakdown, gpu_metrics
from torch_tb_profiler.analysis.diff import waits_change
from torch_tb_profiler.analysis.diff.kernel_family import family
from torch_tb_profiler.analysis.memory import usage as memory
from torch_tb_profiler.analysis.ops import kernels, operators
from torch_tb_profiler.analysis.overview import page as overview
from torch_tb_profiler.analysis.roofline.mfu import mfu
from torch_tb_profiler.model import intervals as iv

OP_FIELDS = ("calls", "host_self_us", "host_total_us", "device_self_us", "device_total_us")
KERNEL_FIELDS = ("calls", "total_us", "mean_us", "mean_blocks_per_sm", "mean_achieved_occupancy_pct")
KERNEL_PER_STEP = ("calls", "total_us")  # the other kernel figures are means over calls
KERNEL_NOISY = ("calls", "total_us", "mean_us")  # kernel figures with a per-step spread (noise)
GPU_FIELDS = ("utilization_pct", "sm_efficiency_pct", "achieved_occupancy_pct", "tensor_core_pct")
MEMORY_FIELDS = ("peak_allocated_bytes", "peak_reserved_bytes")
DEFAULT_WATERFALL = 10


# ---- one side ---------------------------------------------------------------------------------------


def _stats(values: np.ndarray) -> dict[str, Any]:
    if values.size == 0:
        return {"count": 0, "mean": None, "min": None, "median": None, "max": None}
    return {
        "count": int(values.size),
        "mean": float(values.mean()),
        "min": float(values.min()),
        "median": float(np.median(values)),
        "max": float(values.max()),
    }


def side(profile) -> dict[str, Any]:
    """What the diff needs from one profile, computed from its cached analyses (memoized)."""
    return memoized(profile, "diff.side", lambda: _side(profile))


def _side(profile) -> dict[str, Any]:
    per_step = breakdown.per_step(profile)
    dev_type = overview.device_type(profile)
    n_steps = len(per_step)
    return {
        "label": {"run": profile.run, "worker": profile.worker, "span": profile.span},
        "device_type": dev_type,
        "matrix_units": accelerator(profile).matrix_units,
        "has_profiler_steps": bool(len(profile.steps)),
        "steps": n_steps,
        "step_time": _stats(per_step["duration"].to_numpy(dtype=np.float64)),
        "categories": {c: _stats(per_step[c].to_numpy(dtype=np.float64)) for c in breakdown.CATEGORIES},
        "shown": set(overview.categories(profile)) if n_steps else set(),
        "gpus": {g["id"]: g for g in gpu_metrics.gpu_summary(profile)},
        "scale": 1.0 / n_steps if n_steps else 1.0,
        "memory": {d["device"]: d for d in memory.devices(profile) if d["has_totals"]},
        # records without totals (PyTorch < 1.10): memory is there, its peaks are not
        "memory_untotalled": [d["device"] for d in memory.devices(profile) if not d["has_totals"]],
        "distributed": _distributed(profile),
        "mfu": mfu(profile),
    }


def _distributed(profile) -> dict[str, Any] | None:
    if not (len(profile.comms) or profile.meta.distributed_info):
        return None
    from torch_tb_profiler.analysis.distributed import job as distributed

    w = distributed.summarize_worker(profile.worker, profile)
    job = distributed.analyze_job([w])
    return {
        "rank": w.rank,
        "overlap": job["overlap"][w.worker]["mean"],
        "collectives": {r["collective"]: r for r in job["comm_ops"][w.worker]},
    }


# ---- changes ----------------------------------------------------------------------------------------


def change(base: float | None, exp: float | None) -> dict[str, Any]:
    """{baseline, experiment, delta, rel}; delta None when a side is None; rel None when the baseline
    is 0 (or a side is missing)."""
    if base is None or exp is None:
        return {"baseline": base, "experiment": exp, "delta": None, "rel": None}
    delta = exp - base
    return {"baseline": base, "experiment": exp, "delta": delta, "rel": delta / base if base else None}


def _mfu_change(b: dict[str, Any], e: dict[str, Any]) -> dict[str, Any]:
    """MFU (fraction) of each side and its change; noise = the larger half-range of the per-step MFU."""
    out = change(b["mean"], e["mean"])
    spreads = [
        (max(v) - min(v)) / 2
        for v in ([s["mfu"] for s in m["per_step"] if s["mfu"] is not None] for m in (b, e))
        if v
    ]
    out["noise"] = max(spreads) if spreads and out["delta"] is not None else None
    out["significant"] = out["delta"] is not None and abs(out["delta"]) > (out["noise"] or 0.0)
    out["note"] = None if out["delta"] is not None else (b["reason"] if b["mean"] is None else e["reason"])
    return out


def _noisy_change(b: dict[str, Any], e: dict[str, Any]) -> dict[str, Any]:
    """Change of the means with the spread of both sides and the significance rule."""
    out = change(b["mean"], e["mean"])
    if out["delta"] is None:  # a side without steps (an empty trace): no change, but its spread all the same
        return {**out, "noise": None, "significant": False, "spread": {"baseline": b, "experiment": e}}
    noise = max((s["max"] - s["min"]) / 2 for s in (b, e))
    out["noise"] = noise
    out["significant"] = abs(out["delta"]) > noise
    out["spread"] = {"baseline": b, "experiment": e}
    return out


def _step_level(b: dict[str, Any], e: dict[str, Any], notes: list[str]) -> tuple[dict, dict]:
    steps = _noisy_change(b["step_time"], e["step_time"])
    for name, s in (("baseline", b), ("experiment", e)):
        if not s["steps"]:
            notes.append(f"the {name} has no step and no event to make one of: no step-level figures")
        elif not s["has_profiler_steps"]:
            notes.append(f"the {name} has no ProfilerStep: its whole trace counts as one step")
        elif s["steps"] == 1:
            notes.append(f"the {name} has one step: its spread (noise) is unknown and counted as 0")
    cats: dict[str, Any] = {}
    for c in breakdown.CATEGORIES:
        has_b, has_e = c in b["shown"], c in e["shown"]
        if not has_b and not has_e:
            continue
        if has_b and has_e:
            cats[c] = _noisy_change(b["categories"][c], e["categories"][c])
            continue
        lacking, lacking_side = ("baseline", b) if not has_b else ("experiment", e)
        cpu_only = c in breakdown.GPU_CATEGORIES and lacking_side["device_type"] == "CPU"
        why = "is a CPU-only profile" if cpu_only else "has no such time"
        entry = _noisy_change(b["categories"][c], e["categories"][c])
        entry[lacking] = None
        entry["spread"] = {**entry["spread"], lacking: None}
        entry.update(delta=None, rel=None, noise=None, significant=False)
        entry["note"] = f"the {lacking} {why}: {breakdown.LABELS[c]} is not compared"
        notes.append(entry["note"])
        cats[c] = entry
    return steps, cats


def _gpu_level(b: dict[str, Any], e: dict[str, Any], notes: list[str]) -> list[dict[str, Any]]:
    """GPUs joined by id; when each side ran kernels on exactly one GPU, those two (two ranks)."""
    if len(b["gpus"]) == 1 and len(e["gpus"]) == 1:
        pairs = [(next(iter(b["gpus"])), next(iter(e["gpus"])))]
    else:
        pairs = [
            (g if g in b["gpus"] else None, g if g in e["gpus"] else None)
            for g in sorted({*b["gpus"], *e["gpus"]})
        ]
    kind = e["device_type"] if e["device_type"] != "CPU" else b["device_type"]  # GPU, MTIA, …
    out = []
    for ib, ie in pairs:
        gb, ge = b["gpus"].get(ib), e["gpus"].get(ie)
        row: dict[str, Any] = {
            "id": ie if ie is not None else ib,
            "baseline_id": ib,
            "name": (ge or gb or {}).get("name"),
        }
        for f in GPU_FIELDS:
            row[f] = change(None if gb is None else gb[f], None if ge is None else ge[f])
            if gb is not None and ge is not None and (gb[f] is None) != (ge[f] is None):
                lacking = "baseline" if gb[f] is None else "experiment"
                what = f.removesuffix("_pct").replace("_", " ")
                notes.append(f"{kind} {row['id']}: the {lacking}'s trace gives no {what}: it is not compared")
        if gb is None or ge is None:
            notes.append(
                f"{kind} {row['id']} ran kernels only in the {'experiment' if gb is None else 'baseline'}"
            )
        out.append(row)
    return out


# ---- operator and kernel joins ----------------------------------------------------------------------


def _scaled(table: pd.DataFrame, fields: tuple[str, ...], per_step: tuple[str, ...], scale: float) -> dict:
    cols = {f: table[f].to_numpy(dtype=np.float64) for f in fields}
    for f in per_step:
        cols[f] = cols[f] * scale
    return cols


def pair_by_key(keys_b: list[tuple], keys_e: list[tuple]) -> list[tuple[int | None, int | None]]:
    """(baseline index, experiment index) for every key of either side; None where a side lacks it."""
    where_e = {k: j for j, k in enumerate(keys_e)}
    pairs: list[tuple[int | None, int | None]] = [(i, where_e.pop(k, None)) for i, k in enumerate(keys_b)]
    return pairs + [(None, j) for j in where_e.values()]


def _join(
    pairs: list[tuple[int | None, int | None]],
    cols_b: dict[str, np.ndarray],
    cols_e: dict[str, np.ndarray],
    fields: tuple[str, ...],
    additive: tuple[str, ...],
    noise_b: dict[str, np.ndarray],
    noise_e: dict[str, np.ndarray],
) -> list[dict[str, Any]]:
    """Rows for the pairs: status, both sides' figures, delta and rel per field, and for the fields of
    ``noise_b``/``noise_e`` the noise (the larger side's half-range; a side without the row has 0)
    and ``significant`` (|delta| > noise; False without a delta). A side that lacks the row counts as
    0 in the delta of an additive field (rel None when the baseline lacks it); other fields (means)
    and figures the trace cannot give (None) then have no delta."""
    rows = []
    for i, j in pairs:
        fb = None if i is None else {f: _num(cols_b[f][i]) for f in fields}
        fe = None if j is None else {f: _num(cols_e[f][j]) for f in fields}
        delta: dict[str, float | None] = {}
        rel: dict[str, float | None] = {}
        for f in fields:
            missing = 0.0 if f in additive else None
            c = change(missing if fb is None else fb[f], missing if fe is None else fe[f])
            delta[f], rel[f] = c["delta"], c["rel"]
        noise = {
            f: max(0.0 if i is None else float(noise_b[f][i]), 0.0 if j is None else float(noise_e[f][j]))
            for f in noise_b
        }
        significant = {f: delta[f] is not None and abs(delta[f]) > n for f, n in noise.items()}  # type: ignore[arg-type]
        status = "both" if fb and fe else ("removed" if fb else "added")
        rows.append(
            {
                "status": status,
                "baseline": fb,
                "experiment": fe,
                "delta": delta,
                "rel": rel,
                "noise": noise,
                "significant": significant,
            }
        )
    return rows


def _half_ranges(
    frame: pd.DataFrame, codes: list[str], keys: list[str], fields: tuple[str, ...], n_steps: int
) -> pd.DataFrame:
    """Per key: (max − min) / 2 over the steps of each field's per-step sum, a step without a call
    counting 0. ``frame``: one row per call with ``codes`` (integer group keys), ``keys`` (their
    labels), ``step`` (-1: outside every step) and ``fields``. With fewer than two steps: no rows."""
    inside = frame[frame["step"].to_numpy() >= 0]
    if n_steps < 2 or inside.empty:
        return pd.DataFrame({c: [] for c in (*keys, *fields)})
    per = inside.groupby([*codes, "step"], sort=False)[list(fields)].sum()
    g = per.groupby(level=list(range(len(codes))), sort=False)
    hi, lo = g.max().to_numpy(dtype=np.float64), g.min().to_numpy(dtype=np.float64)
    partial = (g.size() < n_steps).to_numpy()[:, None]  # a step without a call: 0 in the range
    half = (np.where(partial, np.maximum(hi, 0.0), hi) - np.where(partial, np.minimum(lo, 0.0), lo)) / 2
    out = pd.DataFrame(half, columns=list(fields), index=g.max().index)
    labels = inside.groupby(codes, sort=False)[keys].first()
    # labels may repeat over codes (two shape texts with one label): keep the largest range
    return pd.concat([labels, out], axis=1).groupby(keys, sort=False, as_index=False).max()


def _aligned(table: pd.DataFrame, keys: list[str], spread: pd.DataFrame, fields: tuple[str, ...]) -> dict:
    """The spread's columns in the table's row order (0 for rows without one)."""
    merged = table[keys].merge(spread, on=keys, how="left") if len(spread) else None
    return {
        f: np.zeros(len(table)) if merged is None else merged[f].fillna(0.0).to_numpy(dtype=np.float64)
        for f in fields
    }


def op_noise(profile, group_by: str) -> dict[str, np.ndarray]:
    """Per row of operator_table(profile, group_by): the half-range over steps of each OP_FIELDS
    figure (memoized)."""
    return memoized(profile, f"diff.op_noise.{group_by}", lambda: _op_noise(profile, group_by))


def _op_noise(profile, group_by: str) -> dict[str, np.ndarray]:
    rows = operators.operator_rows(profile)
    s = step_table(profile)
    ts = profile.ops["ts"].to_numpy(dtype=np.float64)[rows["op"].to_numpy()]
    step = iv.holding(
        (s["host_start"].to_numpy(dtype=np.float64), s["host_end"].to_numpy(dtype=np.float64)), ts
    )
    codes = ["name_code"] if group_by == "name" else ["name_code", "shape_code"]
    keys = ["name"] if group_by == "name" else ["name", "input_shape"]
    frame = rows[[*codes, *keys]].assign(
        step=step,
        calls=1.0,
        **{f: rows[f.removesuffix("_us")].to_numpy(dtype=np.float64) for f in OP_FIELDS if f != "calls"},
    )
    spread = _half_ranges(frame, codes, keys, OP_FIELDS, len(s))
    return _aligned(operators.operator_table(profile, group_by), keys, spread, OP_FIELDS)


def kernel_noise(profile) -> dict[str, np.ndarray]:
    """Per row of kernel_table(profile, "name"): the half-range over steps of calls, total and mean
    (the mean over the steps that ran the kernel), memoized."""
    return memoized(profile, "diff.kernel_noise", lambda: _kernel_noise(profile))


def _kernel_noise(profile) -> dict[str, np.ndarray]:
    rows = kernels.kernel_rows(profile)
    s = step_table(profile)
    dev = profile.device
    ts = dev["ts"].to_numpy(dtype=np.float64)[dev["kind"].to_numpy() == "kernel"] if len(dev) else np.zeros(0)
    step = iv.holding((s["start"].to_numpy(dtype=np.float64), s["end"].to_numpy(dtype=np.float64)), ts)
    frame = pd.DataFrame(
        {
            "name_code": rows["name_code"],
            "name": rows["name"],
            "step": step,
            "calls": 1.0,
            "total_us": rows["dur"],
        }
    )
    spread = _half_ranges(frame, ["name_code"], ["name"], ("calls", "total_us"), len(s))
    inside = frame[step >= 0]
    if len(s) >= 2 and len(inside):
        per = inside.groupby(["name_code", "step"], sort=False)[["calls", "total_us"]].sum()
        mean = (per["total_us"] / per["calls"]).groupby(level=0, sort=False)
        means = pd.DataFrame({"mean_us": (mean.max() - mean.min()) / 2})
        labels = inside.groupby("name_code", sort=False)[["name"]].first()
        means = pd.concat([labels, means], axis=1).groupby("name", sort=False, as_index=False).max()
        spread = spread.merge(means, on="name", how="left")
    else:
        spread = spread.assign(mean_us=np.zeros(len(spread)))
    return _aligned(kernels.kernel_table(profile, "name"), ["name"], spread, KERNEL_NOISY)


def _num(v: Any) -> float | None:
    v = float(v)
    return None if np.isnan(v) else v


def _sort(rows: list[dict[str, Any]], field: str) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: (-abs(r["delta"][field] or 0.0), r["name"]))


def operator_rows(b_prof, e_prof, b: dict, e: dict, group_by: str, metric: str) -> list[dict[str, Any]]:
    tb = operators.operator_table(b_prof, group_by)
    te = operators.operator_table(e_prof, group_by)
    key_cols = ["name"] if group_by == "name" else ["name", "input_shape"]
    keys_b = list(tb[key_cols].itertuples(index=False, name=None))
    keys_e = list(te[key_cols].itertuples(index=False, name=None))
    cols_b = _scaled(tb, OP_FIELDS, OP_FIELDS, b["scale"])
    cols_e = _scaled(te, OP_FIELDS, OP_FIELDS, e["scale"])
    pairs = pair_by_key(keys_b, keys_e)
    rows = _join(
        pairs, cols_b, cols_e, OP_FIELDS, OP_FIELDS, op_noise(b_prof, group_by), op_noise(e_prof, group_by)
    )
    for row, (i, j) in zip(rows, pairs, strict=True):
        key = keys_b[i] if i is not None else keys_e[j]  # type: ignore[index]
        row["name"] = key[0]
        if group_by != "name":
            row["input_shape"] = key[1]
    return _sort(rows, metric)


def kernel_rows(b_prof, e_prof, b: dict, e: dict) -> list[dict[str, Any]]:
    tb = kernels.kernel_table(b_prof, "name")
    te = kernels.kernel_table(e_prof, "name")
    names_b = [str(n) for n in tb["name"]]
    names_e = [str(n) for n in te["name"]]
    cols_b = _scaled(tb, KERNEL_FIELDS, KERNEL_PER_STEP, b["scale"])
    cols_e = _scaled(te, KERNEL_FIELDS, KERNEL_PER_STEP, e["scale"])
    pairs, renamed = match_kernels(names_b, names_e)
    rows = _join(
        pairs, cols_b, cols_e, KERNEL_FIELDS, KERNEL_PER_STEP, kernel_noise(b_prof), kernel_noise(e_prof)
    )
    for row, (i, j) in zip(rows, pairs, strict=True):
        row["name"] = names_e[j] if j is not None else names_b[i]  # type: ignore[index]
        if (i, j) in renamed:
            row["status"] = "renamed"
            row["baseline_name"] = names_b[i]  # type: ignore[index]
    return _sort(rows, "total_us")


def match_kernels(
    names_b: list[str], names_e: list[str]
) -> tuple[list[tuple[int | None, int | None]], set[tuple[int, int]]]:
    """Pairs (baseline index, experiment index) by exact name, then the leftovers one-to-one by family
    (only where a family has exactly one leftover kernel on each side)."""
    where_e = {n: j for j, n in enumerate(names_e)}
    pairs: list[tuple[int | None, int | None]] = []
    left_b: list[int] = []
    for i, n in enumerate(names_b):
        j = where_e.pop(n, None)
        if j is None:
            left_b.append(i)
        else:
            pairs.append((i, j))
    fam_b: dict[str, list[int]] = {}
    for i in left_b:
        fam_b.setdefault(family(names_b[i]), []).append(i)
    fam_e: dict[str, list[int]] = {}
    for j in where_e.values():
        fam_e.setdefault(family(names_e[j]), []).append(j)
    renamed: set[tuple[int, int]] = set()
    matched_e: set[int] = set()
    for i in left_b:
        f = family(names_b[i])
        if len(fam_b[f]) == 1 and len(fam_e.get(f, ())) == 1:
            j = fam_e[f][0]
            pairs.append((i, j))
            renamed.add((i, j))
            matched_e.add(j)
        else:
            pairs.append((i, None))
    pairs += [(None, j) for j in where_e.values() if j not in matched_e]
    return pairs, renamed


def waterfall(
    op_rows: list[dict[str, Any]], cats: dict[str, Any], total: float | None, gpu: bool, top: int
) -> dict[str, Any]:
    """The step-time change as its largest parts plus "other" (the parts and "other" sum to total).

    Parts: the breakdown categories' changes, except that the operators' time replaces the categories
    it makes up (kernel, memcpy and memset by device self time on GPU profiles; CPU Exec by host self
    time on CPU-only ones): one part per operator. The ``top`` largest |changes| are listed."""
    metric = "device_self_us" if gpu else "host_self_us"
    if total is None:
        return {"metric": metric, "total_delta_us": None, "items": [], "other_us": None}
    replaced = breakdown.GPU_CATEGORIES if gpu else ("cpu_exec",)
    parts = [
        {"name": breakdown.LABELS[c], "kind": "category", "delta_us": v["delta"]}
        for c, v in cats.items()
        if c not in replaced and v["delta"]
    ]
    parts += [{"name": r["name"], "kind": "operator", "delta_us": r["delta"][metric]} for r in op_rows]
    parts = [p for p in parts if p["delta_us"]]
    parts.sort(key=lambda p: (-abs(p["delta_us"]), p["name"]))
    items = parts[:top]
    other = total - sum(i["delta_us"] for i in items)
    return {"metric": metric, "total_delta_us": total, "items": items, "other_us": other}


# ---- memory and distributed -------------------------------------------------------------------------


def memory_pairs(b: dict[str, dict], e: dict[str, dict]) -> list[tuple[str | None, str | None]]:
    """Memory devices (label -> devices() entry) of the two sides, paired by role: when each side
    has exactly one accelerator (any type but CPU), those two, whatever their labels (GPU0 on one
    host, GPU1 or MTIA0 on another); every other device by its label."""
    acc_b = [d for d, v in b.items() if v["device_type"] != 0]
    acc_e = [d for d, v in e.items() if v["device_type"] != 0]
    pairs: list[tuple[str | None, str | None]] = []
    if len(acc_b) == 1 and len(acc_e) == 1:
        pairs.append((acc_b[0], acc_e[0]))
        b = {d: v for d, v in b.items() if d != acc_b[0]}
        e = {d: v for d, v in e.items() if d != acc_e[0]}
    pairs += [(d if d in b else None, d if d in e else None) for d in sorted(set(b) | set(e))]
    return pairs


def _memory_level(b: dict, e: dict, notes: list[str]) -> list[dict[str, Any]]:
    """Rows named by the baseline's label (the experiment's when only it has the device);
    ``experiment_device`` says the experiment's label where it differs."""
    out = []
    for db, de in memory_pairs(b["memory"], e["memory"]):
        dev = db if db is not None else de
        mb, me = b["memory"].get(db), e["memory"].get(de)
        if mb is None or me is None:
            notes.append(
                f"memory of {dev} is recorded only in the {'baseline' if me is None else 'experiment'}"
            )
        row: dict[str, Any] = {"device": dev}
        if db is not None and de is not None and db != de:
            row["experiment_device"] = de
        for f in MEMORY_FIELDS:
            row[f] = change(None if mb is None else mb[f], None if me is None else me[f])
        out.append(row)
    if not b["memory"] and not e["memory"]:
        without = [side for side, s in (("baseline", b), ("experiment", e)) if s.get("memory_untotalled")]
        if not without:
            notes.append("neither side recorded memory (profile_memory=True): no memory comparison")
        else:
            who = "both sides" if len(without) == 2 else f"the {without[0]}"
            notes.append(
                f"{who} recorded memory without totals (PyTorch before 1.10 wrote no Total Allocated): "
                "no peak memory to compare"
            )
    return out


def _distributed_level(b: dict, e: dict, notes: list[str]) -> dict[str, Any] | None:
    db, de = b["distributed"], e["distributed"]
    if db is None or de is None:
        if db is not None or de is not None:
            lacking = "baseline" if db is None else "experiment"
            notes.append(f"the {lacking} is not a distributed profile: communication is not compared")
        return None
    overlap = {k: change(db["overlap"][k], de["overlap"][k]) for k in db["overlap"]}
    colls = []
    for name in sorted(set(db["collectives"]) | set(de["collectives"])):
        cb_, ce = db["collectives"].get(name), de["collectives"].get(name)
        row: dict[str, Any] = {"collective": name}
        for f in ("calls", "avg_latency_us", "total_latency_us", "algbw_gbps", "busbw_gbps"):
            row[f] = change(None if cb_ is None else cb_[f], None if ce is None else ce[f])
        colls.append(row)
    return {
        "rank": {"baseline": db["rank"], "experiment": de["rank"]},
        "overlap_us": overlap,
        "collectives": colls,
    }


# ---- the whole comparison ---------------------------------------------------------------------------


def compare(base_prof, exp_prof, group_by: str = "name", waterfall_top: int = DEFAULT_WATERFALL) -> dict:
    """Every figure of the Diff view / ``compare --json`` (less the verdict); memoized per pair."""
    if group_by not in operators.GROUP_BY:
        raise ValueError(f"group_by must be one of {operators.GROUP_BY}")
    key = (id(base_prof), id(exp_prof), group_by, waterfall_top)
    with _recent_lock:
        hit = _recent.get(key)
        if hit is not None and hit[0]() is base_prof and hit[1]() is exp_prof:
            return hit[2]
    result = clean(_compare(base_prof, exp_prof, group_by, waterfall_top))
    with _recent_lock:
        _recent[key] = (weakref.ref(base_prof), weakref.ref(exp_prof), result)
        while len(_recent) > _RECENT:
            _recent.pop(next(iter(_recent)))
    return result


def same_profile(a: Any, b: Any) -> bool:
    """Both sides are one profile: the same object, or loaded from the same file."""
    if a is b:
        return True
    src_a, src_b = getattr(a, "source", None), getattr(b, "source", None)
    return bool(src_a) and src_a == src_b


_RECENT = 8
_recent: dict[tuple, tuple[Any, Any, dict]] = {}
_recent_lock = threading.Lock()


def _compare(base_prof, exp_prof, group_by: str, waterfall_top: int) -> dict:
    b, e = side(base_prof), side(exp_prof)
    notes: list[str] = []
    same = same_profile(base_prof, exp_prof)
    if same:
        notes.append(
            "the baseline and the experiment are the same profile: every change is 0; "
            "pick another run, worker or span as the baseline"
        )
    if b["device_type"] != e["device_type"]:
        notes.append(
            f"the baseline is a {b['device_type']} profile and the experiment a {e['device_type']} one: "
            "device figures exist on one side only"
        )
    if b["steps"] and e["steps"] and b["steps"] != e["steps"]:
        notes.append(
            f"the sides have {b['steps']} and {e['steps']} steps: operator and kernel figures are per step"
        )
    gpu = any(t != "CPU" for t in (b["device_type"], e["device_type"]))  # GPU, MTIA, XPU, …
    metric = "device_self_us" if gpu else "host_self_us"
    steps, cats = _step_level(b, e, notes)
    ops = operator_rows(base_prof, exp_prof, b, e, group_by, metric)
    by_name = ops if group_by == "name" else operator_rows(base_prof, exp_prof, b, e, "name", metric)
    if group_by != "name" and not _has_shapes(base_prof, exp_prof):
        notes.append("a side records no input shapes (record_shapes=False): rows by input shape join poorly")
    kern = kernel_rows(base_prof, exp_prof, b, e) if gpu else []
    return {
        "baseline": {
            **b["label"],
            "device_type": b["device_type"],
            "matrix_units": b["matrix_units"],
            "steps": b["steps"],
        },
        "experiment": {
            **e["label"],
            "device_type": e["device_type"],
            "matrix_units": e["matrix_units"],
            "steps": e["steps"],
        },
        "same_profile": same,
        "group_by": group_by,
        "sort_metric": metric,
        "steps": steps,
        "mfu": _mfu_change(b["mfu"], e["mfu"]),
        "waits": waits_change.changes(base_prof, exp_prof),
        "breakdown_us": cats,
        "labels": dict(breakdown.LABELS),
        "gpus": _gpu_level(b, e, notes),
        "operators": ops,
        "waterfall": waterfall(by_name, cats, steps["delta"], gpu, waterfall_top),
        "kernels": kern,
        "memory": _memory_level(b, e, notes),
        "distributed": _distributed_level(b, e, notes),
        "notes": notes,
    }


def _has_shapes(*profiles: Any) -> bool:
    return all(bool((operators.operator_rows(p)["input_shape"] != "").any()) for p in profiles)

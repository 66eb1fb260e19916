"""Roofline figures per operator row and kernel row, against the profile's device peaks.

For a row with FLOPs F, bytes B and kernel time t (µs), on a device with peak P (TFLOP/s, of the
row's dtype) and bandwidth BW (TB/s) — docs/metrics.md, "Roofline":

- intensity I = F / B (FLOP/byte); achieved TFLOP/s = F / t / 10^6; achieved TB/s = B / t / 10^6;
- roofline at I: R(I) = min(P, I · BW); fraction f = achieved TFLOP/s / R(I); with bytes only
  (elementwise, normalisations) f = achieved TB/s / BW;
- bound: memory when I < P / BW (the ridge point), else compute; memory for bytes-only rows;
- time lost = t · max(0, 1 − f); pct_of_roofline = 100 · f (above 100 when caches served bytes the
  model counts as moved).

The dtype's peak: fp32 rows whose kernels ran mostly on tensor cores (kernel-name rule) use the
tf32 peak on CUDA (that is what a tensor-core kernel does with fp32 inputs); otherwise their own.
Unknown device, dtype without a peak, or an unknown figure: the figures that need it are None.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pandas as pd

from torch_tb_profiler.analysis.core import names
from torch_tb_profiler.analysis.core.accelerator import accelerator
from torch_tb_profiler.analysis.core.cache import memoized
from torch_tb_profiler.analysis.device.tensor_cores import kernel_uses_tensor_cores
from torch_tb_profiler.analysis.ops.operators import operator_rows
from torch_tb_profiler.analysis.roofline import attribution as A
from torch_tb_profiler.analysis.roofline import grouping as G
from torch_tb_profiler.analysis.roofline import peaks as P

BY = ("ops", "ops_total", "kernels")
SORT_KEYS = (
    "time_lost_us",
    "device_us",
    "flops",
    "bytes",
    "tflops_per_s",
    "tb_per_s",
    "pct_of_roofline",
    "calls",
)


def device(profile) -> dict[str, Any]:
    """The profile's device (the one with the most kernel time) and its peaks row: {id, name,
    matched_peak_name (None: unknown), peaks {dtype: TFLOP/s}, tb_per_s, source, how}. Cached per
    peaks file."""
    env = os.environ.get(P.PEAKS_ENV, "")
    return memoized(profile, f"roofline.device.{env}", lambda: _device(profile))


def _device(profile) -> dict[str, Any]:
    dev = profile.device
    kernels = dev[dev["kind"].to_numpy() == "kernel"] if len(dev) else dev
    dev_id = None
    if len(kernels):
        per = kernels.groupby("device")["dur"].sum()
        per = per[per.index >= 0]
        if len(per):
            dev_id = int(per.idxmax())
    props_list = profile.meta.device_properties or []
    props = profile.meta.device_property(dev_id) if dev_id is not None else {}
    if not props and len(props_list) == 1:
        props = props_list[0]
    out: dict[str, Any] = {
        "id": dev_id,
        "name": (props or {}).get("name"),
        "matched_peak_name": None,
        "peaks": {},
        "tb_per_s": None,
        "source": None,
        "how": None,
    }
    if not props:
        out["how"] = "the trace has no deviceProperties for this device"
        return out
    try:
        extra = P.user_peaks()
    except ValueError as exc:
        out["how"] = str(exc)
        extra = ()
    found = P.match(props, accelerator(profile).platform, extra)
    if found.peak is None:
        out["how"] = found.how
        return out
    peak = found.peak
    out.update(
        matched_peak_name=peak.name,
        peaks=dict(peak.tflops),
        tb_per_s=peak.tb_per_s,
        source=peak.source,
        how=found.how,
    )
    return out


def peak_dtype(dtype: str, tc_share: float, dev: dict[str, Any], platform: str | None) -> str:
    """The peak a row is measured against (module docstring: fp32 on tensor cores is tf32 on CUDA)."""
    if dtype == "fp32" and platform == "CUDA" and tc_share > 0.5 and "tf32" in dev["peaks"]:
        return "tf32"
    return dtype


def figures(frame: pd.DataFrame, dev: dict[str, Any]) -> pd.DataFrame:
    """Adds intensity, tflops_per_s, tb_per_s, pct_of_roofline, bound, time_lost_us to a frame with
    flops, bytes, device_us and peak_dtype columns (NaN / "" when unknown)."""
    f = frame["flops"].to_numpy(dtype=np.float64)
    b = frame["bytes"].to_numpy(dtype=np.float64)
    t = frame["device_us"].to_numpy(dtype=np.float64)
    peaks = dev.get("peaks") or {}
    peak = np.array([peaks.get(d, np.nan) for d in frame["peak_dtype"]], dtype=np.float64)
    bw = float(dev["tb_per_s"]) if dev.get("tb_per_s") else np.nan
    with np.errstate(divide="ignore", invalid="ignore"):
        t_ok = np.where(t > 0, t, np.nan)
        intensity = np.where(b > 0, f / b, np.nan)
        tflops = f / t_ok / 1e6
        tbps = b / t_ok / 1e6
        roof = np.minimum(peak, intensity * bw)
        frac = np.where(np.isnan(f), tbps / bw, tflops / roof)
        bound = np.where(
            np.isnan(f) & ~np.isnan(tbps) & ~np.isnan(bw),
            "memory",
            np.where(
                np.isnan(intensity) | np.isnan(peak) | np.isnan(bw),
                "",
                np.where(intensity < peak / bw, "memory", "compute"),
            ),
        )
    return frame.assign(
        intensity=intensity,
        tflops_per_s=tflops,
        tb_per_s=tbps,
        pct_of_roofline=100.0 * frac,
        bound=bound,
        time_lost_us=t * np.maximum(0.0, 1.0 - frac),
    )


def op_rows(profile) -> pd.DataFrame:
    """The holders grouped by (name, input dims, dtype), with figures; sorted by time lost. Cached."""
    env = os.environ.get(P.PEAKS_ENV, "")
    return memoized(profile, f"roofline.op_rows.{env}", lambda: _op_rows(profile))


def _op_rows(profile) -> pd.DataFrame:
    hold = A.holders(profile)
    dev = device(profile)
    platform = accelerator(profile).platform
    cols = ["name", "input_dims", "dtype", "calls", "flops", "bytes", "device_us", "source", "bytes_source"]
    if not len(hold):
        return figures(pd.DataFrame({c: [] for c in [*cols, "peak_dtype"]}), dev)
    ops = profile.ops
    rows = operator_rows(profile)
    shape_of = pd.Series(rows["input_shape"].to_numpy(), index=rows["op"].to_numpy())
    op = hold["op"].to_numpy()
    frame = {
        "name": ops["name"].to_numpy()[op],
        "input_dims": shape_of.reindex(op).fillna("").to_numpy(),
        "dtype": hold["dtype"].to_numpy(),
        "source": hold["flops_source"].to_numpy(),
        "bytes_source": hold["bytes_source"].to_numpy(),
        "reason": hold["reason"].to_numpy(),
    }
    ids, first = G.group_ids(*(pd.factorize(frame[c].astype(object))[0] for c in cols[:3]))
    n = len(first)
    first_of = {c: values[first] for c, values in frame.items()}
    table = pd.DataFrame(
        {
            "name": first_of["name"],
            "input_dims": first_of["input_dims"],
            "dtype": first_of["dtype"],
            "calls": np.bincount(ids, minlength=n),
            "flops": G.total(ids, n, hold["flops"].to_numpy()),
            "bytes": G.total(ids, n, hold["bytes"].to_numpy()),
            "device_us": np.bincount(ids, weights=hold["kernel_us"].to_numpy(), minlength=n),
            "tc_us": np.bincount(ids, weights=hold["tc_us"].to_numpy(), minlength=n),
            "source": first_of["source"],
            "bytes_source": first_of["bytes_source"],
            "reason": first_of["reason"],
        }
    )
    table["peak_dtype"] = _peak_dtypes(table, "device_us", dev, platform)
    out = figures(table, dev)
    return _sorted(out)


def _peak_dtypes(table: pd.DataFrame, time_column: str, dev: dict, platform: str | None) -> list:
    """Per row: the dtype whose peak it is measured against, from its dtype and the share of
    ``time_column`` its kernels spent on tensor cores (peak_dtype)."""
    time = table[time_column]
    share = np.divide(table["tc_us"], time, out=np.zeros(len(table)), where=time > 0)
    return [peak_dtype(d, s, dev, platform) for d, s in zip(table["dtype"], share, strict=True)]


def op_total_rows(profile) -> pd.DataFrame:
    """Every operator-table row (name, input dims) whose subtree holds work, with the holders' figures
    summed over each call's subtree (``scope`` "subtree": a wrapper's total, never added to its leaves'
    rows); figures over the holders' kernel time. Cached."""
    env = os.environ.get(P.PEAKS_ENV, "")
    return memoized(profile, f"roofline.op_total_rows.{env}", lambda: _op_total_rows(profile))


def _op_total_rows(profile) -> pd.DataFrame:
    dev = device(profile)
    platform = accelerator(profile).platform
    rows = operator_rows(profile)
    sub = A.subtree_work(profile)
    cols = ["name", "input_dims", "dtype", "calls", "flops", "bytes", "device_us", "kernel_us", "holders"]
    if not len(rows) or not len(sub):
        return figures(pd.DataFrame({c: [] for c in [*cols, "peak_dtype"]}), dev)
    op = rows["op"].to_numpy()  # one row per call, in op order
    keep = sub["holders"].to_numpy()[op] > 0  # the calls whose subtree holds work
    if not keep.any():
        return figures(pd.DataFrame({c: [] for c in [*cols, "peak_dtype"]}), dev)
    op = op[keep]
    frame = {
        "name": rows["name"].to_numpy()[keep],
        "input_dims": rows["input_shape"].to_numpy()[keep],
        "name_code": rows["name_code"].to_numpy()[keep],
        "shape_code": rows["shape_code"].to_numpy()[keep],
        **{c: sub[c].to_numpy()[op] for c in ("dtype", "flops", "bytes", "kernel_us", "tc_us", "holders")},
        "device_us": sub["known_us"].to_numpy()[op],
    }
    ids, first = G.group_ids(frame["name_code"], frame["shape_code"])
    n = len(first)
    table = pd.DataFrame(
        {
            "name": frame["name"][first],
            "input_dims": frame["input_dims"][first],
            "calls": np.bincount(ids, minlength=n),
            "dtype": G.most_common(ids, n, frame["dtype"]),
            "flops": G.total(ids, n, frame["flops"]),
            "bytes": G.total(ids, n, frame["bytes"]),
            **{
                c: np.bincount(ids, weights=frame[c].astype(np.float64), minlength=n)
                for c in ("device_us", "kernel_us", "tc_us")
            },
            "holders": np.bincount(ids, weights=frame["holders"].astype(np.float64), minlength=n).astype(
                np.int64
            ),
        }
    )
    table["peak_dtype"] = _peak_dtypes(table, "device_us", dev, platform)
    table["scope"] = "subtree"
    return _sorted(figures(table, dev))


def kernel_rows(profile) -> pd.DataFrame:
    """Kernels grouped by name: calls, the calls whose work is known exactly (``known_calls``) and their
    figures over those calls' time; sorted by time lost. Cached."""
    env = os.environ.get(P.PEAKS_ENV, "")
    return memoized(profile, f"roofline.kernel_rows.{env}", lambda: _kernel_rows(profile))


def _kernel_rows(profile) -> pd.DataFrame:
    dev_table = profile.device
    kw = A.kernel_work(profile)
    dev = device(profile)
    platform = accelerator(profile).platform
    sel = dev_table["kind"].to_numpy() == "kernel" if len(dev_table) else np.zeros(0, bool)
    exact = kw["exact"].to_numpy(dtype=bool)
    dur = dev_table["dur"].to_numpy(dtype=np.float64)[sel] if len(dev_table) else np.zeros(0)
    # plain arrays, not a frame: only the few columns needed are taken from the device table
    frame = {
        "name": dev_table["name"].to_numpy()[sel] if len(dev_table) else np.zeros(0, object),
        "dtype": kw["dtype"].to_numpy(),
        "flops": np.where(exact, kw["flops"].to_numpy(), np.nan),
        "bytes": np.where(exact, kw["bytes"].to_numpy(), np.nan),
        "known_us": np.where(exact, dur, 0.0),
        "all_us": dur,
        "tc_us": np.where(names.mask(profile, "device", kernel_uses_tensor_cores)[sel], dur, 0.0),
        "source": kw["source"].to_numpy(),
    }
    if not dur.size:
        cols = ["name", "dtype", "calls", "known_calls", "flops", "bytes", "device_us", "kernel_us", "source"]
        return figures(pd.DataFrame({c: [] for c in [*cols, "peak_dtype"]}), dev)
    ids, first = G.group_ids(names.factorized(profile, "device")[0][sel])
    n = len(first)
    table = pd.DataFrame(
        {
            "name": frame["name"][first],
            "calls": np.bincount(ids, minlength=n),
            "known_calls": np.bincount(ids, weights=exact.astype(np.float64), minlength=n).astype(np.int64),
            "flops": G.total(ids, n, frame["flops"], nan_when="all"),
            "bytes": G.total(ids, n, frame["bytes"], nan_when="all"),
            **{
                out: np.bincount(ids, weights=frame[c], minlength=n)
                for out, c in (("device_us", "known_us"), ("kernel_us", "all_us"), ("tc_us", "tc_us"))
            },
            "dtype": G.most_common(ids, n, frame["dtype"]),
            "source": G.most_common(ids, n, frame["source"]),
        }
    )
    table["peak_dtype"] = _peak_dtypes(table, "kernel_us", dev, platform)
    # a kernel without any known call has no figures: its time is its whole time
    unknown = table["known_calls"] == 0
    table.loc[unknown, "device_us"] = table.loc[unknown, "kernel_us"]
    return _sorted(figures(table, dev))


def _sorted(table: pd.DataFrame) -> pd.DataFrame:
    return table.sort_values(
        ["time_lost_us", "device_us", "name"],
        ascending=[False, False, True],
        kind="stable",
        na_position="last",
    ).reset_index(drop=True)


def records(table: pd.DataFrame, limit: int | None = None) -> list[dict[str, Any]]:
    """Rows as plain dicts; NaN / "" figures become None."""
    part = table if limit is None else table.head(limit)
    out = []
    for rec in part.to_dict(orient="records"):
        clean: dict[str, Any] = {}
        for key, value in rec.items():
            if isinstance(value, np.generic):
                value = value.item()
            if isinstance(value, float) and not np.isfinite(value):
                value = None
            if value == "" and key in ("bound", "source", "bytes_source", "dtype", "peak_dtype", "reason"):
                value = None
            clean[key] = value
        out.append(clean)
    return out

"""Idle time per stream and the temporal breakdown (analysis/waits/idle.py, temporal.py) on hand-built
traces, every figure computed by hand from docs/metrics.md "Why the device waits"; and, on the shared HTA
sample traces, idle + busy = span per stream against an independent computation written here."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.fixtures.paths import SHARED_TRACES
from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.analysis.waits import idle, summary, temporal
from torch_tb_profiler.ingest.parse import load_profile
from torch_tb_profiler.model import Profile

BASE = 1_700_000_000_000_000.0


def _load(b: TraceBuilder, tmp_path: Path, name: str = "w") -> Profile:
    return load_profile(str(b.write(tmp_path / f"{name}.pt.trace.json")), run="r", worker=name)


def _by(rows: list[dict], **keys) -> dict[str, float]:
    return {r["category"]: r["us"] for r in rows if all(r[k] == v for k, v in keys.items())}


def test_three_categories(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 1000)
    ext = b.op("aten::mm", 10, 500)
    b.launch("k1", 20, 5, 100, 50, ext_id=ext)  # 100-150
    b.launch("k2", 30, 5, 160, 40, ext_id=ext)  # gap 150-160: call at 30 < 150, 10 µs < 30: kernel wait
    b.launch("k3", 300, 5, 400, 50, ext_id=ext)  # gap 200-400: call at 300 > 200: host wait
    b.launch("k4", 310, 5, 500, 20, ext_id=ext)  # gap 450-500: call at 310 < 450, 50 µs: other
    p = _load(b, tmp_path)
    rows = idle.idle_rows(p)
    assert _by(rows, step=None) == {"host_wait": 200.0, "kernel_wait": 10.0, "other": 50.0}
    ratios = {r["category"]: r["ratio"] for r in rows if r["step"] is None}
    assert ratios["host_wait"] == pytest.approx(200 / 260) and sum(ratios.values()) == pytest.approx(1.0)
    assert _by(rows, step=1) == {"host_wait": 200.0, "kernel_wait": 10.0, "other": 50.0}
    (top, second, third) = idle.longest(p)
    assert (top["us"], top["category"], top["next"], top["host_op"]) == (200.0, "host_wait", "k3", "aten::mm")
    assert (top["start_us"], top["end_us"]) == (BASE + 200, BASE + 400)
    assert top["launch_ts_us"] == BASE + 300
    assert (second["us"], third["us"]) == (50.0, 10.0)
    (stats,) = idle.interval_stats(p)
    assert (stats["count"], stats["p50_us"], stats["max_us"]) == (3, 50.0, 200.0)
    # temporal, whole profile: window 100-520 = 420; kernels cover 50+40+50+20 = 160; idle 260
    whole = next(r for r in temporal.temporal_rows(p) if r["step"] is None)
    assert (whole["window_us"], whole["compute_us"], whole["non_compute_us"], whole["idle_us"]) == (
        420.0,
        160.0,
        0.0,
        260.0,
    )
    # step 1's window is its host range 0-1000 (all device work ends inside it): idle 1000 - 160
    step = next(r for r in temporal.temporal_rows(p) if r["step"] == 1)
    assert (step["window_us"], step["idle_us"]) == (1000.0, 840.0)


def test_overlap_never_negative_and_steps_split_a_gap(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 300)
    b.step(2, 300, 300)
    ext = b.op("aten::conv", 5, 200)
    b.launch("long", 10, 5, 100, 100, ext_id=ext)  # 100-200
    b.launch("inside", 12, 5, 120, 30, ext_id=ext)  # 120-150, inside the first: no gap
    b.launch("after", 20, 5, 250, 100, ext_id=ext)  # gap 200-250 against the running end 200, not 150
    e2 = b.op("aten::relu", 310, 50)
    b.launch("next", 320, 5, 400, 50, ext_id=e2)  # gap 350-400, other (50 µs, call at 320 < 350)
    b.launch("next2", 330, 5, 460, 10, ext_id=e2)  # gap 450-460: kernel wait
    b.launch("next3", 340, 5, 470, 10, ext_id=e2)  # back to back (step 2 launches 3: not trimmed)
    p = _load(b, tmp_path)
    rows = idle.idle_rows(p)
    assert _by(rows, step=None) == {"host_wait": 0.0, "kernel_wait": 10.0, "other": 100.0}
    # step 1 is [0, 350) (extended to its last activity's end), step 2 [350, 600)
    assert _by(rows, step=1) == {"host_wait": 0.0, "kernel_wait": 0.0, "other": 50.0}
    assert _by(rows, step=2) == {"host_wait": 0.0, "kernel_wait": 10.0, "other": 50.0}


def test_gap_across_a_step_boundary_is_split(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 300)
    b.step(2, 300, 300)
    e1 = b.op("aten::a", 5, 100)
    b.launch("k1", 10, 5, 100, 100, ext_id=e1)  # 100-200
    e2 = b.op("aten::b", 320, 100)
    b.launch("k2", 330, 5, 400, 50, ext_id=e2)  # gap 200-400, call at 330 > 200: host wait
    p = _load(b, tmp_path)
    rows = idle.idle_rows(p)
    assert _by(rows, step=None)["host_wait"] == 200.0
    assert _by(rows, step=1)["host_wait"] == 100.0  # 200-300
    assert _by(rows, step=2)["host_wait"] == 100.0  # 300-400


def test_copies_and_communication_are_non_compute(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 1000)
    ext = b.op("aten::mm", 10, 500)
    b.launch("gemm", 20, 5, 100, 100, ext_id=ext)  # compute 100-200
    c = b.runtime("cudaMemcpyAsync", 30, 5, ext_id=ext)
    b.memcpy("Memcpy HtoD", 150, 100, c, 1 << 20, stream=8)  # 150-250: 50 µs under the gemm
    b.launch("ncclKernel_AllReduce", 40, 5, 300, 100, ext_id=ext, stream=9)  # 300-400
    p = _load(b, tmp_path)
    whole = next(r for r in temporal.temporal_rows(p) if r["step"] is None)
    # window 100-400 = 300; compute 100; non-compute: (150-250 ∪ 300-400) − 100-200 = 50 + 100
    assert (whole["window_us"], whole["compute_us"], whole["non_compute_us"], whole["idle_us"]) == (
        300.0,
        100.0,
        150.0,
        50.0,
    )


def test_cpu_only_profile_has_null_device_figures(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100)
    b.op("aten::add", 10, 20)
    p = _load(b, tmp_path)
    out = summary.summary(p)
    assert out and all(v is None for v in out.values())


HTA = SHARED_TRACES / "hta_samples"


def _hta_traces() -> list[Path]:
    return sorted(HTA.rglob("*.json.gz"))[:2] if HTA.exists() else []


@pytest.mark.parametrize("path", _hta_traces(), ids=lambda p: p.name)
def test_idle_plus_busy_is_the_span_per_stream(path: Path) -> None:
    p = load_profile(str(path))
    rows = idle.idle_rows(p)
    dev = p.device
    for (d, s), g in dev.groupby(["device", "stream"]):
        ts, end = g["ts"].to_numpy(np.float64), g["end"].to_numpy(np.float64)
        order = np.argsort(ts, kind="stable")
        busy, cur_s, cur_e = 0.0, ts[order[0]], end[order[0]]
        for i in order[1:]:  # an independent union by a plain sweep
            if ts[i] > cur_e:
                busy += cur_e - cur_s
                cur_s, cur_e = ts[i], end[i]
            else:
                cur_e = max(cur_e, end[i])
        busy += cur_e - cur_s
        span = end.max() - ts.min()
        idle_us = sum(_by(rows, step=None, device=int(d), stream=int(s)).values())
        assert idle_us + busy == pytest.approx(span, rel=1e-9, abs=1e-3), (d, s)

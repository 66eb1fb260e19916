"""Launch statistics, queue length and copy bandwidth (analysis/waits/launches.py, queues.py) on
hand-built traces with hand-computed figures, and invariants on a shared trace."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.fixtures.builders_overview import load, rel
from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.analysis.waits import launches as L
from torch_tb_profiler.analysis.waits import queues as Q
from torch_tb_profiler.analysis.waits import summary as waits
from torch_tb_profiler.ingest.loading import load_profile


def _launch_profile(tmp_path: Path):
    b = TraceBuilder()
    b.step(1, 0, 1000)
    mm = b.op("aten::mm", 10, 100)
    # call 11..13 (cpu 2), kernel 20..50: delay 7, not short
    b.launch("gemm", 11, 2, 20, 30, ext_id=mm)
    # call 14..24 (cpu 10), kernel 30..33: delay 6, short (3 < 10), slack 7
    b.launch("add_k", 14, 10, 30, 3, ext_id=mm)
    # call 40..45 (cpu 5), kernel starts 43 < call end 45: delay -2 -> 0; short (1 < 5), slack 4
    b.launch("add_k", 40, 5, 43, 1, ext_id=mm)
    return load(b, tmp_path)


def test_launch_figures(tmp_path: Path) -> None:
    p = _launch_profile(tmp_path)
    f = L.launches(p).sort_values("call_ts")
    assert f["delay_us"].tolist() == [7.0, 6.0, 0.0]
    assert f["cpu_us"].tolist() == [2.0, 10.0, 5.0]
    assert f["short"].tolist() == [False, True, True]
    s = waits.summary(p)["launch"]
    assert list(s) == ["gemm", "add_k"]  # by GPU time: 30 > 4
    a = s["add_k"]
    assert a["count"] == 2 and a["short_share"] == 1.0
    assert a["delay_us_p50"] == pytest.approx(3.0)  # median of 6, 0
    assert a["delay_us_p95"] == pytest.approx(0 + 0.95 * 6)  # linear: 5.7
    assert a["cpu_us_p50"] == pytest.approx(7.5) and a["gpu_us_p50"] == pytest.approx(2.0)
    assert s["gemm"]["short_share"] == 0.0
    ops = L.by_op(p)
    assert ops.loc["aten::mm", "count"] == 3 and ops.loc["aten::mm", "short_share"] == pytest.approx(2 / 3)
    # delays 7, 6, 0: p99 (linear) = 6 + 0.98 * 1 = 6.98 -> only the first launch is above it
    out = L.outliers(p)
    assert [(o["kernel"], o["delay_us"]) for o in out] == [("gemm", 7.0)]
    assert rel(p, out[0]["ts"]) == 20.0 and out[0]["call"] == "cudaLaunchKernel" and out[0]["op"] >= 0
    # launch-bound: (10 - 3) + (5 - 1) = 11 over the two short launches of step 1
    assert L.launch_bound_by_step(p) == [{"step": 1, "launch_bound_us": 11.0, "short_launches": 2}]


def test_queue_depth_0_3_0(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 200)
    for i in range(3):  # calls start at 0, 10, 20; kernels start at 40, 50, 60, each 5 µs
        b.launch(f"k{i}", 10 * i, 2, 40 + 10 * i, 5)
    b.launch("other_stream", 0, 2, 1, 5, stream=9)  # a stream of its own
    p = load(b, tmp_path)
    times, values, lo, hi = Q.queue_tracks(p)[(0, 7)]
    assert [rel(p, t) for t in times] == [0, 10, 20, 40, 50, 60]
    assert values.tolist() == [1, 2, 3, 2, 1, 0]
    assert (rel(p, lo), rel(p, hi)) == (0, 65)
    s = waits.summary(p)["queue"]["0:7"]
    # span 0..65; ∫ = 1*10 + 2*10 + 3*20 + 2*10 + 1*10 = 120
    assert s["max"] == 3 and rel(p, s["time_at_max_us"]) == 20
    assert s["mean"] == pytest.approx(120 / 65)
    assert waits.summary(p)["queue"]["0:9"]["max"] == 1
    names = [t["name"] for t in Q.counter_tracks(p)]
    assert "GPU 0 Stream 7 Queue length" in names


def test_copy_bandwidth(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 200)
    c1 = b.runtime("cudaMemcpyAsync", 0, 2)
    b.memcpy("Memcpy HtoD (Pageable -> Device)", 10, 10, c1, 20_000)  # 10..20: 2 GB/s (20 kB / 10 µs)
    c2 = b.runtime("cudaMemsetAsync", 3, 2)
    b.memset(15, 5, c2, 5_000, stream=9)  # 15..20: 1 GB/s
    p = load(b, tmp_path)
    times, values, lo, hi = Q.bandwidth_tracks(p)[0]
    assert [rel(p, t) for t in times] == [10, 15, 20]
    assert values.tolist() == pytest.approx([2.0, 3.0, 0.0])
    assert (rel(p, lo), rel(p, hi)) == (10, 20)
    s = Q.bandwidth_summary(p)["0"]
    assert s["max"] == pytest.approx(3.0) and rel(p, s["time_at_max_us"]) == 15
    assert s["mean"] == pytest.approx(25_000 / 10 / 1e3)  # Σ bytes / span, GB/s
    assert "GPU 0 Copy bandwidth" in [t["name"] for t in Q.counter_tracks(p)]


def test_downsample_keeps_max() -> None:
    t = np.arange(10_000, dtype=float)
    v = np.zeros(10_000)
    v[4321] = 9.0
    ts, vs = Q.downsample(t, v, 100)
    assert len(ts) <= 100 and vs.max() == 9.0 and 4321.0 in ts
    assert np.all(np.diff(ts) > 0)


def test_cpu_only_is_none(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100)
    b.op("aten::add", 10, 20)
    s = waits.summary(load(b, tmp_path))
    assert s["launch"] is None and s["queue"] is None


SHARED = Path(__file__).resolve().parents[1] / ".." / "shared" / "traces"


def _shared_trace() -> Path | None:
    for sub in ("hta_samples", "kineto_samples"):
        found = sorted((SHARED / sub).rglob("*.json*")) if (SHARED / sub).is_dir() else []
        small = [f for f in found if f.stat().st_size < 30_000_000]
        if small:
            return min(small, key=lambda f: f.stat().st_size)
    return None


def test_invariants_on_shared_trace() -> None:
    path = _shared_trace()
    if path is None:
        pytest.skip("no shared traces")
    p = load_profile(str(path), run="run", worker="w", span="1")
    f = L.launches(p)
    if not len(f):
        pytest.skip("trace has no launches")
    assert (f["delay_us"] >= 0).all()
    for times, values, lo, hi in Q.queue_tracks(p).values():
        assert (values >= 0).all() and values[-1] == 0 and lo <= times[0] and times[-1] <= hi
    for q in waits.summary(p)["queue"].values():
        assert 0 <= q["mean"] <= q["max"]


def test_queue_and_bandwidth_are_counter_tracks_of_the_trace_view(tmp_path: Path) -> None:
    from torch_tb_profiler.analysis.timeline import index as tl
    from torch_tb_profiler.analysis.timeline import windows

    b = TraceBuilder()
    b.step(1, 0, 100)
    for i in range(3):  # calls at 0, 10, 20; kernels 40–45, 50–55, 60–65 on stream 7
        b.launch(f"k{i}", 10 * i, 2, 40 + 10 * i, 5)
    c1 = b.runtime("cudaMemcpyAsync", 70, 2)
    b.memcpy("Memcpy HtoD (Pageable -> Device)", 75, 10, c1, 20_000)  # 2 GB/s
    p = load(b, tmp_path)
    idx = tl.build_index(p)
    tracks = {t.name: t for t in idx.tracks if t.kind == "counter"}
    queue, copy = tracks["GPU 0 Stream 7 Queue length"], tracks["GPU 0 Copy bandwidth"]
    assert queue.group == copy.group == "d:0" and (queue.unit, copy.unit) == ("queued", "GB/s")
    assert queue.max == 3 and copy.max == pytest.approx(2.0)
    series = idx.counters[queue.id]
    # the copy's call at 70 queues it on the same stream until it starts at 75
    assert [rel(p, t) for t in series.ts] == [0, 10, 20, 40, 50, 60, 70, 75]
    assert series.values.tolist() == [1, 2, 3, 2, 1, 0, 1, 0]
    # the tracks' window answers what the Trace view draws
    w = windows.window(idx, idx.start_us, idx.end_us, 1000, tracks=[queue.id])
    assert w.counters[queue.id].values.max() == 3

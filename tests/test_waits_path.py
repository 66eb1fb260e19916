"""The critical path of a step (analysis/waits/critical_path.py) on hand-built traces, segments computed
by hand from docs/metrics.md "Critical path"; on shared traces, the segments add up to each step."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from tests.fixtures.paths import SHARED_TRACES
from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.analysis.timeline import index as tl
from torch_tb_profiler.analysis.timeline import queries
from torch_tb_profiler.analysis.waits import critical_path
from torch_tb_profiler.ingest.parse import load_profile

BASE = 1_700_000_000_000_000.0


def _segments(path: dict) -> list[tuple[str, float, float]]:
    return [(s["kind"], s["start_us"] - BASE, s["end_us"] - BASE) for s in path["segments"]]


def test_host_launch_kernel_sync_host(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 1000)
    e = b.op("aten::mm", 10, 100)
    b.launch("gemm", 50, 10, 70, 300, ext_id=e)  # call 50-60, kernel 70-370
    b.runtime("cudaStreamSynchronize", 120, 260)  # the host waits 120-380
    e2 = b.op("aten::add", 400, 100)
    b.launch("add", 450, 10, 470, 20, ext_id=e2)  # call 450-460, kernel 470-490
    p = load_profile(str(b.write(tmp_path / "w.pt.trace.json")))
    (path,) = critical_path.critical_paths(p)
    # backwards from 1000: the host range outlasts the device (host 490-1000), the add kernel
    # (470-490), queued after its call (460-470), the call (450-460), host back to the sync's end
    # (380-450), the sync (120-380), host before it (0-120)
    assert _segments(path) == [
        ("host", 0.0, 120.0),
        ("sync", 120.0, 380.0),
        ("host", 380.0, 450.0),
        ("launch", 450.0, 460.0),
        ("launch", 460.0, 470.0),
        ("device", 470.0, 490.0),
        ("host", 490.0, 1000.0),
    ]
    assert path["by_kind"] == {"host": 700.0, "launch": 20.0, "device": 20.0, "sync": 260.0, "idle": 0.0}
    assert path["bound_by"].startswith("Host-bound") and "70 %" in path["bound_by"]


def test_device_bound_step(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100)
    e = b.op("aten::conv", 5, 50)
    b.launch("k1", 10, 5, 20, 200, ext_id=e)  # 20-220
    b.launch("k2", 16, 5, 220, 300, ext_id=e)  # 220-520, right after k1 on the stream
    p = load_profile(str(b.write(tmp_path / "w.pt.trace.json")))
    (path,) = critical_path.critical_paths(p)
    # window 0-520 (extended to the device): k2, k1 (its call ended at 21 > nothing before on the
    # stream): queued 15-20, the call 10-15, host 0-10
    assert _segments(path) == [
        ("host", 0.0, 10.0),
        ("launch", 10.0, 15.0),
        ("launch", 15.0, 20.0),
        ("device", 20.0, 220.0),
        ("device", 220.0, 520.0),
    ]
    assert path["bound_by"].startswith("Device-bound") and "96 %" in path["bound_by"]


def _shared() -> list[Path]:
    root = SHARED_TRACES / "kineto_samples"
    return sorted(root.rglob("*.pt.trace.json.gz"))[:1] if root.exists() else []


@pytest.mark.parametrize("path", _shared(), ids=lambda p: p.name)
def test_segments_add_up_to_each_step(path: Path) -> None:
    p = load_profile(str(path))
    paths = critical_path.critical_paths(p)
    assert paths
    for step in paths:
        segs = step["segments"]
        total = sum(s["end_us"] - s["start_us"] for s in segs)
        assert total == pytest.approx(step["duration_us"], abs=max(20.0, 0.01 * step["duration_us"]))
        assert sum(step["by_kind"].values()) == pytest.approx(step["duration_us"], rel=1e-9)
        assert all(a["end_us"] == pytest.approx(b["start_us"]) for a, b in itertools.pairwise(segs))


def test_segments_lie_on_their_events_and_tracks(tmp_path: Path) -> None:
    """The hand-built step of the first test, placed on the timeline: device, idle and queueing
    segments on the kernel's stream, launch and sync segments on their calls' rows, host segments on
    the top row of the calling thread."""
    b = TraceBuilder()
    b.step(1, 0, 1000)
    e = b.op("aten::mm", 10, 100)
    b.launch("gemm", 50, 10, 70, 300, ext_id=e)
    b.runtime("cudaStreamSynchronize", 120, 260)
    e2 = b.op("aten::add", 400, 100)
    b.launch("add", 450, 10, 470, 20, ext_id=e2)
    p = load_profile(str(b.write(tmp_path / "w.pt.trace.json")))
    (path,) = critical_path.critical_paths(p)
    assert (path["start_us"] - BASE, path["end_us"] - BASE) == (0.0, 1000.0)
    idx = tl.index(p)
    entry, raw = critical_path.step_path(p, 1)
    assert entry == path
    placed = queries.path_places(idx, entry, raw)["segments"]
    add_row = int(p.device.index[p.device["name"] == "add"][0])
    call_row = int(p.device["runtime"].iloc[add_row])
    sync_row = int(p.runtimes.index[p.runtimes["name"] == "cudaStreamSynchronize"][0])
    events = [(s["kind"], s["event"]) for s in placed]
    call = f"rt:{call_row}"
    assert events == [
        ("host", f"rt:{sync_row}"),
        ("sync", f"rt:{sync_row}"),
        ("host", call),
        ("launch", call),
        ("launch", f"dev:{add_row}"),
        ("device", f"dev:{add_row}"),
        ("host", call),
    ]
    kinds = [idx.tracks[s["track"]].kind for s in placed]
    assert kinds == ["thread", "thread", "thread", "thread", "stream", "stream", "thread"]
    stream = idx.tracks[placed[5]["track"]]
    assert stream.kind == "stream" and placed[4]["track"] == placed[5]["track"]
    # one host thread: every host-side segment on it; host segments on its top row, the calls deeper
    assert (
        len({s["track"] for s in placed if s["kind"] != "device" and not s["event"].startswith("dev")}) == 1
    )
    assert [s["depth"] for s in placed if s["kind"] == "host"] == [0, 0, 0]
    sync_depth = int(idx.depth[queries.locate(idx, "rt", sync_row)])
    assert placed[1]["depth"] == sync_depth
    assert placed[3]["depth"] == int(idx.depth[queries.locate(idx, "rt", call_row)]) > 0


def test_merged_segments_keep_a_track_or_say_none() -> None:
    """Past the answer's limit, consecutive segments of one kind merge and keep the first one's event;
    coarse runs carry none (drawn on no track)."""
    n = critical_path.MAX_SEGMENTS + 50
    segs = [("device", f"k{i}", float(i), float(i + 1), f"dev:{i}") for i in range(n)]
    merged = critical_path._merged(segs)
    assert merged == [("device", "", 0.0, float(n), "dev:0")]
    alternating = [
        ("device" if i % 2 else "idle", "", float(i), float(i + 1), f"dev:{i}") for i in range(2 * n)
    ]
    coarse = critical_path._merged(alternating)
    assert len(coarse) == critical_path.MAX_SEGMENTS and all(s[4] == "" for s in coarse)
    assert coarse[0][2] == 0.0 and coarse[-1][3] == float(2 * n)


def test_back_to_back_activities_on_one_stream_are_one_band(tmp_path: Path) -> None:
    """The device-bound step above: k1 and k2 run back to back on one stream, so the timeline gets one
    device segment over both (count 2, no common name); the launch call and its queueing stay apart."""
    b = TraceBuilder()
    b.step(1, 0, 100)
    e = b.op("aten::conv", 5, 50)
    b.launch("k1", 10, 5, 20, 200, ext_id=e)
    b.launch("k2", 16, 5, 220, 300, ext_id=e)
    p = load_profile(str(b.write(tmp_path / "w.pt.trace.json")))
    entry, raw = critical_path.step_path(p, 1)
    assert len(raw) == 5
    placed = queries.path_places(tl.index(p), entry, raw)["segments"]
    assert [(s["kind"], s["start_us"] - BASE, s["end_us"] - BASE, s["count"], s["name"]) for s in placed] == [
        ("host", 0.0, 10.0, 1, ""),
        ("launch", 10.0, 15.0, 1, "cudaLaunchKernel"),
        ("launch", 15.0, 20.0, 1, "queued after cudaLaunchKernel"),
        ("device", 20.0, 520.0, 2, ""),
    ]
    assert critical_path.step_path(p, 2) is None  # no such step


def test_placed_paths_past_the_limit_are_coarse_runs_of_their_dominant_kind() -> None:
    """3,000 alternating segments on no row (3 µs device, 1 µs idle): 2,000 runs of 1–2 segments, each
    of its dominant kind, contiguous, covering the step, their counts adding up to 3,000."""
    n = 3000
    raw, t = [], 0.0
    for i in range(n):
        kind, dur = ("device", 3.0) if i % 2 == 0 else ("idle", 1.0)
        raw.append((kind, f"k{i}", t, t + dur, ""))
        t += dur
    idx = None  # no event to locate: every segment lies on no row
    placed = queries.path_places(idx, {"step": 0}, raw)["segments"]  # type: ignore[arg-type]
    assert len(placed) == queries.MAX_PLACED_SEGMENTS
    assert sum(s["count"] for s in placed) == n
    assert placed[0]["start_us"] == 0.0 and placed[-1]["end_us"] == t
    assert all(a["end_us"] == b["start_us"] for a, b in itertools.pairwise(placed))
    # a run of two holds one device (3 µs) and one idle (1 µs) segment: device
    assert {s["kind"] for s in placed if s["count"] == 2} == {"device"}

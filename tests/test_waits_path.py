"""The critical path of a step (analysis/waits/critical_path.py) on hand-built traces, segments computed
by hand from docs/metrics.md "Critical path"; on shared traces, the segments add up to each step."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from tests.fixtures.paths import SHARED_TRACES
from tests.fixtures.trace_builder import TraceBuilder
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

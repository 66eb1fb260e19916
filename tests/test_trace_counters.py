"""Counter tracks of the trace view, checked against the original plugin's fixture and by hand."""

from __future__ import annotations

import gzip
import json
import os
import time
import urllib.request
from pathlib import Path

import pytest

from tests.fixtures.paths import shared_trace
from tests.fixtures.tensorboard_server import PREFIX, tensorboard
from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.analysis.timeline.counters import bucket_size, counter_events
from torch_tb_profiler.ingest.loading import load_profile
from torch_tb_profiler.ingest.private_dir import fingerprint
from torch_tb_profiler.views.trace import _spliced, cached_trace, with_counters


@pytest.mark.parametrize(
    ("length", "size"),
    [
        (50, 1),
        (100, 1),
        (101, 10),
        (1000, 10),
        (1009, 10),
        (1010, 100),
        (13896, 1000),
        (1e6, 1e4),
        (1.1e6, 1e5),
    ],
)
def test_bucket_size(length: float, size: float) -> None:
    assert bucket_size(length) == size


def test_hand_computed_counters(tmp_path: Path) -> None:
    b = TraceBuilder(base_ts=0)
    b.op("aten::mm", 0, 200)  # with the profiler span, the range is 0..250
    b.launch("k1", 1, 1, 10, 30, blocks_per_sm=0.5)  # 10..40
    b.launch("k2", 2, 1, 30, 20, blocks_per_sm=0.75)  # 30..50 overlaps k1 on 30..40
    b.raw(
        {
            "ph": "X",
            "cat": "kernel",
            "name": "late",
            "pid": 0,
            "tid": 7,
            "ts": 245,
            "dur": 5,
            "args": {"device": 0, "correlation": 5},
        }
    )
    p = load_profile(str(b.write(tmp_path / "w.pt.trace.json")))
    events = counter_events(p)
    util = [(e["ts"], e["args"]["GPU Utilization"]) for e in events if e["name"] == "GPU 0 Utilization"]
    # range 0..250 -> 25 buckets of 10 µs; busy 10..50 and 245..250
    assert util[:2] == [(0, 1), (0, 0)]
    assert util[2:7] == [(0, 0.0), (10, 1.0), (20, 1.0), (30, 1.0), (40, 1.0)]
    assert util[-2:] == [(240, 0.5), (250, 0)]
    assert len(util) == 2 + 25 + 1
    sm = [
        (e["ts"], e["args"]["Est. SM Efficiency"]) for e in events if e["name"] == "GPU 0 Est. SM Efficiency"
    ]
    assert sm == [(0, 1), (0, 0), (10, 0.5), (30, 0), (30, 1.0), (40, 0), (40, 0.75), (50, 0)]


def test_matches_the_original_plugins_fixture(tmp_path: Path) -> None:
    source = shared_trace("kineto_test_fixtures/gpu_metrics_input.json")
    expected_all = json.loads(shared_trace("kineto_test_fixtures/gpu_metrics_expected.json").read_text())
    expected = [e for e in expected_all["traceEvents"] if e.get("ph") == "C"]
    p = load_profile(str(source))
    got = counter_events(p)
    # same tracks, points and timestamps as the original wrote
    assert [(g["name"], g["pid"], g["ts"]) for g in got] == [(e["name"], e["pid"], e["ts"]) for e in expected]
    assert len(got) == 78
    # that (disabled, stale) fixture holds utilization in percent and SM efficiency x10, against its own
    # 0..1 baseline; we write fractions (docs/metrics.md): compare after scaling, baselines excepted
    baselines = {i for name in {e["name"] for e in expected} for i in _first_two(expected, name)}
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        if i in baselines:
            assert g["args"] == e["args"]
            continue
        (key,) = e["args"]
        scale = 100 if key == "GPU Utilization" else 10
        assert g["args"][key] * scale == pytest.approx(e["args"][key], abs=1e-9), (g, e)


def test_cpu_only_trace_has_no_counters(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.op("aten::add", 0, 10)
    assert counter_events(load_profile(str(b.write(tmp_path / "w.pt.trace.json")))) == []


def _first_two(events: list[dict], name: str) -> list[int]:
    return [i for i, e in enumerate(events) if e["name"] == name][:2]


def test_splice_keeps_every_event() -> None:
    counters = [{"ph": "C", "name": "c", "pid": 0, "ts": 1, "args": {"v": 1}}]
    obj = json.dumps(
        {"schemaVersion": 1, "traceEvents": [{"ph": "X", "name": "a"}], "traceName": "t"}
    ).encode()
    assert json.loads(with_counters(obj, counters))["traceEvents"] == [*counters, {"ph": "X", "name": "a"}]
    assert json.loads(with_counters(b'{"traceEvents": []}', counters))["traceEvents"] == counters
    assert json.loads(with_counters(b' [{"ph": "X"}]', counters)) == [*counters, {"ph": "X"}]
    assert with_counters(obj, []) == obj


def test_trace_route_through_tensorboard(tmp_path: Path) -> None:
    b = TraceBuilder(base_ts=0)
    b.step(1, 0, 100)
    b.launch("k1", 1, 1, 10, 30, blocks_per_sm=0.5)
    logdir = tmp_path / "logdir"
    b.write(logdir / "run" / "w.pt.trace.json.gz")
    old = time.time() - 60
    os.utime(logdir / "run" / "w.pt.trace.json.gz", (old, old))
    with tensorboard(logdir, tmp=tmp_path) as tb:
        tb.wait_loaded()
        with urllib.request.urlopen(f"{tb.url}{PREFIX}/trace?run=run&worker=w") as r:
            assert r.headers["Content-Disposition"].startswith('attachment; filename="w.pt.trace.json.gz";')
            events = json.loads(gzip.decompress(r.read()))["traceEvents"]
        status, body = tb.get("trace", run="run", worker="nobody")
    original = b.to_dict()["traceEvents"]
    counters = [e for e in events if e["ph"] == "C"]
    assert {e["name"] for e in counters} == {"GPU 0 Utilization", "GPU 0 Est. SM Efficiency"}
    assert events[len(counters) :] == original
    assert status == 404 and "no worker 'nobody'" in body["error"]


@pytest.mark.parametrize("size", [1, 7, 64, 1 << 20])
def test_splice_across_chunk_boundaries(size: int) -> None:
    counters = [{"ph": "C", "name": "c", "pid": 0, "ts": 1, "args": {"v": 1}}]
    body = json.dumps(
        {"deviceProperties": [{"name": "x" * 100}], "traceEvents": [{"ph": "X", "name": "a"}]}
    ).encode()
    chunks = iter([body[i : i + size] for i in range(0, len(body), size)])
    assert json.loads(b"".join(_spliced(chunks, counters)))["traceEvents"] == [
        *counters,
        {"ph": "X", "name": "a"},
    ]


def test_cached_answer_is_reused_and_follows_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCH_PROFILER_TRACE_CACHE", str(tmp_path / "cache"))
    source = tmp_path / "w.pt.trace.json"
    source.write_text(json.dumps({"traceEvents": [{"ph": "X", "name": "a"}]}))
    counters = [{"ph": "C", "name": "c", "pid": 0, "ts": 1, "args": {"v": 1}}]
    first = cached_trace(str(source), fingerprint(str(source)), lambda: counters)
    again = cached_trace(str(source), fingerprint(str(source)), lambda: pytest.fail("recomputed"))
    assert again == first  # same answer file
    source.write_text(json.dumps({"traceEvents": [{"ph": "X", "name": "b"}, {"ph": "X", "name": "c"}]}))
    second = cached_trace(str(source), fingerprint(str(source)), lambda: counters)
    assert second != first
    assert len(json.loads(gzip.decompress(second.read_bytes()))["traceEvents"]) == 3

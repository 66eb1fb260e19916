"""The timeline index inside the persisted index (ingest/index_timeline.py): read back, it equals the
built one array by array and answers every window the same; a profile whose index was written without
it builds it on demand; the plugin re-opening a logdir has the first profile's timeline index ready
without building it; a damaged timeline table makes the whole index unusable (rebuilt, as any)."""

from __future__ import annotations

import argparse
import os
import time
import zlib
from pathlib import Path

import numpy as np
import pytest

from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.analysis.timeline import index as tl
from torch_tb_profiler.analysis.timeline import windows
from torch_tb_profiler.ingest import index_format
from torch_tb_profiler.ingest.parse import load_profile


def _trace(path: Path) -> Path:
    """Two threads, nested ops, kernels on two streams (two overlapping: an extra row), memory records
    (counter tracks), a trace counter."""
    b = TraceBuilder()
    b.step(1, 0, 2000)
    outer = b.op("aten::linear", 10, 900)
    b.op("aten::mm", 20, 400)
    b.launch("gemm_a", 30, 5, 500, 300, ext_id=outer, stream=7)
    b.launch("gemm_b", 40, 5, 600, 300, ext_id=outer, stream=7)  # overlaps gemm_a: an extra row
    b.launch("relu_k", 50, 5, 700, 100, ext_id=outer, stream=9)
    b.op("aten::add", 1000, 200, tid=2)
    b.memory(15, 256, addr=1, total_allocated=256, total_reserved=1024, device_type=1, device_id=0)
    b.memory(950, -256, addr=1, total_allocated=0, total_reserved=1024, device_type=1, device_id=0)
    b.raw({"ph": "C", "name": "queue", "pid": b.pid, "ts": b.base_ts + 100, "args": {"depth": 3}})
    b.raw({"ph": "C", "name": "queue", "pid": b.pid, "ts": b.base_ts + 900, "args": {"depth": 1}})
    return b.write(path)


def test_stored_timeline_index_equals_the_built_one(tmp_path: Path) -> None:
    profile = load_profile(str(_trace(tmp_path / "w.pt.trace.json")))
    built = tl.index(profile)
    assert built.counters and any(t.extra_rows for t in built.tracks)  # the trace exercises both
    back = index_format.loads(index_format.dumps(profile, {"path": "w"}))
    stored = back.cache[tl.INDEX_KEY]
    for name in (*tl.EVENT_ARRAYS, "seg_track", "seg_depth", "seg_lo", "seg_hi"):
        a, b = getattr(built, name), getattr(stored, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    assert list(stored.names) == list(built.names)
    assert (stored.start_us, stored.end_us) == (built.start_us, built.end_us)
    assert stored.groups == built.groups and stored.tracks == built.tracks
    assert {k: v.tolist() for k, v in stored.position.items()} == {
        k: v.tolist() for k, v in built.position.items()
    }
    assert sorted(stored.counters) == sorted(built.counters)
    for t, series in built.counters.items():
        assert np.array_equal(series.ts, stored.counters[t].ts) and np.array_equal(
            series.values, stored.counters[t].values
        )
    for start, end, px in (
        (built.start_us, built.end_us, 50),
        (built.start_us + 20, built.start_us + 700, 2000),
    ):
        w1, w2 = windows.window(built, start, end, px, None), windows.window(stored, start, end, px, None)
        assert w1.ts.size > 0 and w1.names == w2.names and w1.coarsened == w2.coarsened
        for column in ("ts", "dur", "kind", "row", "name", "count", "track", "depth"):
            assert np.array_equal(getattr(w1, column), getattr(w2, column)), column
        assert sorted(w1.counters) == sorted(w2.counters)


def test_an_index_written_without_it_builds_it_on_demand(tmp_path: Path) -> None:
    profile = load_profile(str(_trace(tmp_path / "w.pt.trace.json")))
    data = index_format.dumps(profile, {"path": "w"})  # no timeline index built yet
    header, _ = index_format.read_header(data)
    assert header["timeline"] is None
    back = index_format.loads(data)
    assert tl.INDEX_KEY not in back.cache
    assert tl.index(back).event_count == tl.index(profile).event_count


def test_a_damaged_timeline_table_makes_the_index_unusable(tmp_path: Path) -> None:
    profile = load_profile(str(_trace(tmp_path / "w.pt.trace.json")))
    tl.index(profile)
    data = bytearray(index_format.dumps(profile, {"path": "w"}))
    header, start = index_format.read_header(bytes(data))
    offset, size, crc = header["tables"]["timeline.events"]
    data[start + offset + size // 2] ^= 0xFF
    assert zlib.crc32(bytes(data[start + offset : start + offset + size])) != crc
    with pytest.raises(index_format.IndexFormatError):
        index_format.loads(bytes(data))


def test_the_plugin_reopens_with_the_first_profiles_timeline_index_ready(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tensorboard.plugins import base_plugin

    from torch_tb_profiler.plugin import TorchProfilerPlugin

    logdir = tmp_path / "logs"
    _trace(logdir / "run" / "w0.pt.trace.json")
    _trace(logdir / "run" / "w1.pt.trace.json")
    for f in logdir.rglob("*.json"):
        os.utime(f, (time.time() - 60,) * 2)
    flags = argparse.Namespace(profiler_index_dir=str(tmp_path / "index"), profiler_scan_interval=60.0)

    def opened() -> TorchProfilerPlugin:
        plugin = TorchProfilerPlugin(base_plugin.TBContext(logdir=str(logdir), flags=flags))
        assert plugin.store.wait_first_scan(30)
        time.sleep(0.1)
        assert plugin.store.wait_idle(60)
        return plugin

    first = opened()  # parses, builds the first profile's timeline index, writes both
    first.store.close()
    built: list[object] = []
    real_build = tl.build_index
    monkeypatch.setattr(tl, "build_index", lambda p: built.append(p) or real_build(p))
    second = opened()
    try:
        files = [f for r in second.store.runs() for f in r["files"]]
        assert files and all(f["from_index"] for f in files)
        w0 = second.store.get_profile("run", "w0", None)
        assert tl.INDEX_KEY in w0.cache and built == []  # read, not built
        assert tl.index(w0).event_count > 0
    finally:
        second.store.close()

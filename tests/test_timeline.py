"""The timeline index and its answers on a hand-built trace (expected values computed by hand)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.analysis.timeline import index as tl
from torch_tb_profiler.analysis.timeline import queries, windows
from torch_tb_profiler.analysis.timeline.events import details
from torch_tb_profiler.ingest.parse import load_profile
from torch_tb_profiler.model import Profile

BASE = 1_700_000_000_000_000.0


def build(tmp_path: Path) -> Profile:
    """Thread 100: step 0..1000 > mm 100..400 > launch 150..160 (kernel 500..700 on stream 7),
    and a relu 450..500 in the step; stream 7 also holds a copy 600..650 that overlaps the kernel;
    thread 200: an op 0..50 that partially overlaps a second op 40..90."""
    b = TraceBuilder(style="modern")
    b.step(1, 0, 1000)
    mm = b.op("aten::mm", 100, 300)
    b.launch("sgemm", 150, 10, 500, 200, ext_id=mm)
    b.op("aten::relu", 450, 50)
    b.memcpy("Memcpy HtoD", 600, 50, corr=9999, nbytes=1024)
    b.op("aten::add", 0, 50, tid=200)
    b.op("aten::mul", 40, 50, tid=200)
    path = b.write(tmp_path / "w.pt.trace.json")
    return load_profile(str(path))


@pytest.fixture
def profile(tmp_path: Path) -> Profile:
    return build(tmp_path)


def rows_of(w: windows.Window, idx: tl.TimelineIndex) -> list[tuple[str, int, int, float, float, int]]:
    return [
        (w.names[n] or "*", idx.tracks[t].kind, d, round(s - BASE, 3), round(du, 3), c)
        for t, d, s, du, n, c in zip(w.track, w.depth, w.ts, w.dur, w.name, w.count, strict=True)
    ]


def test_tracks_rows_and_moved_events(profile: Profile) -> None:
    idx = tl.build_index(profile)
    by_name = {t.name: t for t in idx.tracks}
    main, other = idx.tracks[0], by_name["Thread 200"]
    assert main.name == "thread 100 (python)"  # the builder's thread_name metadata
    assert (main.rows, main.extra_rows, main.moved, main.events) == (3, 0, 0, 4)  # step > mm > launch
    # aten::mul starts inside aten::add and ends after it: not nested, so it goes to an extra row
    assert (other.rows, other.extra_rows, other.moved) == (2, 1, 1)
    stream = by_name["Stream 7"]
    assert (stream.kind, stream.rows, stream.extra_rows, stream.moved, stream.events) == (
        "stream",
        2,
        1,
        1,
        2,
    )
    assert [t.kind for t in idx.tracks[:3]] == ["thread", "thread", "stream"]
    assert idx.groups[0]["kind"] == "host" and idx.groups[-1]["kind"] == "device"


def test_narrow_window_holds_exactly_the_overlapping_events(profile: Profile) -> None:
    idx = tl.build_index(profile)
    w = windows.window(idx, BASE + 140, BASE + 520, px=2000, tracks=None)
    # resolution 0.19 µs: nothing merges
    assert sorted(rows_of(w, idx)) == sorted(
        [
            ("ProfilerStep#1", "thread", 0, 0.0, 1000.0, 1),
            ("aten::mm", "thread", 1, 100.0, 300.0, 1),
            ("cudaLaunchKernel", "thread", 2, 150.0, 10.0, 1),
            ("aten::relu", "thread", 1, 450.0, 50.0, 1),
            ("sgemm", "stream", 0, 500.0, 200.0, 1),
        ]
    )


def test_coarse_window_merges_small_neighbours_and_counts_them(profile: Profile) -> None:
    idx = tl.build_index(profile)
    # 10 px over 1000 µs: 100 µs per pixel. On thread 100 row 1, mm (300 µs) stays; relu (50 µs) is
    # alone on its row -> a box of 1. Row 2: the launch (10 µs), alone. Thread 200: add (50) alone on
    # row 0, mul on its extra row.
    w = windows.window(idx, BASE, BASE + 1000, px=10, tracks=None)
    assert int(w.count.sum()) == idx.event_count
    b = TraceBuilder()
    for i in range(10):  # ten 1 µs kernels 2 µs apart on one stream, then a long one
        b.kernel("k_small", 100 + 3 * i, 1, corr=i + 1)
    b.kernel("k_long", 200, 300, corr=99)
    b.kernel("other_small", 600, 1, corr=100)
    b.kernel("k_small", 602, 1, corr=101)
    p = load_profile(str(b.write(Path(profile.source).parent / "k.pt.trace.json")))
    idx2 = tl.build_index(p)
    w = windows.window(idx2, BASE, BASE + 1000, px=100, tracks=None)  # 10 µs per pixel
    got = rows_of(w, idx2)
    assert got == [
        ("k_small", "stream", 0, 100.0, 28.0, 10),  # one box: same name, 10 events, 100..128
        ("k_long", "stream", 0, 200.0, 300.0, 1),
        ("*", "stream", 0, 600.0, 3.0, 2),  # mixed names: no name, "2 events"
    ]
    assert list(w.row[:2]) == [-1, 99 - 99 + int(p.device.index[p.device["name"] == "k_long"][0])]


def test_answer_is_capped_by_coarsening(profile: Profile, monkeypatch: pytest.MonkeyPatch) -> None:
    idx = tl.build_index(profile)
    monkeypatch.setattr(windows, "MAX_ITEMS", 7)  # 8 events on 7 rows
    w = windows.window(idx, BASE, BASE + 1000, px=20000, tracks=None)
    assert w.ts.size <= 7 and w.resolution_us > 1000 / 20000 and w.coarsened
    assert int(w.count.sum()) == idx.event_count
    # under the cap the answer keeps the asked resolution and says so
    w = windows.window(idx, BASE + 140, BASE + 160, px=200, tracks=None)
    assert w.ts.size <= 7 and w.resolution_us == pytest.approx(0.1) and not w.coarsened


def test_tracks_filter_and_counters(profile: Profile) -> None:
    idx = tl.build_index(profile)
    stream = next(t.id for t in idx.tracks if t.kind == "stream")
    w = windows.window(idx, BASE, BASE + 1000, px=2000, tracks=[stream])
    assert set(w.track.tolist()) == {stream} and w.ts.size == 2
    util = next(t for t in idx.tracks if t.name == "GPU 0 Utilization")
    series = idx.counters[util.id]
    assert util.unit == "ratio" and 0 < util.max <= 1
    assert np.all(np.diff(series.ts) >= 0)


def test_self_time_search_longest_aggregate(profile: Profile) -> None:
    idx = tl.build_index(profile)
    agg = {r["name"]: r for r in queries.aggregate(idx, BASE, BASE + 1000, None)["rows"]}
    assert agg["ProfilerStep#1"]["self_us"] == pytest.approx(1000 - 300 - 50)
    assert agg["aten::mm"]["self_us"] == pytest.approx(300 - 10)
    assert agg["sgemm"]["self_us"] is None and agg["sgemm"]["total_us"] == 200
    found = queries.search(idx, "ATEN::M", exact=False, limit=10)  # case-insensitive substring
    total, matches = found.total, found.matches
    assert total == 2 and [m["name"] for m in matches] == ["aten::mul", "aten::mm"]
    assert [round(m["start_us"] - BASE) for m in matches] == [40, 100]  # time order
    # within a range: the events overlapping it (mul 40..90 touches 90, mm 100..400 doesn't)
    found = queries.search(idx, "aten::m", exact=False, limit=10, within=(BASE + 90, BASE + 99))
    total, matches = found.total, found.matches
    assert total == 1 and [m["name"] for m in matches] == ["aten::mul"]
    total = queries.search(idx, "aten", exact=False, limit=10, within=(BASE + 420, BASE + 460)).total
    assert total == 1  # relu 450..500
    assert queries.longest(idx, "sgemm", "kernel")["dur_us"] == 200
    assert queries.longest(idx, "sgemm", "op") is None


def test_event_details_link_kernel_runtime_and_op(profile: Profile) -> None:
    idx = tl.build_index(profile)
    k = int(np.flatnonzero(profile.device["name"].to_numpy() == "sgemm")[0])
    d = details(profile, idx, "dev", k, queries.locate(idx, "dev", k))
    assert d["name"] == "sgemm" and d["category"] == "kernel" and d["dur_us"] == 200
    assert d["args"]["stream"] == 7 and d["args"]["grid"] == "[1, 1, 1]"
    links = {link["relation"]: link["name"] for link in d["links"]}
    assert links == {"launched by": "cudaLaunchKernel", "operator": "aten::mm"}
    op = int(np.flatnonzero(profile.ops["name"].to_numpy() == "aten::mm")[0])
    d = details(profile, idx, "op", op, queries.locate(idx, "op", op))
    assert {(link["relation"], link["name"]) for link in d["links"]} == {
        ("launches", "cudaLaunchKernel"),
        ("kernel", "sgemm"),
    }
    assert d["self_us"] == pytest.approx(290)


def test_parse_id() -> None:
    assert queries.parse_id("dev:12") == ("dev", 12)
    for bad in ("dev", "x:1", "op:-1", "op:1:2"):
        with pytest.raises(ValueError):
            queries.parse_id(bad)


def test_trace_counters_become_counter_tracks_of_their_process(tmp_path: Path) -> None:
    """``ph: "C"`` events: one track per args key, in the process's group; non-numeric values skipped."""
    b = TraceBuilder(style="modern")
    b.op("aten::mm", 0, 100)
    for ts, depth, nbytes in ((10, 3, 100), (50, 1, 400), (90, 0, 0)):
        b.raw(
            {
                "ph": "C",
                "name": "queue",
                "pid": 100,
                "ts": BASE + ts,
                "args": {"depth": depth, "bytes": nbytes},
            }
        )
    b.raw({"ph": "C", "name": "queue", "pid": 100, "ts": BASE + 95, "args": {"depth": "many", "bytes": None}})
    idx = tl.build_index(load_profile(str(b.write(tmp_path / "w.pt.trace.json"))))
    tracks = {t.name: t for t in idx.tracks if t.kind == "counter"}
    assert {"queue depth", "queue bytes"} <= set(tracks)
    depth = tracks["queue depth"]
    assert depth.group == "p:100" and depth.max == 3
    series = idx.counters[depth.id]
    assert (series.ts - BASE).tolist() == [10, 50, 90] and series.values.tolist() == [3, 1, 0]
    assert idx.counters[tracks["queue bytes"].id].values.tolist() == [100, 400, 0]


def test_zero_length_events_hold_nothing_as_in_the_op_tree(tmp_path: Path) -> None:
    """A [0, 50] > B [10, 20] > two zero-length ops at 10: both at depth 2, siblings, not nested."""
    b = TraceBuilder(style="modern")
    b.op("A", 0, 50)
    b.op("B", 10, 10)
    b.op("Z1", 10, 0)
    b.op("Z2", 10, 0)
    profile = load_profile(str(b.write(tmp_path / "w.pt.trace.json")))
    idx = tl.build_index(profile)
    ops = profile.ops
    depth = dict(zip(ops["name"], idx.depth[idx.position["op"]].tolist(), strict=True))
    assert depth == {"A": 0, "B": 1, "Z1": 2, "Z2": 2}
    assert dict(zip(ops["name"], ops["depth"].tolist(), strict=True)) == depth

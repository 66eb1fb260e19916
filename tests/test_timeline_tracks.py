"""Timeline track names and what a zoomed-out window says about its merged boxes (hand-built traces)."""

from __future__ import annotations

import collections
import itertools
from pathlib import Path

import numpy as np

from tests.fixtures.trace_builder import TraceBuilder
from tests.test_timeline import BASE
from torch_tb_profiler.analysis.timeline import index as tl
from torch_tb_profiler.analysis.timeline import windows
from torch_tb_profiler.ingest.parse import load_profile
from torch_tb_profiler.model import Profile

V100 = {"id": 0, "name": "Tesla V100", "computeMajor": 7, "computeMinor": 0, "numSms": 80}


def build(tmp_path: Path) -> Profile:
    """A step with a launch on GPU 0 stream 7, a GPU annotation written as Kineto writes it (the stream
    as its tid, none in its args), CUDA memory records, and CPU memory records that reserve nothing."""
    b = TraceBuilder(device_properties=[V100])
    b.step(1, 0, 1000)
    mm = b.op("aten::mm", 100, 300)
    b.launch("sgemm", 150, 10, 500, 200, ext_id=mm)
    b._x("gpu_user_annotation", "ProfilerStep#1", 0, 1000, 0, 7, {"External id": 1})
    b.memory(120, 4096, 1, 4096, 2 * 1024**2, device_type=1, device_id=0)
    b.memory(130, 64, 2, 64, 0)  # CPU: allocated 64 B, reserved 0 B throughout
    return load_profile(str(b.write(tmp_path / "w.pt.trace.json")))


def test_track_names_are_consistent_and_empty_tracks_hidden(tmp_path: Path) -> None:
    idx = tl.build_index(build(tmp_path))
    names = [t.name for t in idx.tracks if t.group == "d:0"]
    # the annotation sits beside its stream (was "Stream -1 annotations"); memory is named as the
    # utilization counter is (was "GPU0 Allocated")
    assert names == [
        "Stream 7",
        "Stream 7 annotations",
        "GPU 0 Utilization",
        "GPU 0 Allocated",
        "GPU 0 Reserved",
        "GPU 0 Stream 7 Queue length",  # waits/queues.py: the launch queued from 150 to 500
    ]
    counters = {t.name for t in idx.tracks if t.kind == "counter"}
    assert "CPU Allocated" in counters
    assert "CPU Reserved" not in counters  # zero throughout: no track


def test_an_annotation_without_any_stream_is_named_plainly(tmp_path: Path) -> None:
    b = TraceBuilder(device_properties=[V100])
    b.step(1, 0, 1000)
    b.kernel("k", 100, 10, corr=5)
    b._x("gpu_user_annotation", "region", 0, 500, 0, "gpu", {"External id": 1})
    idx = tl.build_index(load_profile(str(b.write(tmp_path / "w.pt.trace.json"))))
    assert "Annotations" in [t.name for t in idx.tracks if t.kind == "annotations"]
    assert not any("-1" in t.name for t in idx.tracks)


def test_a_box_of_mixed_names_reports_the_name_covering_most_of_it(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 1000)
    b.kernel("short_a", 100, 1, corr=1)
    b.kernel("long_b", 102, 5, corr=2)  # wider than the resolution: not merged at 10 µs per pixel
    b.kernel("short_a", 110, 1, corr=3)
    for i in range(4):  # 4 × 1 µs of "tiny_c" vs 2 × 2 µs of "mid_d": mid_d covers as much with fewer
        b.kernel("tiny_c", 300 + 2 * i, 1, corr=10 + i)
    b.kernel("mid_d", 309, 2, corr=20)
    b.kernel("mid_d", 312, 2.5, corr=21)
    idx = tl.build_index(load_profile(str(b.write(tmp_path / "w.pt.trace.json"))))
    stream = next(t.id for t in idx.tracks if t.kind == "stream")
    w = windows.window(idx, BASE, BASE + 1000, px=100, tracks=[stream])  # 10 µs per pixel
    boxes = [(w.names[n], w.names[m], int(c)) for n, m, c in zip(w.name, w.major, w.count, strict=True)]
    assert ("", "mid_d", 6) in boxes  # 4.5 µs of mid_d against 4 µs of tiny_c
    # a box of one name, or a single event, has that name as its major
    for n, m, c in boxes:
        if n:
            assert n == m, (n, m, c)


def test_major_names_match_a_count_by_hand() -> None:
    rng = np.random.default_rng(1)
    group = np.sort(rng.integers(0, 300, 5000))
    codes = rng.integers(0, 6, 5000).astype(np.int32)
    dur = rng.integers(0, 4, 5000).astype(np.float64)  # ties in total time are common
    heads = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    same = np.minimum.reduceat(codes, heads) == np.maximum.reduceat(codes, heads)
    bounds = [*heads.tolist(), group.size]
    expected = []
    for a, b in itertools.pairwise(bounds):
        total: dict[int, float] = collections.defaultdict(float)
        count: collections.Counter[int] = collections.Counter()
        for c, d in zip(codes[a:b].tolist(), dur[a:b].tolist(), strict=True):
            total[c] += d
            count[c] += 1
        expected.append(min(total, key=lambda c: (-total[c], -count[c], c)))
    # 6 names, and a name table too large to pack key and position in one int64 (the argsort path)
    for n_names in (6, 2**45):
        got = windows._major_names(group, heads, codes, dur, same, n_names)
        assert got.tolist() == expected

"""Steps: ProfilerStep ranges extended to their device work, the fallback step, the tail trim."""

from __future__ import annotations

from pathlib import Path

from tests.fixtures.builders_overview import load, rel
from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.analysis.core.steps import device_steps, steps, window


def _ranges(profile) -> list[tuple[int, float, float]]:
    s = steps(profile)
    return [
        (int(n), rel(profile, a), rel(profile, b))
        for n, a, b in zip(s["number"], s["start"], s["end"], strict=True)
    ]


def test_steps_extend_to_the_device_work_they_launched(tmp_path: Path) -> None:
    b = TraceBuilder()
    for n, start in ((1, 0), (2, 100), (3, 200)):
        b.step(n, start, 100)
    b.launch("k1", 10, 5, 150, 100)  # step 1's kernel runs until 250
    b.launch("k2", 110, 5, 260, 10)
    b.launch("k3", 210, 5, 280, 10)
    p = load(b, tmp_path)
    # step 2 starts where step 1 ended (250), step 3 where step 2 ended (270); step 3 ends with its host range
    assert _ranges(p) == [(1, 0, 250), (2, 250, 270), (3, 270, 300)]
    assert list(steps(p)["device_ops"]) == [1, 1, 1]
    assert list(steps(p)["host_end"] - b.base_ts) == [100, 200, 300]
    assert [s["name"] for s in device_steps(p)] == ["ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3"]
    lo, hi = window(p)
    assert (rel(p, lo), rel(p, hi)) == (0, 300)


def test_trailing_steps_without_device_work_are_dropped(tmp_path: Path) -> None:
    b = TraceBuilder()
    for n in range(1, 5):
        b.step(n, (n - 1) * 100, 100)
    for n in range(1, 4):
        for i in range(5):
            b.launch("k", (n - 1) * 100 + 10 + i, 0.5, (n - 1) * 100 + 20 + i, 0.5)
    p = load(b, tmp_path)
    assert list(steps(p)["number"]) == [1, 2, 3]  # step 4 launched nothing


def test_a_short_last_step_is_dropped(tmp_path: Path) -> None:
    b = TraceBuilder()
    for n in range(1, 4):
        b.step(n, (n - 1) * 100, 100)
    for n, count in ((1, 5), (2, 5), (3, 3)):  # 3 < 0.8 x 5
        for i in range(count):
            b.launch("k", (n - 1) * 100 + 10 + i, 0.5, (n - 1) * 100 + 20 + i, 0.5)
    p = load(b, tmp_path)
    assert list(steps(p)["number"]) == [1, 2]


def test_four_of_five_device_ops_keeps_the_last_step(tmp_path: Path) -> None:
    b = TraceBuilder()
    for n in range(1, 3):
        b.step(n, (n - 1) * 100, 100)
    for n, count in ((1, 5), (2, 4)):  # 4 == 0.8 x 5: kept
        for i in range(count):
            b.launch("k", (n - 1) * 100 + 10 + i, 0.5, (n - 1) * 100 + 20 + i, 0.5)
    assert list(steps(load(b, tmp_path))["number"]) == [1, 2]


def test_first_step_starts_after_earlier_device_work(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.launch("warmup", -50, 5, 5, 25)  # launched before step 1, runs until 30
    b.step(1, 0, 100)
    b.launch("k", 10, 5, 40, 80)  # step 1's first device op begins at 40
    p = load(b, tmp_path)
    assert _ranges(p) == [(1, 30, 120)]


def test_without_profiler_steps_one_step_spans_the_profile(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.op("aten::add", 0, 50)
    ext = b.op("aten::mul", 60, 30)
    b.launch("k", 70, 5, 100, 30, ext_id=ext)
    p = load(b, tmp_path)
    assert _ranges(p) == [(0, 0, 130)]
    assert steps(p)["name"].tolist() == ["0"]


def test_gpu_projection_of_a_step_is_not_a_step(tmp_path: Path) -> None:
    b = TraceBuilder()
    ext = b.step(1, 0, 100)
    b.gpu_annotation("ProfilerStep#1", 20, 90, ext_id=ext)
    b.launch("k", 10, 5, 20, 90)
    p = load(b, tmp_path)
    assert _ranges(p) == [(1, 0, 110)]


def test_cpu_only_steps_keep_their_host_ranges(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100)
    b.step(2, 100, 50)
    b.op("aten::add", 10, 20)
    p = load(b, tmp_path)
    assert _ranges(p) == [(1, 0, 100), (2, 100, 150)]


def test_empty_profile_has_no_steps(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.empty_profiler_span()
    p = load(b, tmp_path)
    assert steps(p).empty and window(p) is None and device_steps(p) == []

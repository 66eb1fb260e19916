"""Comparing memory across hosts and vendors: devices paired by role (docs/metrics.md "Diff")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.paths import shared_trace
from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.analysis.diff import compare as D
from torch_tb_profiler.analysis.diff import rules as R
from torch_tb_profiler.cli.compare_report import render
from torch_tb_profiler.ingest.loading import load_profile

CUDA, HIP = 1, 6


def _memory_trace(path: Path, peak: int, device_type: int, device_id: int, cpu_peak: int = 0) -> Path:
    b = TraceBuilder()
    b.step(1, 0, 1000)
    b.op("aten::empty", 10, 20)
    b.memory(
        15,
        peak,
        addr=1,
        total_allocated=peak,
        total_reserved=2 * peak,
        device_type=device_type,
        device_id=device_id,
    )
    b.memory(
        25,
        -peak,
        addr=1,
        total_allocated=0,
        total_reserved=2 * peak,
        device_type=device_type,
        device_id=device_id,
    )
    if cpu_peak:
        b.memory(16, cpu_peak, addr=9, total_allocated=cpu_peak, total_reserved=cpu_peak)
    return b.write(path)


def _load(path: Path, run: str):
    return load_profile(str(path), run=run, worker="w0", span="1")


def test_cuda_gpu0_pairs_with_hip_gpu0_both_ways(tmp_path: Path) -> None:
    cuda = _load(_memory_trace(tmp_path / "h100.pt.trace.json", 1000, CUDA, 0, cpu_peak=64), "h100")
    hip = _load(_memory_trace(tmp_path / "mi300.pt.trace.json", 1445, HIP, 0, cpu_peak=64), "mi300")
    d = D.compare(cuda, hip)
    gpu = next(r for r in d["memory"] if r["device"] == "GPU0")
    assert gpu["peak_allocated_bytes"] == {"baseline": 1000, "experiment": 1445, "delta": 445, "rel": 0.445}
    assert "experiment_device" not in gpu  # both sides call it GPU0
    assert [r["device"] for r in d["memory"]] == ["GPU0", "CPU"]
    assert R.evaluate(R.parse("memory:GPU0.peak_allocated>+10%"), d)["failed"]  # +44.5 %
    back = D.compare(hip, cuda)
    outcome = R.evaluate(R.parse("memory:GPU0.peak_allocated>+10%"), back)
    assert outcome["baseline"] == 1445 and outcome["experiment"] == 1000 and not outcome["failed"]
    assert outcome["rel"] == pytest.approx(-445 / 1445)


def test_one_accelerator_each_pairs_under_the_baseline_label(tmp_path: Path) -> None:
    rank0 = _load(_memory_trace(tmp_path / "r0.pt.trace.json", 800, CUDA, 0), "r0")
    rank1 = _load(_memory_trace(tmp_path / "r1.pt.trace.json", 1000, CUDA, 1), "r1")
    d = D.compare(rank0, rank1)
    (row,) = d["memory"]
    assert row["device"] == "GPU0" and row["experiment_device"] == "GPU1"
    assert row["peak_allocated_bytes"]["delta"] == 200
    assert not [n for n in d["notes"] if "memory of" in n]
    for name in ("GPU0", "GPU1"):  # either side's label names the row
        assert R.evaluate(R.parse(f"memory:{name}.peak_allocated>+20%"), d)["failed"]  # +25 %
    assert "memory GPU0 (experiment GPU1): peak allocated" in render({**d, "verdict": {}}, 5)


def test_a_side_without_the_device_is_an_error_not_a_zero(tmp_path: Path) -> None:
    gpu = _load(_memory_trace(tmp_path / "g.pt.trace.json", 1000, CUDA, 0), "g")
    cpu = _load(_memory_trace(tmp_path / "c.pt.trace.json", 1000, 0, -1), "c")
    d = D.compare(cpu, gpu)
    assert {r["device"] for r in d["memory"]} == {"CPU", "GPU0"}
    with pytest.raises(R.RuleError, match="the baseline has no memory totals for 'GPU0'"):
        R.evaluate(R.parse("memory:GPU0.peak_allocated>+10%"), d)


def test_shared_bert_small_h100_against_mi300x() -> None:
    rel = "{}_bert_small/gaunernst_bert-small-uncased__1016001.pt.trace.json.gz"
    h100 = load_profile(
        str(shared_trace("tracelens/" + rel.format("h100"))), run="h100", worker="w", span="1"
    )
    mi300 = load_profile(
        str(shared_trace("tracelens/" + rel.format("mi300"))), run="mi300", worker="w", span="1"
    )
    d = D.compare(h100, mi300)
    gpu = next(r for r in d["memory"] if r["device"] == "GPU0")
    assert gpu["peak_allocated_bytes"]["rel"] == pytest.approx(0.4451, abs=1e-4)
    assert R.evaluate(R.parse("memory:GPU0.peak_allocated>+10%"), d)["failed"]
    assert [(g["baseline_id"], g["id"]) for g in d["gpus"]] == [(0, 0)]
    text = render({**D.compare(mi300, h100), "verdict": {}}, 5)
    assert "n/a%" not in text and "memory GPU0: peak allocated 139.6 MiB → 96.6 MiB" in text

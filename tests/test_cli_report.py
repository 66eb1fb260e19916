"""The text report of ``summary`` is the readable twin of ``--json``: memory and distributed figures,
operators by device time on device profiles, one unit (ms) per table, no device columns on CPU."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.fixtures.paths import SAMPLES
from tests.fixtures.trace_builder import V100, TraceBuilder
from tests.test_distributed_job import rank_trace
from torch_tb_profiler.cli.main import main


def _text(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["summary", *args]) == 0
    return capsys.readouterr().out


def _section(out: str, title: str) -> list[str]:
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]


def test_gpu_operators_are_sorted_by_device_time(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    b = TraceBuilder(device_properties=[V100])
    b.step(1, 0, 2000)
    b.op("aten::slow_host", 10, 900)  # most host time, no device time
    mm = b.op("aten::mm", 1000, 50)
    b.launch("volta_sgemm_128x64_nn", 1010, 10, 1100, 700, ext_id=mm, blocks_per_sm=1, occupancy=50)
    b.write(tmp_path / "run" / "w.pt.trace.json")
    out = _text(capsys, str(tmp_path))
    table = _section(out, "Top operators by device total time")
    assert "device total ms" in table[1]
    assert table[2].endswith("aten::mm") and table[3].endswith("aten::slow_host")
    assert "0.700" in table[2]  # 700 µs in ms, like every time in the table
    assert " µs" not in "\n".join(table)


def test_cpu_report_has_no_device_columns_and_shows_memory(capsys: pytest.CaptureFixture[str]) -> None:
    if not SAMPLES.exists():
        pytest.skip("samples/ absent")
    out = _text(capsys, str(SAMPLES / "plain_no_steps"))
    assert "device: CPU" in out
    ops = _section(out, "Top operators by host total time")
    assert "device" not in ops[1] and "host total ms" in ops[1]
    breakdown = "\n".join(_section(out, "Step-time breakdown"))
    assert not re.search(r"Kernel|Memcpy|Memset|Runtime", breakdown)
    memory = _section(out, "Memory (peak over the profile)")
    assert memory[2].endswith("CPU") and "KiB" in memory[2]


def test_distributed_figures_are_printed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "job"
    for r in range(2):
        rank_trace(r, 2, {0: (1, 100.0), 1: (0, 50.0)}).write(run / f"rank{r}.pt.trace.json")
    out = _text(capsys, str(run))
    table = _section(out, "== Distributed (ms, mean per step)")
    assert "communication" in table[1] and "synchronizing" in table[1]
    rank0 = next(line for line in table if line.endswith("job / 1 / rank0"))
    # the JSON's rank0 row in ms: computation 225 µs, overlap 75, communication 324, other 376
    assert rank0.split()[:5] == ["0", "0.225", "0.075", "0.324", "0.376"]


def test_missing_figures_print_a_dash(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    b = TraceBuilder(device_properties=[V100])
    b.step(1, 0, 100)
    mm = b.op("aten::mm", 10, 20)
    b.launch("volta_sgemm_128x64_nn", 12, 2, 40, 30, ext_id=mm)  # no blocks per SM, no occupancy
    b.write(tmp_path / "run" / "w.pt.trace.json")
    out = _text(capsys, str(tmp_path))
    gpu = _section(out, "GPU summary")
    assert gpu[2].split()[:6] == ["0", "30.00", "%", "–", "–", "0.00"]

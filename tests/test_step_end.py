"""A step that never closes ends where the profile's data ends (docs/metrics.md, "Steps")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.analysis.device import breakdown
from torch_tb_profiler.ingest.parse import load_profile


def _write(tmp_path: Path, span_end: float | None) -> Path:
    """Step 1 [0, 1000) closed; step 2 opened at 1000 and written 10 s long; step 3 opened after
    everything else. Ops: aten::add [100, 200) and [1100, 1300)."""
    b = TraceBuilder()
    b.step(1, 0, 1000)
    b.op("aten::add", 100, 100)
    b.step(2, 1000, 10_000_000)
    b.op("aten::add", 1100, 200)
    b.step(3, 9_000_000, 1_000_000)
    data = b.to_dict()
    events = data["traceEvents"]
    (span,) = [e for e in events if str(e.get("name", "")).startswith("PyTorch Profiler")]
    events.remove(span)
    if span_end is not None:
        events.append({**span, "dur": span_end})  # the span starts at the builder's time 0
    path = tmp_path / "w.pt.trace.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(("span_end", "end"), [(1500.0, 1500.0), (None, 1300.0)])
def test_unclosed_step_ends_at_the_end_of_the_data(
    tmp_path: Path, span_end: float | None, end: float
) -> None:
    p = load_profile(str(_write(tmp_path, span_end)))
    rows = breakdown.per_step(p)
    base = TraceBuilder().base_ts
    assert rows["number"].tolist() == [1, 2]  # step 3 lies wholly after the data: dropped
    assert (rows["start"] - base).tolist() == [0.0, 1000.0]
    assert (rows["end"] - base).tolist() == [1000.0, end]
    step2 = rows.iloc[1]
    assert step2["cpu_exec"] == pytest.approx(200.0)
    assert step2["other"] == pytest.approx(end - 1000.0 - 200.0)

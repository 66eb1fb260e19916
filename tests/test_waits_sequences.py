"""Frequent kernel sequences (analysis/waits/sequences.py) on hand-built traces, counted by hand from
docs/metrics.md "Frequent kernel sequences"."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.analysis.waits import sequences
from torch_tb_profiler.ingest.parse import load_profile

BASE = 1_700_000_000_000_000.0


def _profile(tmp_path: Path, names: list[str], durs: list[float], stream: int = 7, more=None):
    b = TraceBuilder()
    b.step(1, 0, 10_000)
    ext = b.op("aten::block", 1, 9_000)
    t = 100.0
    for i, (n, d) in enumerate(zip(names, durs, strict=True)):
        b.launch(n, 2 + i, 0.5, t, d, ext_id=ext, stream=stream)
        t += d + 1
    if more:
        more(b)
    return load_profile(str(b.write(tmp_path / "w.pt.trace.json")))


def test_repeated_pattern_counted_by_hand(tmp_path: Path) -> None:
    # A B C A B C A B C X: "A B C" three times (10+20+30 each), "B C A" twice, "C A B" twice
    names = ["A", "B", "C"] * 3 + ["X"]
    durs = [10.0, 20.0, 30.0] * 3 + [5.0]
    p = _profile(tmp_path, names, durs)
    rows = sequences.sequences(p, 3)
    got = {tuple(r["names"]): (r["count"], r["total_us"]) for r in rows}
    assert got == {("A", "B", "C"): (3, 180.0), ("B", "C", "A"): (2, 120.0), ("C", "A", "B"): (2, 120.0)}
    top = rows[0]
    assert top["names"] == ["A", "B", "C"] and top["mean_us"] == 60.0 and top["ops"] == ["aten::block"]
    assert top["first_ts"] == BASE + 100 and (top["device"], top["stream"]) == (0, 7)


def test_overlapping_occurrences_are_not_double_counted(tmp_path: Path) -> None:
    # A A A A A: "A A" at 0 and 2 (the one at 1 shares a kernel with the one at 0; 3 with 2): twice
    p = _profile(tmp_path, ["A"] * 5, [1.0, 2.0, 3.0, 4.0, 5.0])
    (row,) = sequences.sequences(p, 2)
    assert (row["count"], row["total_us"]) == (2, 1.0 + 2.0 + 3.0 + 4.0)


def test_a_sequence_never_spans_two_streams(tmp_path: Path) -> None:
    def other_stream(b: TraceBuilder) -> None:
        ext = b.op("aten::other", 9_100, 100)
        b.launch("A", 9_101, 0.5, 5_000, 1.0, ext_id=ext, stream=9)
        b.launch("B", 9_102, 0.5, 5_002, 1.0, ext_id=ext, stream=9)

    # stream 7: A B (once) then C; stream 9: A B: "A B" once per stream, so not repeated on either
    p = _profile(tmp_path, ["A", "B", "C"], [1.0, 1.0, 1.0], more=other_stream)
    assert sequences.sequences(p, 2) == []


def test_length_is_bounded(tmp_path: Path) -> None:
    p = _profile(tmp_path, ["A", "B"], [1.0, 1.0])
    for bad in (1, 17):
        with pytest.raises(ValueError, match="2 to 16"):
            sequences.sequences(p, bad)

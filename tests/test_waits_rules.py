"""``--fail-on`` rules on the why-the-device-waits figures (analysis/diff/waits_change.py): temporal idle
and critical-path kinds per step, hand-computed on two hand-built profiles."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.analysis.diff import compare as D
from torch_tb_profiler.analysis.diff import rules
from torch_tb_profiler.ingest.parse import load_profile


def _profile(tmp_path: Path, name: str, gap: float):
    """Two steps of 1000 µs; each launches one kernel 100 µs after its start and a second one ``gap`` µs
    after the first ends: per step idle = window − kernels."""
    b = TraceBuilder()
    for i in range(2):
        t0 = 1000.0 * i
        b.step(i + 1, t0, 1000)
        ext = b.op("aten::mm", t0 + 1, 900)
        b.launch("k", t0 + 10, 5, t0 + 100, 100, ext_id=ext)
        b.launch("k", t0 + 20, 5, t0 + 200 + gap, 100, ext_id=ext)
    return load_profile(str(b.write(tmp_path / f"{name}.pt.trace.json")), run=name, worker="w")


def test_temporal_idle_rule(tmp_path: Path) -> None:
    base, exp = _profile(tmp_path, "a", 0.0), _profile(tmp_path, "b", 300.0)
    d = D.compare(base, exp)
    idle = d["waits"]["temporal:idle"]
    # each step's window is its host range (1000 µs, the device work ends inside): idle 1000 − 200
    assert (idle["baseline"], idle["experiment"], idle["delta"], idle["noise"]) == (800.0, 800.0, 0.0, 0.0)
    compute = d["waits"]["temporal:compute"]
    assert compute["baseline"] == compute["experiment"] == 200.0
    # the critical path: host-bound steps whose tail after the last kernel is host time
    host = d["waits"]["critical_path:host"]
    assert host["baseline"] is not None and host["significant"] is (abs(host["delta"]) > host["noise"])
    ok = rules.evaluate(rules.parse("temporal:idle>+5%"), d)
    assert ok["failed"] is False and ok["delta"] == 0.0


def test_rule_fails_when_idle_grows(tmp_path: Path) -> None:
    base = _profile(tmp_path, "a", 0.0)
    b = TraceBuilder()  # the experiment: one kernel less per step, idle 900 per step
    for i in range(2):
        t0 = 1000.0 * i
        b.step(i + 1, t0, 1000)
        ext = b.op("aten::mm", t0 + 1, 900)
        b.launch("k", t0 + 10, 5, t0 + 100, 100, ext_id=ext)
    exp = load_profile(str(b.write(tmp_path / "c.pt.trace.json")), run="c", worker="w")
    d = D.compare(base, exp)
    out = rules.evaluate(rules.parse("temporal:idle>+10%"), d)
    assert (out["baseline"], out["experiment"]) == (800.0, 900.0)
    assert out["rel"] == pytest.approx(0.125) and out["failed"] is True
    assert rules.evaluate(rules.parse("temporal:idle>+200us"), d)["failed"] is False  # +100 µs


def test_unknown_and_missing_figures(tmp_path: Path) -> None:
    with pytest.raises(rules.RuleError, match="unknown figure"):
        rules.parse("temporal:busy>5%")
    base = _profile(tmp_path, "a", 0.0)
    d = D.compare(base, base)
    with pytest.raises(rules.RuleError, match="neither profile has"):
        rules.evaluate(rules.parse("critical_path:nothing>5%"), d)

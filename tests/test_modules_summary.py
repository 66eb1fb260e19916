"""`summary` gains the module tree: JSON ``modules`` (top two levels, all steps) and a text table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures.paths import SAMPLES
from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.cli import main


def _summary(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["summary", *args]) == 0
    return capsys.readouterr().out


def test_json_modules_by_hand(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    b = TraceBuilder()
    b.step(1, 0, 1000)
    b.python_function("nn.Module: Net_0", 100, 600, py_id=1, parent_id=None, module_id=0)
    b.python_function("nn.Module: Block_0", 150, 300, py_id=2, parent_id=1, module_id=0)
    b.python_function("nn.Module: Linear_0", 200, 100, py_id=3, parent_id=2, module_id=0)  # depth 2: left out
    b.write(tmp_path / "run" / "w0.1.pt.trace.json.gz")
    (p,) = json.loads(_summary(capsys, str(tmp_path), "--json"))["profiles"]
    assert [(m["depth"], m["name"], m["host_total_us"], m["host_self_us"]) for m in p["modules"]] == [
        (0, "Net_0", 600, 300),
        (1, "Block_0", 300, 200),
    ]
    assert p["modules"][0]["step_share_pct"] == pytest.approx(60.0)


def test_text_and_json_on_the_sample(capsys: pytest.CaptureFixture[str]) -> None:
    run = str(SAMPLES / "resnet_like_cpu")
    profiles = json.loads(_summary(capsys, run, "--json", "--span", "1"))["profiles"]
    mods = profiles[0]["modules"]
    assert mods[0]["name"] == "SmallResNet_0" and mods[0]["depth"] == 0
    assert {m["name"] for m in mods if m["depth"] == 1} == {
        "Sequential_0",
        "ResidualBlock_0",
        "AdaptiveAvgPool2d_0",
        "Linear_0",
    }
    text = _summary(capsys, run, "--span", "1")
    lines = text.splitlines()
    at = lines.index("Modules (all steps, top levels)")
    assert lines[at + 2].endswith("SmallResNet_0") and lines[at + 3].endswith("  Sequential_0")


def test_no_modules_gives_an_empty_list(capsys: pytest.CaptureFixture[str]) -> None:
    (p,) = json.loads(_summary(capsys, str(SAMPLES / "plain_no_steps"), "--json"))["profiles"]
    assert p["modules"] == []
    assert "Modules (" not in _summary(capsys, str(SAMPLES / "plain_no_steps"))

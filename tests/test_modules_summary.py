"""`summary` gains the module tree: JSON ``modules`` (top two levels, all steps) and a text table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures.paths import SAMPLES
from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.cli.main import main


def _summary(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["summary", *args]) == 0
    return capsys.readouterr().out


def test_json_modules_by_hand(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    b = TraceBuilder()
    b.step(1, 0, 1000)
    b.python_function("nn.Module: Net_0", 100, 600, py_id=1, parent_id=None, module_id=0)
    b.python_function("nn.Module: Block_0", 150, 300, py_id=2, parent_id=1, module_id=0)
    b.python_function("nn.Module: Linear_0", 200, 100, py_id=3, parent_id=2, module_id=0)  # depth 2: left out
    b.op("aten::linear", 210, 50)
    b.op("LinearBackward0", 800, 60, tid=200)  # its backward, on the autograd thread
    b.fwdbwd(1, 210, 800, bwd_tid=200)
    b.write(tmp_path / "run" / "w0.1.pt.trace.json.gz")
    (p,) = json.loads(_summary(capsys, str(tmp_path), "--json"))["profiles"]
    got = [(m["depth"], m["name"], m["kind"], m["host_total_us"], m["host_self_us"]) for m in p["modules"]]
    assert got == [
        (0, "Net_0", "forward", 600, 300),
        (1, "Block_0", "forward", 300, 200),
        (0, "Net_0.backward", "backward", 60, 0),  # Linear_0.backward (depth 2) holds the 60 µs
        (1, "Block_0.backward", "backward", 60, 0),
    ]
    assert p["modules"][0]["step_share_pct"] == pytest.approx(60.0)
    lines = _summary(capsys, str(tmp_path)).splitlines()
    at = lines.index("Modules (all steps, top levels)")
    assert [line.split()[-1] for line in lines[at + 2 : at + 6]] == [
        "Net_0",
        "Block_0",
        "Net_0.backward",
        "Block_0.backward",
    ]


def test_text_and_json_on_the_sample(capsys: pytest.CaptureFixture[str]) -> None:
    run = str(SAMPLES / "resnet_like_cpu")
    profiles = json.loads(_summary(capsys, run, "--json", "--span", "1"))["profiles"]
    mods = profiles[0]["modules"]
    assert mods[0]["name"] == "SmallResNet_0" and mods[0]["depth"] == 0
    assert {m["name"] for m in mods if m["depth"] == 1 and m["kind"] == "forward"} == {
        "Sequential_0",
        "ResidualBlock_0",
        "AdaptiveAvgPool2d_0",
        "Linear_0",
    }
    # its backward (fwdbwd flows): SmallResNet_0.backward, a root after the forward tree
    back = [m for m in mods if m["kind"] == "backward"]
    assert back[0]["name"] == "SmallResNet_0.backward" and back[0]["depth"] == 0
    assert back[0]["host_total_us"] > 0 and mods.index(back[0]) > mods.index(mods[0])
    text = _summary(capsys, run, "--span", "1")
    lines = text.splitlines()
    at = lines.index("Modules (all steps, top levels)")
    assert lines[at + 2].endswith("SmallResNet_0") and lines[at + 3].endswith("  Sequential_0")


def test_no_modules_gives_an_empty_list(capsys: pytest.CaptureFixture[str]) -> None:
    (p,) = json.loads(_summary(capsys, str(SAMPLES / "plain_no_steps"), "--json"))["profiles"]
    assert p["modules"] == []
    assert "Modules (" not in _summary(capsys, str(SAMPLES / "plain_no_steps"))

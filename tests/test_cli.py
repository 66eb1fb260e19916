"""``torch-tb-profiler summary``: the JSON schema, figures, filters, text report and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.paths import REPO, SAMPLES
from tests.fixtures.trace_builder import V100, TraceBuilder
from torch_tb_profiler.cli.main import main

PROFILE_KEYS = {
    "run", "worker", "span", "device_type", "matrix_units", "steps", "step_time_us", "breakdown_us", "gpus", "operators",
    "kernels", "recommendations", "errors", "graphs", "step_list", "note", "warnings",
}  # fmt: skip
BREAKDOWN_KEYS = {"kernel", "memcpy", "memset", "communication", "runtime", "dataloader", "cpu_exec", "other"}
GPU_KEYS = {
    "id",
    "name",
    "utilization_pct",
    "sm_efficiency_pct",
    "achieved_occupancy_pct",
    "tensor_core_pct",
    "tensor_core_unknown_pct",
}
REPLAYED_KEYS = {"replayed_calls", "replayed_device_us"}  # graph replays (tests/test_graph_replays.py)
OP_KEYS = {
    "name",
    "kind",
    "calls",
    "host_self_us",
    "host_total_us",
    "device_self_us",
    "device_total_us",
    *REPLAYED_KEYS,
}
KERNEL_KEYS = {
    "name",
    "calls",
    "total_us",
    "mean_blocks_per_sm",
    "mean_achieved_occupancy_pct",
    *REPLAYED_KEYS,
}


def _trace(path: Path) -> Path:
    b = TraceBuilder(device_properties=[V100])
    for n in (1, 2):
        start = (n - 1) * 1000
        b.step(n, start, 1000)
        mm = b.op("aten::mm", start + 100, 300)
        b.launch(
            "volta_sgemm_128x64_nn",
            start + 110,
            10,
            start + 150,
            400,
            ext_id=mm,
            blocks_per_sm=2,
            occupancy=25,
        )
        b.op("aten::add", start + 500, 100)
    return b.write(path)


@pytest.fixture
def logdir(tmp_path: Path) -> Path:
    _trace(tmp_path / "run_a" / "worker0.1.pt.trace.json.gz")
    _trace(tmp_path / "run_a" / "worker0.2.pt.trace.json.gz")
    _trace(tmp_path / "run_b" / "worker1.pt.trace.json")
    return tmp_path


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict, str]:
    code = main(["summary", *args, "--json"])
    out, err = capsys.readouterr()
    return code, json.loads(out) if out.strip() else {}, err


def test_json_schema_and_figures(logdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, data, _ = _json(capsys, str(logdir), "--run", "run_a", "--span", "2", "--top", "1")
    assert code == 0 and set(data) == {"profiles"}  # "distributed" only for multi-worker runs
    (p,) = data["profiles"]
    # the issue's keys, plus the memory and module views' and the device platform (docs/api.md)
    assert set(p) >= PROFILE_KEYS and set(p) - PROFILE_KEYS <= {
        "memory",
        "modules",
        "platform",
        "roofline",
        "analyses",
    }
    assert set(p["breakdown_us"]) == BREAKDOWN_KEYS
    assert (p["run"], p["worker"], p["span"], p["device_type"], p["steps"]) == (
        "run_a",
        "worker0",
        "2",
        "GPU",
        2,
    )
    assert p["step_time_us"] == 1000
    # per step: kernel [150, 550); runtime [110, 120) inside aten::mm; CPU Exec: aten::mm [100, 400) and
    # aten::add [500, 600) minus the kernel and the runtime call = 40 + 50; other = 1000 - 400 - 10 - 90
    expected = {
        **dict.fromkeys(BREAKDOWN_KEYS, 0.0),
        "kernel": 400,
        "runtime": 10,
        "cpu_exec": 90,
        "other": 500,
    }
    assert p["breakdown_us"] == expected
    (gpu,) = p["gpus"]
    assert set(gpu) == GPU_KEYS and gpu["utilization_pct"] == pytest.approx(40.0)
    assert gpu["sm_efficiency_pct"] == pytest.approx(40.0) and gpu["achieved_occupancy_pct"] == pytest.approx(
        25.0
    )
    (op,) = p["operators"]  # --top 1: the largest device total (a GPU profile)
    assert set(op) == OP_KEYS
    assert op == {
        "name": "aten::mm",
        "calls": 2,
        "host_self_us": 580,
        "host_total_us": 600,
        "device_self_us": 800,
        "device_total_us": 800,
        "kind": "op",
        "replayed_calls": 0,
        "replayed_device_us": 0.0,
    }
    (k,) = p["kernels"]
    assert set(k) == KERNEL_KEYS and (k["calls"], k["total_us"], k["mean_blocks_per_sm"]) == (2, 800, 2.0)
    assert all(set(r) == {"id", "text"} for r in p["recommendations"])
    assert "low_gpu_utilization" in {r["id"] for r in p["recommendations"]}
    assert p["errors"] == []


def test_whole_logdir_run_dir_and_single_file(logdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, data, _ = _json(capsys, str(logdir))
    assert code == 0
    assert [(p["run"], p["worker"], p["span"]) for p in data["profiles"]] == [
        ("run_a", "worker0", "1"), ("run_a", "worker0", "2"), ("run_b", "worker1", "1"),
    ]  # fmt: skip
    code, data, _ = _json(capsys, str(logdir / "run_a"), "--worker", "worker0")
    assert code == 0 and [p["span"] for p in data["profiles"]] == ["1", "2"]
    code, data, _ = _json(capsys, str(logdir / "run_a" / "worker0.2.pt.trace.json.gz"))
    assert code == 0 and [(p["run"], p["worker"], p["span"]) for p in data["profiles"]] == [
        ("run_a", "worker0", "2")
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--run", "nope"], "no run 'nope'; found: run_a, run_b"),
        (["--worker", "w9"], "no worker 'w9'"),
        (["--run", "run_a", "--span", "7"], "no span '7'; found: 1, 2"),
        (["--top", "-3"], "must be 0 or more"),
        (["--top", "many"], "expected a whole number"),
    ],
)
def test_bad_arguments_exit_2(
    logdir: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert main(["summary", str(logdir), *args]) == 2
    assert message in capsys.readouterr().err


def test_missing_path_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["summary", str(tmp_path / "absent")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main([]) == 2  # no command


def test_nothing_loadable_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["summary", str(tmp_path)]) == 1
    assert "no *.pt.trace.json" in capsys.readouterr().err
    bad = tmp_path / "run" / "w.pt.trace.json"
    bad.parent.mkdir()
    bad.write_text("{ not json")
    code, data, err = _json(capsys, str(tmp_path))
    assert code == 1 and "nothing could be loaded" in err
    (p,) = data["profiles"]
    assert p["device_type"] is None and p["errors"] and "cannot load" in p["errors"][0]


def test_a_broken_file_beside_good_ones_is_reported_not_fatal(
    logdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (logdir / "run_b" / "broken.pt.trace.json").write_text('{"traceEvents": [')
    code, data, err = _json(capsys, str(logdir), "--run", "run_b")
    assert code == 0
    assert {p["worker"]: bool(p["errors"]) for p in data["profiles"]} == {"broken": True, "worker1": False}
    assert "broken" in err


def test_text_report(logdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["summary", str(logdir), "--run", "run_b"]) == 0
    out = capsys.readouterr().out
    assert "== run run_b  worker worker1  span 1" in out
    assert "mean step: 1.000 ms" in out and "0.400  40.00 %  Kernel" in out
    assert "GPU summary" in out and "40.00 %" in out and "Tesla V100-SXM2-16GB" in out
    assert "aten::mm" in out and "volta_sgemm_128x64_nn" in out and "[low_gpu_utilization]" in out


def test_module_entry_point(logdir: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "torch_tb_profiler", "summary", str(logdir / "run_b"), "--json"],
        capture_output=True, text=True, cwd=REPO, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["profiles"][0]["worker"] == "worker1"


def test_cpu_only_samples(capsys: pytest.CaptureFixture[str]) -> None:
    if not SAMPLES.exists():
        pytest.skip("samples/ absent")
    code, data, _ = _json(capsys, str(SAMPLES))
    assert (
        code == 0 and len(data["profiles"]) == 9
    )  # resnet 2 spans, ddp 2 ranks, plain 1, lightning 4 stages
    for p in data["profiles"]:
        assert p["device_type"] == "CPU" and p["gpus"] == [] and p["kernels"] == [] and p["errors"] == []
        assert p["operators"] and p["steps"] >= 1
        assert p["breakdown_us"]["kernel"] == 0 and sum(p["breakdown_us"].values()) == pytest.approx(
            p["step_time_us"]
        )

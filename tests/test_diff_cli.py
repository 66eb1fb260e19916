"""``torch-tb-profiler compare`` as a subprocess: the JSON schema, the text report, --fail-on and the
exit codes (0 no rule failed, 1 a rule failed, 2 bad usage / bad rule / unreadable input)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.builders_diff import gpu_trace, kernel_steps
from tests.fixtures.paths import REPO

TOP_KEYS = {
    "baseline", "experiment", "steps", "breakdown_us", "operators", "kernels", "memory", "distributed",
    "verdict", "gpus", "waterfall", "notes", "group_by", "sort_metric", "labels", "mfu", "waits",
    "same_profile",
}  # fmt: skip
CHANGE_KEYS = {"baseline", "experiment", "delta", "rel"}


@pytest.fixture(scope="module")
def logdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("logdir")
    gpu_trace(root / "base" / "w0.1.pt.trace.json.gz", experiment=False)
    gpu_trace(root / "exp" / "w0.1.pt.trace.json.gz", experiment=True)
    (root / "broken").mkdir()
    (root / "broken" / "w0.1.pt.trace.json").write_text("{not json")
    return root


def compare(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "torch_tb_profiler", "compare", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )


def test_json_schema_and_figures(logdir: Path) -> None:
    r = compare(str(logdir / "base"), str(logdir / "exp"), "--json", "--fail-on", "step_time>+5%")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert set(doc) == TOP_KEYS
    assert doc["baseline"] == {
        "run": "base",
        "worker": "w0",
        "span": "1",
        "device_type": "GPU",
        "matrix_units": "Tensor Cores",
        "steps": 2,
    }
    assert set(doc["steps"]) >= CHANGE_KEYS and doc["steps"]["delta"] == -200.0
    for entry in doc["breakdown_us"].values():
        assert set(entry) >= CHANGE_KEYS
    assert doc["breakdown_us"]["kernel"]["delta"] == -200.0
    assert (
        doc["operators"][0]["name"] == "aten::mm" and doc["operators"][0]["delta"]["device_self_us"] == -200.0
    )
    assert doc["kernels"][0]["status"] == "renamed"
    assert doc["verdict"]["failed"] == [] and [p["rule"] for p in doc["verdict"]["passed"]] == [
        "step_time>+5%"
    ]


def test_a_logdir_with_run_options(logdir: Path) -> None:
    r = compare(str(logdir), str(logdir), "--base-run", "base", "--exp-run", "exp", "--json", "--top", "1")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert (doc["baseline"]["run"], doc["experiment"]["run"]) == ("base", "exp")
    assert len(doc["operators"]) == 1 and len(doc["kernels"]) == 1


def test_failed_rule_exits_1_with_its_figures(logdir: Path) -> None:
    r = compare(
        str(logdir / "exp"), str(logdir / "base"),  # reversed: the experiment is 25 % slower
        "--fail-on", "step_time>+5%", "--fail-on", "op:aten::mm.device_total>+10%", "--fail-on", "runtime>+5%",
    )  # fmt: skip
    assert r.returncode == 1, r.stderr
    assert "FAILED step_time>+5%: baseline 800, experiment 1000, change +200 (+25.00%, noise ±0)" in r.stderr
    assert (
        "FAILED op:aten::mm.device_total>+10%: baseline 200, experiment 400, change +200 (+100.00%, noise ±0)"
        in r.stderr
    )
    assert "runtime>+5%" not in r.stderr
    assert "FAIL  step_time>+5%" in r.stdout and "pass  runtime>+5%" in r.stdout


def test_op_rules_join_by_name_whatever_the_table_groups_by(logdir: Path) -> None:
    r = compare(
        str(logdir / "exp"), str(logdir / "base"), "--group-by", "name_input_shape", "--json",
        "--fail-on", "op:aten::mm.device_self>+150us",
    )  # fmt: skip
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert doc["operators"][0]["input_shape"] == "[[8, 8], [8, 8]]"
    assert doc["verdict"]["failed"][0]["delta"] == 200.0


def test_self_comparison_passes_every_rule(logdir: Path) -> None:
    rules = [
        "step_time>+0%",
        "kernel>+0%",
        "op:aten::mm.device_self>+0%",
        "kernel:void gemm_kernel<128, 64>(float*).total>0",
    ]
    r = compare(
        str(logdir / "base"), str(logdir / "base"), *(a for t in rules for a in ("--fail-on", t)), "--json"
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["steps"]["delta"] == 0.0 and len(doc["verdict"]["passed"]) == 4


def test_op_and_kernel_rules_respect_the_noise(tmp_path: Path) -> None:
    # k_gemm 100 / 300 µs per step (mean 200, noise 100) against 250 / 250 (+50: within the noise)
    # and 350 / 350 (+150: beyond it); aten::mm's device total is its kernel's time
    base = kernel_steps(tmp_path / "b" / "w0.1.pt.trace.json", [100, 300])
    near = kernel_steps(tmp_path / "n" / "w0.1.pt.trace.json", [250, 250])
    far = kernel_steps(tmp_path / "f" / "w0.1.pt.trace.json", [350, 350])
    rules = ["--fail-on", "kernel:k_gemm.total>+10%", "--fail-on", "op:aten::mm.device_total>+10%"]
    r = compare(str(base), str(near), *rules)
    assert r.returncode == 0, r.stderr
    assert "pass  kernel:k_gemm.total>+10% (within noise)" in r.stdout
    assert "pass  op:aten::mm.device_total>+10% (within noise)" in r.stdout
    # the text report flags the rows whose change is within their noise
    assert "k_gemm  (within noise ±100.0)" in r.stdout
    r = compare(str(base), str(far), *rules)
    assert r.returncode == 1
    assert (
        "FAILED kernel:k_gemm.total>+10%: baseline 200, experiment 350, change +150 (+75.00%, noise ±100)"
        in r.stderr
    )
    assert "FAILED op:aten::mm.device_total>+10%" in r.stderr


def test_text_report(logdir: Path) -> None:
    r = compare(str(logdir / "base"), str(logdir / "exp"))
    assert r.returncode == 0, r.stderr
    assert "step time" in r.stdout and "1.000 ms" in r.stdout and "-0.200 ms" in r.stdout
    assert "renamed" in r.stdout and "(was void gemm_kernel<128, 64>(float*))" in r.stdout
    assert "added" in r.stdout and "aten::gelu" in r.stdout and "removed" in r.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--fail-on", "step_time>>5%"], "unknown figure"),
        (["--fail-on", "op:aten::mm>5%"], "FIELD one of"),
        (["--fail-on", "op:aten::nope.calls>0"], "in neither profile"),
        (["--fail-on", "communication>+5%"], "cannot be checked"),
    ],
)
def test_bad_rules_exit_2(logdir: Path, args: list[str], message: str) -> None:
    r = compare(str(logdir / "base"), str(logdir / "exp"), *args)
    assert r.returncode == 2 and message in r.stderr and r.stdout == ""


def test_bad_input_exits_2(logdir: Path) -> None:
    r = compare(str(logdir), str(logdir / "exp"))
    assert r.returncode == 2 and "baseline" in r.stderr and "choose one with --base-run" in r.stderr
    r = compare(str(logdir / "nope"), str(logdir / "exp"))
    assert r.returncode == 2 and "does not exist" in r.stderr
    r = compare(str(logdir / "base"), str(logdir / "broken"))
    assert r.returncode == 2 and "experiment: cannot load" in r.stderr
    r = compare(str(logdir / "base"), str(logdir / "exp"), "--base-span", "7")
    assert r.returncode == 2 and "no span '7'" in r.stderr
    r = compare(str(logdir / "base"))
    assert r.returncode == 2 and "experiment" in r.stderr


def test_long_runs_of_spaces_parse_in_linear_time(logdir: Path) -> None:
    # issue 28 item 11: 40,000 spaces took 33.6 s (the regex backtracked); 120,000 (about the most one
    # argument may hold) would take minutes: the subprocess's timeout bounds it
    rule = "step_time" + " " * 60_000 + ">" + " " * 60_000 + "+5%"
    r = compare(str(logdir / "base"), str(logdir / "exp"), "--json", "--fail-on", rule)
    assert r.returncode == 0, r.stderr[-500:]
    assert json.loads(r.stdout)["verdict"]["passed"][0]["rule"] == rule


@pytest.mark.parametrize(
    "rule", ["step_time>" + "9" * 400 + "%", "memory:GPU0.peak_allocated>+1" + "0" * 300 + "GiB"]
)
def test_non_finite_thresholds_exit_2(logdir: Path, rule: str) -> None:
    r = compare(str(logdir / "base"), str(logdir / "exp"), "--fail-on", rule)
    assert r.returncode == 2 and "not a finite number" in r.stderr and r.stdout == ""

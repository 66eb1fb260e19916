"""Diff and compare on the real traces of ../shared/traces (skipped when absent): the kineto sample
runs, a 2.x pair of ranks, an injected slowdown, noise between spans and a 1.x baseline against a
2.x run."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.paths import REPO, shared_trace
from torch_tb_profiler.analysis.diff import compare as D
from torch_tb_profiler.cli.compare_report import render
from torch_tb_profiler.ingest.loading import load_profile

NW0 = "kineto_samples/resnet50_num_workers_0"
NW4 = "kineto_samples/resnet50_num_workers_4"
NS = "hta_samples/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
SLOWED = "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 128, true, 1>"


def _load(relative: str, run: str, span: str = "1"):
    return load_profile(str(shared_trace(relative)), run=run, worker="worker0", span=span)


def _compare(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "torch_tb_profiler", "compare", *args]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=300)


def test_dataloader_is_the_main_improvement() -> None:
    base = _load(f"{NW0}/worker0.1623143089861.pt.trace.json.gz", "nw0")
    exp = _load(f"{NW4}/worker0.1623212756351.pt.trace.json.gz", "nw4")
    d = D.compare(base, exp)
    assert d["steps"]["significant"] and d["steps"]["delta"] < 0
    cats = d["breakdown_us"]
    biggest = min(cats, key=lambda c: cats[c]["delta"])
    assert biggest == "dataloader" and cats["dataloader"]["significant"]
    assert cats["dataloader"]["rel"] < -0.9  # four loader workers leave the main process almost idle
    assert d["waterfall"]["items"][0] == {
        "name": "DataLoader",
        "kind": "category",
        "delta_us": cats["dataloader"]["delta"],
    }
    w = d["waterfall"]
    assert sum(i["delta_us"] for i in w["items"]) + w["other_us"] == pytest.approx(w["total_delta_us"])


def test_a_2x_pair_of_ranks() -> None:
    folder = "hta_samples/trace_filter"
    base = load_profile(
        str(shared_trace(f"{folder}/sampled_rank-0.pt.trace.json.gz")), run="r", worker="0", span="1"
    )
    exp = load_profile(
        str(shared_trace(f"{folder}/sampled_rank-1.pt.trace.json.gz")), run="r", worker="1", span="1"
    )
    d = D.compare(base, exp)
    assert d["distributed"] is not None and d["distributed"]["rank"] == {"baseline": 0, "experiment": 1}
    assert {c["collective"] for c in d["distributed"]["collectives"]} >= {"all_reduce"}
    assert len(d["gpus"]) == 1 and d["gpus"][0]["baseline_id"] != d["gpus"][0]["id"]  # each rank's own GPU
    assert not any("ran kernels only" in n for n in d["notes"])
    text = render(d, 3)
    assert "distributed (rank 0 → 1), mean per step:" in text and "all_reduce    avg latency" in text


def test_gate_fails_on_an_injected_slowdown(tmp_path: Path) -> None:
    source = shared_trace(NS)
    trace = json.loads(gzip.decompress(source.read_bytes()))
    slowed = 0.0
    for e in trace["traceEvents"]:
        if e.get("cat") == "kernel" and e.get("name", "").startswith(SLOWED):
            slowed += 0.1 * e["dur"]
            e["dur"] *= 1.1
            name = e["name"]
    assert slowed > 0
    (tmp_path / "slow").mkdir()
    (tmp_path / "slow" / "rank-0.pt.trace.json.gz").write_bytes(gzip.compress(json.dumps(trace).encode()))
    r = _compare(str(source), str(tmp_path / "slow"), "--json", "--fail-on", f"kernel:{name}.total>+5%")
    assert r.returncode == 1, r.stderr
    failed = json.loads(r.stdout)["verdict"]["failed"][0]
    steps = json.loads(r.stdout)["baseline"]["steps"]
    assert failed["delta"] == pytest.approx(slowed / steps) and failed["rel"] == pytest.approx(0.1)
    r = _compare(str(source), str(tmp_path / "slow"), "--fail-on", f"kernel:{name}.total>+15%")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize(("run", "first", "second"), [(NW4, "1623212756351", "1623213129365")])
def test_gate_passes_on_noise_between_spans(run: str, first: str, second: str) -> None:
    a, b = (str(shared_trace(f"{run}/worker0.{t}.pt.trace.json.gz")) for t in (first, second))
    rules = ["step_time>+5%", "step_time<-5%", "kernel>+5%", "cpu_exec>+5%"]
    for base, exp in ((a, b), (b, a)):
        r = _compare(base, exp, *(x for rule in rules for x in ("--fail-on", rule)))
        assert r.returncode == 0, r.stdout + r.stderr


def test_1x_baseline_against_a_2x_run_explains_what_it_cannot_compare() -> None:
    base = _load(f"{NW0}/worker0.1623143089861.pt.trace.json.gz", "nw0")
    exp = load_profile(str(shared_trace(NS)), run="ns", worker="rank-0", span="1")
    d = D.compare(base, exp)
    comm = d["breakdown_us"]["communication"]
    assert comm["baseline"] is None and comm["delta"] is None
    assert comm["note"] == "the baseline has no such time: Communication is not compared"
    assert "the baseline is not a distributed profile: communication is not compared" in d["notes"]
    assert "the sides have 6 and 5 steps: operator and kernel figures are per step" in d["notes"]
    assert d["breakdown_us"]["kernel"]["delta"] is not None  # what both sides have is compared

"""``summary --json`` gains ``memory`` per profile and ``distributed`` for a multi-worker run."""

from __future__ import annotations

import json

import pytest

from tests.fixtures.paths import SAMPLES
from tests.test_distributed_job import rank_trace
from torch_tb_profiler.cli.main import main


def run_json(capsys, *args: str) -> dict:
    assert main(["summary", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_synthetic_two_rank_job(tmp_path, capsys):
    run = tmp_path / "job"
    for r in range(2):
        rank_trace(r, 2, {0: (1, 100.0), 1: (0, 50.0)}).write(run / f"rank{r}.pt.trace.json")
    doc = run_json(capsys, str(run))
    rows = {r["worker"]: r for r in doc["distributed"]["workers"]}
    assert set(rows) == {"rank0", "rank1"}
    # hand-computed in tests/test_distributed_job.py: means over the 2 steps
    assert rows["rank0"] == pytest.approx(
        {
            "run": "job",
            "span": "1",
            "job": "",
            "worker": "rank0",
            "rank": 0,
            "computation_us": 225,
            "overlap_us": 75,
            "communication_us": 324,
            "other_us": 376,
            "synchronizing_us": 50,
            "transferring_us": 325,
        }
    )
    assert all(p["memory"] == [] for p in doc["profiles"])


def test_gloo_sample_memory_and_distributed(capsys):
    doc = run_json(capsys, str(SAMPLES / "ddp_gloo_2ranks"))
    assert [r["rank"] for r in doc["distributed"]["workers"]] == [0, 1]
    for p in doc["profiles"]:
        (cpu,) = p["memory"]
        assert cpu["device"] == "CPU" and cpu["peak_allocated_bytes"] > 0


def test_single_worker_has_no_distributed_key(capsys):
    doc = run_json(capsys, str(SAMPLES / "plain_no_steps"))
    assert "distributed" not in doc
    assert doc["profiles"][0]["memory"][0]["device"] == "CPU"

"""Which workers are ranks of one job: Lightning's stage workers are not ranks, ranks come from the
traces' distributedInfo, and the workers of one rank are not separate ranks (summary and route)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from werkzeug.test import Client

from tests.fixtures.builders_distributed import rank_trace
from tests.fixtures.paths import SAMPLES
from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.analysis.distributed.job import worker_rank
from torch_tb_profiler.analysis.distributed.job_split import default_job, role, split
from torch_tb_profiler.cli.main import main
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.plugin import wsgi_app
from torch_tb_profiler.views import distributed as views

DDP = "[Strategy]DDPStrategy"


def test_split_by_hand() -> None:
    # ranks all different: one job, named ""
    assert split([("rank0", 0, "a"), ("rank1", 1, "b")]) == [("", ["a", "b"])]
    # Lightning under DDP: two stages × two ranks -> one job per stage
    ddp = [
        ("perf.fit.training_step.rank0", 0, "f0"),
        ("perf.fit.training_step.rank1", 1, "f1"),
        ("perf.test.test_step.rank0", 0, "t0"),
        ("perf.test.test_step.rank1", 1, "t1"),
        ("perf.fit.validation_step.rank1", 1, "v1"),
    ]
    assert split(ddp) == [
        ("perf.fit.training_step", ["f0", "f1"]),
        ("perf.fit.validation_step", ["v1"]),
        ("perf.test.test_step", ["t0", "t1"]),
    ]
    assert default_job(split(ddp)) == "perf.fit.training_step"  # the largest, first by name
    # Lightning on one device: no rank anywhere, all one process -> one job per stage, each of 1
    single = [("perf.fit.training_step", None, 1), ("perf.test.test_step", None, 2)]
    assert split(single) == [("perf.fit.training_step", [1]), ("perf.test.test_step", [2])]
    # other names without a rank are ranks of their own
    assert split([("host_1", None, 1), ("host_2", None, 2)]) == [("", [1, 2])]
    # other names sharing a rank: split by the name without its rank part
    shared = [
        ("train_rank0", 0, "a"),
        ("train_rank1", 1, "b"),
        ("eval_rank0", 0, "c"),
        ("eval_rank1", 1, "d"),
    ]
    assert split(shared) == [("eval_", ["c", "d"]), ("train_", ["a", "b"])]
    assert role("perf.fit.training_step.rank3") == "perf.fit.training_step" and role("worker7") == ""


def test_lightning_names_carry_no_rank() -> None:
    # Lightning's .rank<k> is its local rank (it repeats on every node): only distributedInfo counts
    assert worker_rank("perf.fit.training_step.rank1", None) == (None, None)
    assert worker_rank("perf.fit.training_step.rank1", {"rank": 9, "world_size": 16}) == (9, 16)
    assert worker_rank("rank-3", None) == (3, None)  # other names keep their rank


def _lightning_ddp(root: Path) -> Path:
    """A Lightning DDP version folder: fit.training_step and test.test_step for ranks 0 and 1 (local
    rank = rank on one node), each a 2-rank NCCL trace whose distributedInfo names its rank."""
    version = root / "lightning_logs" / "version_0"
    for stage, hook in (("fit", "training_step"), ("test", "test_step")):
        for r in range(2):
            name = f"{stage}-perf-{r}-{DDP}.{hook}.{10 + r}.pt.trace.json"
            rank_trace(r, 2, {0: (1, 100.0)}).write(version / name)
    return root


def _lightning_single(root: Path) -> Path:
    """A single-device Lightning folder: three stage workers, no distributedInfo."""
    version = root / "lightning_logs" / "version_0"
    for i, (stage, hook) in enumerate(
        (("fit", "training_step"), ("fit", "validation_step"), ("test", "test_step"))
    ):
        b = TraceBuilder(extra_top={"Framework": "pytorch-lightning"})
        b.step(1, 0, 1000)
        b.op("aten::mm", 10, 500)
        b.write(version / f"{stage}-perf-[Strategy]SingleDeviceStrategy.{hook}.{i}.pt.trace.json")
    return root


def _summary(capsys: pytest.CaptureFixture[str], path: Path) -> dict:
    assert main(["summary", str(path), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_summary_single_device_lightning_has_no_ranks(tmp_path: Path, capsys) -> None:
    doc = _summary(capsys, _lightning_single(tmp_path))
    assert len(doc["profiles"]) == 3 and "distributed" not in doc


def test_summary_of_the_lightning_sample_has_no_ranks(capsys) -> None:
    doc = _summary(capsys, SAMPLES / "lightning_cpu")
    assert len(doc["profiles"]) == 4 and "distributed" not in doc


def test_summary_lightning_ddp_one_job_per_stage(tmp_path: Path, capsys) -> None:
    doc = _summary(capsys, _lightning_ddp(tmp_path))
    rows = [(r["job"], r["worker"], r["rank"]) for r in doc["distributed"]["workers"]]
    assert rows == [
        ("perf.fit.training_step", "perf.fit.training_step.rank0", 0),
        ("perf.fit.training_step", "perf.fit.training_step.rank1", 1),
        ("perf.test.test_step", "perf.test.test_step.rank0", 0),
        ("perf.test.test_step", "perf.test.test_step.rank1", 1),
    ]
    # each job is the 2-rank job of tests/test_distributed_job.py: rank 1 arrives 100 µs late in step 1,
    # so rank 0 waits 100 µs there (mean over 2 steps: 50)
    waits = {(r["job"], r["rank"]): r["synchronizing_us"] for r in doc["distributed"]["workers"]}
    assert waits == {
        ("perf.fit.training_step", 0): pytest.approx(50),
        ("perf.fit.training_step", 1): pytest.approx(0),
        ("perf.test.test_step", 0): pytest.approx(50),
        ("perf.test.test_step", 1): pytest.approx(0),
    }
    assert doc["distributed"]["warnings"] == []  # no "4 of 2 ranks" confusion


@pytest.fixture(scope="module")
def ddp_store(tmp_path_factory: pytest.TempPathFactory):
    s = RunStore(str(_lightning_ddp(tmp_path_factory.mktemp("pl_ddp"))), processes=0, settle_seconds=0)
    s.scan_once()
    assert s.wait_idle(120)
    yield s
    s.close()


def _get(store: RunStore, **params: str) -> tuple[int, dict]:
    r = Client(wsgi_app(views.ROUTES["/distributed"], store)).get("/", query_string=params)
    return r.status_code, json.loads(r.get_data())


def test_route_ranks_of_one_stage(ddp_store: RunStore) -> None:
    run = "lightning_logs/version_0"
    status, job = _get(ddp_store, run=run)
    assert status == 200 and job["job"] == "perf.fit.training_step"
    assert job["jobs"] == [
        {"name": "perf.fit.training_step", "workers": 2},
        {"name": "perf.test.test_step", "workers": 2},
    ]
    assert [(w["worker"], w["rank"]) for w in job["workers"]] == [
        ("perf.fit.training_step.rank0", 0),
        ("perf.fit.training_step.rank1", 1),
    ]
    assert job["world_size"] == 2 and job["warnings"] == []
    status, test = _get(ddp_store, run=run, job="perf.test.test_step")
    assert status == 200 and [w["rank"] for w in test["workers"]] == [0, 1]
    assert {w["worker"] for w in test["workers"]} == {
        "perf.test.test_step.rank0",
        "perf.test.test_step.rank1",
    }
    status, err = _get(ddp_store, run=run, job="perf.predict.predict_step")
    assert status == 404 and "no job 'perf.predict.predict_step'" in err["error"]
    assert "'perf.test.test_step'" in err["error"]

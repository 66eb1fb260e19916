"""Issue 27 item 5: a trace of metadata only (no event with a duration) has no step: its step time and
breakdown are unknown, ``null`` with "no activity in this trace", never 0.0 (CLI summary text and
--json, the Overview route)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from werkzeug.test import Client

from torch_tb_profiler.analysis.device.breakdown import NO_ACTIVITY
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.plugin import collect_routes, wsgi_app

EMPTY = {
    "schemaVersion": 1,
    "deviceProperties": [],
    "traceEvents": [
        {
            "name": "process_name",
            "ph": "M",
            "ts": 1700000000000000,
            "pid": 1,
            "tid": 0,
            "args": {"name": "python"},
        },
        {
            "name": "thread_name",
            "ph": "M",
            "ts": 1700000000000000,
            "pid": 1,
            "tid": 1,
            "args": {"name": "main"},
        },
        # an instant has no duration either: still nothing to make a step of
        {"name": "marker", "ph": "i", "ts": 1700000000000005, "pid": 1, "tid": 1, "s": "t"},
    ],
}


@pytest.fixture(scope="module")
def logdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("logdir")
    path = root / "empty" / "w0.pt.trace.json"
    path.parent.mkdir()
    path.write_text(json.dumps(EMPTY))
    os.utime(path, (time.time() - 60,) * 2)
    return root


def _summary(logdir: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "torch_tb_profiler", "summary", str(logdir), *flags],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_summary_json_says_null_not_zero(logdir: Path) -> None:
    done = _summary(logdir, "--json")
    assert done.returncode == 0, done.stderr
    (p,) = json.loads(done.stdout)["profiles"]
    assert p["steps"] == 0
    assert p["step_time_us"] is None and p["breakdown_us"] is None
    assert p["note"] == NO_ACTIVITY == "no activity in this trace"
    assert p["errors"] == []


def test_summary_text_says_no_activity(logdir: Path) -> None:
    done = _summary(logdir)
    assert done.returncode == 0, done.stderr
    assert "mean step: – (no activity in this trace)" in done.stdout
    assert "0.000 ms" not in done.stdout


@pytest.fixture(scope="module")
def store(logdir: Path) -> Iterator[RunStore]:
    s = RunStore(str(logdir), processes=0, settle_seconds=1)
    s.scan_once()
    assert s.wait_idle(60)
    yield s
    s.close()


def test_overview_route_says_null_not_zero(store: RunStore) -> None:
    handler = collect_routes()["/overview"]
    response = Client(wsgi_app(handler, store)).get("overview", query_string={"run": "empty", "worker": "w0"})
    assert response.status_code == 200
    body = json.loads(response.get_data())
    assert body["steps"] == []
    assert body["step_time_us"] is None
    assert body["note"] == NO_ACTIVITY
    assert set(body["average"]) == {
        "kernel",
        "memcpy",
        "memset",
        "communication",
        "runtime",
        "dataloader",
        "cpu_exec",
        "other",
    }
    assert all(v == {"us": None, "pct": None} for v in body["average"].values())


def test_a_trace_with_activity_has_no_note(tmp_path: Path) -> None:
    doc = dict(
        EMPTY,
        traceEvents=[
            *EMPTY["traceEvents"],
            {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1700000000000010, "dur": 7},
        ],
    )
    path = tmp_path / "one" / "w0.pt.trace.json"
    path.parent.mkdir()
    path.write_text(json.dumps(doc))
    (p,) = json.loads(_summary(tmp_path, "--json").stdout)["profiles"]
    assert p["note"] is None
    assert p["step_time_us"] == 7.0  # one step 0 spanning the only op (docs/metrics.md "Steps")
    assert p["breakdown_us"]["cpu_exec"] == 7.0


def test_diff_of_an_empty_trace_and_a_busy_one_answers(store: RunStore, tmp_path: Path) -> None:
    """The empty side has no category: each compared one is null on that side (was a KeyError, a 500)."""
    from tests.hostile.make_corpus import trace_doc
    from torch_tb_profiler.analysis.diff.compare import compare
    from torch_tb_profiler.ingest.parse import load_whole

    busy_path = tmp_path / "busy.pt.trace.json"
    busy_path.write_text(json.dumps(trace_doc()))
    empty_path = tmp_path / "empty.pt.trace.json"
    empty_path.write_text(json.dumps(EMPTY))
    busy, empty = load_whole(str(busy_path)), load_whole(str(empty_path))
    for base, exp in ((busy, empty), (empty, busy)):
        answer = compare(base, exp)
        assert answer["steps"]["delta"] is None
        side = "experiment" if exp is empty else "baseline"
        assert all(entry[side] is None for entry in answer["breakdown_us"].values())


def test_a_rank_without_steps_has_null_means_in_the_distributed_figures(tmp_path: Path) -> None:
    from tests.hostile.make_corpus import trace_doc
    from torch_tb_profiler.analysis.distributed import job as distributed
    from torch_tb_profiler.analysis.distributed.matrix import distribution
    from torch_tb_profiler.ingest.parse import load_whole

    (tmp_path / "e.pt.trace.json").write_text(json.dumps(EMPTY))
    (tmp_path / "b.pt.trace.json").write_text(json.dumps(trace_doc()))
    empty, busy = (load_whole(str(tmp_path / f"{n}.pt.trace.json")) for n in ("e", "b"))
    job = distributed.analyze_job(
        [distributed.summarize_worker("w0", empty), distributed.summarize_worker("w1", busy)]
    )
    assert set(job["overlap"]["w0"]["mean"].values()) == {None}
    assert set(job["wait"]["w0"]["mean"].values()) == {None}
    # trace_doc: 3 steps of 900 µs, one 50 µs kernel each, no communication
    assert job["overlap"]["w1"]["mean"] == {
        "computation": 50.0,
        "overlap": 0.0,
        "communication": 0.0,
        "other": 850.0,
    }
    spread = distribution(job, top=3)
    assert spread["computation"]["min"] == spread["computation"]["max"] == 50.0  # w1 alone: w0 has no value

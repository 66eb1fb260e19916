"""Issue 28 item 6: a logdir of 10,000 runs, built at test time, through a real TensorBoard: `/runs` is
paged (each answer at most 1 MB, the pages cover every file once) and `/views`, `/workers`, `/spans`
answer for any run (their cost is linear in the logdir: benchmarks/bench_logdir.py measures it)."""

from __future__ import annotations

import json
import os
import time
import urllib.request
from pathlib import Path

from tests.fixtures.tensorboard_server import PREFIX, tensorboard

ROOT = Path(__file__).resolve().parents[1]
RUNS = 10_000
_TRACE = json.dumps({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2}]})


def _logdir(root: Path) -> Path:
    old = time.time() - 60
    for i in range(RUNS):
        path = root / f"run{i:05d}" / "w.pt.trace.json"
        path.parent.mkdir(parents=True)
        path.write_text(_TRACE)
        os.utime(path, (old, old))
    return root


def test_runs_is_paged_and_views_answer_at_10000_runs(tmp_path: Path) -> None:
    logdir = _logdir(tmp_path / "logs")
    env = {"PYTHONPATH": str(ROOT), "TORCH_PROFILER_PROCESSES": "0"}
    with tensorboard(logdir, env=env, tmp=tmp_path) as tb:
        deadline = time.monotonic() + 120
        while tb.get("runs")[1].get("files_total") != RUNS:
            assert time.monotonic() < deadline, "the scan never listed every file"
            time.sleep(0.5)
        files, offset, pages = [], 0, 0
        while offset is not None:
            with urllib.request.urlopen(f"{tb.url}{PREFIX}/runs?offset={offset}", timeout=60) as r:
                body = r.read()
            assert len(body) <= 1_000_000, len(body)
            page = json.loads(body)
            assert page["offset"] == offset and page["files_total"] == RUNS
            for run in page["runs"]:
                assert run["progress"]["files_total"] == 1
                files += [(run["name"], f["worker"]) for f in run["files"]]
            offset, pages = page["next_offset"], pages + 1
        assert pages >= 2 and files == [(f"run{i:05d}", "w") for i in range(RUNS)]
        for run in ("run00000", f"run{RUNS - 1:05d}"):
            status, views = tb.get("views", run=run)
            assert status == 200 and "Diff" in views, views
            assert tb.get("workers", run=run) == (200, ["w"])
            assert tb.get("spans", run=run, worker="w") == (200, ["1"])
        assert tb.get("runs", offset=-1)[0] == 400

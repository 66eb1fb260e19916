"""/diff through a real TensorBoard: the answer is analysis/diff.compare's, the Diff view is listed,
unknown profiles are 404 and bad parameters 400 with a message."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.builders_diff import gpu_trace
from tests.fixtures.tensorboard_server import TensorBoard, tensorboard
from torch_tb_profiler.analysis.diff import compare as D
from torch_tb_profiler.ingest.loading import load_profile

PAIR = {"base_run": "base", "base_worker": "w0", "run": "exp", "worker": "w0"}


@pytest.fixture(scope="module")
def logdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("logdir")
    for run, experiment in (("base", False), ("exp", True)):
        path = gpu_trace(root / run / "w0.1.pt.trace.json.gz", experiment=experiment)
        os.utime(path, (time.time() - 60,) * 2)
    return root


@pytest.fixture(scope="module")
def tb(logdir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    with tensorboard(logdir, tmp=tmp_path_factory.mktemp("tb")) as server:
        server.wait_loaded()
        yield server


def test_diff_answer_is_the_analysis(tb: TensorBoard, logdir: Path) -> None:
    status, body = tb.get("diff", **PAIR)
    assert status == 200, body
    base = load_profile(str(logdir / "base" / "w0.1.pt.trace.json.gz"), run="base", worker="w0", span="1")
    exp = load_profile(str(logdir / "exp" / "w0.1.pt.trace.json.gz"), run="exp", worker="w0", span="1")
    assert body == D.compare(base, exp)
    assert body["steps"]["delta"] == -200.0 and body["kernels"][0]["status"] == "renamed"


def test_group_by_and_waterfall_top(tb: TensorBoard) -> None:
    status, body = tb.get("diff", **PAIR, group_by="name_input_shape", waterfall_top=1)
    assert status == 200
    assert body["group_by"] == "name_input_shape" and "input_shape" in body["operators"][0]
    assert len(body["waterfall"]["items"]) == 1


def test_diff_view_is_listed(tb: TensorBoard) -> None:
    status, views = tb.get("views", run="base")
    assert status == 200 and "Diff" in views


@pytest.mark.parametrize(
    ("change", "status", "message"),
    [
        ({"base_run": "nope"}, 404, "nope"),
        ({"base_worker": "w9"}, 404, "w9"),
        ({"span": "5"}, 404, "no span '5'"),
        ({"base_run": None}, 400, "missing query parameter 'base_run'"),
        ({"group_by": "shape"}, 400, "'group_by' must be one of"),
        ({"waterfall_top": "0"}, 400, "'waterfall_top' must be between 1 and 100"),
    ],
)
def test_bad_requests(tb: TensorBoard, change: dict, status: int, message: str) -> None:
    params = {k: v for k, v in {**PAIR, **change}.items() if v is not None}
    got, body = tb.get("diff", **params)
    assert got == status and message in body["error"], body


def test_same_profile_on_both_sides_gets_a_note(tb: TensorBoard) -> None:
    status, body = tb.get("diff", run="base", worker="w0", base_run="base", base_worker="w0")
    assert status == 200 and body["same_profile"] is True
    assert any("the baseline and the experiment are the same profile" in n for n in body["notes"])
    assert body["steps"]["delta"] == 0.0
    status, other = tb.get("diff", **PAIR)
    assert other["same_profile"] is False
    assert not any("same profile" in n for n in other["notes"])


def test_runs_say_whether_a_run_has_device_activity(tb: TensorBoard) -> None:
    status, body = tb.get("runs")
    assert status == 200
    assert {r["name"]: r["device_activity"] for r in body["runs"]} == {"base": True, "exp": True}

"""The Analysis view's route through a real TensorBoard process: listed for a profile with device
activity only, its answer's parts, and bad parameters answered 400 / 404 (never 500)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fixtures.tensorboard_server import TensorBoard, tensorboard
from tests.fixtures.trace_builder import TraceBuilder


@pytest.fixture(scope="module")
def tb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    root = tmp_path_factory.mktemp("logdir")
    gpu = TraceBuilder()
    gpu.step(1, 0, 1000)
    ext = gpu.op("aten::mm", 10, 500)
    gpu.launch("sgemm", 20, 5, 100, 50, ext_id=ext)
    gpu.launch("sgemm", 300, 5, 400, 50, ext_id=ext)
    gpu.write(root / "gpu_run" / "w.pt.trace.json")
    cpu = TraceBuilder()
    cpu.step(1, 0, 1000)
    cpu.op("aten::add", 10, 100)
    cpu.write(root / "cpu_run" / "w.pt.trace.json")
    with tensorboard(root, tmp=tmp_path_factory.mktemp("tb")) as server:
        server.wait_loaded()
        yield server


def test_listed_only_with_device_activity(tb: TensorBoard) -> None:
    assert "Analysis" in tb.get("views", run="gpu_run")[1]
    assert "Analysis" not in tb.get("views", run="cpu_run")[1]


def test_answer_parts(tb: TensorBoard) -> None:
    status, body = tb.get("analysis", run="gpu_run", worker="w")
    assert status == 200 and body["device"] is True
    _, summary = tb.get("analysis", run="gpu_run", worker="w", n=3)
    assert set(body["analyses"]) == set(summary["analyses"])
    status, cpu = tb.get("analysis", run="cpu_run", worker="w")
    assert status == 200 and cpu["device"] is False


@pytest.mark.parametrize(
    ("params", "status", "fragment"),
    [
        ({"run": "gpu_run", "worker": "w", "n": "1"}, 400, "'n'"),
        ({"run": "gpu_run", "worker": "w", "n": "17"}, 400, "'n'"),
        ({"run": "gpu_run", "worker": "w", "n": "five"}, 400, "'n' must be an integer"),
        ({"run": "gpu_run"}, 400, "missing query parameter 'worker'"),
        ({"run": "nope", "worker": "w"}, 404, "no run named 'nope'"),
    ],
)
def test_bad_parameters(tb: TensorBoard, params: dict[str, str], status: int, fragment: str) -> None:
    got, body = tb.get("analysis", **params)
    assert got == status and fragment in str(body)

"""No query string can make any route answer 500: every route, through a real TensorBoard process,
with missing, unknown, malformed and hostile parameters."""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Iterator

import pytest

from tests.fixtures.tensorboard_server import TensorBoard, tensorboard
from tests.fixtures.trace_builder import V100, TraceBuilder
from torch_tb_profiler.plugin import collect_routes

GOOD = {"run": "gpu", "worker": "w0", "span": "1"}
HOSTILE = [
    "",
    "nope",
    "-1",
    "0",
    "1e309",
    "nan",
    "inf",
    "abc",
    "[]",
    "{}",
    "<script>",
    "../..",
    "%00",
    "9" * 40,
    "1.5",
]
EXTRA_PARAMS = [
    "group_by",
    "sort",
    "start",
    "end",
    "min_bytes",
    "limit",
    "max_points",
    "max_rounds",
    "offset",
    "order",
    "q",
    "top",
    "input_shape",
    "name",
    "device",
    "view",
    "px",
    "tracks",
    "format",
    "exact",
    "kind",
    "base_run",
    "base_worker",
    "base_span",
    "waterfall_top",
    "step",
    "tree",
    "node",
]


@pytest.fixture(scope="module")
def tb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    root = tmp_path_factory.mktemp("logdir")
    for worker in ("w0", "w1"):
        b = TraceBuilder(
            device_properties=[V100],
            distributed_info={"backend": "nccl", "rank": int(worker[1]), "world_size": 2},
        )
        b.step(1, 0, 1000)
        ext = b.op("aten::mm", 10, 500, input_dims=[[2, 3], [3, 4]])
        b.launch("volta_sgemm", 20, 5, 600, 50, ext_id=ext, blocks_per_sm=1.0, occupancy=50)
        nccl = b.op(
            "record_param_comms",
            700,
            100,
            args={
                "Collective name": "allreduce",
                "In msg nelems": 10,
                "Out msg nelems": 10,
                "dtype": "Float",
                "Group size": 2,
                "Seq": 1,
            },
        )
        b.launch("ncclKernel_AllReduce_RING_LL_Sum_float", 710, 5, 750, 100, ext_id=nccl)
        b.python_function("nn.Module: Net_0", 5, 900, py_id=1, parent_id=None, module_id=0)
        b.memory(30, 256, addr=1, total_allocated=256, total_reserved=1024, device_type=1, device_id=0)
        path = b.write(root / "gpu" / f"{worker}.1.pt.trace.json.gz")
        os.utime(path, (time.time() - 60,) * 2)
    with tensorboard(root, tmp=tmp_path_factory.mktemp("tb")) as server:
        server.wait_loaded()
        yield server


ROUTES = sorted(r.lstrip("/") for r in collect_routes())
_WINDOW = {"start_us": "1700000000000000", "end_us": "1700000000001000"}  # the builder's base time
REQUIRED = {  # route-specific required parameters
    "diff": {"base_run": "gpu", "base_worker": "w1", "base_span": "1"},
    "modules/operators": {"node": "0"},
    "operators/stack": {"name": "aten::mm"},
    "timeline": _WINDOW,
    "timeline/aggregate": _WINDOW,
    "timeline/critical_path": {"step": "1"},
    "timeline/event": {"id": "op:0"},
    "timeline/longest": {"name": "aten::mm"},
    "timeline/search": {"q": "mm"},
}


def good(route: str) -> dict[str, str]:
    return {**GOOD, **REQUIRED.get(route, {})}


@pytest.mark.parametrize("route", ROUTES)
def test_good_parameters_answer(tb: TensorBoard, route: str) -> None:
    status, _ = tb.get(route, **good(route))
    assert status == 200, route


@pytest.mark.parametrize(("route", "name"), list(itertools.product(ROUTES, [*GOOD, *EXTRA_PARAMS])))
def test_hostile_values_never_give_500(tb: TensorBoard, route: str, name: str) -> None:
    for value in HOSTILE:
        status, body = tb.get(route, **{**good(route), name: value})
        assert status < 500, (route, name, value, body)
        if status >= 400:
            assert isinstance(body, dict) and body.get("error"), (route, name, value, body)


@pytest.mark.parametrize("route", ROUTES)
def test_missing_parameters_are_400_or_200(tb: TensorBoard, route: str) -> None:
    for drop in good(route):
        params = {k: v for k, v in good(route).items() if k != drop}
        status, body = tb.get(route, **params)
        assert status in (200, 400), (route, drop, status, body)

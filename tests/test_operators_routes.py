"""The overview, operators, operators/stack and kernels routes through the plugin's WSGI handlers and
a real RunStore: answers, parameter validation (400) and unknown profiles/operators (404)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator

import pytest
from werkzeug.test import Client

from tests.fixtures.trace_builder import V100, TraceBuilder
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.plugin import collect_routes, wsgi_app


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunStore]:
    root = tmp_path_factory.mktemp("logdir")
    b = TraceBuilder(device_properties=[V100])
    b.step(1, 0, 1000)
    mm = b.op("aten::mm", 100, 300, input_dims=[[2, 3], [3, 4]], call_stack="m.py(3): f;t.py(9): <module>")
    b.launch("volta_sgemm_128x64_nn", 110, 10, 150, 400, ext_id=mm, blocks_per_sm=2, occupancy=25)
    b.op("aten::add", 500, 100, input_dims=[[4], [4]])
    path = b.write(root / "run" / "worker0.1.pt.trace.json.gz")
    cpu = TraceBuilder()
    cpu.step(1, 0, 100)
    cpu.op("aten::add", 10, 20)
    cpu_path = cpu.write(root / "cpu_run" / "worker0.pt.trace.json.gz")
    for p in (path, cpu_path):
        os.utime(p, (time.time() - 60,) * 2)
    s = RunStore(str(root), processes=0, settle_seconds=1)
    s.scan_once()
    assert s.wait_idle(60)
    yield s
    s.close()


def get(store: RunStore, route: str, **params: str) -> tuple[int, dict]:
    handler = collect_routes()[route]
    response = Client(wsgi_app(handler, store)).get(route, query_string=params)
    return response.status_code, json.loads(response.get_data(as_text=True))


def test_overview(store: RunStore) -> None:
    status, body = get(store, "/overview", run="run", worker="worker0")
    assert status == 200
    assert body["device_type"] == "GPU" and body["environment"]["workers"] == 1
    assert body["step_time_us"] == 1000 and body["average"]["kernel"] == {"us": 400.0, "pct": 40.0}
    assert [s["number"] for s in body["steps"]] == [1]
    (gpu,) = body["gpus"]
    assert gpu["name"] == V100["name"] and gpu["utilization_pct"] == pytest.approx(40.0)
    assert {r["id"] for r in body["recommendations"]} >= {"low_gpu_utilization", "amp"}
    assert all(r["evidence"] for r in body["recommendations"])


def test_cpu_overview_has_no_gpu_section(store: RunStore) -> None:
    status, body = get(store, "/overview", run="cpu_run", worker="worker0")
    assert status == 200 and body["device_type"] == "CPU" and body["gpus"] == []
    assert "kernel" not in body["categories"]


def test_operators(store: RunStore) -> None:
    status, body = get(store, "/operators", run="run", worker="worker0", sort="device_self_us", top="1")
    assert status == 200 and body["total_rows"] == 2
    assert [r["name"] for r in body["rows"]] == ["aten::mm", "aten::add"]
    assert body["rows"][0]["device_self_us"] == 400 and body["rows"][0]["has_call_stack"] is True
    assert body["top"]["host_total_us"] == [{"name": "aten::mm", "host_total_us": 300.0}]
    status, body = get(
        store, "/operators", run="run", worker="worker0", group_by="name_input_shape", limit="1"
    )
    assert (
        status == 200
        and body["rows"] == [body["rows"][0]]
        and body["rows"][0]["input_shape"] == "[[2, 3], [3, 4]]"
    )


def test_operator_stack(store: RunStore) -> None:
    status, body = get(store, "/operators/stack", run="run", worker="worker0", name="aten::mm")
    assert status == 200
    (entry,) = body["stacks"]
    assert entry["frames"][0] == {"file": "m.py", "line": 3, "function": "f"} and entry["calls"] == 1
    status, body = get(
        store, "/operators/stack", run="run", worker="worker0", group_by="name_input_shape", name="aten::add",
        input_shape="[[4], [4]]",
    )  # fmt: skip
    assert status == 200 and body["stacks"][0]["frames"] == []


def test_operator_stack_of_calls_without_shapes(store: RunStore) -> None:
    """A row grouped by input shape whose calls recorded none has the label "": the browser drops empty
    parameters, so a missing input_shape means that label (was a 400 for every such row)."""
    for params in ({"input_shape": ""}, {}):
        status, body = get(
            store, "/operators/stack", run="cpu_run", worker="worker0", group_by="name_input_shape", name="aten::add",
            **params,
        )  # fmt: skip
        assert status == 200 and body["input_shape"] == "" and body["stacks"][0]["calls"] == 1
    status, body = get(store, "/operators", run="cpu_run", worker="worker0", group_by="name_input_shape")
    assert status == 200 and body["rows"][0]["input_shape"] == "" and body["has_input_shapes"] is False
    status, body = get(store, "/operators", run="run", worker="worker0")
    assert body["has_input_shapes"] is True


def test_kernels(store: RunStore) -> None:
    status, body = get(store, "/kernels", run="run", worker="worker0", group_by="name_op_launch")
    assert status == 200
    (row,) = body["rows"]
    assert row["op_name"] == "aten::mm" and row["total_us"] == 400 and row["mean_blocks_per_sm"] == 2
    assert body["top"] == [{"name": "volta_sgemm_128x64_nn", "total_us": 400.0}]
    assert body["tensor_core_share"] == 0.0
    status, body = get(store, "/kernels", run="cpu_run", worker="worker0")
    assert status == 200 and body["rows"] == [] and body["top"] == []


@pytest.mark.parametrize(
    ("route", "params", "status", "fragment"),
    [
        ("/overview", {"run": "run"}, 400, "missing query parameter 'worker'"),
        ("/overview", {"run": "nope", "worker": "worker0"}, 404, "nope"),
        ("/operators", {"run": "run", "worker": "worker0", "group_by": "shape"}, 400, "'group_by' must be one of"),
        ("/operators", {"run": "run", "worker": "worker0", "sort": "x"}, 400, "'sort' must be one of"),
        ("/operators", {"run": "run", "worker": "worker0", "top": "-1"}, 400, "'top' must be between"),
        ("/operators", {"run": "run", "worker": "worker0", "limit": "ten"}, 400, "'limit' must be an integer"),
        ("/operators/stack", {"run": "run", "worker": "worker0"}, 400, "missing query parameter 'name'"),
        ("/operators/stack", {"run": "run", "worker": "worker0", "group_by": "name_input_shape", "name": "aten::mm"},
         404, "no operator 'aten::mm' with input shape ''"),
        ("/operators/stack", {"run": "run", "worker": "worker0", "name": "aten::nope"}, 404, "no operator 'aten::nope'"),
        ("/kernels", {"run": "run", "worker": "worker0", "group_by": "grid"}, 400, "'group_by' must be one of"),
        ("/kernels", {"run": "run", "worker": "worker0", "sort": "name"}, 400, "'sort' must be one of"),
    ],
)  # fmt: skip
def test_bad_requests(
    store: RunStore, route: str, params: dict[str, str], status: int, fragment: str
) -> None:
    got, body = get(store, route, **params)
    assert got == status and fragment in body["error"]

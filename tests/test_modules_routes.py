"""The Module view's routes through a real TensorBoard on the project's samples: which runs offer it,
the tree on resnet_like_cpu (with_modules) and on the Lightning run, filtered operators, bad input."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from werkzeug.test import Client

from tests.fixtures.paths import SAMPLES
from tests.fixtures.tensorboard_server import TensorBoard, tensorboard
from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.plugin import collect_routes, wsgi_app

RESNET = {"run": "resnet_like_cpu", "worker": "worker0", "span": "1"}
LIGHTNING_RUN = "lightning_cpu/lightning_logs/version_0"


@pytest.fixture(scope="module")
def tb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    with tensorboard(SAMPLES, tmp=tmp_path_factory.mktemp("tb")) as server:
        server.wait_loaded(120)
        yield server


def test_views_offer_module_only_with_module_information(tb: TensorBoard) -> None:
    assert "Module" in tb.get("views", run="resnet_like_cpu")[1]
    lightning_views = tb.get("views", run=LIGHTNING_RUN)[1]
    assert "Module" in lightning_views
    assert "Distributed" not in lightning_views  # its workers are Lightning's stages, not ranks
    assert "Module" not in tb.get("views", run="plain_no_steps")[1]
    assert tb.get("workers", run="plain_no_steps", view="Module")[1] == []
    assert (
        tb.get("overview", run="plain_no_steps", worker="worker0")[1]["environment"]["module_info"] is False
    )
    assert tb.get("overview", **RESNET)[1]["environment"]["module_info"] is True


def test_resnet_tree(tb: TensorBoard) -> None:
    status, body = tb.get("modules", **RESNET)
    assert status == 200 and body["source"] == "nn.Module" and body["step"] == "all"
    nodes = body["nodes"]
    by_id = {n["id"]: n for n in nodes}
    (root, back) = [n for n in nodes if n["parent"] < 0]
    assert root["name"] == "SmallResNet_0" and root["occurrences"] == 3 and root["kind"] == "forward"
    assert body["threads"][root["thread"]] and body["main_thread"] == root["thread"]
    step_total = sum(s["duration_us"] for s in body["steps"])
    assert 0 < root["host_total_us"] <= step_total
    for n in nodes:
        assert n["host_self_us"] <= n["host_total_us"] + 1e-6
        if n["parent"] >= 0:  # children within parents, and the parent listed first
            parent = by_id[n["parent"]]
            assert n["host_total_us"] <= parent["host_total_us"] + 1e-6
            assert nodes.index(parent) < nodes.index(n)
    kids = [n for n in nodes if n["parent"] == root["id"]]
    assert root["host_self_us"] == pytest.approx(
        root["host_total_us"] - sum(k["host_total_us"] for k in kids)
    )
    # backward (fwdbwd flows): SmallResNet_0.backward mirrors the forward tree, on the thread it ran on
    assert back["name"] == "SmallResNet_0.backward" and back["kind"] == "backward"
    assert back["forward"] == root["id"] and back["occurrences"] == 3 and back["event"] == ""
    assert back["thread"] in body["threads"]
    back_kids = [n for n in nodes if n["parent"] == back["id"]]
    assert back_kids and all(by_id[k["forward"]]["parent"] == root["id"] for k in back_kids)
    assert all(k["name"].endswith(".backward") for k in back_kids)
    assert back["host_self_us"] == pytest.approx(
        back["host_total_us"] - sum(k["host_total_us"] for k in back_kids)
    )
    assert 0 < back["host_total_us"] <= step_total
    relu = [n for n in nodes if n["name"] == "ReLU_1"]
    assert len(relu) == 1 and relu[0]["occurrences"] == 6  # called twice per step
    one = tb.get("modules", **RESNET, step="3")[1]
    assert one["step"] == 3 and {
        n["occurrences"] for n in one["nodes"] if not n["name"].startswith("ReLU_1")
    } == {1}


def test_operators_inside_a_module(tb: TensorBoard) -> None:
    nodes = tb.get("modules", **RESNET)[1]["nodes"]
    conv = next(n for n in nodes if n["name"] == "Conv2d_0")
    status, body = tb.get("modules/operators", **RESNET, node=conv["id"])
    assert status == 200 and body["name"] == "Conv2d_0"
    names = [r["name"] for r in body["rows"]]
    assert "aten::conv2d" in names and not any("batch_norm" in n for n in names)
    conv2d = next(r for r in body["rows"] if r["name"] == "aten::conv2d")
    assert conv2d["calls"] == 3 and conv2d["host_total_us"] <= conv["host_total_us"]
    # Conv2d_0.backward: the backward functions of its convolutions, once per step
    back = next(n for n in nodes if n["name"] == "Conv2d_0.backward")
    status, body = tb.get("modules/operators", **RESNET, node=back["id"])
    rows = {r["name"]: r for r in body["rows"]}
    assert status == 200 and rows["ConvolutionBackward0"]["calls"] == 3 and "aten::conv2d" not in rows
    assert rows["ConvolutionBackward0"]["host_total_us"] == pytest.approx(back["host_total_us"])


def test_lightning_hooks(tb: TensorBoard) -> None:
    workers = tb.get("workers", run=LIGHTNING_RUN)[1]
    assert sorted(workers) == [
        "perf.fit.training_step",
        "perf.fit.validation_step",
        "perf.test.test_step",
        "perf.validate.validation_step",
    ]
    fit = "perf.fit.training_step"
    status, body = tb.get("modules", run=LIGHTNING_RUN, worker=fit, tree="hooks")
    assert status == 200 and body["source"] == "lightning"
    names = {n["name"] for n in body["nodes"]}
    assert "[Strategy]SingleDeviceStrategy.training_step" in names
    assert "[Strategy]SingleDeviceStrategy.backward" in names
    assert "[_TrainingEpochLoop].train_dataloader_next" in names
    mods = tb.get("modules", run=LIGHTNING_RUN, worker=fit)[1]
    assert {n["name"] for n in mods["nodes"]} >= {"encoder", "encoder.0", "head", "loss"}


@pytest.mark.parametrize(
    ("route", "params", "status"),
    [
        ("modules", {"step": "x"}, 400),
        ("modules", {"step": "99"}, 404),
        ("modules", {"tree": "nope"}, 400),
        ("modules/operators", {}, 400),
        ("modules/operators", {"node": "999999"}, 400),
        ("modules/operators", {"node": "a"}, 400),
    ],
)
def test_bad_input(tb: TensorBoard, route: str, params: dict[str, str], status: int) -> None:
    got, body = tb.get(route, **RESNET, **params)
    assert got == status and body["error"]


def test_no_modules_is_404(tb: TensorBoard) -> None:
    status, body = tb.get("modules", run="plain_no_steps", worker="worker0")
    assert status == 404 and "with_modules" in body["error"]


def test_show_in_timeline_finds_the_module_event(tb: TensorBoard) -> None:
    nodes = tb.get("modules", **RESNET)[1]["nodes"]
    block = next(n for n in nodes if n["name"] == "ResidualBlock_0")
    status, place = tb.get("timeline/longest", **RESNET, name=block["event"], kind="any")
    assert status == 200 and place["name"] == "nn.Module: ResidualBlock_0"
    assert place["dur_us"] == pytest.approx(block["longest_us"], rel=1e-6)


def test_hooks_only_profile_defaults_to_the_hook_tree(tmp_path: Path) -> None:
    b = TraceBuilder(extra_top={"Framework": "pytorch-lightning"})
    b.step(1, 0, 1000)
    b.annotation("[pl][profile][Strategy]SingleDeviceStrategy.training_step", 10, 500)
    b.write(tmp_path / "pl" / "fit.training_step.1.pt.trace.json.gz")
    store = RunStore(str(tmp_path), processes=0, settle_seconds=0)
    try:
        store.scan_once()
        assert store.wait_idle(60)
        client = Client(wsgi_app(collect_routes()["/modules"], store))
        body = json.loads(
            client.get("/modules", query_string={"run": "pl", "worker": "fit.training_step"}).data
        )
        assert body["tree"] == "hooks" and not body["has_modules"] and body["has_hooks"]
        assert [n["name"] for n in body["nodes"]] == ["[Strategy]SingleDeviceStrategy.training_step"]
        assert body["hook_steps"][0]["parts"]["step"] == 500
        missing = client.get(
            "/modules", query_string={"run": "pl", "worker": "fit.training_step", "tree": "modules"}
        )
        assert missing.status_code == 404
        assert "Module" in json.loads(
            Client(wsgi_app(collect_routes()["/views"], store)).get("/views?run=pl").data
        )
    finally:
        store.close()

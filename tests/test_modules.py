"""Module trees by hand: nesting, repeated and recursive modules, the same class at two paths, device
time from launches inside the ranges, other threads, steps; Lightning module and hook ranges."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.builders_overview import load
from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.analysis.modules import tree as modules
from torch_tb_profiler.model import Profile

PATHS = {
    "Net_0": ("Net_0",),
    "Net_0/Linear_0": ("Net_0", "Linear_0"),
    "Net_0/ReLU_0": ("Net_0", "ReLU_0"),
    "Net_0/Block_0": ("Net_0", "Block_0"),
    "Net_0/Block_0/Block_0": ("Net_0", "Block_0", "Block_0"),
    "Net_0/Block_0/Block_0/Linear_1": ("Net_0", "Block_0", "Block_0", "Linear_1"),
    "Net_0/Block_0/Block_0/Linear_0": ("Net_0", "Block_0", "Block_0", "Linear_0"),
    "Hook_0": ("Hook_0",),
}


def _trace() -> TraceBuilder:
    b = TraceBuilder()
    ids = iter(range(1, 100))

    def module(name: str, ts: float, dur: float, tid: int | None = None) -> None:
        b.python_function(f"nn.Module: {name}", ts, dur, py_id=next(ids), parent_id=1, module_id=0, tid=tid)

    b.step(1, 0, 1000)
    b.step(2, 1000, 1000)
    b.python_function("train.py(1): <module>", 0, 2300, py_id=next(ids), parent_id=None)
    module("Net_0", 100, 600)
    module("Linear_0", 120, 100)
    b.op("aten::linear", 130, 80)
    b.launch("k_linear", 140, 5, 800, 50)
    module("ReLU_0", 250, 50)
    b.op("aten::relu", 255, 40)
    b.launch("k_relu", 260, 5, 860, 20)
    module("ReLU_0", 320, 40)  # the same module called twice
    module("Block_0", 400, 250)
    module("Block_0", 450, 150)  # recursion: Block_0 calls itself
    module("Linear_1", 460, 40)
    module("Linear_0", 510, 30)  # the Linear_0 class/instance name again, at another path
    b.launch("k_block_inner", 550, 5, 900, 30)
    b.launch("k_block", 620, 5, 940, 10)
    b.launch("k_net", 680, 5, 960, 5)
    module("Hook_0", 300, 100, tid=200)  # a module range on another thread
    b.launch("k_hook", 350, 5, 970, 7, tid=200)
    # the backward function of Linear_0's aten::linear, on the autograd thread, linked by a fwdbwd flow
    b.op("LinearBackward0", 500, 40, tid=200)
    b.launch("k_linear_bwd", 510, 5, 975, 25, tid=200)
    b.fwdbwd(1, 130, 500, fwd_tid=100, bwd_tid=200)
    # step 2
    module("Net_0", 1100, 200)
    module("Linear_0", 1120, 80)
    b.launch("k_linear", 1150, 5, 1400, 40)
    for t in (
        1500,
        1600,
        1700,
        1800,
        1900,
    ):  # outside every module; keeps step 2 from the tail trim (steps.py)
        b.launch("k_other", t, 5, t + 50, 10)
    module("Net_0", 2100, 100)  # outside every step: not counted
    return b


@pytest.fixture(scope="module")
def profile(tmp_path_factory: pytest.TempPathFactory) -> Profile:
    return load(_trace(), tmp_path_factory.mktemp("modules"))


def _by_path(fig) -> dict[str, dict]:
    rows = fig.to_dict("records")
    by_id = {r["id"]: r for r in rows}
    out = {}
    for r in rows:
        parts, node = [], r
        while True:
            parts.append(node["name"])
            if node["parent"] < 0:
                break
            node = by_id[node["parent"]]
        out["/".join(reversed(parts))] = r
    return out


def test_step_one_by_hand(profile: Profile) -> None:
    fig = _by_path(modules.figures(profile, "modules", 1))
    assert set(fig) == set(PATHS) | {"Net_0.backward", "Net_0.backward/Linear_0.backward"}
    expect = {  # path: occurrences, host total, host self, device total, device self
        "Net_0": (1, 600, 600 - 100 - 90 - 250, 50 + 20 + 30 + 10 + 5, 5),
        "Net_0/Linear_0": (1, 100, 100, 50, 50),
        "Net_0/ReLU_0": (2, 90, 90, 20, 20),
        "Net_0/Block_0": (1, 250, 250 - 150, 40, 10),
        "Net_0/Block_0/Block_0": (1, 150, 150 - 40 - 30, 30, 30),
        "Net_0/Block_0/Block_0/Linear_1": (1, 40, 40, 0, 0),
        "Net_0/Block_0/Block_0/Linear_0": (1, 30, 30, 0, 0),
        "Hook_0": (1, 100, 100, 7, 7),
    }
    for path, (occ, host, host_self, dev, dev_self) in expect.items():
        r = fig[path]
        got = (
            r["occurrences"],
            r["host_total_us"],
            r["host_self_us"],
            r["device_total_us"],
            r["device_self_us"],
        )
        assert got == pytest.approx((occ, host, host_self, dev, dev_self)), path
    assert fig["Net_0"]["step_share_pct"] == pytest.approx(60.0)
    assert fig["Net_0/ReLU_0"]["longest_us"] == 50
    assert fig["Hook_0"]["tid"] == "200" and fig["Net_0"]["tid"] == "100"
    assert fig["Net_0/Block_0/Block_0/Linear_0"]["cls"] == "Linear"


def test_all_steps_sum_the_steps(profile: Profile) -> None:
    fig = _by_path(modules.figures(profile, "modules", None))
    net, lin = fig["Net_0"], fig["Net_0/Linear_0"]
    assert (net["occurrences"], net["host_total_us"], net["device_total_us"]) == (2, 800, 155)
    assert (lin["occurrences"], lin["host_total_us"], lin["device_total_us"]) == (2, 180, 90)
    assert net["step_share_pct"] == pytest.approx(800 / 2000 * 100)
    step2 = _by_path(modules.figures(profile, "modules", 2))
    assert set(step2) == {"Net_0", "Net_0/Linear_0"}
    assert step2["Net_0"]["host_self_us"] == 120 and step2["Net_0"]["device_self_us"] == 0


def test_preorder_and_depth(profile: Profile) -> None:
    fig = modules.figures(profile, "modules", 1)
    seen: set[int] = set()
    for r in fig.to_dict("records"):  # every parent comes before its children
        assert r["parent"] < 0 or r["parent"] in seen
        seen.add(r["id"])
    paths = _by_path(fig)
    assert {p: r["depth"] for p, r in paths.items() if r["kind"] == "forward"} == {
        p: len(parts) - 1 for p, parts in PATHS.items()
    }
    assert paths["Net_0.backward/Linear_0.backward"]["depth"] == 1


def test_operators_inside_a_module(profile: Profile) -> None:
    node = _by_path(modules.figures(profile, "modules", 1))["Net_0/Linear_0"]["id"]
    rows = modules.operators_inside(profile, "modules", node, 1).to_dict("records")
    assert rows == [
        {
            "name": "aten::linear",
            "calls": 1,
            "host_self_us": pytest.approx(80 - 5),
            "host_total_us": 80,
            "device_self_us": 50,
            "device_total_us": 50,
        }
    ]
    net = _by_path(modules.figures(profile, "modules", 1))["Net_0"]["id"]
    names = modules.operators_inside(profile, "modules", net, None)["name"].tolist()
    assert names == ["aten::linear", "aten::relu"]


def test_overhanging_child_is_cut(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 1000)
    b.python_function("nn.Module: A_0", 100, 200, py_id=1, parent_id=None, module_id=0)
    b.python_function("nn.Module: B_0", 250, 100, py_id=2, parent_id=1, module_id=0)  # ends at 350 > 300
    b.python_function("nn.Module: C_0", 900, 200, py_id=3, parent_id=None, module_id=0)  # cut at step end
    fig = _by_path(modules.figures(load(b, tmp_path), "modules", None))
    assert fig["A_0/B_0"]["host_total_us"] == 50
    assert fig["A_0"]["host_self_us"] == 150
    assert fig["C_0"]["host_total_us"] == 100


def test_no_module_events(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100)
    b.op("aten::add", 10, 20)
    b.python_function("train.py(1): <module>", 0, 100, py_id=1, parent_id=None)
    p = load(b, tmp_path)
    assert not modules.has_module_view(p)
    assert modules.summary(p) == []


def _lightning() -> TraceBuilder:
    b = TraceBuilder(extra_top={"Framework": "pytorch-lightning"})
    b.step(1, 0, 1000)
    b.annotation("[pl][profile]run_training_batch", 10, 900)
    b.annotation("[pl][profile][LightningModule]M.optimizer_step", 20, 800)
    b.annotation("[pl][profile][Strategy]SingleDeviceStrategy.training_step", 30, 300)
    b.annotation("[pl][module]torch.nn.modules.container.Sequential: encoder", 40, 200)
    b.annotation("[pl][module]torch.nn.modules.linear.Linear: encoder.0", 50, 100)
    b.op("aten::linear", 60, 80)
    b.annotation("[pl][module]torch.nn.modules.loss.CrossEntropyLoss: loss", 250, 50)
    b.annotation("[pl][profile][Strategy]SingleDeviceStrategy.backward", 400, 300)
    b.annotation("[pl][profile][Callback]Timer.on_train_batch_end", 950, 20)
    return b


def test_lightning_modules_and_hooks(tmp_path: Path) -> None:
    p = load(_lightning(), tmp_path)
    assert modules.tree(p, "modules").source == "lightning"
    mods = _by_path(modules.figures(p, "modules", None))
    assert set(mods) == {"encoder", "encoder/encoder.0", "loss"}
    assert mods["encoder"]["cls"] == "Sequential" and mods["encoder"]["host_self_us"] == 100
    assert mods["encoder/encoder.0"]["event"] == "[pl][module]torch.nn.modules.linear.Linear: encoder.0"
    hooks = _by_path(modules.figures(p, "hooks", None))
    opt = "run_training_batch/[LightningModule]M.optimizer_step"
    assert set(hooks) == {
        "run_training_batch",
        opt,
        f"{opt}/[Strategy]SingleDeviceStrategy.training_step",
        f"{opt}/[Strategy]SingleDeviceStrategy.backward",
        "[Callback]Timer.on_train_batch_end",
    }
    assert hooks[opt]["host_self_us"] == 800 - 300 - 300
    assert hooks["run_training_batch"]["cls"] == "Trainer"
    assert hooks["[Callback]Timer.on_train_batch_end"]["cls"] == "Callback"
    assert hooks["run_training_batch"]["step_share_pct"] == pytest.approx(90.0)


def test_summary_depth(profile: Profile) -> None:
    top = modules.summary(profile, depth=1)
    assert [(r["name"], r["host_total_us"]) for r in top] == [
        ("Net_0", 800),
        ("Hook_0", 100),
        ("Net_0.backward", 40),
    ]
    assert {r["depth"] for r in modules.summary(profile, depth=2)} == {0, 1}


def test_lightning_hooks_per_step(tmp_path: Path) -> None:
    from torch_tb_profiler.analysis.modules import lightning

    b = _lightning()
    b.annotation("[pl][profile][_TrainingEpochLoop].train_dataloader_next", 0, 10)  # [0, 10)
    (step,) = lightning.breakdown(load(b, tmp_path))
    # step [0, 1000): fetch [0,10); training_step [30,330); backward [400,700); optimizer_step [20,820)
    # minus those; callback [950,970); run_training_batch [10,910) minus the rest; outside: the gaps
    assert step["parts"] == {
        "data_fetching": 10,
        "step": 300,
        "backward": 300,
        "optimizer": 800 - 300 - 300,
        "callbacks": 20,
        "other_hooks": 900 - 800,
        "outside_hooks": 1000 - 10 - 900 - 20,
    }
    assert lightning.part_of("[LightningModule]M.on_train_batch_start") == "callbacks"
    assert lightning.part_of("[Strategy]S.batch_to_device") == "data_fetching"
    assert lightning.breakdown(load(_trace(), tmp_path / "plain")) == []


def test_root_device_totals_match_the_launches_of_the_step(profile: Profile) -> None:
    roots = modules.figures(profile, "modules", 1)
    roots = roots[roots["parent"] < 0]
    dev = profile.device
    in_step = dev["ts"] - TraceBuilder().base_ts < 1000
    forward = in_step & (dev["name"] != "k_linear_bwd")
    step_launches = dev["dur"][forward].sum()  # every forward kernel of step 1 was launched inside a module
    fwd_roots = roots[roots["kind"] == "forward"]
    assert fwd_roots["device_total_us"].sum() == pytest.approx(step_launches) == pytest.approx(122)
    # with the backward roots, every kernel of step 1
    assert (
        roots["device_total_us"].sum() == pytest.approx(dev["dur"][in_step].sum()) == pytest.approx(122 + 25)
    )


def test_backward_node_follows_the_forward_module(profile: Profile) -> None:
    fig = _by_path(modules.figures(profile, "modules", 1))
    # LinearBackward0 (40 µs on thread 200, its kernel 25 µs) differentiates Linear_0's aten::linear:
    # Linear_0.backward under Net_0.backward; nothing else has a backward op
    lin, net = fig["Net_0.backward/Linear_0.backward"], fig["Net_0.backward"]
    assert (lin["kind"], lin["tid"], lin["occurrences"]) == ("backward", "200", 1)
    assert (lin["host_total_us"], lin["host_self_us"], lin["device_total_us"], lin["device_self_us"]) == (
        40,
        40,
        25,
        25,
    )
    assert (net["host_total_us"], net["host_self_us"], net["device_total_us"], net["device_self_us"]) == (
        40,
        0,
        25,
        0,
    )
    assert net["forward"] == fig["Net_0"]["id"] and lin["forward"] == fig["Net_0/Linear_0"]["id"]
    assert net["step_share_pct"] == pytest.approx(4.0)
    assert fig["Net_0"]["kind"] == "forward" and fig["Net_0"]["forward"] == -1
    assert fig["Hook_0"]["device_total_us"] == 7  # the backward op ran on Hook_0's thread, outside it
    # step 2 ran no backward
    assert not any(p.endswith(".backward") for p in _by_path(modules.figures(profile, "modules", 2)))
    assert modules.figures(profile, "hooks", None).empty


def _backward_trace() -> TraceBuilder:
    """Net_0 [100, 700) holds Enc_0 [120, 400) (aten::linear at 130, Lin_0 [200, 300) with aten::addmm
    at 210) and its own aten::relu at 500; ReLU_0 [600, 650) has no backward. The autograd thread
    (tid 200) runs AddmmBackward0 [1000, 1100) (kernel 30), LinearBackward0 [1050, 1150) (kernel 20),
    ReluBackward0 [1200, 1250) (kernel 10)."""
    b = TraceBuilder()
    ids = iter(range(1, 100))

    def module(name: str, ts: float, dur: float) -> None:
        b.python_function(f"nn.Module: {name}", ts, dur, py_id=next(ids), parent_id=1, module_id=0)

    b.step(1, 0, 2000)
    module("Net_0", 100, 600)
    module("Enc_0", 120, 280)
    b.op("aten::linear", 130, 60)
    module("Lin_0", 200, 100)
    b.op("aten::addmm", 210, 50)
    b.op("aten::relu", 500, 20)
    module("ReLU_0", 600, 50)
    b.op("aten::relu", 610, 20)
    for flow, fwd_ts, name, ts, dur, k_dur in (
        (1, 210, "AddmmBackward0", 1000, 100, 30),
        (2, 130, "LinearBackward0", 1050, 100, 20),
        (3, 500, "ReluBackward0", 1200, 50, 10),
    ):
        b.op(name, ts, dur, tid=200)
        b.launch(f"k_{name}", ts + 5, 5, ts + 300, k_dur, tid=200)
        b.fwdbwd(flow, fwd_ts, ts, fwd_tid=100, bwd_tid=200)
    b.launch("k_other", 1900, 5, 1950, 10)  # keeps the step from the tail trim
    return b


def test_backward_nodes_by_hand(tmp_path: Path) -> None:
    profile = load(_backward_trace(), tmp_path)
    fig = _by_path(modules.figures(profile, "modules", None))
    expect = {  # path: host total, host self, device total, device self
        "Net_0.backward/Enc_0.backward/Lin_0.backward": (100, 100, 30, 30),
        # AddmmBackward0 ∪ LinearBackward0 = [1000, 1150)
        "Net_0.backward/Enc_0.backward": (150, 150 - 100, 30 + 20, 20),
        # ∪ ReluBackward0 = [1000, 1150) ∪ [1200, 1250)
        "Net_0.backward": (200, 200 - 150, 60, 10),
    }
    got = {
        p: (r["host_total_us"], r["host_self_us"], r["device_total_us"], r["device_self_us"])
        for p, r in fig.items()
        if r["kind"] == "backward"
    }
    assert got == expect  # ReLU_0 ran no op with a backward: no ReLU_0.backward
    assert {fig[p]["tid"] for p in expect} == {"200"}
    # backward roots come after the forward ones, children after their parents
    order = list(fig)
    assert order.index("Net_0.backward") > order.index("Net_0/ReLU_0")
    # the operators of a backward node: its backward ops, descendants' included
    node = int(fig["Net_0.backward/Enc_0.backward"]["id"])
    inside = modules.operators_inside(profile, "modules", node, None)
    assert sorted(inside["name"]) == ["AddmmBackward0", "LinearBackward0"]
    assert inside.set_index("name")["device_total_us"].to_dict() == {
        "AddmmBackward0": 30,
        "LinearBackward0": 20,
    }
    summary = {r["name"]: r for r in modules.summary(profile, depth=1)}
    assert set(summary) == {"Net_0", "Net_0.backward"}
    assert (
        summary["Net_0.backward"]["kind"] == "backward" and summary["Net_0.backward"]["host_total_us"] == 200
    )

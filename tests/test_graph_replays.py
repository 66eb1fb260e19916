"""Graph replays without a capture trace (docs/metrics.md, "Graph replays") and inference steps
("Inference steps"): hand-built traces with hand-computed figures, then the shared replay traces."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.fixtures.paths import SHARED_TRACES
from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.analysis.core import steps
from torch_tb_profiler.analysis.graphs import replays
from torch_tb_profiler.analysis.ops import kernels, operators
from torch_tb_profiler.analysis.overview import page
from torch_tb_profiler.ingest.parse import load_profile
from torch_tb_profiler.model.step_ranges import step_table

VLLM_MIXED = "execute_40_context_1(sq32sk32sqsq1024sqsk1024)_generation_8(sq8sk800sqsq8sqsk800)"


def _replay_trace(tmp_path: Path, graph_id: int | None = None) -> Path:
    """An inference step (vLLM's annotation) holding: an op that launches one kernel itself (10 µs), and a
    graph launch that replays three kernels (20 + 30 + 40 µs)."""
    b = TraceBuilder()
    b.annotation(VLLM_MIXED, 0, 1000)
    b.op("aten::add", 10, 50)
    b.launch("add_kernel", 20, 5, 100, 10)
    corr = b.runtime("hipGraphLaunch", 200, 30)
    extra = {"graph id": graph_id, "graph node id": 1} if graph_id is not None else None
    for i, (ts, dur) in enumerate([(300, 20), (330, 30), (370, 40)]):
        b.kernel(f"replayed_{i}", ts, dur, corr, extra_args=extra)
    return b.write(tmp_path / "w.pt.trace.json")


def test_a_graph_launch_gets_a_replay_range_that_owns_its_kernels(tmp_path: Path) -> None:
    p = load_profile(str(_replay_trace(tmp_path)))
    replay = np.flatnonzero((p.ops["cat"] == "graph_replay").to_numpy())
    assert replay.size == 1
    row = p.ops.iloc[replay[0]]
    assert row["name"] == "graph replay" and (row["ts"], row["dur"]) == (p.ops["ts"].min() + 200, 30)
    step = int(np.flatnonzero((p.ops["name"] == VLLM_MIXED).to_numpy())[0])
    assert row["parent"] == step  # the op tree puts it under the range that encloses the launch
    replayed = p.device["name"].str.startswith("replayed_").to_numpy()
    assert (p.device["op"].to_numpy()[replayed] == replay[0]).all()
    launch = (p.runtimes["name"] == "hipGraphLaunch").to_numpy()
    assert p.runtimes["op"].to_numpy()[launch].tolist() == [replay[0]]
    assert p.runtimes["host_op"].to_numpy()[launch].tolist() == [replay[0]]


def test_the_enclosing_range_keeps_only_what_it_launched(tmp_path: Path) -> None:
    p = load_profile(str(_replay_trace(tmp_path)))
    table = operators.operator_table(p).set_index("name")
    assert table.loc["graph replay", "device_self_us"] == 90.0  # 20 + 30 + 40
    assert table.loc["graph replay", "kind"] == "graph_replay"
    assert table.loc["graph replay", "replayed_calls"] == 1
    assert table.loc["graph replay", "replayed_device_us"] == 90.0
    assert table.loc["graph replay", "host_total_us"] == 30.0  # the launch call's time
    assert table.loc["aten::add", "device_self_us"] == 10.0 and table.loc["aten::add", "kind"] == "op"
    assert table.loc["aten::add", "replayed_device_us"] == 0.0
    # the step range launched nothing itself: it is no operator row, and owns no device self
    stats = operators.op_stats(p)
    step = (p.ops["name"] == VLLM_MIXED).to_numpy()
    assert stats["device_self"].to_numpy()[step].tolist() == [0.0]
    assert stats["device_total"].to_numpy()[step].tolist() == [100.0]
    assert VLLM_MIXED not in table.index
    # conserved: every attributed µs is on exactly one row
    assert table["device_self_us"].sum() == 100.0


def test_replay_figures_and_the_overview_note(tmp_path: Path) -> None:
    p = load_profile(str(_replay_trace(tmp_path)))
    stats = replays.replay_stats(p)
    assert stats["replays"] == 1 and stats["replayed_activities"] == 3
    assert stats["replayed_device_us"] == 90.0 and stats["unattributed_device_us"] == 90.0
    assert stats["attributed_device_us"] == 0.0
    assert stats["replayed_share"] == pytest.approx(0.9)  # 90 of 100 µs of device time
    note = page.overview(p)["graphs"]
    assert note["text"].startswith("90.0 % of device time ran in 1 graph replay(s) that this trace cannot")
    assert "capture_traces/" in note["text"]
    table = kernels.kernel_table(p).set_index("name")
    assert (
        table.loc["replayed_1", "replayed_calls"] == 1 and table.loc["replayed_1", "replayed_device_us"] == 30
    )
    assert table.loc["add_kernel", "replayed_calls"] == 0


def test_a_profile_without_graph_launches_has_no_replay_figures(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100)
    b.launch("k", 10, 5, 20, 10)
    p = load_profile(str(b.write(tmp_path / "w.pt.trace.json")))
    assert replays.replay_stats(p)["replays"] == 0
    assert page.overview(p)["graphs"] is None
    assert not (p.ops["cat"] == "graph_replay").any()


def test_kernels_that_name_their_graph_give_the_replay_row_its_graph(tmp_path: Path) -> None:
    p = load_profile(str(_replay_trace(tmp_path, graph_id=7)))
    assert "graph replay (graph 7)" in set(p.ops["name"])
    assert int(p.device["graph_id"].max()) == 7 and int(p.device["graph_node_id"].max()) == 1


def test_cuda_graph_launches_too(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 1000)
    corr = b.runtime("cudaGraphLaunch", 100, 10)
    b.kernel("k1", 200, 50, corr)
    corr = b.runtime("cudaGraphLaunch_v10000", 300, 10)
    b.kernel("k2", 400, 25, corr)
    p = load_profile(str(b.write(tmp_path / "w.pt.trace.json")))
    table = operators.operator_table(p).set_index("name")
    assert table.loc["graph replay", "calls"] == 2 and table.loc["graph replay", "device_self_us"] == 75.0


# ---- inference steps --------------------------------------------------------------------------------


def _ops(*names: str):
    b = TraceBuilder()
    for i, name in enumerate(names):
        b.annotation(name, 1000 * i, 500)
    return b


@pytest.mark.parametrize(
    ("name", "kind", "context", "generation"),
    [
        (VLLM_MIXED, "mixed", 32, 8),
        ("execute_64_context_2(sq64sk64sqsq2048sqsk2048)_generation_0(sq0sk0sqsq0sqsk0)", "prefill", 64, 0),
        ("execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk32785sqsq32sqsk32785)", "decode", 0, 32),
    ],
)
def test_vllm_iterations_are_steps_classified_by_what_they_state(
    tmp_path: Path, name: str, kind: str, context: int, generation: int
) -> None:
    p = load_profile(str(_ops(name, name).write(tmp_path / "w.pt.trace.json")))
    rows = p.steps.to_dict("records")
    assert [r["number"] for r in rows] == [1, 2]
    assert {(r["kind"], r["context_tokens"], r["generation_tokens"]) for r in rows} == {
        (kind, context, generation)
    }


def test_sglang_batches_are_steps_without_token_counts(tmp_path: Path) -> None:
    p = load_profile(
        str(_ops("step[DECODE bs=32]", "step[EXTEND bs=4]", "step[NOPE]").write(tmp_path / "w.json"))
    )
    assert p.steps[["number", "kind", "context_tokens"]].to_dict("records") == [
        {"number": 1, "kind": "decode", "context_tokens": -1},
        {"number": 2, "kind": "prefill", "context_tokens": -1},
    ]


def test_profiler_steps_come_first_then_vllm_then_sglang(tmp_path: Path) -> None:
    both = _ops("ProfilerStep#3", VLLM_MIXED, "step[DECODE bs=32]").write(tmp_path / "a.pt.trace.json")
    assert load_profile(str(both)).steps[["number", "kind"]].to_dict("records") == [
        {"number": 3, "kind": "train"}
    ]
    nested = _ops(VLLM_MIXED, "step[DECODE bs=32]").write(tmp_path / "b.pt.trace.json")
    assert load_profile(str(nested)).steps["name"].tolist() == [VLLM_MIXED]
    empty = "execute_0_context_0(sq0sk0sqsq0sqsk0)_generation_0(sq0sk0sqsq0sqsk0)"
    assert step_table(load_profile(str(_ops(empty).write(tmp_path / "c.pt.trace.json"))).ops, []).empty


def test_step_list_gives_tokens_and_time_per_token(tmp_path: Path) -> None:
    p = load_profile(str(_replay_trace(tmp_path)))
    (step,) = steps.step_list(p)
    # the step range is 0..1000 µs; its device work (100..410) lies inside it: 1000 µs, 40 tokens
    assert step == {
        "name": VLLM_MIXED,
        "kind": "mixed",
        "context_tokens": 32,
        "generation_tokens": 8,
        "us": 1000.0,
        "us_per_token": 25.0,
    }


# ---- the shared replay traces ---------------------------------------------------------------------------

REPLAYS = [
    "sglang_decode/sglang_Qwen3-8B_decode.pt.trace.json.gz",
    "vllm_prefilldecode_piecewise/graph_execution.pt.trace.json.gz",
]


@pytest.mark.shared
@pytest.mark.parametrize("rel", REPLAYS)
def test_no_range_enclosing_a_graph_launch_owns_replayed_time(rel: str) -> None:
    path = SHARED_TRACES / "tracelens" / rel
    if not path.is_file():
        pytest.skip("shared traces absent")
    p = load_profile(str(path))
    mask = replays.replayed_mask(p)
    assert mask.sum() > 300
    owners = p.ops["cat"].to_numpy()[p.device["op"].to_numpy()[mask]]
    assert set(owners) == {"graph_replay"}
    table = operators.operator_table(p)
    replay_rows = table[table["kind"] == "graph_replay"]
    replayed_us = float(p.device["dur"].to_numpy()[mask].sum())
    assert replay_rows["device_self_us"].sum() == pytest.approx(replayed_us, abs=0.01)  # conserved
    step = p.steps["name"].iloc[0]
    assert (
        step not in set(table["name"])
        or table.set_index("name").loc[step, "device_self_us"] < 0.01 * replayed_us
    )
    assert page.overview(p)["graphs"]["unattributed_share"] > 0.9
    assert p.steps["kind"].iloc[0] in ("decode", "mixed")


@pytest.mark.shared
def test_summary_json_reports_graphs_and_steps() -> None:
    path = SHARED_TRACES / "tracelens" / REPLAYS[1]
    if not path.is_file():
        pytest.skip("shared traces absent")
    out = subprocess.run(
        [sys.executable, "-m", "torch_tb_profiler.cli", "summary", str(path), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    (profile,) = json.loads(out.stdout)["profiles"]
    graphs = profile["graphs"]
    assert graphs["replays"] == 25 and graphs["attributed_device_us"] == 0.0
    assert graphs["replayed_device_us"] == pytest.approx(graphs["unattributed_device_us"])
    top = profile["operators"][0]
    assert top["kind"] == "graph_replay" and top["replayed_calls"] == 25
    (step,) = profile["step_list"]
    assert (step["kind"], step["context_tokens"], step["generation_tokens"]) == ("mixed", 8155, 37)
    assert step["us_per_token"] == pytest.approx(step["us"] / 8192)


def test_inductor_kernel_counts_are_kept(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100)
    b.launch("triton_poi_fused_add_0", 10, 5, 20, 10, extra_args={"kernel_flop": 4096, "kernel_num_gb": 0.5})
    b.launch("other", 30, 5, 40, 10)
    p = load_profile(str(b.write(tmp_path / "w.pt.trace.json")))
    by_name = p.device.set_index("name")
    assert by_name.loc["triton_poi_fused_add_0", "kernel_flop"] == 4096.0
    assert by_name.loc["triton_poi_fused_add_0", "kernel_num_gb"] == 0.5
    assert np.isnan(by_name.loc["other", "kernel_flop"])


def test_the_overview_sums_up_inference_steps(tmp_path: Path) -> None:
    p = load_profile(str(_replay_trace(tmp_path)))
    assert page.overview(p)["inference"] == {
        "steps": {"prefill": 0, "decode": 0, "mixed": 1},
        "context_tokens": 32,
        "generation_tokens": 8,
        "us_per_token": 25.0,  # 1000 µs / 40 tokens
    }
    b = TraceBuilder()
    b.step(1, 0, 100)
    assert page.overview(load_profile(str(b.write(tmp_path / "t.pt.trace.json"))))["inference"] is None

"""Graph capture traces merged into their replays (docs/metrics.md, "Graph captures"): hand-built pairs
with hand-computed figures, then the shared vLLM and SGLang pairs against an independent raw match."""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from tests.fixtures.paths import SHARED_TRACES
from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.analysis.graphs import replays
from torch_tb_profiler.analysis.ops import kernels, operators
from torch_tb_profiler.ingest.parse import CaptureSource, load_profile

DECODE_32 = "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk32785sqsq32sqsk32785)"


def _capture(
    path: Path,
    launches: list[tuple[str, str, list]],
    node_ids: list[int] | None = None,
    wrap: str = "forward",
) -> Path:
    """A capture trace: one stream capture holding ``wrap`` (a user annotation) and, per launch, an op
    (name, input dims) that launches a kernel (name) recorded into the graph (no kernel runs)."""
    b = TraceBuilder()
    b.annotation("capture_32_DECODE", 0, 10_000)
    b.runtime("hipStreamBeginCapture", 10, 5)
    b.annotation(wrap, 20, 9000)
    for i, (op, kernel, dims) in enumerate(launches):
        t = 100 + 100 * i
        ext = b.op(op, t, 50, input_dims=dims, input_types=["c10::BFloat16"] * len(dims))
        args = {"kernel": kernel}
        if node_ids is not None:
            args["graph node id"] = node_ids[i]
        b.runtime("hipLaunchKernel", t + 10, 5, ext_id=ext, extra_args=args)
    b.runtime("hipStreamEndCapture", 9500, 5)
    return b.write(path)


def _replay(path: Path, kernels_: list[tuple[str, float]], node_ids: list[int] | None = None) -> Path:
    """A replay trace: a decode step holding one graph launch that ran the kernels (name, µs) in order."""
    b = TraceBuilder()
    b.annotation(DECODE_32, 0, 5000)
    corr = b.runtime("hipGraphLaunch", 100, 20)
    t = 200.0
    for i, (name, dur) in enumerate(kernels_):
        extra = {"graph node id": node_ids[i]} if node_ids is not None else None
        b.kernel(name, t, dur, corr, extra_args=extra)
        t += dur + 1
    return b.write(path)


def _load(replay: Path, *captures: tuple[Path, int | None]):
    sources = [CaptureSource(str(p), p.name, bs, "FULL") for p, bs in captures]
    return load_profile(str(replay), captures=sources)


MM = ("aten::mm", "gemm_kernel", [[32, 4096], [4096, 4096]])
ADD = ("aten::add", "add_kernel", [[32, 4096], [32, 4096]])
NORM = ("aiter::rmsnorm", "norm_kernel", [[32, 4096]])


def test_replayed_kernels_go_to_the_ops_that_captured_them(tmp_path: Path) -> None:
    cap = _capture(tmp_path / "cap.json", [MM, ADD, MM, NORM])
    p = _load(
        _replay(
            tmp_path / "r.pt.trace.json",
            [("gemm_kernel", 40), ("add_kernel", 5), ("gemm_kernel", 60), ("norm_kernel", 7)],
        ),
        (cap, 32),
    )
    table = operators.operator_table(p).set_index("name")
    assert table.loc["aten::mm", "device_self_us"] == 100.0 and table.loc["aten::mm", "calls"] == 2
    assert (
        table.loc["aten::mm", "replayed_calls"] == 2 and table.loc["aten::mm", "replayed_device_us"] == 100.0
    )
    assert table.loc["aten::mm", "host_total_us"] == 0.0 and table.loc["aten::mm", "host_self_us"] == 0.0
    assert (
        table.loc["aten::add", "device_self_us"] == 5.0
        and table.loc["aiter::rmsnorm", "device_self_us"] == 7.0
    )
    assert "graph replay" not in table.index or table.loc["graph replay", "device_self_us"] == 0.0
    assert table["device_self_us"].sum() == 112.0  # conserved
    stats = replays.replay_stats(p)
    assert (stats["attributed_device_us"], stats["unattributed_device_us"]) == (112.0, 0.0)
    assert p.meta.graph_captures["captures"] == [
        {
            "file": "cap.json",
            "batch_size": 32,
            "mode": "FULL",
            "segments": 1,
            "matched_replays": 1,
            "leftover_launches": 0,
            "rank": None,
            "used": True,
        }
    ]
    # the copies keep the capture's shapes and its enclosing annotation, on the replay thread
    copies = p.ops[p.ops["replay"].to_numpy() >= 0]
    assert set(copies["tid"]) == {"100 (graph replay)"}
    assert set(copies["name"]) == {
        "forward",
        "aten::mm",
        "aten::add",
        "aiter::rmsnorm",
    }  # not capture_32_DECODE
    mm = copies[copies["name"] == "aten::mm"]
    assert set(mm["input_dims"]) == {json.dumps([[32, 4096], [4096, 4096]], separators=(",", ":"))}
    forward = copies[copies["name"] == "forward"].iloc[0]
    # a copy spans its kernels' device time: 200 .. 200 + 40 + 1 + 5 + 1 + 60 + 1 + 7
    start = p.ops["ts"].min()
    assert (forward["ts"] - start, forward["dur"]) == (200.0, 115.0)
    k = kernels.kernel_table(p, "name_op_launch").set_index("name")
    assert k.loc["gemm_kernel", "op_name"] == "aten::mm"


def test_leftover_launches_still_match_and_are_counted(tmp_path: Path) -> None:
    cap = _capture(tmp_path / "cap.json", [MM, ADD, MM, NORM])
    p = _load(
        _replay(tmp_path / "r.pt.trace.json", [("gemm_kernel", 40), ("gemm_kernel", 60), ("norm_kernel", 7)]),
        (cap, None),
    )
    (c,) = p.meta.graph_captures["captures"]
    assert (c["matched_replays"], c["leftover_launches"]) == (1, 1)
    table = operators.operator_table(p).set_index("name")
    assert table.loc["aten::mm", "device_self_us"] == 100.0 and "aten::add" not in table.index


def test_the_capture_of_the_stated_batch_size_is_chosen(tmp_path: Path) -> None:
    """Two captures launch the same kernels with other shapes: the step says 32 tokens."""
    small = _capture(tmp_path / "bs_8.json", [("aten::mm", "gemm_kernel", [[8, 4096], [4096, 4096]])])
    big = _capture(tmp_path / "bs_32.json", [("aten::mm", "gemm_kernel", [[32, 4096], [4096, 4096]])])
    p = _load(_replay(tmp_path / "r.pt.trace.json", [("gemm_kernel", 40)]), (small, 8), (big, 32))
    shapes = set(operators.operator_table(p, "name_input_shape").query("name == 'aten::mm'")["input_shape"])
    assert shapes == {"[[32, 4096], [4096, 4096]]"}
    report = {c["file"]: c["matched_replays"] for c in p.meta.graph_captures["captures"]}
    assert report == {"bs_8.json": 0, "bs_32.json": 1}


def test_without_a_stated_batch_two_different_fits_are_ambiguous(tmp_path: Path) -> None:
    a = _capture(tmp_path / "a.json", [("aten::mm", "gemm_kernel", [[8, 4096], [4096, 4096]])])
    b = _capture(tmp_path / "b.json", [("aten::linear", "gemm_kernel", [[32, 4096], [4096, 4096]])])
    replay = TraceBuilder()
    corr = replay.runtime("hipGraphLaunch", 100, 20)
    replay.kernel("gemm_kernel", 200, 40, corr)
    p = _load(replay.write(tmp_path / "r.pt.trace.json"), (a, 8), (b, 32))
    (reason,) = p.meta.graph_captures["unmatched"]
    assert reason == "replay 1 (1 kernels): ambiguous: 2 captures fit with different ops (a.json, b.json)"
    assert replays.replay_stats(p)["unattributed_device_us"] == 40.0  # left on the graph replay row


def test_a_capture_that_does_not_fit_is_reported_not_merged(tmp_path: Path) -> None:
    cap = _capture(tmp_path / "cap.json", [MM, ADD])
    p = _load(_replay(tmp_path / "r.pt.trace.json", [("gemm_kernel", 40), ("softmax_kernel", 5)]), (cap, 32))
    (reason,) = p.meta.graph_captures["unmatched"]
    assert reason == (
        "replay 1 (2 kernels): no capture's launches fit: cap.json capture 1 agrees on 1 of 2 kernels; "
        "then the replay ran 'softmax_kernel', the capture launched 'add_kernel'"
    )
    table = operators.operator_table(p).set_index("name")
    assert table.loc["graph replay", "device_self_us"] == 45.0 and "aten::mm" not in table.index
    assert p.meta.graph_captures["captures"][0]["matched_replays"] == 0


def test_graph_node_ids_match_whatever_the_order(tmp_path: Path) -> None:
    cap = _capture(tmp_path / "cap.json", [MM, ADD, NORM], node_ids=[11, 12, 13])
    # replayed out of capture order (two streams, say): the node ids decide
    r = _replay(
        tmp_path / "r.pt.trace.json",
        [("norm_kernel", 7), ("gemm_kernel", 40), ("add_kernel", 5)],
        node_ids=[13, 11, 12],
    )
    table = operators.operator_table(_load(r, (cap, 32))).set_index("name")
    assert (table.loc["aten::mm", "device_self_us"], table.loc["aiter::rmsnorm", "device_self_us"]) == (
        40.0,
        7.0,
    )


def test_a_broken_capture_is_reported_and_the_trace_loads(tmp_path: Path) -> None:
    broken = tmp_path / "cap.json"
    broken.write_text('{"traceEvents": [{"ph": "X", "cat"')
    p = _load(_replay(tmp_path / "r.pt.trace.json", [("gemm_kernel", 40)]), (broken, 32))
    (reason,) = p.meta.graph_captures["unmatched"]
    assert reason.startswith("capture cap.json could not be read: ")
    assert replays.replay_stats(p)["unattributed_device_us"] == 40.0


def test_one_replay_per_segment_in_order(tmp_path: Path) -> None:
    """Piecewise graphs: the capture has one stream capture per piece, the replay one launch per piece,
    and identical pieces (layers) are told apart by their order."""
    b = TraceBuilder()
    b.runtime("hipStreamBeginCapture", 0, 1)
    e1 = b.op("layer0::mm", 10, 20)
    b.runtime("hipLaunchKernel", 15, 2, ext_id=e1, extra_args={"kernel": "gemm_kernel"})
    b.runtime("hipStreamEndCapture", 40, 1)
    b.runtime("hipStreamBeginCapture", 100, 1)
    e2 = b.op("layer1::mm", 110, 20)
    b.runtime("hipLaunchKernel", 115, 2, ext_id=e2, extra_args={"kernel": "gemm_kernel"})
    b.runtime("hipStreamEndCapture", 140, 1)
    cap = b.write(tmp_path / "cap.json")
    r = TraceBuilder()
    for i, dur in enumerate((30, 50)):
        corr = r.runtime("hipGraphLaunch", 100 * i, 10)
        r.kernel("gemm_kernel", 1000 + 100 * i, dur, corr)
    table = operators.operator_table(_load(r.write(tmp_path / "r.pt.trace.json"), (cap, None))).set_index(
        "name"
    )
    assert (table.loc["layer0::mm", "device_self_us"], table.loc["layer1::mm", "device_self_us"]) == (
        30.0,
        50.0,
    )


# ---- the shared pairs ------------------------------------------------------------------------------------

PAIRS = {
    "sglang_decode": ("sglang_Qwen3-8B_decode.pt.trace.json.gz", "bs_32_rank0.json.gz", 32),
    "vllm_prefilldecode_piecewise": (
        "graph_execution.pt.trace.json.gz",
        "graph_capture_rank_0.1773709679453551615.pt.trace.json.gz",
        8192,
    ),
}


def _events(path: Path) -> list[dict]:
    with gzip.open(path) as f:
        return json.load(f)["traceEvents"]


def _raw_match(replay: Path, capture: Path) -> dict[str, float]:
    """Device µs per launching op name, matched independently on the raw JSON: per graph launch, its
    kernels in start order against the next stream capture's launch calls in order, by name; a launch's
    op is the cpu_op with its External id."""
    cap = _events(capture)
    op_name = {e["args"]["External id"]: e["name"] for e in cap if e.get("cat") == "cpu_op" and "args" in e}
    calls = sorted((e for e in cap if e.get("cat") == "cuda_runtime"), key=lambda e: e["ts"])
    executed = {e["args"]["correlation"] for e in cap if e.get("cat") == "kernel"}
    pieces, current = [], None
    for e in calls:
        if "BeginCapture" in e["name"]:
            current = []
        elif "EndCapture" in e["name"] and current is not None:
            pieces.append(current)
            current = None
        elif current is not None and "kernel" in e["args"] and e["args"]["correlation"] not in executed:
            current.append((e["args"]["kernel"], op_name.get(e["args"].get("External id"), "")))
    rep = _events(replay)
    launches = sorted((e for e in rep if e.get("name") == "hipGraphLaunch"), key=lambda e: e["ts"])
    kernels_of = defaultdict(list)
    for e in rep:
        if e.get("cat") == "kernel":
            kernels_of[e["args"]["correlation"]].append(e)
    out: dict[str, float] = defaultdict(float)
    for launch, piece in zip(launches, pieces, strict=True):
        ks = sorted(kernels_of[launch["args"]["correlation"]], key=lambda e: e["ts"])
        assert [k["name"] for k in ks] == [name for name, _ in piece][: len(ks)]
        for k, (_, op) in zip(ks, piece, strict=False):
            out[op] += k["dur"]
    return dict(out)


@pytest.mark.shared
@pytest.mark.parametrize("folder", sorted(PAIRS))
def test_shared_pairs_attribute_replays_to_capture_time_ops(folder: str) -> None:
    base = SHARED_TRACES / "tracelens" / folder
    if not base.is_dir():
        pytest.skip("shared traces absent")
    trace, capture, batch = PAIRS[folder]
    cap = base / "capture_traces" / capture
    p = load_profile(str(base / trace), captures=[CaptureSource(str(cap), capture, batch, None)])
    stats = replays.replay_stats(p)
    assert stats["attributed_device_us"] >= 0.9 * stats["replayed_device_us"]
    mask = replays.replayed_mask(p)
    replayed = p.device["op"].to_numpy()[mask]
    copies = p.ops["replay"].to_numpy()[replayed] >= 0
    attributed = float(p.device["dur"].to_numpy()[mask][copies].sum())
    assert attributed == pytest.approx(stats["attributed_device_us"], abs=1e-6)
    # conserved: the rows hold every replayed µs, to the µs
    table = operators.operator_table(p)
    assert table["replayed_device_us"].sum() == pytest.approx(stats["replayed_device_us"], abs=1.0)
    expected = _raw_match(base / trace, cap)
    got = table.groupby("name")["replayed_device_us"].sum()
    for name, us in expected.items():
        if us > 0.01 * stats["replayed_device_us"]:
            assert got.get(name, 0.0) == pytest.approx(us, rel=0.03), name
    assert np.isfinite(table["device_self_us"]).all()


# ---- capture folders: discovery, loading, the runs answer, the CLI ----------------------------------------


def _run_with_captures(logdir: Path) -> Path:
    """logdir/serve: a replay trace and its capture folder, as SGLang writes it (the capture file is not
    named like a trace; execution_details.json names it, and names one that is missing)."""
    run = logdir / "serve"
    folder = run / "capture_traces"
    folder.mkdir(parents=True)
    _capture(folder / "bs_32_rank0.json", [MM, ADD])
    _replay(run / "decode.pt.trace.json", [("gemm_kernel", 40), ("add_kernel", 5)])
    details = [
        {"file": "bs_32_rank0.json", "batch_size": 32, "mode": "FULL"},
        {"file": "bs_8_rank0.json", "batch_size": 8, "mode": "FULL"},
    ]
    (folder / "execution_details.json").write_text(json.dumps(details))
    return logdir


def test_a_capture_folder_is_no_run_of_its_own(tmp_path: Path) -> None:
    from torch_tb_profiler.ingest.captures import capture_sources
    from torch_tb_profiler.ingest.discovery import group_files
    from torch_tb_profiler.ingest.storage import resolve, walk_files

    logdir = _run_with_captures(tmp_path)
    _replay(logdir / "serve" / "capture_traces" / "extra.pt.trace.json", [("gemm_kernel", 1)])
    loc = resolve(str(logdir))
    (f,) = group_files(loc, walk_files(loc))
    assert (f.run, f.worker) == ("serve", "decode")
    names = sorted(Path(c.path).name for c in f.captures)
    assert names == ["bs_32_rank0.json", "execution_details.json", "extra.pt.trace.json"]
    sources, notes = capture_sources(loc, f.captures)
    assert [(s.file, s.batch_size, s.mode) for s in sources] == [
        ("bs_32_rank0.json", 32, "FULL"),
        ("extra.pt.trace.json", None, None),
    ]
    assert notes == ["execution_details.json names the capture 'bs_8_rank0.json', which is not in the folder"]


def test_the_run_store_merges_and_lists_the_captures(tmp_path: Path) -> None:
    from torch_tb_profiler.ingest.loading import RunStore

    store = RunStore(str(_run_with_captures(tmp_path)), processes=0, settle_seconds=0)
    try:
        store.scan_once()
        assert store.wait_idle(60)
        (run,) = store.runs()
        assert run["name"] == "serve" and run["state"] == "ready" and len(run["files"]) == 1
        assert run["captures"] == {
            "files": ["bs_32_rank0.json"],
            "batch_sizes": [32],
            "matched_replays": 1,
            "unmatched": [],
            "merged": True,
        }
        assert any("bs_8_rank0.json" in w["message"] for w in run["warnings"])
        table = operators.operator_table(store.get_profile("serve", "decode", None)).set_index("name")
        assert table.loc["aten::mm", "device_self_us"] == 40.0
    finally:
        store.close()


def test_summary_reports_the_merge_and_no_capture_profile(tmp_path: Path) -> None:
    from torch_tb_profiler.cli.main import main

    logdir = _run_with_captures(tmp_path)
    out = tmp_path / "out.json"
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert main(["summary", str(logdir), "--json"]) == 0
    out.write_text(buffer.getvalue())
    (profile,) = json.loads(out.read_text())["profiles"]
    graphs = profile["graphs"]
    assert (graphs["replays"], graphs["attributed_device_us"], graphs["unattributed_device_us"]) == (
        1,
        45.0,
        0.0,
    )
    assert graphs["captures"] == [
        {
            "file": "bs_32_rank0.json",
            "batch_size": 32,
            "mode": "FULL",
            "segments": 1,
            "matched_replays": 1,
            "leftover_launches": 0,
            "rank": 0,
            "used": True,
        }
    ]
    ops = {o["name"]: o for o in profile["operators"]}
    assert ops["aten::mm"]["replayed_calls"] == 1 and ops["aten::mm"]["replayed_device_us"] == 40.0


def test_a_replayed_kernels_details_show_its_capture_op(tmp_path: Path) -> None:
    from torch_tb_profiler.analysis.timeline import events
    from torch_tb_profiler.analysis.timeline import index as tl
    from torch_tb_profiler.analysis.timeline.queries import locate

    cap = _capture(tmp_path / "cap.json", [MM, ADD])
    p = _load(_replay(tmp_path / "r.pt.trace.json", [("gemm_kernel", 40), ("add_kernel", 5)]), (cap, 32))
    idx = tl.index(p)
    row = int(np.flatnonzero((p.device["name"] == "gemm_kernel").to_numpy())[0])
    d = events.details(p, idx, "dev", row, locate(idx, "dev", row))
    assert d["args"]["captured by"] == "aten::mm"
    assert d["args"]["capture input dims"] == "[[32,4096],[4096,4096]]"
    assert [(link["relation"], link["name"]) for link in d["links"]] == [
        ("launched by", "hipGraphLaunch"),
        ("operator", "aten::mm"),
    ]
    # the replay thread is a track of its own, beside the launching thread
    assert "Thread 100 (graph replay)" in [t.name for t in idx.tracks]


def test_the_module_view_shows_the_graphs_modules(tmp_path: Path) -> None:
    """The capture's nn.Module ranges are copied onto the replay thread: the replayed time goes to the
    modules that held the launching ops at capture time, with no host time."""
    from torch_tb_profiler.analysis.modules import tree

    b = TraceBuilder()
    b.runtime("hipStreamBeginCapture", 0, 1)
    b.python_function("nn.Module: Model_0", 5, 400, py_id=1, parent_id=None, module_id=0)
    b.python_function("nn.Module: Linear_0", 10, 100, py_id=2, parent_id=1, module_id=1)
    b.python_function(
        "nn.Module: Norm_0", 200, 100, py_id=3, parent_id=None, module_id=2
    )  # a broken parent link
    e1 = b.op("aten::mm", 20, 50)
    b.runtime("hipLaunchKernel", 25, 5, ext_id=e1, extra_args={"kernel": "gemm_kernel"})
    e2 = b.op("aiter::rmsnorm", 210, 50)
    b.runtime("hipLaunchKernel", 215, 5, ext_id=e2, extra_args={"kernel": "norm_kernel"})
    b.runtime("hipStreamEndCapture", 500, 1)
    cap = b.write(tmp_path / "cap.json")
    p = _load(_replay(tmp_path / "r.pt.trace.json", [("gemm_kernel", 40), ("norm_kernel", 7)]), (cap, 32))
    fig = tree.figures(p, "modules", None).set_index("name")
    assert fig.loc["Model_0", "device_total_us"] == 47.0 and fig.loc["Model_0", "host_total_us"] == 0.0
    assert fig.loc["Linear_0", "device_self_us"] == 40.0 and fig.loc["Norm_0", "device_self_us"] == 7.0
    assert fig.loc["Model_0", "device_self_us"] == 0.0
    copies = p.python[p.python["tid"].astype(str).str.endswith("(graph replay)")]
    assert sorted(copies["name"]) == ["nn.Module: Linear_0", "nn.Module: Model_0", "nn.Module: Norm_0"]


def test_the_persisted_index_holds_the_merge_and_a_changed_capture_makes_it_stale(tmp_path: Path) -> None:
    import os
    import time

    from torch_tb_profiler.ingest import persist
    from torch_tb_profiler.ingest.loading import RunStore

    logdir = _run_with_captures(tmp_path / "logs")
    index = persist.open_store(str(tmp_path / "index"))
    assert index is not None

    def load() -> tuple[bool, float]:
        store = RunStore(str(logdir), processes=0, settle_seconds=0, index=index)
        try:
            store.scan_once()
            assert store.wait_idle(60)
            (f,) = store.runs()[0]["files"]
            table = operators.operator_table(store.get_profile("serve", "decode", None)).set_index("name")
            assert store.runs()[0]["captures"]["matched_replays"] == 1
            return f["from_index"], float(table.loc["aten::mm", "device_self_us"])
        finally:
            store.close()

    assert load() == (False, 40.0)
    assert load() == (True, 40.0)  # re-opened from the index, merged as it was
    capture = logdir / "serve" / "capture_traces" / "bs_32_rank0.json"
    _capture(capture, [("aten::linear", "gemm_kernel", [[32, 4096], [4096, 4096]]), ADD])
    os.utime(capture, (time.time() - 30,) * 2)
    store = RunStore(str(logdir), processes=0, settle_seconds=0, index=index)
    try:
        store.scan_once()
        assert store.wait_idle(60)
        assert [f["from_index"] for f in store.runs()[0]["files"]] == [False]  # the capture changed
        table = operators.operator_table(store.get_profile("serve", "decode", None)).set_index("name")
        assert table.loc["aten::linear", "device_self_us"] == 40.0 and "aten::mm" not in table.index
    finally:
        store.close()


def test_torch_tb_profiler_index_merges_the_captures_too(tmp_path: Path) -> None:
    import contextlib
    import io
    import os
    import time

    from torch_tb_profiler.cli.main import main
    from torch_tb_profiler.ingest import persist
    from torch_tb_profiler.ingest.loading import RunStore

    logdir = _run_with_captures(tmp_path / "logs")
    for path in logdir.rglob("*.json"):
        os.utime(path, (time.time() - 30,) * 2)
    with contextlib.redirect_stderr(io.StringIO()):
        assert (
            main(["index", str(logdir), "--index-dir", str(tmp_path / "index"), "--local-workers", "1"]) == 0
        )
    store = RunStore(
        str(logdir), processes=0, settle_seconds=0, index=persist.open_store(str(tmp_path / "index"))
    )
    try:
        store.scan_once()
        assert store.wait_idle(60)
        assert [f["from_index"] for f in store.runs()[0]["files"]] == [True]
        table = operators.operator_table(store.get_profile("serve", "decode", None)).set_index("name")
        assert table.loc["aten::mm", "replayed_device_us"] == 40.0
    finally:
        store.close()


def test_cuda_launches_named_only_by_their_graph_node(tmp_path: Path) -> None:
    """CUDA launch calls do not name their kernel: where the profiler writes graph node ids on the
    capture-time launches and on the replayed kernels, those match them."""
    b = TraceBuilder()
    b.runtime("cudaStreamBeginCapture", 0, 1)
    for i, (op, node) in enumerate([("aten::mm", 5), ("aten::add", 6)]):
        ext = b.op(op, 10 + 100 * i, 50)
        b.runtime("cudaLaunchKernel", 15 + 100 * i, 5, ext_id=ext, extra_args={"graph node id": node})
    b.runtime("cudaStreamEndCapture", 500, 1)
    cap = b.write(tmp_path / "cap.pt.trace.json")
    r = TraceBuilder()
    corr = r.runtime("cudaGraphLaunch", 100, 10)
    r.kernel("ampere_sgemm", 200, 30, corr, extra_args={"graph node id": 5})
    r.kernel("elementwise_add", 231, 4, corr, extra_args={"graph node id": 6})
    table = operators.operator_table(_load(r.write(tmp_path / "r.pt.trace.json"), (cap, None))).set_index(
        "name"
    )
    assert (table.loc["aten::mm", "device_self_us"], table.loc["aten::add", "device_self_us"]) == (30.0, 4.0)


ADDMM = ("aten::addmm", "gemm_kernel", [[32, 4096], [4096, 4096]])


def test_each_rank_takes_the_captures_of_its_own_rank(tmp_path: Path) -> None:
    """Two ranks' captures of the same kernels from different ops: alone they would be ambiguous; the
    trace's rank (distributedInfo, else its file name) picks its own; another rank's is never used."""
    from torch_tb_profiler.analysis.captures.match import trace_rank

    rank0 = _capture(tmp_path / "bs_32_rank0.json", [MM, ADD])
    rank1 = _capture(tmp_path / "bs_32_rank1.json", [ADDMM, ADD])
    kernels_ = [("gemm_kernel", 40), ("add_kernel", 5)]
    assert trace_rank({}, "x/decode_rank1.pt.trace.json") == 1 and trace_rank({}, "frank1.json") is None
    assert trace_rank({"distributedInfo": {"rank": 3}}, "decode_rank1.json") == 3
    # no rank known: both fit, with different ops for gemm_kernel -> ambiguous, not merged
    p = _load(_replay(tmp_path / "decode.pt.trace.json", kernels_), (rank0, 32), (rank1, 32))
    assert p.meta.graph_captures["unmatched_replays"] == 1
    # the file name says rank 1: its own capture, aten::addmm
    p = _load(_replay(tmp_path / "decode_rank1.pt.trace.json", kernels_), (rank0, 32), (rank1, 32))
    table = operators.operator_table(p).set_index("name")
    assert table.loc["aten::addmm", "device_self_us"] == 40.0 and "aten::mm" not in table.index
    used = [
        (c["file"], c["rank"], c["used"], c["matched_replays"]) for c in p.meta.graph_captures["captures"]
    ]
    assert used == [("bs_32_rank0.json", 0, False, 0), ("bs_32_rank1.json", 1, True, 1)]
    # only another rank's capture: not used, the replay stays on its graph replay row
    p = _load(_replay(tmp_path / "decode_rank1.pt.trace.json", kernels_), (rank0, 32))
    assert p.meta.graph_captures["captures"][0]["used"] is False
    assert replays.replay_stats(p)["unattributed_device_us"] == 45.0

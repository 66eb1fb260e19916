"""Decoding every format generation and the repairs real traces need."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.ingest.loading import load_profile
from torch_tb_profiler.trace.decode import TraceDecodeError, decode, read_bytes


def _small(style: str) -> TraceBuilder:
    b = TraceBuilder(style=style)  # type: ignore[arg-type]
    b.step(1, 0, 100)
    ext = b.op("aten::mm", 10, 50, input_dims=[[2, 3], [3, 4]], input_types=["float", "float"])
    b.launch("volta_sgemm_128x64_nn", 20, 5, 40, 30, ext_id=ext)
    b.memory(15, 512, addr=0x1000, total_allocated=512, total_reserved=2048, device_type=1, device_id=0)
    return b


@pytest.mark.parametrize("style", ["modern", "legacy"])
def test_each_generation_gives_the_same_model(tmp_path: Path, style: str) -> None:
    p = load_profile(str(_small(style).write(tmp_path / "w.pt.trace.json.gz")))
    assert p.steps[["number", "name"]].values.tolist() == [[1, "ProfilerStep#1"]]
    mm = p.ops[p.ops["name"] == "aten::mm"].iloc[0]
    assert mm["input_dims"] == "[[2,3],[3,4]]"
    assert mm["cat"] == "cpu_op"
    kernel = p.device.iloc[0]
    assert kernel["kind"] == "kernel" and kernel["ts"] - mm["ts"] == 30
    assert p.ops.loc[kernel["op"], "name"] == "aten::mm"  # linked through the runtime call
    assert p.runtimes.loc[kernel["runtime"], "name"] == "cudaLaunchKernel"
    assert p.memory[["bytes", "total_allocated", "device_type", "device_id"]].values.tolist() == [
        [512, 512, 1, 0]
    ]
    assert p.ops.loc[p.memory["op"].iloc[0], "name"] == "aten::mm"


def test_top_level_array_and_plain_json(tmp_path: Path) -> None:
    path = _small("modern").write(tmp_path / "w.pt.trace.json", array=True)
    p = load_profile(str(path))
    assert len(p.device) == 1
    assert "top-level JSON array (no metadata)" in p.meta.warnings


def test_relative_and_float_timestamps(tmp_path: Path) -> None:
    b = TraceBuilder(base_ts=5_000.125, extra_top={"baseTimeNanoseconds": 1_700_000_000_000_000_000})
    b.op("aten::add", 1.5, 2.25)
    p = load_profile(str(b.write(tmp_path / "w.pt.trace.json")))
    assert p.meta.base_time_ns == 1_700_000_000_000_000_000
    assert p.ops["ts"].iloc[0] == pytest.approx(5001.625)
    assert p.ops["dur"].iloc[0] == pytest.approx(2.25)


def test_string_and_int_pid_tid_are_one_thread(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.raw({"ph": "X", "cat": "cpu_op", "name": "outer", "pid": 7, "tid": 8, "ts": 0, "dur": 10, "args": {}})
    b.raw(
        {"ph": "X", "cat": "cpu_op", "name": "inner", "pid": "7", "tid": "8", "ts": 2, "dur": 3, "args": {}}
    )
    p = load_profile(str(b.write(tmp_path / "w.pt.trace.json")))
    inner = p.ops[p.ops["name"] == "inner"].iloc[0]
    assert p.ops.loc[inner["parent"], "name"] == "outer"


def test_bare_na_values_are_repaired() -> None:
    data = b'{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "ts": 1, "dur": 2, "pid": 1, "tid": 1, "args": {"Input Dims": N/A, "External id": 3}}]}'
    decoded = decode(data)
    assert len(decoded.events) == 1
    assert decoded.repairs == ['bare N/A values quoted as "N/A"']


def test_non_strict_json_is_read() -> None:
    data = b'{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "tab\there", "ts": 1, "dur": 2, "pid": 1, "tid": 1}]}'
    decoded = decode(data)
    assert decoded.events[0].name == "tab\there"
    assert decoded.repairs == ["non-strict JSON re-read leniently"]


def test_truncated_file_keeps_complete_events(tmp_path: Path) -> None:
    body = json.dumps(_small("modern").to_dict()).encode()
    cut = body[: body.index(b'"cat": "kernel"') + 5]  # cut inside the kernel event
    decoded = decode(cut)
    assert any(e.name == "aten::mm" for e in decoded.events)
    assert not any(e.cat == "kernel" for e in decoded.events)
    assert "truncated" in decoded.repairs[-1] and "kept the" in decoded.repairs[-1]


def test_truncated_gzip_is_salvaged(tmp_path: Path) -> None:
    body = gzip.compress(json.dumps(_small("modern").to_dict()).encode())
    path = tmp_path / "w.pt.trace.json.gz"
    path.write_bytes(body[: len(body) - 40])
    decoded = decode(read_bytes(str(path)))
    assert decoded.repairs[0] == "the gzip stream ended early; decompressed what was there"
    assert len(decoded.events) > 0


@pytest.mark.parametrize(
    "data", [b"", b"not json at all", b"{}{", b'{"traceEvents": 5}', b"\x1f\x8bnot-gzip"]
)
def test_garbage_is_a_clear_error(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "w.pt.trace.json"
    path.write_bytes(data)
    with pytest.raises(TraceDecodeError):
        load_profile(str(path))


def test_unknown_categories_are_kept_and_counted(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.raw({"ph": "X", "cat": "brand_new_thing", "name": "x", "pid": 1, "tid": 1, "ts": 0, "dur": 1})
    b.raw({"ph": "X", "cat": "overhead", "name": "Instrumentation", "pid": 1, "tid": 1, "ts": 0, "dur": 1})
    p = load_profile(str(b.write(tmp_path / "w.pt.trace.json")))
    assert p.meta.unknown_categories == {"brand_new_thing": 1}
    assert sorted(p.others["cat"]) == ["brand_new_thing", "overhead"]


def test_wrongly_typed_args_do_not_lose_the_event(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.raw(
        {
            "ph": "X",
            "cat": "kernel",
            "name": "k",
            "pid": 0,
            "tid": 7,
            "ts": 0,
            "dur": 1,
            "args": {"device": "N/A", "correlation": "12", "grid": "weird"},
        }
    )
    p = load_profile(str(b.write(tmp_path / "w.pt.trace.json")))
    k = p.device.iloc[0]
    assert k["corr"] == 12 and k["device"] == 0  # device from the pid


@pytest.mark.parametrize(
    "runtime_cat",
    [
        "cuda_runtime",
        "cuda_driver",
        "Runtime",
        "xpu_runtime",
        "xpu_driver",
        "mtia_runtime",
        "privateuse1_runtime",
        "privateuse1_driver",
    ],
)
def test_every_accelerator_runtime_links_its_kernels(tmp_path: Path, runtime_cat: str) -> None:
    b = TraceBuilder()
    ext = b.op("aten::add", 0, 100)
    b.raw(
        {
            "ph": "X",
            "cat": runtime_cat,
            "name": "launch",
            "pid": 100,
            "tid": 100,
            "ts": b.base_ts + 10,
            "dur": 5,
            "args": {"External id": ext, "correlation": 77},
        }
    )
    b.raw(
        {
            "ph": "X",
            "cat": "kernel",
            "name": "k",
            "pid": 0,
            "tid": 7,
            "ts": b.base_ts + 50,
            "dur": 5,
            "args": {"device": 0, "correlation": 77},
        }
    )
    p = load_profile(str(b.write(tmp_path / "w.pt.trace.json")))
    assert p.runtimes["cat"].tolist() == [runtime_cat.lower()]
    assert p.ops.loc[p.device["op"].iloc[0], "name"] == "aten::add"

"""CUPTI range-profiler traces (``cuda_profiler_range``): counters on a device, not kernel time."""

from __future__ import annotations

from pathlib import Path

from tests.fixtures.trace_builder import V100, TraceBuilder
from torch_tb_profiler.analysis.core.accelerator import accelerator
from torch_tb_profiler.analysis.device.gpu_metrics import gpu_summary
from torch_tb_profiler.analysis.overview.page import overview
from torch_tb_profiler.analysis.timeline.index import index as timeline_index
from torch_tb_profiler.ingest.parse import load_profile

KERNELS = ("void gemm_kernel<128>(float*)", "void add_kernel(float*)", "void relu_kernel(float*)")


def range_trace(path: Path) -> Path:
    """What Kineto writes with only the range profiler on: host ops and their launch calls, no kernel
    events, and one range per kernel on device 0 (pid 0, tid 0), the 300 µs span cut in equal slices."""
    b = TraceBuilder(device_properties=[V100])
    b.step(1, 0, 300)
    for i, name in enumerate(KERNELS):
        ext = b.op("aten::op", 10 + 90 * i, 50)
        b.runtime("cudaLaunchKernel", 20 + 90 * i, 5, ext_id=ext)
        b.raw(
            {
                "ph": "X",
                "cat": "cuda_profiler_range",
                "name": name,
                "pid": 0,
                "tid": 0,
                "ts": b.base_ts + 100 * i,
                "dur": 100,
                "args": {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 1024 * (i + 1)},
            }
        )
    return b.write(path)


def test_ranges_are_counters_on_their_gpu(tmp_path: Path) -> None:
    p = load_profile(str(range_trace(tmp_path / "ranges.pt.trace.json")))
    assert len(p.device) == 0 and accelerator(p).kind == "GPU"
    o = overview(p)
    assert o["range_profiler"]["ranges"] == 3 and o["range_profiler"]["devices"] == [0]
    assert "GPU 0" in o["range_profiler"]["note"] and "not available" in o["range_profiler"]["note"]
    # kernel, memcpy and memset time are unknown here, not 0 µs
    assert not {"kernel", "memcpy", "memset"} & set(o["categories"])
    assert gpu_summary(p) == []


def test_timeline_draws_the_ranges_on_the_device(tmp_path: Path) -> None:
    p = load_profile(str(range_trace(tmp_path / "ranges.pt.trace.json")))
    idx = timeline_index(p)
    groups = {g["id"]: g for g in idx.groups}
    assert groups["d:0"]["name"] == "GPU 0 (Tesla V100-SXM2-16GB)" and groups["d:0"]["kind"] == "device"
    assert "p:0" not in groups  # before: a host "Process 0" with a "Thread 0" of kernel names
    (track,) = [t for t in idx.tracks if t.kind == "ranges"]
    assert track.group == "d:0" and track.events == 3 and track.rows == 1
    assert track.name.startswith("Range profiler")


def test_a_normal_trace_has_no_range_note(tmp_path: Path) -> None:
    b = TraceBuilder(device_properties=[V100])
    b.step(1, 0, 100)
    b.launch("k", 10, 2, 20, 30, ext_id=b.op("aten::mm", 5, 10))
    o = overview(load_profile(str(b.write(tmp_path / "n.pt.trace.json"))))
    assert o["range_profiler"] is None and "kernel" in o["categories"]

"""A small logdir tree of synthetic traces: runs, workers, spans, gzip and non-trace files."""

from __future__ import annotations

import gzip
import json


def trace_bytes(worker: str, span: int, steps: int = 2) -> bytes:
    """A small PyTorch 2.x-style trace: ProfilerStep ranges each holding one op with a runtime and kernel."""
    events: list[dict] = []
    t = 1_000.0 + span * 10_000.0
    for step in range(steps):
        corr = 100 * span + step
        events += [
            {"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}", "pid": 1, "tid": 1,
             "ts": t, "dur": 400.0, "args": {"External id": corr * 10}},
            {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": t + 10, "dur": 100.0,
             "args": {"External id": corr * 10 + 1, "Input Dims": [[4, 4], [4, 4]]}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": t + 20,
             "dur": 5.0, "args": {"External id": corr * 10 + 1, "correlation": corr}},
            {"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7, "ts": t + 30, "dur": 50.0,
             "args": {"External id": corr * 10 + 1, "correlation": corr, "device": 0, "stream": 7}},
        ]  # fmt: skip
        t += 500.0
    doc = {
        "schemaVersion": 1,
        "deviceProperties": [{"id": 0, "name": "Emulated GPU", "totalGlobalMem": 16 * 1024**3}],
        "traceName": f"{worker}.{span}",
        "displayTimeUnit": "ms",
        "traceEvents": events,
    }
    return json.dumps(doc).encode()


def gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def logdir_tree() -> dict[str, bytes]:
    """relative path -> bytes. Two runs (one nested), two workers, spans, .json and .json.gz, a stray file."""
    return {
        "run_a/worker0.1700000000001.pt.trace.json": trace_bytes("worker0", 1),
        "run_a/worker0.1700000000002.pt.trace.json.gz": gz(trace_bytes("worker0", 2)),
        "run_a/worker1.1700000000001.pt.trace.json.gz": gz(trace_bytes("worker1", 1)),
        "group/run_b/host_123.pt.trace.json": trace_bytes("host_123", 0, steps=3),
        "group/notes.txt": b"not a trace\n",
    }

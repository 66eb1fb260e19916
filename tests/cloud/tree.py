"""A small logdir tree of synthetic traces (the project's TraceBuilder): runs, workers, spans, gzip."""

from __future__ import annotations

import gzip
import json

from tests.fixtures.trace_builder import V100, TraceBuilder


def trace_bytes(worker: str, span: int, steps: int = 2) -> bytes:
    """A PyTorch 2.x trace: `steps` ProfilerSteps, each with one aten::mm launching one kernel."""
    b = TraceBuilder(device_properties=[V100], extra_top={"traceName": f"{worker}.{span}"})
    t = 0.0
    for step in range(steps):
        b.step(step + 1, t, 400)
        ext = b.op("aten::mm", t + 10, 100 + 10 * span, input_dims=[[4, 4], [4, 4]])
        b.launch("gemm_kernel", t + 20, 5, t + 30, 50 + span, ext_id=ext, device=0, stream=7)
        t += 500
    return json.dumps(b.to_dict()).encode()


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


# (run, worker, span) of each trace in logdir_tree, as discovery must name them.
TREE_KEYS = {
    ("run_a", "worker0", "1"): "run_a/worker0.1700000000001.pt.trace.json",
    ("run_a", "worker0", "2"): "run_a/worker0.1700000000002.pt.trace.json.gz",
    ("run_a", "worker1", "1"): "run_a/worker1.1700000000001.pt.trace.json.gz",
    ("group/run_b", "host_123", "1"): "group/run_b/host_123.pt.trace.json",
}

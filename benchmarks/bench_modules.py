"""Module view benchmark: building the module tree and answering the routes' questions.

The shipped and reference traces hold at most a few hundred module ranges (the 322 MB kineto-based
trace has no python events at all), so this builds a synthetic trace of ``--steps`` steps, each with
one root module, ``--blocks`` blocks of ``--layers`` Linear modules (an op and a kernel launch in
each, and, unless ``--no-backward``, the op's backward function on an autograd thread linked by a
fwdbwd flow, so that every module gets a ``.backward`` node), writes it with
tests/fixtures/trace_builder.py and loads it (not timed). Timed, median of 3 on a fresh cache each: the
tree with the figures of all steps (``figures(profile, "modules", None)``, which builds the tree and
its backward nodes), one step's figures from the built tree, the operators inside the root and inside
the root's backward node.

Usage:
    python benchmarks/bench_modules.py [--steps 20] [--blocks 100] [--layers 10] [--no-backward]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fixtures.builders_overview import load
from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.analysis.modules import tree as modules


def build(steps: int, blocks: int, layers: int, backward: bool = True) -> TraceBuilder:
    b = TraceBuilder()
    ids = iter(range(1, 1 << 40))
    flows = iter(range(1, 1 << 40))
    t = 0.0
    span = blocks * layers * 10
    for s in range(steps):
        b.step(s, t, span + 100)
        b.python_function("nn.Module: Net_0", t + 1, span + 50, py_id=next(ids), parent_id=None, module_id=0)
        x = t + 2
        for k in range(blocks):
            b.python_function(
                f"nn.Module: Block_{k}", x, layers * 10, py_id=next(ids), parent_id=None, module_id=k
            )
            for j in range(layers):
                at = x + j * 10
                b.python_function(
                    f"nn.Module: Linear_{k * layers + j}", at, 8, py_id=next(ids), parent_id=None, module_id=j
                )
                b.op("aten::linear", at + 1, 6)
                b.launch("gemm", at + 2, 1, at + 3, 2)
                if backward:  # its backward function on the autograd thread (time overlaps: another thread)
                    b.op("AddmmBackward0", at + 1, 6, tid=200)
                    b.launch("gemm_bwd", at + 2, 1, at + 5, 2, tid=200)
                    b.fwdbwd(next(flows), at + 1, at + 1, bwd_tid=200)
            x += layers * 10
        t += span + 200
    return b


def timed(fn) -> float:
    runs = []
    for _ in range(3):
        start = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--blocks", type=int, default=100)
    ap.add_argument("--layers", type=int, default=10)
    ap.add_argument("--no-backward", action="store_true", help="no backward functions (no .backward nodes)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        profile = load(build(a.steps, a.blocks, a.layers, not a.no_backward), Path(tmp))

    def tree() -> None:
        profile.cache.clear()
        modules.figures(profile, "modules", None)

    t_tree = timed(tree)
    instances = len(modules.tree(profile).instances)
    t_step = timed(lambda: modules.figures(profile, "modules", 1))
    t_ops = timed(lambda: modules.operators_inside(profile, "modules", 0, None))
    nodes = modules.tree(profile).nodes
    back = nodes.index[nodes["kind"] == "backward"]
    t_bops = (
        timed(lambda: modules.operators_inside(profile, "modules", int(back[0]), None)) if len(back) else 0.0
    )
    print(
        f"module instances: {instances}, nodes: {len(nodes)} ({len(back)} backward), events: {profile.meta.event_count}"
    )
    print(
        f"tree + figures of all steps: {t_tree:.3f} s; one step: {t_step:.3f} s; operators inside the root: {t_ops:.3f} s;"
        f" inside its backward node: {t_bops:.3f} s"
    )


if __name__ == "__main__":
    main()

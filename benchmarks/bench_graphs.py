"""Graph replays: what the capture merge costs at load, and a graph-heavy trace against the same kernels
launched one by one (docs/performance.md, "Graph replays").

Made here (no GPU needed), in a temporary folder:
- ``eager``: R steps, each launching K kernels one by one (one op and one launch call per kernel);
- ``replay``: the same R x K kernels run by R graph launches (one per step);
- ``capture``: the capture trace of that graph (one stream capture, the K launches under their ops).

Printed: the median load time of each (``--runs`` runs, in fresh processes), the merge's cost
(replay + capture merged, against parsing both apart) and replay / eager. Floors (issue 22): the merge
adds at most 10 %; the graph-heavy trace loads within 1.2x of the eager one.

Usage: python benchmarks/bench_graphs.py [--replays 200] [--kernels 500] [--runs 3] [--out results.json]
(the issue's size is --kernels 5000: 0.47 GB of JSON for the eager trace; minutes per run here).
``--pair REPLAY CAPTURE`` measures a real pair instead (replay, capture and merged loads interleaved, one
fresh process each, ``--runs`` rounds), e.g. the shared SGLang and vLLM pairs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import fmt, machine, ratio, summary

OPS = ("aten::mm", "aten::add", "aiter::rmsnorm", "sgl_kernel::silu_and_mul", "attention")
BASE = 1_700_000_000_000_000.0


def _event(cat: str, name: str, ts: float, dur: float, args: dict, tid: int = 1, pid: int = 1) -> str:
    return json.dumps(
        {
            "ph": "X",
            "cat": cat,
            "name": name,
            "pid": pid,
            "tid": tid,
            "ts": BASE + ts,
            "dur": dur,
            "args": args,
        },
        separators=(",", ":"),
    )


def _write(path: Path, events) -> int:
    with path.open("w") as f:
        f.write('{"schemaVersion":1,"deviceProperties":[],"traceEvents":[')
        first = True
        for e in events:
            if not first:
                f.write(",")
            f.write(e)
            first = False
        f.write("]}")
    return path.stat().st_size


def _kernel(name: str, ts: float, corr: int) -> str:
    return _event("kernel", name, ts, 2.0, {"device": 0, "stream": 7, "correlation": corr}, tid=7, pid=0)


def eager(replays: int, kernels: int):
    corr = 0
    for r in range(replays):
        t0 = r * (kernels * 10.0 + 100)
        yield _event("user_annotation", f"ProfilerStep#{r}", t0, kernels * 10.0 + 50, {"External id": 0})
        for k in range(kernels):
            corr += 1
            t = t0 + 10 + k * 10.0
            name = OPS[k % len(OPS)]
            yield _event("cpu_op", name, t, 8.0, {"External id": corr, "Input Dims": [[32, 4096]]})
            yield _event(
                "cuda_runtime", "hipLaunchKernel", t + 1, 5.0, {"External id": corr, "correlation": corr}
            )
            yield _kernel(f"{name}_kernel", t + 3, corr)


def replay(replays: int, kernels: int):
    for r in range(replays):
        t0 = r * (kernels * 10.0 + 100)
        yield _event("user_annotation", f"ProfilerStep#{r}", t0, kernels * 10.0 + 50, {"External id": 0})
        corr = 10_000_000 + r
        yield _event("cuda_runtime", "hipGraphLaunch", t0 + 10, 20.0, {"correlation": corr})
        for k in range(kernels):
            yield _kernel(f"{OPS[k % len(OPS)]}_kernel", t0 + 40 + k * 3.0, corr)


def capture(kernels: int):
    yield _event("cuda_runtime", "hipStreamBeginCapture", 0, 1.0, {"correlation": 1})
    for k in range(kernels):
        name = OPS[k % len(OPS)]
        t = 10 + k * 10.0
        yield _event("cpu_op", name, t, 8.0, {"External id": k + 1, "Input Dims": [[32, 4096]]})
        args = {"External id": k + 1, "correlation": 100 + k, "kernel": f"{name}_kernel"}
        yield _event("cuda_runtime", "hipLaunchKernel", t + 1, 5.0, args)
    yield _event("cuda_runtime", "hipStreamEndCapture", kernels * 10.0 + 20, 1.0, {"correlation": 2})


_LOAD = """
import sys, time
from torch_tb_profiler.ingest.parse import CaptureSource, load_profile
path, captures = sys.argv[1], sys.argv[2:]
t = time.perf_counter()
p = load_profile(path, captures=[CaptureSource(c, c) for c in captures])
print(time.perf_counter() - t)
"""


def load_seconds(path: Path, *captures: Path) -> float:
    out = subprocess.run(
        [sys.executable, "-c", _LOAD, str(path), *map(str, captures)],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replays", type=int, default=200)
    ap.add_argument("--kernels", type=int, default=500)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--pair", nargs=2, type=Path, metavar=("REPLAY", "CAPTURE"))
    args = ap.parse_args()
    if args.pair:
        pair(args.pair[0], args.pair[1], args.runs, args.out)
        return
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        sizes = {
            "eager": _write(d / "eager.pt.trace.json", eager(args.replays, args.kernels)),
            "replay": _write(d / "replay.pt.trace.json", replay(args.replays, args.kernels)),
            "capture": _write(d / "capture.pt.trace.json", capture(args.kernels)),
        }
        times: dict[str, list[float]] = {k: [] for k in ("eager", "replay", "capture", "merged")}
        for _ in range(args.runs):
            times["eager"].append(load_seconds(d / "eager.pt.trace.json"))
            times["replay"].append(load_seconds(d / "replay.pt.trace.json"))
            times["capture"].append(load_seconds(d / "capture.pt.trace.json"))
            times["merged"].append(load_seconds(d / "replay.pt.trace.json", d / "capture.pt.trace.json"))
    s = {k: summary(v) for k, v in times.items()}
    apart = summary([a + b for a, b in zip(times["replay"], times["capture"], strict=True)])
    print(
        f"{args.replays} replays x {args.kernels} kernels; sizes (MB): "
        + ", ".join(f"{k} {v / 1e6:.1f}" for k, v in sizes.items())
    )
    for k in ("eager", "replay", "capture", "merged"):
        print(f"  load {k:8s} {fmt(s[k], digits=3, unit=' s')}")
    print(f"  merged / (replay + capture apart) = {ratio(s['merged'], apart)}   (floor: <= 1.10)")
    print(f"  replay / eager                    = {ratio(s['replay'], s['eager'])}   (floor: <= 1.20)")
    print(f"  merged / eager                    = {ratio(s['merged'], s['eager'])}")
    if args.out:
        args.out.write_text(
            json.dumps(
                {
                    "machine": machine(),
                    "args": vars(args) | {"out": str(args.out)},
                    "sizes": sizes,
                    "load_s": s,
                },
                indent=1,
            )
        )


def pair(replay_path: Path, capture_path: Path, runs: int, out: Path | None) -> None:
    times: dict[str, list[float]] = {k: [] for k in ("replay", "capture", "merged")}
    for _ in range(runs):
        times["replay"].append(load_seconds(replay_path))
        times["capture"].append(load_seconds(capture_path))
        times["merged"].append(load_seconds(replay_path, capture_path))
    rounds = [m / (r + c) for r, c, m in zip(times["replay"], times["capture"], times["merged"], strict=True)]
    s = {k: summary(v) for k, v in times.items()}
    apart = summary([a + b for a, b in zip(times["replay"], times["capture"], strict=True)])
    print(f"{replay_path.name} + {capture_path.name}, {runs} rounds")
    for k in ("replay", "capture", "merged"):
        print(f"  load {k:8s} {fmt(s[k], digits=3, unit=' s')}")
    print(f"  merged / (replay + capture apart) = {ratio(s['merged'], apart)}   (floor: <= 1.10)")
    print(
        f"  per-round ratios: median {sorted(rounds)[len(rounds) // 2]:.2f}, {min(rounds):.2f}-{max(rounds):.2f}"
    )
    if out:
        data = {"machine": machine(), "pair": [str(replay_path), str(capture_path)], "load_s": s}
        out.write_text(json.dumps(data | {"round_ratios": rounds}, indent=1))


if __name__ == "__main__":
    main()

"""Load benchmark: how long one trace takes to become a ready ``Profile``, next to the parse floor.

Steps, each run in a fresh Python process so that its peak RSS is that process's alone:

- ``gunzip``: read the file and decompress it (zlib); the bytes stay in memory.
- ``floor``: gunzip + simdjson structural parse (pysimdjson ``Parser.parse``: builds simdjson's tape,
  lazy, no Python object per event). No parser written in Python can beat this.
- ``typed``: gunzip + msgspec decode into typed Structs holding only ph/cat/name/ts/dur/pid/tid with
  ``args`` kept raw, gc off: what a well-chosen decode costs (performance.md's reference design).
- ``ours``: ``torch_tb_profiler.ingest.loading.load_profile(path)`` until it returns a Profile (imports
  excluded; they are timed apart as ``import_s``): one process, chunk by chunk.
- ``ours2``: ``parse_split.load_split(path, helper.submit)``: the same file read by this process and one
  helper process started (and its imports done) before the clock starts, as the server's pool does.
  Its "tree peak" is the two processes together.

Time is wall clock inside the child around the step; peak RSS is the child's ``ru_maxrss`` (its own
and that of any process it waited for, whichever is larger) and the summed RSS of its process tree
sampled every 50 ms. Rounds cycle through the steps so that machine noise spreads over all of them.

Usage:
    python benchmarks/bench_load.py TRACE [TRACE ...] [--runs 3] [--steps gunzip,floor,typed,ours,ours2]
                                    [--json-out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REPO, fmt, machine, print_table, ratio, summary, write_json
from proctree import TreeSampler

STEPS = ("gunzip", "floor", "typed", "ours", "ours2")
CHILD_TIMEOUT_S = 900
INFO_KEYS = ("_rows", "bytes", "events")
CHUNK = 1 << 24


# ---------------------------------------------------------------- child side (one step, one process)


def read_bytes(path: str) -> bytes | bytearray:
    """The file's JSON text. A .gz file is inflated into one buffer sized from the gzip trailer
    (ISIZE), chunk by chunk, so the peak is the text plus one chunk, not twice the text as with
    ``gzip.decompress`` (which joins its output blocks at the end)."""
    with open(path, "rb") as f:
        raw = f.read()
    if not path.endswith(".gz"):
        return raw
    out = bytearray(int.from_bytes(raw[-4:], "little"))  # ISIZE: size mod 2**32 (a hint only)
    pos = 0
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    data = raw
    while True:
        chunk = d.decompress(data, CHUNK)
        out[pos : pos + len(chunk)] = chunk  # grows the buffer if the hint was short
        pos += len(chunk)
        if d.eof:
            data = d.unused_data  # another gzip member follows, or trailing bytes
            if not data.strip(b"\0"):
                break
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            continue
        data = d.unconsumed_tail
        if not data and not chunk:
            raise ValueError(f"{path}: truncated gzip stream")
    del out[pos:]
    return out


def step_gunzip(path: str) -> dict[str, Any]:
    data = read_bytes(path)
    return {"bytes": len(data)}


def step_floor(path: str) -> dict[str, Any]:
    import simdjson

    data = read_bytes(path)
    doc = simdjson.Parser().parse(data)
    events = doc["traceEvents"] if isinstance(doc, simdjson.Object) else doc
    return {"bytes": len(data), "events": len(events)}


def step_typed(path: str) -> dict[str, Any]:
    from typed_floor import decode

    data = read_bytes(path)
    return {"bytes": len(data), "events": len(decode(data))}


def step_ours(path: str) -> dict[str, Any]:
    # imports were done (and timed) before the clock started; see child()
    from torch_tb_profiler.ingest.loading import load_profile

    return _rows(load_profile(path))


def _rows(profile: Any) -> dict[str, Any]:
    return {f"{t}_rows": len(getattr(profile, t)) for t in ("ops", "runtimes", "device", "memory")}


def step_ours2(path: str, helper: Any) -> dict[str, Any]:
    from torch_tb_profiler.ingest.parse_split import load_split

    return _rows(load_split(path, helper.submit))


def child(step: str, path: str) -> None:
    t_imp = time.perf_counter()
    helper = None
    if step == "ours":
        import torch_tb_profiler.ingest.loading
    elif step == "ours2":  # a started helper process, as the server's pool has one
        import concurrent.futures as cf
        import multiprocessing

        import torch_tb_profiler.ingest.parse_split  # noqa: F401
        from torch_tb_profiler.ingest.parse import warm_up

        helper = cf.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
        helper.submit(warm_up).result()
    elif step == "floor":
        import simdjson  # noqa: F401
    elif step == "typed":
        import typed_floor  # noqa: F401
    import_s = time.perf_counter() - t_imp
    fn = {"gunzip": step_gunzip, "floor": step_floor, "typed": step_typed, "ours": step_ours}.get(step)
    t0 = time.perf_counter()
    info = fn(path) if fn is not None else step_ours2(path, helper)
    seconds = time.perf_counter() - t0
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if helper is not None:
        helper.shutdown()  # its peak is in RUSAGE_CHILDREN only once it has been waited for
        kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    out = {"step": step, "seconds": seconds, "import_s": import_s, "maxrss_kb": max(own, kids), **info}
    sys.stdout.write("BENCH " + json.dumps(out) + "\n")
    sys.stdout.flush()
    os._exit(0)  # skip freeing a GB of objects: not part of what we measure


# ---------------------------------------------------------------- parent side


def run_step(step: str, path: str, python: str = sys.executable) -> dict[str, Any]:
    """One step in a fresh process; returns its measurement, or {'error': ...}."""
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cmd = [python, str(Path(__file__).resolve()), "--child", step, path]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    with TreeSampler(proc.pid) as sampler:
        try:
            out, err = proc.communicate(timeout=CHILD_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            return {"step": step, "error": f"timeout after {CHILD_TIMEOUT_S} s"}
    for line in out.splitlines():
        if line.startswith("BENCH "):
            res = json.loads(line[6:])
            res["tree_peak_rss"] = sampler.peak
            return res
    return {"step": step, "error": (err.strip().splitlines() or ["no output"])[-1], "rc": proc.returncode}


def bench_trace(path: str, steps: list[str], runs: int, verbose: bool = True) -> dict[str, Any]:
    raw: dict[str, list[dict[str, Any]]] = {s: [] for s in steps}
    for r in range(runs):
        order = steps if r % 2 == 0 else list(reversed(steps))
        for s in order:
            res = run_step(s, path)
            raw[s].append(res)
            if verbose:
                if "error" in res:
                    print(f"  run {r + 1} {s}: ERROR {res['error']}", file=sys.stderr)
                else:
                    mb = res["maxrss_kb"] / 1024
                    print(f"  run {r + 1} {s}: {res['seconds']:.2f} s, {mb:.0f} MB", file=sys.stderr)
    result: dict[str, Any] = {"trace": path, "steps": {}}
    for s in steps:
        ok = [x for x in raw[s] if "error" not in x]
        result["steps"][s] = {
            "seconds": summary([x["seconds"] for x in ok]),
            "import_s": summary([x["import_s"] for x in ok]),
            "peak_rss_mb": summary([x["maxrss_kb"] / 1024 for x in ok]),
            "tree_peak_rss_mb": summary([x["tree_peak_rss"] / 2**20 for x in ok]),
            "errors": [x["error"] for x in raw[s] if "error" in x],
            "info": {
                k: v for k, v in (ok[0] if ok else {}).items() if k.endswith(("_rows", "bytes", "events"))
            },
        }
    return result


def print_results(results: list[dict[str, Any]]) -> None:
    rows = []
    for res in results:
        st = res["steps"]
        floor = st.get("floor", {}).get("seconds", {})
        size = max((m["info"].get("bytes", 0) for m in st.values()), default=0)
        for s, m in st.items():
            rows.append(
                [
                    Path(res["trace"]).name if s == next(iter(st)) else "",
                    f"{size / 1e6:.0f} MB" if size else "",
                    s,
                    fmt(m["seconds"], unit=" s"),
                    fmt(m["peak_rss_mb"], digits=0, unit=" MB"),
                    fmt(m["tree_peak_rss_mb"], digits=0, unit=" MB"),
                    ratio(m["seconds"], floor),
                    "; ".join(m["errors"])[:80],
                ]
            )
    print_table(["trace", "JSON", "step", "time", "peak RSS", "tree peak", "x floor", "errors"], rows)


def main(argv: list[str] | None = None) -> int:
    if argv is None and len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--steps", default=",".join(STEPS), help=f"comma-separated subset of {','.join(STEPS)}")
    ap.add_argument("--json-out", type=Path)
    a = ap.parse_args(argv)
    steps = [s for s in a.steps.split(",") if s]
    bad = [s for s in steps if s not in STEPS]
    if bad:
        ap.error(f"unknown steps {bad}")
    results = []
    for t in a.traces:
        print(f"{t}:", file=sys.stderr)
        results.append(bench_trace(t, steps, a.runs))
    print_results(results)
    if a.json_out:
        write_json(a.json_out, {"machine": machine(), "runs": a.runs, "results": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())

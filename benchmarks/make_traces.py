"""Build big benchmark traces from a real one by repeating it in time.

A scaled trace holds the source's top-level keys and metadata events (``ph: M``) once, then COPIES
copies of every other event, copy ``c`` shifted by ``c * span`` where ``span`` is the source's time
extent (first ``ts`` to last ``ts + dur``) times 1.01 plus 1 µs. Copies after the first get fresh ids
so that links stay within a copy: every id-like arg (External id, correlation, Python ids, ...) and
every flow ``id`` is offset by ``c * (largest id in the source + 1)``, and ``ProfilerStep#N`` becomes
``ProfilerStep#(N + c * number of steps)``. This is the definition used for the figures in
docs/performance.md (the same one as ``../shared/tools/scale_trace.py``, written anew here so the
repository does not depend on that folder).

Also builds many-ranks jobs (RANK_PRESETS: ranks64, ranks1024): one run directory holding N worker
files, rank r a copy of the 2.x trace ``RANK_SAMPLES[r % 2]`` (about 1.7 MB of JSON, 130 kB gzipped) with
``distributedInfo.rank`` = r and ``world_size`` = N rewritten (fresh rank ids for every file).

And big-ranks jobs (BIG_RANK_PRESETS: ranks256x100mb): N copies of a preset trace (the 100 MB one, built
first if missing) with ``distributedInfo`` {rank r, world_size N} added. Each file is two gzip members,
a small one opening the object with that key and the source's compressed text after its ``{`` (the
same bytes for every rank, compressed once): readers inflate every member, so this is one trace of
about 96 MB of JSON, 3.2 MB on disk, written in a fraction of a second.

Usage:
    python benchmarks/make_traces.py                      # 100 MB, 322 MB, 1 GB traces and 64 ranks
    python benchmarks/make_traces.py --only ranks1024     # 1024 ranks (~2 min, 133 MB gzipped)
    python benchmarks/make_traces.py --only ranks256x100mb  # 256 ranks x 96 MB (25 GB of JSON, 0.8 GB)
    python benchmarks/make_traces.py --only 322mb --out /tmp/bt
    python benchmarks/make_traces.py --scale IN OUT COPIES  # one file, any copies

Outputs go to the git-ignored folder .bench/traces of the repository (or $BENCH_TRACES); each trace is a
logdir ``<out>/<name>/`` holding one run ``<name>/``; existing outputs are kept unless --force.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SHARED_TRACES = REPO.parent / "shared" / "traces"
DEFAULT_OUT = Path(os.environ.get("BENCH_TRACES", REPO / ".bench" / "traces"))
KINETO_SAMPLE = SHARED_TRACES / "kineto_samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
RANK_SAMPLES = [
    SHARED_TRACES / "hta_samples/trace_filter/sampled_rank-0.pt.trace.json.gz",
    SHARED_TRACES / "hta_samples/trace_filter/sampled_rank-1.pt.trace.json.gz",
]

# name -> copies of the kineto sample (35 MB pretty-printed, ~32 MB per copy once re-encoded)
PRESETS: dict[str, int] = {"100mb": 3, "322mb": 10, "1gb": 32}
# name -> number of ranks of the many-ranks job (not built by default: ranks1024 takes minutes)
RANK_PRESETS: dict[str, int] = {"ranks64": 64, "ranks1024": 1024}
# name -> (ranks, preset each rank copies): not built by default
BIG_RANK_PRESETS: dict[str, tuple[int, str]] = {"ranks256x100mb": (256, "100mb")}
DEFAULT_BUILD = [*PRESETS, "ranks64"]

ID_ARGS = (
    "External id",
    "external id",
    "correlation",
    "Python id",
    "Python parent id",
    "Record function id",
    "Ev Idx",
    "Sequence number",
)
STEP_RE = re.compile(r"^ProfilerStep#(\d+)$")
GZIP_LEVEL = 6
BATCH = 20_000  # events encoded per write


def read_trace(path: Path) -> dict[str, Any]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = json.load(f)
    if isinstance(data, list):  # a bare event array is a valid trace too
        data = {"traceEvents": data}
    return data


def open_out(path: Path, gz: bool):
    if gz:
        return gzip.open(path, "wb", compresslevel=GZIP_LEVEL)
    return open(path, "wb")


def _num(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


class Scaler:
    """Precomputes span, id stride and step count of a source trace; yields shifted copies."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.meta = [e for e in events if e.get("ph") == "M"]
        self.body = [e for e in events if e.get("ph") != "M"]
        starts, ends = [], []
        max_id = 0
        steps = []
        for e in self.body:
            ts = _num(e.get("ts"))
            if ts is not None:
                starts.append(ts)
                ends.append(ts + (_num(e.get("dur")) or 0.0))
            if isinstance(e.get("id"), int):
                max_id = max(max_id, e["id"])
            args = e.get("args")
            if isinstance(args, dict):
                for k in ID_ARGS:
                    v = args.get(k)
                    if isinstance(v, int) and not isinstance(v, bool):
                        max_id = max(max_id, v)
            m = STEP_RE.match(str(e.get("name", "")))
            if m:
                steps.append(int(m.group(1)))
        self.span = (max(ends) - min(starts)) * 1.01 + 1 if starts else 0.0
        self.id_stride = max_id + 1
        self.n_steps = max(steps) - min(steps) + 1 if steps else 0
        self.float_ts = any(isinstance(e.get("ts"), float) for e in self.body[:1000])

    def copy_event(self, e: dict[str, Any], c: int) -> dict[str, Any]:
        if c == 0:
            return e
        e2 = dict(e)
        ts = _num(e2.get("ts"))
        if ts is not None:
            v = ts + self.span * c
            e2["ts"] = round(v, 3) if self.float_ts else int(v)
        if isinstance(e2.get("id"), int):
            e2["id"] += self.id_stride * c
        args = e2.get("args")
        if isinstance(args, dict) and args:
            args = dict(args)
            for k in ID_ARGS:
                v = args.get(k)
                if isinstance(v, int) and not isinstance(v, bool) and v > 0:
                    args[k] = v + self.id_stride * c
            e2["args"] = args
        m = STEP_RE.match(str(e2.get("name", "")))
        if m and self.n_steps:
            e2["name"] = f"ProfilerStep#{int(m.group(1)) + self.n_steps * c}"
        return e2


def write_trace(path: Path, head: dict[str, Any], events_iter) -> int:
    """Write ``head`` + events to ``path`` atomically (tmp file then rename); returns event count."""
    tmp = path.with_name(path.name + ".part")  # not a trace name, so a scan never picks it up
    n = 0
    with open_out(tmp, path.name.endswith(".gz")) as out:
        out.write((json.dumps(head)[:-1] + (", " if head else "") + '"traceEvents": [\n').encode())
        batch: list[str] = []
        for e in events_iter:
            batch.append(json.dumps(e))
            n += 1
            if len(batch) >= BATCH:
                out.write((",\n" if n > len(batch) else "").encode() + ",\n".join(batch).encode())
                batch = []
        if batch:
            out.write((",\n" if n > len(batch) else "").encode() + ",\n".join(batch).encode())
        out.write(b"\n]}\n")
    tmp.replace(path)
    return n


def scale(src: Path, dst: Path, copies: int) -> dict[str, Any]:
    trace = read_trace(src)
    scaler = Scaler(trace["traceEvents"])
    head = {k: v for k, v in trace.items() if k != "traceEvents"}

    def events():
        yield from scaler.meta
        for c in range(copies):
            for e in scaler.body:
                yield scaler.copy_event(e, c)

    dst.parent.mkdir(parents=True, exist_ok=True)
    n = write_trace(dst, head, events())
    return {"path": str(dst), "source": str(src), "copies": copies, "events": n}


def make_ranks(srcs: list[Path], run_dir: Path, ranks: int) -> dict[str, Any]:
    """``ranks`` worker files in ``run_dir``: rank r is a copy of srcs[r % len(srcs)] with its rank set."""
    run_dir.mkdir(parents=True, exist_ok=True)
    traces = [read_trace(s) for s in srcs]
    total = 0
    for r in range(ranks):
        t = traces[r % len(traces)]
        head = {k: v for k, v in t.items() if k != "traceEvents"}
        info = dict(head.get("distributedInfo") or {})
        info["rank"] = r
        info["world_size"] = ranks
        head["distributedInfo"] = info
        digits = max(2, len(str(ranks - 1)))
        path = run_dir / f"rank{r:0{digits}d}.1682725898.pt.trace.json.gz"
        total += write_trace(path, head, iter(t["traceEvents"]))
    return {"path": str(run_dir), "sources": [str(s) for s in srcs], "ranks": ranks, "events": total}


def make_big_ranks(src: Path, run_dir: Path, ranks: int) -> dict[str, Any]:
    """``ranks`` copies of the gzipped trace ``src`` in ``run_dir``, each with its own distributedInfo (see
    the module's docstring: a per-rank gzip member, then the shared compressed body)."""
    with gzip.open(src, "rb") as f:
        text = f.read()
    start = text.index(b"{")
    if b'"distributedInfo"' in text:
        raise SystemExit(f"{src} already has a distributedInfo")
    body = gzip.compress(text[start + 1 :], compresslevel=GZIP_LEVEL)
    events = text.count(b'"ph"')
    del text
    run_dir.mkdir(parents=True, exist_ok=True)
    digits = max(2, len(str(ranks - 1)))
    for r in range(ranks):
        info = {"backend": "nccl", "rank": r, "world_size": ranks}
        head = gzip.compress(b'{"distributedInfo": ' + json.dumps(info).encode() + b", ")
        path = run_dir / f"rank{r:0{digits}d}.1623143089861.pt.trace.json.gz"
        tmp = path.with_name(path.name + ".part")
        tmp.write_bytes(head + body)
        tmp.rename(path)
    return {"path": str(run_dir), "sources": [str(src)], "ranks": ranks, "events": events * ranks}


def uncompressed_size(path: Path) -> int:
    n = 0
    with gzip.open(path, "rb") as f:
        while chunk := f.read(1 << 24):
            n += len(chunk)
    return n


def trace_path(out: Path, name: str) -> Path:
    """Where preset ``name`` lives: logdir ``out/name`` with one run ``name``."""
    return out / name / name / f"worker0.{1623143089861}.pt.trace.json.gz"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder (outside the repo)")
    choices = [*PRESETS, *RANK_PRESETS, *BIG_RANK_PRESETS]
    ap.add_argument("--only", nargs="*", choices=choices, help="build only these")
    ap.add_argument("--source", type=Path, default=KINETO_SAMPLE, help="trace to repeat")
    ap.add_argument("--force", action="store_true", help="rebuild outputs that exist")
    ap.add_argument("--scale", nargs=3, metavar=("IN", "OUT", "COPIES"), help="scale one file and exit")
    a = ap.parse_args(argv)

    if a.scale:
        info = scale(Path(a.scale[0]), Path(a.scale[1]), int(a.scale[2]))
        print(json.dumps(info))
        return 0
    wanted = a.only or DEFAULT_BUILD
    manifest_path = a.out / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    for name in wanted:
        t0 = time.perf_counter()
        if name in RANK_PRESETS:
            ranks = RANK_PRESETS[name]
            run_dir = a.out / name / name
            if run_dir.exists() and len(list(run_dir.glob("*.pt.trace.json.gz"))) == ranks and not a.force:
                print(f"{name}: exists ({run_dir})")
                continue
            info = make_ranks(RANK_SAMPLES, run_dir, ranks)
            info["bytes"] = sum(uncompressed_size(p) for p in run_dir.glob("*.pt.trace.json.gz"))
        elif name in BIG_RANK_PRESETS:
            ranks, preset = BIG_RANK_PRESETS[name]
            run_dir = a.out / name / name
            if run_dir.exists() and len(list(run_dir.glob("*.pt.trace.json.gz"))) == ranks and not a.force:
                print(f"{name}: exists ({run_dir})")
                continue
            src = trace_path(a.out, preset)
            if not src.exists():
                main(["--out", str(a.out), "--only", preset, "--source", str(a.source)])
                manifest = json.loads(manifest_path.read_text())
            info = make_big_ranks(src, run_dir, ranks)
            info["bytes"] = ranks * uncompressed_size(next(run_dir.glob("*.pt.trace.json.gz")))
        else:
            dst = trace_path(a.out, name)
            if dst.exists() and not a.force:
                print(f"{name}: exists ({dst})")
                continue
            info = scale(a.source, dst, PRESETS[name])
            info["bytes"] = uncompressed_size(dst)
        info["logdir"] = str(a.out / name)
        info["build_s"] = round(time.perf_counter() - t0, 1)
        manifest[name] = info
        a.out.mkdir(parents=True, exist_ok=True)
        manifest_path.write_text(json.dumps(manifest, indent=1))
        mb = info["bytes"] / 1e6
        print(f"{name}: {mb:.0f} MB, {info['events']} events, {info['build_s']} s -> {info['path']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Scale benchmark: re-opening a logdir from the persisted index, and building the index on Dask.

reopen (``--reopen CASE``, default 322mb): a real TensorBoard on the case's logdir, twice per round:
  - parse:  TORCH_PROFILER_INDEX_DIR=off (every file parsed, as without an index);
  - index:  the index built beforehand by ``torch-tb-profiler index`` (timed too), then TensorBoard
            started on the same logdir with that index.
  For each: ``http_up_s`` (process start -> the plugin's /runs answers at all), ``overview_s`` (process
  start -> /overview answers 200), ``after_up_s`` = overview_s - http_up_s (the headline: the issue's
  target is <= 0.5 s with a current index), and the peak RSS of the process tree.

in-process (with ``--reopen``): the case's first file parsed (``load_profile``, one process) vs its index
  file read back (``index_format.loads``), and the index file's size.

throughput (``--throughput CASE``, default ranks64): ``torch-tb-profiler index``'s work, timed from the
  first task submitted to the last result (cluster start excluded, reported apart), with a LocalCluster of
  1 and of 2 worker processes, and with ``--dask-cli`` also a ``dask scheduler`` + 2 ``dask worker``
  processes started with Dask's CLI. Each round runs every setup once (interleaved: noise hits all),
  each with a fresh index folder. Figures: files/s, MB/s of trace files as stored (.gz) and of JSON,
  per worker, and the 1 -> 2 scaling.

Usage:
    python benchmarks/bench_scale.py [--reopen 322mb] [--throughput ranks64] [--runs 3] [--dask-cli]
                                     [--json-out benchmarks/results/scale.json]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_server import PREFIX, _json_size, _stop, free_port, get, our_plugin, resolve_case
from common import REPO, fmt, machine, print_table, summary, write_json
from make_traces import DEFAULT_OUT
from proctree import TreeSampler

sys.path.insert(0, str(REPO))
from torch_tb_profiler.cli.common import find_traces
from torch_tb_profiler.ingest import index_build as ib

POLL_S = 0.02


# ---------------------------------------------------------------- re-open
def start_ours(logdir: Path, index_dir: str, prefix: str) -> tuple[subprocess.Popen, str, str, float]:
    """Our TensorBoard on ``logdir`` with this index location: (process, base URL, its cwd, start time)."""
    plugin = our_plugin()
    port = free_port()
    env = {**plugin.env, "TORCH_PROFILER_INDEX_DIR": index_dir}
    cmd = [*plugin.command, "--logdir", str(logdir), "--host", "127.0.0.1", "--port", str(port)]
    cwd = tempfile.mkdtemp(prefix=prefix)
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    return proc, f"http://127.0.0.1:{port}", cwd, t0


def open_tensorboard(logdir: Path, index_dir: str, timeout: float) -> dict[str, Any]:
    proc, base, cwd, t0 = start_ours(logdir, index_dir, "bench-scale-tb-")
    res: dict[str, Any] = {}
    try:
        with TreeSampler(proc.pid) as sampler:
            deadline = t0 + timeout
            while True:
                status, runs, _ = get(base, f"{PREFIX}/runs", timeout=5)
                if status:
                    res["http_up_s"] = time.perf_counter() - t0
                    break
                if time.perf_counter() > deadline or proc.poll() is not None:
                    raise RuntimeError("TensorBoard did not answer")
                time.sleep(POLL_S)
            run = worker = None
            while time.perf_counter() < deadline:
                status, runs, _ = get(base, f"{PREFIX}/runs")
                if status == 200 and runs["runs"]:
                    r = runs["runs"][0]
                    ready = [f for f in r["files"] if f["status"] == "ready"]
                    if ready:
                        run, worker = r["name"], ready[0]["worker"]
                        res["from_index"] = ready[0].get("from_index")
                        break
                time.sleep(POLL_S)
            while time.perf_counter() < deadline:
                status, _, _ = get(base, f"{PREFIX}/overview?run={run}&worker={worker}")
                if status == 200:
                    res["overview_s"] = time.perf_counter() - t0
                    break
                time.sleep(POLL_S)
            else:
                raise RuntimeError("overview never answered")
            res["after_up_s"] = res["overview_s"] - res["http_up_s"]
            res["peak_rss_mb"] = sampler.peak / 2**20
    finally:
        _stop(proc)
        shutil.rmtree(cwd, ignore_errors=True)
    return res


def build_index(logdir: Path, index_dir: Path, workers: int) -> float:
    t0 = time.perf_counter()
    cmd = [sys.executable, "-m", "torch_tb_profiler.cli", "index", str(logdir), "--index-dir", str(index_dir)]
    cmd += ["--local-workers", str(workers)]
    done = subprocess.run(cmd, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"index failed: {done.stderr[-2000:]}")
    return time.perf_counter() - t0


def bench_reopen(case_name: str, runs: int, timeout: float) -> dict[str, Any]:
    case = resolve_case(case_name, DEFAULT_OUT)
    rounds: dict[str, list[dict[str, Any]]] = {"parse": [], "index": []}
    build: list[float] = []
    for r in range(runs):
        index_dir = Path(tempfile.mkdtemp(prefix="bench-scale-index-"))
        try:
            rounds["parse"].append(open_tensorboard(case.logdir, "off", timeout))
            build.append(build_index(case.logdir, index_dir, 1))
            rounds["index"].append(open_tensorboard(case.logdir, str(index_dir), timeout))
            assert rounds["index"][-1].get("from_index") is True, rounds["index"][-1]
        finally:
            shutil.rmtree(index_dir, ignore_errors=True)
        print(f"round {r + 1}: parse {rounds['parse'][-1]}  index {rounds['index'][-1]}", file=sys.stderr)
    out: dict[str, Any] = {"case": case.name, "files": len(case.files), "json_bytes": case.bytes}
    out["index_build_s"] = summary(build)
    for mode, rs in rounds.items():
        out[mode] = {
            k: summary([x[k] for x in rs]) for k in ("http_up_s", "overview_s", "after_up_s", "peak_rss_mb")
        }
    return out


def bench_inproc(case_name: str, runs: int) -> dict[str, Any]:
    from torch_tb_profiler.ingest import index_format
    from torch_tb_profiler.ingest.parse import load_profile

    case = resolve_case(case_name, DEFAULT_OUT)
    path = str(case.files[0])
    parse, read = [], []
    data = b""
    for _ in range(runs):
        t0 = time.perf_counter()
        profile = load_profile(path)
        parse.append(time.perf_counter() - t0)
        data = index_format.dumps(profile, {"url": path})
        del profile
        t0 = time.perf_counter()
        index_format.loads(data)
        read.append(time.perf_counter() - t0)
    return {
        "file": Path(path).name,
        "parse_s": summary(parse),
        "index_read_s": summary(read),
        "index_bytes": len(data),
    }


# ---------------------------------------------------------------- throughput
def time_engine(engine: ib.Engine, tasks: list[ib.Task]) -> tuple[float, list[ib.Result]]:
    t0 = time.perf_counter()
    results = list(engine.map_unordered(ib.index_file, tasks))
    return time.perf_counter() - t0, results


@contextlib.contextmanager
def cli_cluster(workers: int):
    exe = str(Path(sys.executable).with_name("dask"))
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen(
            [exe, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )
    ]  # fmt: skip
    for i in range(workers):
        argv = [exe, "worker", address, "--host", "127.0.0.1", "--nthreads", "1", "--nworkers", "1"]
        argv += ["--no-dashboard", "--name", f"w{i}"]
        procs.append(
            subprocess.Popen(
                argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
            )
        )
    try:
        from distributed import Client

        with Client(address, timeout="60s") as c:
            c.wait_for_workers(workers, timeout=60)
        yield address
    finally:
        for p in reversed(procs):
            _stop(p)


def bench_throughput(case_name: str, runs: int, dask_cli: bool) -> dict[str, Any]:
    case = resolve_case(case_name, DEFAULT_OUT)
    loc, files = find_traces(str(case.logdir))
    stored = sum(f.info.size for f in files)
    json_bytes = sum(_json_size(Path(f.info.path)) for f in files)
    setups: list[tuple[str, int, Any]] = [("LocalCluster", 1, None), ("LocalCluster", 2, None)]
    if dask_cli:
        setups.append(("dask CLI", 2, "cli"))
    out: dict[str, Any] = {
        "case": case.name,
        "files": len(files),
        "stored_bytes": stored,
        "json_bytes": json_bytes,
    }
    times: dict[str, list[float]] = {f"{label} x{n}": [] for label, n, _ in setups}
    starts: dict[str, list[float]] = {k: [] for k in times}
    for r in range(runs):  # setups interleaved within each round: machine noise hits all of them
        for label, workers, kind in setups:
            key = f"{label} x{workers}"
            index_dir = Path(tempfile.mkdtemp(prefix="bench-scale-index-"))
            tasks = ib.tasks_for(loc.url, files, str(index_dir), None)
            try:
                t0 = time.perf_counter()
                with contextlib.ExitStack() as stack:
                    address = stack.enter_context(cli_cluster(workers)) if kind == "cli" else None
                    engine = ib.DaskEngine(address, workers)
                    stack.callback(engine.close)
                    starts[key].append(time.perf_counter() - t0)
                    seconds, results = time_engine(engine, tasks)
                bad = [x for x in results if x.status != ib.INDEXED]
                if bad:
                    raise RuntimeError(f"{len(bad)} files failed: {bad[0].message}")
                times[key].append(seconds)
            finally:
                shutil.rmtree(index_dir, ignore_errors=True)
            print(f"round {r + 1} {key}: {seconds:.2f} s", file=sys.stderr)
    for label, workers, _kind in setups:
        key = f"{label} x{workers}"
        s = summary(times[key])
        out[key] = {
            "workers": workers,
            "seconds": s,
            "cluster_start_s": summary(starts[key]),
            "files_per_s": len(files) / s["median"],
            "stored_mb_per_s": stored / 1e6 / s["median"],
            "json_mb_per_s": json_bytes / 1e6 / s["median"],
            "json_mb_per_s_per_worker": json_bytes / 1e6 / s["median"] / workers,
        }
    one, two = out.get("LocalCluster x1"), out.get("LocalCluster x2")
    if one and two:
        out["scaling_1_to_2"] = one["seconds"]["median"] / two["seconds"]["median"]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reopen", default="322mb", help="case for the re-open figures ('' to skip)")
    ap.add_argument("--throughput", default="ranks64", help="case for the index throughput ('' to skip)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument(
        "--dask-cli", action="store_true", help="also time a scheduler + 2 workers from Dask's CLI"
    )
    ap.add_argument("--json-out", type=Path)
    args = ap.parse_args(argv)
    result: dict[str, Any] = {"machine": machine()}
    if args.reopen:
        i = result["inproc"] = bench_inproc(args.reopen, args.runs)
        print(
            f"in-process, {i['file']}: parse {fmt(i['parse_s'])} s, index read {fmt(i['index_read_s'], digits=3)} s, "
            f"index file {i['index_bytes'] / 1e6:.1f} MB"
        )
        r = result["reopen"] = bench_reopen(args.reopen, args.runs, args.timeout)
        rows = [
            [mode, fmt(r[mode]["http_up_s"]), fmt(r[mode]["overview_s"]), fmt(r[mode]["after_up_s"]),
             fmt(r[mode]["peak_rss_mb"], digits=0)]
            for mode in ("parse", "index")
        ]  # fmt: skip
        print(
            f"\nre-open {r['case']} ({r['json_bytes'] / 1e6:.0f} MB JSON); index built in {fmt(r['index_build_s'])} s"
        )
        print_table(["mode", "HTTP up (s)", "overview (s)", "overview after up (s)", "peak RSS (MB)"], rows)
    if args.throughput:
        t = result["throughput"] = bench_throughput(args.throughput, args.runs, args.dask_cli)
        print(f"\nindex {t['case']}: {t['files']} files, {t['stored_bytes'] / 1e6:.1f} MB stored, "
              f"{t['json_bytes'] / 1e6:.0f} MB JSON")  # fmt: skip
        rows = [
            [k, fmt(v["seconds"]), fmt(v["cluster_start_s"]), f"{v['files_per_s']:.1f}", f"{v['json_mb_per_s']:.1f}",
             f"{v['json_mb_per_s_per_worker']:.1f}"]
            for k, v in t.items() if isinstance(v, dict) and "workers" in v
        ]  # fmt: skip
        print_table(
            ["setup", "index (s)", "cluster start (s)", "files/s", "JSON MB/s", "JSON MB/s/worker"], rows
        )
        if "scaling_1_to_2" in t:
            print(f"scaling 1 -> 2 workers: {t['scaling_1_to_2']:.2f}x")
    if args.json_out:
        write_json(args.json_out, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Whole-process benchmark: a real TensorBoard on a logdir, from start until the overview answers.

For each case (a logdir holding one run, a trace file, or a name from make_traces.py's manifest) and
each plugin (ours; with ``--original`` also torch-tb-profiler 0.4.3 in its own virtualenv), one round:

1. start ``tensorboard --logdir <logdir> --host 127.0.0.1 --port <free port>`` (clock starts at
   process start, so TensorBoard's own start-up is included, as a user experiences it);
2. poll ``/data/plugin/pytorch_profiler/runs`` every 50 ms until every run is loaded
   (``ready_s``; ours: each run's ``state`` is ``ready``; original: run listed and ``loading`` false);
3. ask views/workers/spans for the first worker and span, then poll ``/overview`` until it answers 200
   (``overview_s``: the headline figure, "time to first overview");
4. time the operator, kernel and memory routes (and overview again): the first request, then p50/p95
   of ``--requests`` more;
5. peak RSS of TensorBoard plus all its child processes, summed, sampled from /proc every 50 ms from
   start to the end of step 4; stop the process group.

Rounds alternate the plugin order (ours first, then original first, ...) so machine noise hits both.
With ``--floor`` (default on) each round also measures the parse floor of the case's files (gunzip +
simdjson structural parse, summed over files, each in a fresh process; see bench_load.py), and with
``--load`` our in-process load to a ready Profile.

Usage:
    python benchmarks/bench_server.py [CASE ...] [--serve] [--original] [--runs 3] [--json-out FILE]
    (--serve: also ``torch-tb-profiler serve`` on the same logdir, the same steps, no TensorBoard)
    CASE: 100mb | 322mb | 1gb | ranks64 (from make_traces.py) | a logdir | a trace file
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_load import run_step
from common import REPO, fmt, machine, percentile, print_table, ratio, summary, write_json
from make_traces import DEFAULT_OUT
from proctree import TreeSampler

PREFIX = "/data/plugin/pytorch_profiler"
POLL_S = 0.05
ORIG_VENV = Path(os.environ.get("ORIG_VENV", REPO / ".bench" / "orig-venv"))
OURS_TB = REPO / ".venv" / "bin" / "tensorboard"

# label -> route with query (run/worker/span are added), what the page of that view asks for.
# Ours: docs/api.md. The original: its plugin.py (0.4.3).
OURS_ROUTES = {
    "overview": "/overview",
    "operator": "/operators",
    "operator_by_shape": "/operators?group_by=name_input_shape",
    "kernel": "/kernels",
    "memory_stats": "/memory/stats",
    "memory_curve": "/memory/curve",
    "memory_events": "/memory/events",
    "distributed": "/distributed",
    "analysis": "/analysis?n=5",
    "roofline": "/roofline?by=ops&limit=5000",
    "trace": "/trace",
}
ORIG_ROUTES = {
    "overview": "/overview",
    "operator": "/operation/table?group_by=Operation",
    "operator_by_shape": "/operation/table?group_by=OperationAndInputShape",
    "kernel": "/kernel/table?group_by=Kernel",
    "memory_stats": "/memory",
    "memory_curve": "/memory_curve",
    "memory_events": "/memory_events",
    "distributed": "/distributed/commops",
    "trace": "/trace",
}


class BenchError(Exception):
    pass


@dataclass
class Plugin:
    name: str
    command: list[str]  # the TensorBoard command line, without --logdir/--host/--port
    env: dict[str, str]
    routes: dict[str, str]
    kind: str  # "ours" | "original": how to read the runs route
    positional_logdir: bool = False  # `torch-tb-profiler serve LOGDIR` rather than `--logdir LOGDIR`


@dataclass
class Case:
    name: str
    logdir: Path
    files: list[Path]
    bytes: int = 0
    tmp: Path | None = field(default=None, repr=False)


# ---------------------------------------------------------------- set-up


def our_plugin() -> Plugin:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    if _registered(str(REPO / ".venv" / "bin" / "python")):
        cmd = [str(OURS_TB)]
    else:
        # not pip-installed: the same TensorBoard, with our plugin added to its default plugins
        launcher = (
            "import sys; from tensorboard import default, program; "
            "from torch_tb_profiler.plugin import TorchProfilerPlugin as P; "
            "tb = program.TensorBoard(plugins=default.get_plugins() + [P]); "
            "tb.configure(argv=[sys.argv[0], *sys.argv[1:]]); sys.exit(tb.main())"
        )
        cmd = [str(REPO / ".venv" / "bin" / "python"), "-c", launcher]
    return Plugin("ours", cmd, env, OURS_ROUTES, "ours")


def serve_plugin() -> Plugin:
    """``torch-tb-profiler serve`` (no TensorBoard) from this checkout, with the same routes."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    cmd = [sys.executable, "-m", "torch_tb_profiler", "serve"]
    return Plugin("serve", cmd, env, OURS_ROUTES, "ours", positional_logdir=True)


def _registered(python: str) -> bool:
    code = (
        "import importlib.metadata as m, sys; "
        "sys.exit(0 if any(e.value.startswith('torch_tb_profiler') "
        "for e in m.entry_points(group='tensorboard_plugins')) else 1)"
    )
    return subprocess.run([python, "-c", code], cwd="/", capture_output=True).returncode == 0


def original_plugin() -> Plugin:
    tb = ORIG_VENV / "bin" / "tensorboard"
    if not tb.exists():
        print(f"creating {ORIG_VENV} (torch-tb-profiler 0.4.3 + tensorboard, no torch)", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(ORIG_VENV)], check=True)
        pip = [str(ORIG_VENV / "bin" / "pip"), "install", "-q", "torch-tb-profiler==0.4.3", "tensorboard"]
        subprocess.run(pip, check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return Plugin("original", [str(tb)], env, ORIG_ROUTES, "original")


def resolve_case(arg: str, traces_dir: Path) -> Case:
    """A manifest name, a logdir, or a single trace file (given a temporary logdir holding a link)."""
    manifest = traces_dir / "manifest.json"
    if not Path(arg).exists() and manifest.exists():
        entry = json.loads(manifest.read_text()).get(arg)
        if entry:
            arg = entry["logdir"]
    p = Path(arg).resolve()
    if p.is_file():
        tmp = Path(tempfile.mkdtemp(prefix="bench-logdir-"))
        run = tmp / p.name.split(".")[0]
        run.mkdir()
        (run / p.name).symlink_to(p)
        case = Case(p.name, tmp, [p], tmp=tmp)
    elif p.is_dir():
        files = sorted(x for x in p.rglob("*") if x.name.endswith((".pt.trace.json", ".pt.trace.json.gz")))
        if not files:
            raise SystemExit(f"{p}: no *.pt.trace.json[.gz] files")
        case = Case(p.name, p, files)
    else:
        raise SystemExit(f"{arg}: not a file, folder or manifest name (run make_traces.py first)")
    case.bytes = sum(_json_size(f) for f in case.files)
    return case


def _json_size(path: Path) -> int:
    """Uncompressed size: the gzip trailer's ISIZE (mod 4 GiB) for .gz, else the file size."""
    if path.name.endswith(".gz"):
        with open(path, "rb") as f:
            f.seek(-4, os.SEEK_END)
            return int.from_bytes(f.read(4), "little")
    return path.stat().st_size


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------- HTTP


def get(base: str, path: str, timeout: float = 30.0) -> tuple[int, Any, float]:
    """(status, parsed JSON or text, seconds) for GET base+path; status 0 when nothing answered."""
    t0 = time.perf_counter()
    try:
        with urllib.request.urlopen(base + path, timeout=timeout) as r:
            body = r.read()
            status = r.status
    except urllib.error.HTTPError as e:
        body, status = e.read(), e.code
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
        return 0, None, time.perf_counter() - t0
    dt = time.perf_counter() - t0
    try:
        return status, json.loads(body), dt
    except ValueError:
        return status, body[:300].decode(errors="replace"), dt


def with_params(route: str, **params: str | None) -> str:
    sep = "&" if "?" in route else "?"
    q = urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
    return f"{PREFIX}{route}{sep}{q}" if q else f"{PREFIX}{route}"


def runs_state(kind: str, data: Any) -> tuple[bool, list[str], str | None]:
    """(all loaded, run names, error text) from the runs route's answer."""
    if not isinstance(data, dict):
        return False, [], None
    runs = data.get("runs") or []
    if kind == "original":
        return bool(runs) and not data.get("loading"), [str(r) for r in runs], None
    names = [r.get("name", "") for r in runs if isinstance(r, dict)]
    states = [r.get("state") for r in runs if isinstance(r, dict)]
    if runs and all(s == "error" for s in states):
        return False, names, json.dumps(runs)[:500]
    return bool(runs) and all(s in ("ready", "error") for s in states), names, None


def _names(data: Any) -> list[str]:
    """Worker/span/view names from a list of strings, numbers or dicts (name/id/worker/span)."""
    if isinstance(data, dict):
        for key in ("workers", "spans", "views", "items"):
            if key in data:
                return _names(data[key])
        return []
    out = []
    for x in data or []:
        if isinstance(x, dict):
            for key in ("name", "id", "worker", "span", "value"):
                if key in x:
                    out.append(str(x[key]))
                    break
        elif x is not None:
            out.append(str(x))
    return out


def pick_profile(base: str, run: str) -> tuple[str, str | None]:
    """First worker (not 'All') and first span of ``run``, through the views/workers/spans routes."""
    _, views, _ = get(base, with_params("/views", run=run))
    names = _names(views)
    view = "Overview" if "Overview" in names else (names[0] if names else None)
    status, workers, _ = get(base, with_params("/workers", run=run, view=view))
    ws = [w for w in _names(workers) if w != "All"]
    if status != 200 or not ws:
        raise BenchError(f"workers route: {status} {str(workers)[:200]}")
    status, spans, _ = get(base, with_params("/spans", run=run, worker=ws[0]))
    ss = _names(spans) if status == 200 else []
    return ws[0], (ss[0] if ss else None)


# ---------------------------------------------------------------- one round


def bench_server(
    plugin: Plugin,
    case: Case,
    timeout: float,
    requests: int,
    route_budget: float,
    log_dir: Path,
    pause: float = 0.0,
) -> dict[str, Any]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    logdir = [str(case.logdir)] if plugin.positional_logdir else ["--logdir", str(case.logdir)]
    cmd = [*plugin.command, *logdir, "--host", "127.0.0.1", "--port", str(port)]
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"{plugin.name}-{case.name}-{port}.log"
    cwd = tempfile.mkdtemp(prefix="bench-tb-")  # not the repo: the original must not import our package
    res: dict[str, Any] = {"plugin": plugin.name, "case": case.name, "log": str(log_path)}
    with open(log_path, "wb") as log:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            cmd, cwd=cwd, env=plugin.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            with TreeSampler(proc.pid) as sampler:
                _drive(plugin, base, t0, timeout, requests, route_budget, proc, sampler, res, pause)
                res["peak_rss_mb"] = sampler.peak / 2**20
                res["hwm_sum_mb"] = sampler.hwm_sum / 2**20
                res["at_peak_mb"] = sorted(
                    ((n, round(b / 2**20)) for n, b in sampler.at_peak), key=lambda x: -x[1]
                )
                res["max_procs"] = sampler.max_procs
        except BenchError as e:
            res["error"] = str(e)
        finally:
            _stop(proc)
            shutil.rmtree(cwd, ignore_errors=True)
    return res


def _drive(
    plugin: Plugin,
    base: str,
    t0: float,
    timeout: float,
    requests: int,
    route_budget: float,
    proc: subprocess.Popen,
    sampler: TreeSampler,
    res: dict[str, Any],
    pause: float = 0.0,
) -> None:
    """Steps 2-4 of the module docstring; fills ``res``, raises BenchError on failure."""
    deadline = t0 + timeout
    runs_path = f"{PREFIX}/runs"
    run_names: list[str] = []
    while True:
        if proc.poll() is not None:
            raise BenchError(f"TensorBoard exited with {proc.returncode} (see {res['log']})")
        if time.perf_counter() > deadline:
            raise BenchError(f"not loaded after {timeout:.0f} s (runs: {run_names})")
        status, data, _ = get(base, runs_path, timeout=10)
        if status and "http_s" not in res:
            res["http_s"] = time.perf_counter() - t0
        if status == 200:
            done, run_names, err = runs_state(plugin.kind, data)
            if err:
                raise BenchError(f"run failed to load: {err}")
            if done:
                res["ready_s"] = time.perf_counter() - t0
                break
        time.sleep(POLL_S)
    run = run_names[0]
    worker, span = pick_profile(base, run)
    res.update(run=run, worker=worker, span=span)
    overview = with_params("/overview", run=run, worker=worker, span=span)
    while True:
        status, data, _ = get(base, overview, timeout=max(1.0, deadline - time.perf_counter()))
        if status == 200:
            res["overview_s"] = time.perf_counter() - t0
            res["peak_load_mb"] = sampler.peak / 2**20  # before any other route runs
            break
        if time.perf_counter() > deadline:
            raise BenchError(f"overview not answering after {timeout:.0f} s: {status} {str(data)[:200]}")
        time.sleep(POLL_S)
    time.sleep(pause)  # a user reading the overview before opening another view
    res["routes"] = {}
    for label, route in plugin.routes.items():
        path = with_params(route, run=run, worker=worker, span=span)
        status, data, first = get(base, path, timeout=120)
        times: list[float] = []
        spent = 0.0
        while status == 200 and len(times) < requests and (not times or spent < route_budget):
            _, _, dt = get(base, path, timeout=120)
            times.append(dt)
            spent += dt
        res["routes"][label] = {
            "status": status,
            "first_ms": first * 1000,
            "p50_ms": percentile(times, 50) * 1000 if times else None,
            "p95_ms": percentile(times, 95) * 1000 if times else None,
            "repeats": len(times),
            "bytes": len(json.dumps(data)) if status == 200 else 0,
            "error": None if status == 200 else str(data)[:200],
        }


def _stop(proc: subprocess.Popen) -> None:
    """Terminate the process group we started (its pid is the group id), then kill it if needed."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        except ProcessLookupError:
            pass
    # children of the original (spawned parsers) may outlive TensorBoard in the same group
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


def floor_of(case: Case, step: str = "floor") -> float | None:
    """A bench_load step summed over the case's files (each file in a fresh process)."""
    total = 0.0
    for f in case.files:
        r = run_step(step, str(f))
        if "error" in r:
            print(f"  {step} {f.name}: {r['error']}", file=sys.stderr)
            return None
        total += r["seconds"]
    return total


# ---------------------------------------------------------------- report


def summarize(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in rounds if "error" not in r]
    out: dict[str, Any] = {
        key: summary([r[key] for r in ok if key in r])
        for key in (
            "http_s",
            "ready_s",
            "overview_s",
            "peak_load_mb",
            "peak_rss_mb",
            "hwm_sum_mb",
            "max_procs",
        )
    }
    out["errors"] = [r["error"] for r in rounds if "error" in r]
    routes: dict[str, Any] = {}
    for r in ok:
        for label, m in r.get("routes", {}).items():
            d = routes.setdefault(label, {"first_ms": [], "p50_ms": [], "p95_ms": [], "status": set()})
            d["status"].add(m["status"])
            for k in ("first_ms", "p50_ms", "p95_ms"):
                if m[k] is not None:
                    d[k].append(m[k])
    out["routes"] = {
        label: {"status": sorted(d["status"]), **{k: summary(d[k]) for k in ("first_ms", "p50_ms", "p95_ms")}}
        for label, d in routes.items()
    }
    return out


def print_report(results: list[dict[str, Any]]) -> None:
    rows = []
    for c in results:
        ours, orig, floor = c.get("ours", {}), c.get("original", {}), c.get("floor", {})
        rows.append(
            [
                c["case"],
                f"{c['files']}",
                f"{c['bytes'] / 1e6:.0f} MB",
                fmt(floor, unit=" s"),
                fmt(c.get("load", {}), unit=" s"),
                fmt(ours.get("ready_s", {}), unit=" s"),
                fmt(ours.get("overview_s", {}), unit=" s"),
                fmt(ours.get("peak_load_mb", {}), digits=0, unit=" MB"),
                fmt(orig.get("overview_s", {}), unit=" s"),
                fmt(orig.get("peak_load_mb", {}), digits=0, unit=" MB"),
                ratio(ours.get("overview_s", {}), orig.get("overview_s", {})),
                ratio(ours.get("peak_load_mb", {}), orig.get("peak_load_mb", {})),
                ratio(ours.get("overview_s", {}), floor),
            ]
        )
    print(
        "\nTime to first overview (TensorBoard start -> runs loaded -> overview 200), peak RSS of the tree:"
    )
    print_table(
        [
            "case",
            "files",
            "JSON",
            "floor",
            "ours load_profile",
            "ours ready",
            "ours overview",
            "ours peak",
            "original overview",
            "original peak",
            "time ours/orig",
            "RSS ours/orig",
            "time ours/floor",
        ],
        rows,
    )
    rows = []
    for c in results:
        for who in ("ours", "serve", "original"):
            s = c.get(who)
            if s:
                rows.append(
                    [
                        c["case"],
                        who,
                        fmt(s["http_s"], unit=" s"),
                        fmt(s["peak_load_mb"], digits=0, unit=" MB"),
                        fmt(s["peak_rss_mb"], digits=0, unit=" MB"),
                        fmt(s["hwm_sum_mb"], digits=0, unit=" MB"),
                        fmt(s["max_procs"], digits=0),
                    ]
                )
    print("\nTensorBoard start-up and memory (peak until the overview answered; after all routes; ΣVmHWM):")
    print_table(
        ["case", "plugin", "http up", "peak to overview", "peak after routes", "ΣVmHWM", "processes"], rows
    )
    served = [c for c in results if c.get("serve")]
    if served:
        print("\n`torch-tb-profiler serve` against TensorBoard (ours), same logdir, alternating rounds:")
        print_table(
            ["case", "ours ready", "serve ready", "ours overview", "serve overview", "time serve/ours"],
            [
                [
                    c["case"],
                    fmt(c.get("ours", {}).get("ready_s", {}), unit=" s"),
                    fmt(c["serve"]["ready_s"], unit=" s"),
                    fmt(c.get("ours", {}).get("overview_s", {}), unit=" s"),
                    fmt(c["serve"]["overview_s"], unit=" s"),
                    ratio(c["serve"]["overview_s"], c.get("ours", {}).get("overview_s", {})),
                ]
                for c in served
            ],
        )
    rows = []
    for c in results:
        for who in ("ours", "serve", "original"):
            s = c.get(who)
            if not s:
                continue
            for label, m in s["routes"].items():
                rows.append(
                    [
                        c["case"],
                        who,
                        label,
                        ",".join(map(str, m["status"])),
                        fmt(m["first_ms"], digits=0, unit=" ms"),
                        fmt(m["p50_ms"], digits=0, unit=" ms"),
                        fmt(m["p95_ms"], digits=0, unit=" ms"),
                    ]
                )
            for e in s["errors"]:
                rows.append([c["case"], who, "ERROR", "", e[:100], "", ""])
    print("\nRoutes after load (first request, then p50/p95 of the repeats; median over rounds):")
    print_table(["case", "plugin", "route", "status", "first", "p50", "p95"], rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cases", nargs="*", default=["100mb", "322mb", "1gb", "ranks64"])
    ap.add_argument("--traces-dir", type=Path, default=DEFAULT_OUT, help="make_traces.py output folder")
    ap.add_argument("--original", action="store_true", help="also measure torch-tb-profiler 0.4.3")
    ap.add_argument("--no-ours", action="store_true", help="skip our plugin (e.g. to measure the original)")
    ap.add_argument(
        "--serve", action="store_true", help="also measure `torch-tb-profiler serve` (no TensorBoard)"
    )
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--requests", type=int, default=10, help="repeats per route after the first")
    ap.add_argument(
        "--route-budget", type=float, default=20, help="stop repeating a route after this many seconds"
    )
    ap.add_argument("--timeout", type=float, default=600, help="seconds per TensorBoard run")
    ap.add_argument(
        "--pause",
        type=float,
        default=0.0,
        help="seconds between the overview and the other routes (a user reading it)",
    )
    ap.add_argument("--no-floor", action="store_true", help="skip the parse floor")
    ap.add_argument("--load", action="store_true", help="also time load_profile in-process (bench_load)")
    ap.add_argument("--json-out", type=Path)
    ap.add_argument("--log-dir", type=Path, default=Path(tempfile.gettempdir()) / "bench-server-logs")
    a = ap.parse_args(argv)

    plugins = [] if a.no_ours else [our_plugin()]
    if a.serve:
        plugins.append(serve_plugin())
    if a.original:
        plugins.append(original_plugin())
    cases = [resolve_case(c, a.traces_dir) for c in a.cases]
    info = {"machine": machine(), "argv": sys.argv[1:], "runs": a.runs, "requests": a.requests}
    results = []
    try:
        for case in cases:
            print(f"{case.name}: {len(case.files)} files, {case.bytes / 1e6:.0f} MB JSON", file=sys.stderr)
            rounds: dict[str, list[dict[str, Any]]] = {p.name: [] for p in plugins}
            floors: list[float] = []
            loads: list[float] = []
            for r in range(a.runs):
                order = plugins if r % 2 == 0 else list(reversed(plugins))
                for p in order:
                    res = bench_server(p, case, a.timeout, a.requests, a.route_budget, a.log_dir, a.pause)
                    rounds[p.name].append(res)
                    _say(r, res)
                if not a.no_floor:
                    f = floor_of(case)
                    if f is not None:
                        floors.append(f)
                        print(f"  round {r + 1} floor: {f:.2f} s", file=sys.stderr)
                if a.load:
                    t = floor_of(case, "ours")
                    if t is not None:
                        loads.append(t)
                        print(f"  round {r + 1} load_profile: {t:.2f} s", file=sys.stderr)
            entry: dict[str, Any] = {
                "case": case.name,
                "logdir": str(case.logdir),
                "files": len(case.files),
                "bytes": case.bytes,
                "floor": summary(floors),
                "load": summary(loads),
                "rounds": rounds,
            }
            for p in plugins:
                entry[p.name] = summarize(rounds[p.name])
            results.append(entry)
            if a.json_out:  # after every case, so a long run leaves partial results
                write_json(a.json_out, {**info, "results": results})
    finally:
        for case in cases:
            if case.tmp:
                shutil.rmtree(case.tmp, ignore_errors=True)
    print_report(results)
    return 0


def _say(r: int, res: dict[str, Any]) -> None:
    if "error" in res:
        print(f"  round {r + 1} {res['plugin']}: ERROR {res['error']}", file=sys.stderr)
        return
    routes = " ".join(
        f"{k}={v['p95_ms']:.0f}ms" if v["p95_ms"] is not None else f"{k}={v['status']}"
        for k, v in res["routes"].items()
    )
    print(
        f"  round {r + 1} {res['plugin']}: http {res.get('http_s', 0):.1f} s, ready {res['ready_s']:.2f} s, "
        f"overview {res['overview_s']:.2f} s, peak at overview {res['peak_load_mb']:.0f} MB, "
        f"after routes {res['peak_rss_mb']:.0f} MB "
        f"(sum of VmHWM {res['hwm_sum_mb']:.0f} MB) "
        f"({res['max_procs']} procs; at peak {res.get('at_peak_mb', [])[:3]}); p95 {routes}",
        file=sys.stderr,
    )


if __name__ == "__main__":
    sys.exit(main())

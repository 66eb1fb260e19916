"""Timeline benchmark in a real browser: first draw, pan/zoom frame rate, TensorBoard's memory.

For one logdir (its first run, first worker, first span), ``--repeats`` times:

1. start a fresh TensorBoard (the repository's .venv) on the logdir, so the timeline index is cold,
   and sample its process tree's RSS (benchmarks/proctree.py) until it is stopped;
2. poll the ``runs`` route until every run is ``ready``: that moment is ``ready``;
3. open the Trace view of the profile in headless Debian chromium (Playwright, the launch options of
   tests/e2e/conftest.py, a 1280×900 viewport) and wait for ``[data-testid="timeline"]`` with
   ``data-state="ready"`` (the window is drawn at the requested resolution). ``first_draw_s`` is
   from ``ready`` to then: page load, the track list (the plugin starts building the timeline index
   of a run's first profile in the background once that profile is ready; the track list waits for
   what is left of that build), the first window and its drawing.
   ``warm_draw_s``: the same in a second page of the same TensorBoard (index built);
4. pan/zoom from cached data, at two views (the whole profile; 1/50 of it around its middle): after a
   1 s warm-up pass has fetched what the drive shows, for ``--drive`` seconds every animation frame
   sends the next key of W, D, A, S (zoom in, pan right, back, zoom back out) to the page (keydown and
   keyup: a tap, one step each); frames drawn (the controller's frame counter) per second is ``fps``, and
   ``draw_ms`` the median time the controller spent drawing one frame;
5. drag-pan at the zoomed view, two ways, for ``--drive`` seconds each: ``drag_fps``, a scripted drag in
   the page (mousedown on the tracks, then every animation frame two mousemoves 6 px apart to the
   left, as a 120 Hz mouse sends them, mouseup after 700 px and grab again: the view keeps panning
   right into parts not fetched yet), and ``drag_cdp_fps``, the same strokes through the browser's
   input pipeline (Playwright's mouse, one move per round trip). ``panned`` is how many screen widths
   the view moved; ``cpu_ms_per_frame`` the CPU time of every chromium process per frame drawn (on a
   shared machine the frame rate follows the load; this moves less).

Prints medians over the repeats (min-max) and the targets of issue 11: first draw <= 2 s, >= 30
frames/s, TensorBoard's tree <= 1.5 GB (on the 1 GB trace).

Usage:
    python benchmarks/bench_timeline_browser.py LOGDIR [--repeats 3] [--drive 3] [--json OUT]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REPO, fmt, machine, summary, write_json
from proctree import TreeSampler, descendants

PREFIX = "/data/plugin/pytorch_profiler"
TENSORBOARD = REPO / ".venv" / "bin" / "tensorboard"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [  # as tests/e2e/conftest.py
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1280, "height": 900}
READY = '[data-testid="timeline"][data-state="ready"]'
TARGETS = {"first_draw_s": 2.0, "fps": 30.0, "tree_gb_1gb_trace": 1.5}

# every animation frame: the next of W, D, A, S (the view comes back every four frames); counts frames
DRIVE_JS = """async (ms) => {
    const hook = window.__timeline;
    const keys = ["w", "d", "a", "s"];
    const draws = [];
    const f0 = hook.stats().frames;
    const t0 = performance.now();
    let i = 0;
    let last = f0;
    await new Promise((resolve) => {
        const step = () => {
            const s = hook.stats();
            if (s.frames !== last) {
                draws.push(s.ms);
                last = s.frames;
            }
            if (performance.now() - t0 >= ms) return resolve();
            const key = keys[i++ % 4];
            window.dispatchEvent(new KeyboardEvent("keydown", { key }));
            window.dispatchEvent(new KeyboardEvent("keyup", { key }));
            requestAnimationFrame(step);
        };
        requestAnimationFrame(step);
    });
    const seconds = (performance.now() - t0) / 1000;
    const frames = hook.stats().frames - f0;
    const heap = performance.memory ? performance.memory.usedJSHeapSize : null;
    return { frames, seconds, keys: i, draws, heap };
}"""


# a scripted drag-pan: strokes of mousemoves right to left, two per animation frame; counts frames
DRAG_JS = """async (ms) => {
    const hook = window.__timeline;
    const c = document.querySelector('[data-testid="timeline"] .tl-main canvas');
    const r = c.getBoundingClientRect();
    const y = r.top + Math.min(60, r.height / 2);
    const right = r.right - 40;
    const left = right - 700;
    let x = right;
    let down = false;
    const fire = (type) => c.dispatchEvent(new MouseEvent(type, {
        clientX: x, clientY: y, button: 0, buttons: down ? 1 : 0, bubbles: true, cancelable: true, view: window,
    }));
    const v0 = hook.view();
    const draws = [];
    const f0 = hook.stats().frames;
    const t0 = performance.now();
    let last = f0;
    let moves = 0;
    await new Promise((resolve) => {
        const step = () => {
            const s = hook.stats();
            if (s.frames !== last) {
                draws.push(s.ms);
                last = s.frames;
            }
            if (performance.now() - t0 >= ms) {
                if (down) { down = false; fire("mouseup"); }
                return resolve();
            }
            if (!down) {
                x = right;
                down = true;
                fire("mousedown");
            } else {
                for (let k = 0; k < 2; k++) { x -= 6; moves++; fire("mousemove"); }
                if (x <= left) { down = false; fire("mouseup"); }
            }
            requestAnimationFrame(step);
        };
        requestAnimationFrame(step);
    });
    const seconds = (performance.now() - t0) / 1000;
    const frames = hook.stats().frames - f0;
    const v1 = hook.view();
    const panned = (v1.t0 - v0.t0) / (v0.t1 - v0.t0);
    return { frames, seconds, moves, draws, panned };
}"""


# animation frames per second of the same page doing nothing: what the browser manages on this machine
IDLE_JS = """async (ms) => {
    let n = 0;
    const t0 = performance.now();
    await new Promise((resolve) => {
        const step = () => {
            n++;
            if (performance.now() - t0 >= ms) return resolve();
            requestAnimationFrame(step);
        };
        requestAnimationFrame(step);
    });
    return n / ((performance.now() - t0) / 1000);
}"""


class BenchError(RuntimeError):
    pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get_json(base: str, route: str, **params: str | None) -> tuple[int, Any]:
    q = urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
    url = f"{base}{PREFIX}/{route}" + (f"?{q}" if q else "")
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            status, body = r.status, r.read()
    except urllib.error.HTTPError as e:
        status, body = e.code, e.read()
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return 0, None
    try:
        return status, json.loads(body)
    except ValueError:
        return status, None


def wait_ready(base: str, proc: subprocess.Popen, timeout: float) -> str:
    """Poll ``runs`` until every run is ready; the first run's name."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise BenchError(f"TensorBoard exited with {proc.returncode}")
        status, data = get_json(base, "runs")
        runs = (data or {}).get("runs") or [] if status == 200 else []
        states = [r.get("state") for r in runs]
        if "error" in states:
            raise BenchError(f"a run failed to load: {runs}")
        if runs and all(s == "ready" for s in states):
            return str(runs[0]["name"])
        time.sleep(0.05)
    raise BenchError(f"not ready after {timeout:.0f} s")


def first_profile(base: str, run: str) -> dict[str, str]:
    _, workers = get_json(base, "workers", run=run, view="Trace")
    names = [w if isinstance(w, str) else w.get("name", "") for w in (workers or [])]
    names = [w for w in names if w and w != "All"]
    if not names:
        raise BenchError(f"no worker in run {run}: {workers}")
    _, spans = get_json(base, "spans", run=run, worker=names[0])
    span_names = [s if isinstance(s, str) else s.get("name", "") for s in (spans or [])]
    out = {"run": run, "worker": names[0]}
    if span_names:
        out["span"] = str(span_names[0])
    return out


def open_trace(browser: Any, base: str, profile: dict[str, str], extra: dict[str, str], timeout_s: float):
    ctx = browser.new_context(viewport=VIEWPORT)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    q = urllib.parse.urlencode({**profile, "view": "Trace", **extra})
    t0 = time.perf_counter()
    page.goto(f"{base}{PREFIX}/index.html?{q}")
    page.wait_for_selector(READY, timeout=timeout_s * 1000)
    return ctx, page, time.perf_counter() - t0, errors


def drive(page: Any, seconds: float) -> dict[str, Any]:
    page.evaluate(DRIVE_JS, 1000)  # fetch what the drive shows
    page.wait_for_selector(READY, timeout=60000)
    page.wait_for_timeout(500)
    idle = page.evaluate(IDLE_JS, 1000)
    r = page.evaluate(DRIVE_JS, int(seconds * 1000))
    draws = r.pop("draws")
    return {
        **r,
        "idle_fps": idle,
        "fps": r["frames"] / r["seconds"],
        "draw_ms": statistics.median(draws) if draws else None,
        "stats": page.evaluate("window.__timeline.stats()"),
    }


def browser_cpu_s() -> float:
    """CPU seconds (user + system) used so far by the chromium processes this benchmark started."""
    total = 0
    for pid in descendants(os.getpid()):
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.index(b"(") + 1 : stat.rindex(b")")]
        if b"chrom" not in name:
            continue
        fields = stat[stat.rindex(b")") + 2 :].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime (clock ticks)
    return total / os.sysconf("SC_CLK_TCK")


def drag(page: Any, seconds: float) -> dict[str, Any]:
    """Drag-pan in the page (DRAG_JS), then through Playwright's mouse; frames drawn per second, and the
    browser's CPU time per frame drawn (all its processes: a figure the machine's load moves less)."""
    page.wait_for_selector(READY, timeout=60000)
    page.wait_for_timeout(500)
    c0 = browser_cpu_s()
    r = page.evaluate(DRAG_JS, int(seconds * 1000))
    cpu = browser_cpu_s() - c0
    draws = r.pop("draws")
    out = {
        **r,
        "fps": r["frames"] / r["seconds"],
        "draw_ms": statistics.median(draws) if draws else None,
        "cpu_ms_per_frame": cpu * 1000 / max(r["frames"], 1),
    }
    page.wait_for_selector(READY, timeout=60000)
    box = page.locator('[data-testid="timeline"] .tl-main canvas').bounding_box()
    y = box["y"] + min(60, box["height"] / 2)
    right = box["x"] + box["width"] - 40
    f0 = page.evaluate("window.__timeline.stats().frames")
    c0 = browser_cpu_s()
    t0 = time.perf_counter()
    moves = 0
    while time.perf_counter() - t0 < seconds:
        page.mouse.move(right, y)
        page.mouse.down()
        for k in range(1, 118):
            page.mouse.move(right - 6 * k, y)
            moves += 1
            if time.perf_counter() - t0 >= seconds:
                break
        page.mouse.up()
    wall = time.perf_counter() - t0
    frames = page.evaluate("window.__timeline.stats().frames") - f0
    cpu = browser_cpu_s() - c0
    out["cdp"] = {
        "frames": frames,
        "seconds": wall,
        "moves": moves,
        "fps": frames / wall,
        "moves_per_s": moves / wall,
        "cpu_ms_per_frame": cpu * 1000 / max(frames, 1),
    }
    return out


def one_round(logdir: Path, browser: Any, seconds: float, timeout: float, log_dir: Path) -> dict[str, Any]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log_path = log_dir / f"tensorboard-{port}.log"
    cmd = [str(TENSORBOARD), "--logdir", str(logdir), "--host", "127.0.0.1", "--port", str(port)]
    env = {**os.environ, "TORCH_PROFILER_SCAN_INTERVAL": "0.5"}
    cwd = tempfile.mkdtemp(prefix="bench-tb-")
    res: dict[str, Any] = {"loadavg_at_start": os.getloadavg()[0]}
    with open(log_path, "wb") as log:
        t_start = time.perf_counter()
        proc = subprocess.Popen(
            cmd, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        with TreeSampler(proc.pid) as sampler:
            run = wait_ready(base, proc, timeout)
            res["ready_s"] = time.perf_counter() - t_start
            res["peak_at_ready_mb"] = sampler.peak / 2**20
            profile = first_profile(base, run)
            res["profile"] = profile
            ctx, page, res["first_draw_s"], errors = open_trace(browser, base, profile, {}, timeout)
            _, tracks = get_json(base, "timeline/tracks", **profile)
            res["events"] = tracks["event_count"]
            res["tracks"] = len(tracks["tracks"])
            ctx2, _, res["warm_draw_s"], errors2 = open_trace(browser, base, profile, {}, timeout)
            ctx2.close()
            res["fps_whole"] = drive(page, seconds)
            ctx.close()
            span = tracks["end_us"] - tracks["start_us"]
            zoom = {"t0": f"{span * 0.49:.3f}", "t1": f"{span * 0.51:.3f}"}
            ctx, page, res["zoomed_draw_s"], errors3 = open_trace(browser, base, profile, zoom, timeout)
            res["fps_zoomed"] = drive(page, seconds)
            res["drag_zoomed"] = drag(page, seconds)
            ctx.close()
            res["page_errors"] = errors + errors2 + errors3
            res["peak_rss_mb"] = sampler.peak / 2**20
            res["hwm_sum_mb"] = sampler.hwm_sum / 2**20
    finally:
        stop(proc)
        with contextlib.suppress(OSError):
            os.rmdir(cwd)
    return res


def stop(proc: subprocess.Popen) -> None:
    """Terminate the process group started for TensorBoard (its pid is the group id)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def bench(logdir: Path, repeats: int, seconds: float, timeout: float) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    rounds = []
    log_dir = Path(tempfile.mkdtemp(prefix="bench-timeline-browser-"))
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            for i in range(repeats):
                r = one_round(logdir, browser, seconds, timeout, log_dir)
                rounds.append(r)
                print(
                    f"  round {i + 1}: ready {r['ready_s']:.1f} s, first draw {r['first_draw_s']:.2f} s "
                    f"(warm {r['warm_draw_s']:.2f} s), {r['fps_whole']['fps']:.0f} fps whole / "
                    f"{r['fps_zoomed']['fps']:.0f} fps zoomed, drag-pan {r['drag_zoomed']['fps']:.0f} fps "
                    f"(through the browser's input {r['drag_zoomed']['cdp']['fps']:.0f}), tree peak {r['peak_rss_mb']:.0f} MB "
                    f"(load average {r['loadavg_at_start']:.1f} at the start)",
                    flush=True,
                )
        finally:
            browser.close()

    def col(f: Any) -> dict[str, Any]:
        return summary([float(f(r)) for r in rounds])

    return {
        "logdir": str(logdir),
        "trace_bytes": sum(f.stat().st_size for f in logdir.rglob("*.pt.trace.json*")),
        "events": rounds[0]["events"],
        "tracks": rounds[0]["tracks"],
        "repeats": repeats,
        "drive_s": seconds,
        "ready_s": col(lambda r: r["ready_s"]),
        "first_draw_s": col(lambda r: r["first_draw_s"]),
        "warm_draw_s": col(lambda r: r["warm_draw_s"]),
        "zoomed_draw_s": col(lambda r: r["zoomed_draw_s"]),
        "fps_whole": col(lambda r: r["fps_whole"]["fps"]),
        "fps_zoomed": col(lambda r: r["fps_zoomed"]["fps"]),
        "drag_fps": col(lambda r: r["drag_zoomed"]["fps"]),
        "drag_draw_ms": col(lambda r: r["drag_zoomed"]["draw_ms"]),
        "drag_panned_screens": col(lambda r: r["drag_zoomed"]["panned"]),
        "drag_cpu_ms": col(lambda r: r["drag_zoomed"]["cpu_ms_per_frame"]),
        "drag_cdp_cpu_ms": col(lambda r: r["drag_zoomed"]["cdp"]["cpu_ms_per_frame"]),
        "drag_cdp_fps": col(lambda r: r["drag_zoomed"]["cdp"]["fps"]),
        "drag_cdp_moves_per_s": col(lambda r: r["drag_zoomed"]["cdp"]["moves_per_s"]),
        "idle_fps": col(lambda r: r["fps_whole"]["idle_fps"]),
        "draw_ms_whole": col(lambda r: r["fps_whole"]["draw_ms"]),
        "draw_ms_zoomed": col(lambda r: r["fps_zoomed"]["draw_ms"]),
        "items_whole": col(lambda r: r["fps_whole"]["stats"]["items"]),
        "page_heap_mb": col(lambda r: (r["fps_whole"]["heap"] or 0) / 2**20),
        "peak_rss_mb": col(lambda r: r["peak_rss_mb"]),
        "peak_at_ready_mb": col(lambda r: r["peak_at_ready_mb"]),
        "loadavg": col(lambda r: r["loadavg_at_start"]),
        "rounds": rounds,
        "targets": TARGETS,
        "machine": machine(),
    }


def report(r: dict[str, Any]) -> None:
    mb = 2**20
    print(
        f"logdir {r['logdir']}: {r['trace_bytes'] / mb:.0f} MB of trace files as stored, {r['events']:,} events on "
        f"{r['tracks']} tracks; medians of {r['repeats']} (min-max); 1-minute load average "
        f"{fmt(r['loadavg'], digits=1)} on {os.cpu_count()} CPUs at the rounds' starts"
    )
    print(f"profile ready after TensorBoard start: {fmt(r['ready_s'], digits=1, unit=' s')}")
    first = r["first_draw_s"]["median"]
    ok = "ok" if first <= TARGETS["first_draw_s"] else "OVER"
    print(f"first timeline drawn after ready (index cold): {fmt(r['first_draw_s'], unit=' s')} [{ok}]")
    print(f"  again in a new page (index built): {fmt(r['warm_draw_s'], unit=' s')}")
    print(f"  zoomed to 1/50 (deep link): {fmt(r['zoomed_draw_s'], unit=' s')}")
    for view in ("whole", "zoomed"):
        s = r[f"fps_{view}"]
        ok = "ok" if s["median"] >= TARGETS["fps"] else "UNDER"
        print(
            f"pan/zoom from cache, {view} view: {fmt(s, digits=0, unit=' fps')} [{ok}], "
            f"{fmt(r[f'draw_ms_{view}'], digits=1, unit=' ms')} drawing per frame"
        )
    s = r["drag_fps"]
    ok = "ok" if s["median"] >= TARGETS["fps"] else "UNDER"
    print(
        f"drag-pan, zoomed view (scripted in the page): {fmt(s, digits=0, unit=' fps')} [{ok}], "
        f"{fmt(r['drag_draw_ms'], digits=1, unit=' ms')} drawing per frame, "
        f"{fmt(r['drag_panned_screens'], digits=1)} screens panned, "
        f"browser CPU {fmt(r['drag_cpu_ms'], digits=1, unit=' ms')} per frame"
    )
    print(
        f"drag-pan through the browser's input (Playwright mouse): {fmt(r['drag_cdp_fps'], digits=0, unit=' fps')} "
        f"at {fmt(r['drag_cdp_moves_per_s'], digits=0)} moves/s, "
        f"browser CPU {fmt(r['drag_cdp_cpu_ms'], digits=1, unit=' ms')} per frame"
    )
    print(f"animation frames/s of the idle page (the browser's ceiling here): {fmt(r['idle_fps'], digits=0)}")
    print(f"boxes in the whole view's answer: {fmt(r['items_whole'], digits=0)}")
    print(f"page JS heap after the drive: {fmt(r['page_heap_mb'], digits=0, unit=' MB')}")
    print(
        f"TensorBoard tree peak RSS: {fmt(r['peak_rss_mb'], digits=0, unit=' MB')} "
        f"(at ready {fmt(r['peak_at_ready_mb'], digits=0, unit=' MB')}); target <= 1.5 GB on the 1 GB trace"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("logdir", type=Path, help="a logdir (e.g. .bench/traces/322mb)")
    ap.add_argument("--repeats", type=int, default=3, help="fresh TensorBoards to measure (default 3)")
    ap.add_argument("--drive", type=float, default=3.0, help="seconds of pan/zoom per view (default 3)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for a load (default 600)")
    ap.add_argument("--json", type=Path, metavar="OUT", help="also write the results as JSON here")
    a = ap.parse_args(argv)
    if not a.logdir.is_dir():
        print(f"not a directory: {a.logdir}", file=sys.stderr)
        return 2
    if not CHROMIUM.exists() or not TENSORBOARD.exists():
        print(f"needs {CHROMIUM} and {TENSORBOARD}", file=sys.stderr)
        return 2
    print(
        f"targets: first draw <= {TARGETS['first_draw_s']:.0f} s after ready, >= {TARGETS['fps']:.0f} fps, "
        f"tree <= {TARGETS['tree_gb_1gb_trace']} GB on the 1 GB trace"
    )
    try:
        r = bench(a.logdir.resolve(), a.repeats, a.drive, a.timeout)
    except BenchError as e:
        print(f"failed: {e}", file=sys.stderr)
        return 1
    report(r)
    if a.json:
        write_json(a.json, r)
        print(f"wrote {a.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

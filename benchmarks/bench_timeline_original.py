"""The anchor for the Trace view: does the original plugin's trace viewer draw a trace, and how fast?

Starts the original plugin (torch-tb-profiler 0.4.3 in $ORIG_VENV, default .bench/orig-venv; create it
with ``python3 -m venv .bench/orig-venv && .bench/orig-venv/bin/pip install torch-tb-profiler==0.4.3
tensorboard``) on LOGDIR, opens its page in headless Debian chromium with every request that leaves
127.0.0.1 blocked (as on an offline machine; the requests it tried are listed), picks View = Trace and
waits up to --wait seconds for its Catapult viewer (a ``tr-ui-timeline-view`` element in any frame).
Prints whether and when the viewer appeared, and the TensorBoard process tree's peak RSS.

Usage:
    python benchmarks/bench_timeline_original.py LOGDIR [--wait 120] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_server import ORIG_VENV
from common import machine, write_json
from proctree import TreeSampler

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
PORT = 6177
PAGE = f"http://127.0.0.1:{PORT}/data/plugin/pytorch_profiler/index.html"
VIEWER = "tr-ui-timeline-view"


def wait_for_runs(timeout: float) -> None:
    """Until the original lists a run and says it is no longer loading."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{PORT}/data/plugin/pytorch_profiler/runs") as r:
                answer = json.load(r)
            if answer.get("runs") and not answer.get("loading"):
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise TimeoutError("the original plugin listed no run in time")


def open_trace_view(wait_s: float) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    blocked: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1600, "height": 1000})

        def route(r: Any) -> None:
            if r.request.url.startswith("http://127.0.0.1"):
                r.continue_()
            else:
                blocked.append(r.request.url)
                r.abort()

        page.route("**/*", route)
        page.goto(PAGE, wait_until="load")
        page.locator("[role=button]", has_text="Overview").first.click(timeout=30_000)
        page.locator("[role=option]", has_text="Trace").first.click()
        t0 = time.monotonic()
        drawn_s = None
        while time.monotonic() - t0 < wait_s:
            if any(_count(f, VIEWER) for f in page.frames):
                drawn_s = time.monotonic() - t0
                break
            time.sleep(0.5)
        browser.close()
    return {"viewer_drawn_s": drawn_s, "waited_s": wait_s, "blocked_requests": sorted(set(blocked))}


def _count(frame: Any, selector: str) -> int:
    try:
        return int(frame.evaluate(f"document.querySelectorAll('{selector}').length"))
    except Exception:  # a frame that navigated away meanwhile
        return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("logdir", type=Path)
    ap.add_argument("--wait", type=float, default=120.0, help="seconds to wait for the viewer (default 120)")
    ap.add_argument("--json", type=Path, metavar="OUT", help="also write the result as JSON here")
    args = ap.parse_args(argv)
    tb = ORIG_VENV / "bin" / "tensorboard"
    if not tb.is_file():
        print(f"no original plugin at {ORIG_VENV}: see this script's help to create it", file=sys.stderr)
        return 2
    cmd = [str(tb), "--logdir", str(args.logdir), "--host", "127.0.0.1", "--port", str(PORT)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        with TreeSampler(proc.pid) as sampler:
            t0 = time.monotonic()
            wait_for_runs(600)
            ready_s = time.monotonic() - t0
            result = open_trace_view(args.wait)
    finally:
        proc.terminate()
        proc.wait(30)
    peak_mb = sampler.peak / 2**20
    result.update(logdir=str(args.logdir), ready_s=ready_s, peak_tree_mb=peak_mb)
    drawn = result["viewer_drawn_s"]
    print(f"original plugin on {args.logdir}: runs ready after {ready_s:.1f} s")
    outcome = "never drawn" if drawn is None else f"drawn after {drawn:.1f} s"
    print(f"trace viewer: {outcome} (waited {args.wait:.0f} s); process tree peak {peak_mb:.0f} MB")
    print("requests that left 127.0.0.1 (blocked):", ", ".join(result["blocked_requests"]) or "none")
    if args.json:
        write_json(args.json, {"machine": machine(), "argv": sys.argv, "result": result})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

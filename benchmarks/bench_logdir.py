"""Big logdirs: the cost of `/runs` (every page) and `/views` at 1,000 / 10,000 / 50,000 files, in-process.

Two layouts per size: ``runs`` (N runs of one file each) and ``files`` (one run of N workers). The files
are one-line traces that fail to parse (the routes' cost does not depend on what a file holds, and
50,000 real parses would take minutes); the store is idle when the routes are timed. Each route is
asked ``--rounds`` times through the plugin's handlers (a werkzeug request, the JSON encoding
included); ``/views`` for the first and the last run. Time should grow at most linearly with files.

Usage:
    python benchmarks/bench_logdir.py [--sizes 1000 10000 50000] [--rounds 3] [--json-out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from werkzeug.wrappers import Request

from benchmarks.common import fmt, summary
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.views.common import json_response
from torch_tb_profiler.views.core import runs, views


def build(root: Path, n: int, layout: str) -> list[str]:
    old = time.time() - 60
    names = []
    for i in range(n):
        run, worker = (f"run{i:05d}", "w") if layout == "runs" else ("run", f"w{i:05d}")
        path = root / run / f"{worker}.pt.trace.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{")
        os.utime(path, (old, old))
        names.append(run)
    return sorted(set(names))


def ask(handler: Any, store: RunStore, **params: Any) -> tuple[Any, int]:
    request = Request.from_values(query_string={k: str(v) for k, v in params.items()})
    data = handler(request, store)
    return data, len(json_response(data).get_data())


def all_pages(store: RunStore) -> tuple[int, int]:
    offset: int | None = 0
    pages = biggest = 0
    while offset is not None:
        data, size = ask(runs, store, offset=offset)
        offset, pages, biggest = data["next_offset"], pages + 1, max(biggest, size)
    return pages, biggest


def measure(n: int, layout: str, rounds: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        names = build(Path(tmp), n, layout)
        store = RunStore(tmp, processes=0, settle_seconds=0)
        try:
            started = time.perf_counter()
            store.scan_once()
            assert store.wait_idle(3600)
            load = time.perf_counter() - started
            runs_s, views_s = [], []
            pages = biggest = 0
            for _ in range(rounds):
                t = time.perf_counter()
                pages, biggest = all_pages(store)
                runs_s.append(time.perf_counter() - t)
                t = time.perf_counter()
                for name in (names[0], names[-1]):
                    ask(views, store, run=name)
                views_s.append((time.perf_counter() - t) / 2)
        finally:
            store.close()
    return {
        "files": n,
        "layout": layout,
        "scan_and_load_s": load,
        "runs_all_pages_s": summary(runs_s),
        "runs_pages": pages,
        "runs_biggest_page_bytes": biggest,
        "views_s": summary(views_s),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 50000])
    parser.add_argument("--layouts", nargs="+", default=["runs", "files"], choices=["runs", "files"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json-out")
    args = parser.parse_args()
    results = []
    print("| files | layout | /runs, all pages (s) | pages | biggest page | /views (s) |")
    print("|---|---|---|---|---|---|")
    for layout in args.layouts:
        for n in args.sizes:
            r = measure(n, layout, args.rounds)
            results.append(r)
            print(
                f"| {n} | {layout} | {fmt(r['runs_all_pages_s'], digits=3)} | {r['runs_pages']} | "
                f"{r['runs_biggest_page_bytes'] / 1e6:.2f} MB | {fmt(r['views_s'], 1e3, 2)} ms |",
                flush=True,
            )
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()

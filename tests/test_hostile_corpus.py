"""Issue 12: the hostile corpus (tests/hostile/make_corpus.py) through a real TensorBoard and the CLI.

Every hostile file ends loaded-with-warning or as a clear per-file error, the good runs beside them stay
ready, no route answers 5xx, the process tree stays under MEMORY_BOUND and TensorBoard stops within 10 s
of SIGTERM; the CLI summarises the same logdir without a traceback.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.fixtures.peak_rss import PeakRss
from tests.fixtures.tensorboard_server import TensorBoard, tensorboard
from tests.hostile.make_corpus import GOOD_RUNS, LOOP_WARNINGS, Case, make_corpus
from tests.test_routes_bad_input import REQUIRED, ROUTES

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the corpus has FIFOs and symlinks")

MEMORY_BOUND = 1536 << 20  # bytes of RSS, TensorBoard and its loading processes together
SHUTDOWN_S = 10.0


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Case]]:
    root = tmp_path_factory.mktemp("hostile") / "logdir"
    root.mkdir()
    return root, make_corpus(root)


@pytest.fixture(scope="module")
def served(
    corpus: tuple[Path, list[Case]], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    root, _cases = corpus
    cache = tmp_path_factory.mktemp("cache")
    with tensorboard(
        root, env={"TORCH_PROFILER_TRACE_CACHE": str(cache)}, tmp=tmp_path_factory.mktemp("tb")
    ) as tb:
        rss = PeakRss(tb.proc.pid)
        runs = tb.wait_loaded(timeout=120)
        yield {"tb": tb, "runs": runs, "rss": rss}


def _by_worker(runs: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    out = {}
    for run in runs["runs"]:
        for f in run["files"]:
            errors = [e["message"] for e in run["errors"] if e["worker"] == f["worker"]]
            warnings = [w["message"] for w in run["warnings"] if w["worker"] == f["worker"]]
            out[(run["name"], f["worker"])] = {**f, "errors": errors, "warnings": warnings}
    return out


def test_every_file_ends_loaded_with_warning_or_with_a_clear_error(
    served: dict[str, Any], corpus: Any
) -> None:
    _root, cases = corpus
    runs = served["runs"]
    states = {r["name"]: r["state"] for r in runs["runs"]}
    assert set(states) == {*GOOD_RUNS, "hostile", "fs"}, states  # no phantom runs from symlink loops
    assert all(states[name] == "ready" for name in GOOD_RUNS)
    files = _by_worker(runs)
    for case in cases:
        f = files[(case.run, case.worker)]
        where = f"{case.run}/{case.worker}: {f}"
        if case.expect == "error":
            assert f["status"] == "error" and any(case.text in m for m in f["errors"]), where
            assert not any(m.split(":")[0].endswith(("Error", "Exception")) for m in f["errors"]), where
        else:
            assert f["status"] == "ready", where
            if case.expect == "warning":
                assert any(case.text in w for w in f["warnings"]), where
            assert not any("truncated" in w for w in f["warnings"]) or case.worker == "truncated", where
    warnings = "\n".join(runs["scan_warnings"])
    for text in LOOP_WARNINGS:
        assert text in warnings


def test_no_route_answers_5xx(served: dict[str, Any], corpus: Any) -> None:
    tb: TensorBoard = served["tb"]
    _root, cases = corpus
    failures = []
    for case in cases:
        for route in ROUTES:
            params = {"run": case.run, "worker": case.worker, "span": "1", **REQUIRED.get(route, {})}
            if route == "diff":
                params.update(base_run="good1", base_worker="w0")
            status, body = tb.get(route, **params)
            if status >= 500:
                failures.append((route, case.worker, status, str(body)[:200]))
    for path in ("assets/%00", "assets/..%2f..%2fetc%2fpasswd", "assets/" + "a" * 5000, "%00"):
        status, _ = tb.get(path)
        if status != 404:
            failures.append((path, "", status, ""))
    assert failures == []


def test_memory_stays_bounded_and_sigterm_stops_tensorboard(served: dict[str, Any]) -> None:
    tb: TensorBoard = served["tb"]
    peak = served["rss"].stop()
    print(f"peak RSS of the TensorBoard process tree: {peak / 2**20:.0f} MiB")
    assert 0 < peak < MEMORY_BOUND, f"peak RSS {peak / 2**20:.0f} MiB"
    tree = [tb.proc.pid, *(p.pid for p in psutil.Process(tb.proc.pid).children(recursive=True))]
    started = time.monotonic()
    os.kill(tb.proc.pid, signal.SIGTERM)  # TensorBoard alone, as a service manager would
    tb.proc.wait(timeout=SHUTDOWN_S)
    print(f"TensorBoard exited {time.monotonic() - started:.2f} s after SIGTERM")
    assert time.monotonic() - started < SHUTDOWN_S
    deadline = time.monotonic() + SHUTDOWN_S
    while time.monotonic() < deadline and any(psutil.pid_exists(p) and _alive(p) for p in tree[1:]):
        time.sleep(0.1)
    assert not any(psutil.pid_exists(p) and _alive(p) for p in tree[1:]), "loading processes left behind"


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def test_cli_reports_each_file_and_summarises_the_rest(corpus: Any) -> None:
    root, cases = corpus
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "torch_tb_profiler", "summary", str(root), "--json"],
        capture_output=True,
        timeout=300,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    )
    assert time.monotonic() - started < 120
    stderr = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 0, stderr
    assert "Traceback" not in stderr
    for case in cases:
        if case.expect == "error":
            line = next((x for x in stderr.splitlines() if f"{case.run}/{case.worker}/" in x), "")
            assert case.text in line, (case, stderr)

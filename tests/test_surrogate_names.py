"""Issue 27 item 13: a lone surrogate escape in a name (``"aten::mm\\ud800"``, valid JSON, not encodable
as UTF-8) is shown escaped (``aten::mm\\ud800`` as text) and every route answers JSON; the CLI's summary
and compare write it too."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from werkzeug.test import Client

from tests.hostile.make_corpus import trace_doc
from tests.test_routes_bad_input import REQUIRED
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.plugin import collect_routes, wsgi_app

SHOWN = "aten::mm\\ud800"  # the name as the answers show it: a backslash, then "ud800"


def write_surrogate_trace(path: Path, everywhere: bool = True) -> Path:
    """Lone surrogates in op, kernel and step names; ``everywhere``: also in the process and thread
    names and the trace's name (which the whole-file readers refused)."""
    doc = trace_doc()
    renames = {"aten::mm": "aten::mm@S@", "gemm": "gemm@S@", "ProfilerStep#2": "ProfilerStep#2@S@"}
    for e in doc["traceEvents"]:
        e["name"] = renames.get(e.get("name"), e.get("name"))
        if e.get("ph") == "M" and everywhere:
            e["args"]["name"] += "@S@"
    if everywhere:
        doc["traceName"] = "run@S@"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc).replace("@S@", "\\ud800"))  # the JSON escape of a lone surrogate
    return path


@pytest.fixture(scope="module")
def logdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("logdir")
    paths = [write_surrogate_trace(root / "sur" / f"w{i}.pt.trace.json", everywhere=i == 0) for i in (0, 1)]
    for p in paths:
        os.utime(p, (time.time() - 60,) * 2)
    return root


@pytest.fixture(scope="module")
def store(logdir: Path) -> Iterator[RunStore]:
    s = RunStore(str(logdir), processes=0, settle_seconds=1)
    s.scan_once()
    assert s.wait_idle(60)
    yield s
    s.close()


PARAMS = {  # the route-specific parameters of test_routes_bad_input, with this trace's names
    **REQUIRED,
    "diff": {"base_run": "sur", "base_worker": "w1", "base_span": "1"},
    "operators/stack": {"name": SHOWN},
    "timeline/longest": {"name": SHOWN},
    "timeline/search": {"q": "ud800"},
    "timeline": {**REQUIRED["timeline"], "format": "json"},  # the names of a window: its JSON form
}


@pytest.mark.parametrize("worker", ["w0", "w1"])
@pytest.mark.parametrize("route", sorted(r.lstrip("/") for r in collect_routes()))
def test_every_route_answers_json_below_500(store: RunStore, route: str, worker: str) -> None:
    handler = collect_routes()["/" + route]
    base = "w1" if worker == "w0" else "w0"
    params = {"run": "sur", "worker": worker, "span": "1", **PARAMS.get(route, {})}
    if route == "diff":
        params["base_worker"] = base
    response = Client(wsgi_app(handler, store)).get(route, query_string=params)
    # every route answers the loaded profile (the Module view's: this trace has no module ranges, 404)
    expected = 404 if route.startswith("modules") else 200
    assert response.status_code == expected, (route, response.get_data(as_text=True)[:300])
    body = response.get_data()
    if route == "trace":  # the trace file itself (gzip), as written: the escape is still JSON text
        assert b"\\ud800" in gzip.decompress(body)
        return
    assert response.mimetype == "application/json", route
    json.loads(body)  # valid JSON (no surrogate could be written as UTF-8)


def test_names_are_shown_escaped(store: RunStore) -> None:
    handler = collect_routes()["/operators"]
    response = Client(wsgi_app(handler, store)).get("operators", query_string={"run": "sur", "worker": "w0"})
    assert response.status_code == 200
    (row,) = json.loads(response.get_data())["rows"]
    assert row["name"] == SHOWN and row["calls"] == 3  # trace_doc: one aten::mm per step, 3 steps


@pytest.mark.parametrize("command", ["summary", "summary_json", "compare"])
def test_cli_writes_the_escaped_names(logdir: Path, command: str) -> None:
    w0, w1 = str(logdir / "sur" / "w0.pt.trace.json"), str(logdir / "sur" / "w1.pt.trace.json")
    args = {
        "summary": ["summary", str(logdir)],
        "summary_json": ["summary", str(logdir), "--json"],
        "compare": ["compare", w0, w1],
    }[command]
    done = subprocess.run(
        [sys.executable, "-m", "torch_tb_profiler", *args],
        capture_output=True,
        timeout=120,
        env=dict(os.environ),
    )
    stderr = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 0, stderr
    assert "Traceback" not in stderr
    out = done.stdout.decode("utf-8")  # strict: the output is valid UTF-8
    if command == "summary_json":
        doc = json.loads(out)
        assert any(op["name"] == SHOWN for op in doc["profiles"][0]["operators"])
    elif command == "summary":
        assert SHOWN in out

"""Memory routes through the plugin's WSGI wrapper and a real RunStore: answers and 400/404s."""

from __future__ import annotations

import json
import os
import time

import pytest
from werkzeug.test import Client

from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.plugin import wsgi_app
from torch_tb_profiler.views import memory as views


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("logdir")
    b = TraceBuilder()
    b.step(1, 0, 1000)
    b.op("aten::empty", 10, 10)
    b.memory(15, 4096, addr=1, total_allocated=4096, total_reserved=8192, device_type=1, device_id=0)
    b.memory(500, -4096, addr=1, total_allocated=0, total_reserved=8192, device_type=1, device_id=0)
    b.write(root / "run" / "worker0.pt.trace.json")
    plain = TraceBuilder()
    plain.op("aten::mm", 0, 10)
    plain.write(root / "run" / "nomem.pt.trace.json")
    for p in root.rglob("*.json"):
        os.utime(p, (time.time() - 60,) * 2)
    s = RunStore(str(root), processes=0, settle_seconds=0)
    s.scan_once()
    assert s.wait_idle(60)
    yield s
    s.close()


def get(store: RunStore, route: str, **params) -> tuple[int, object]:
    client = Client(wsgi_app(views.ROUTES[route], store))
    r = client.get("/", query_string=params)
    return r.status_code, json.loads(r.get_data())


def test_devices_and_curve(store):
    status, devs = get(store, "/memory/devices", run="run", worker="worker0")
    assert status == 200 and devs[0]["device"] == "GPU0" and devs[0]["peak_allocated_bytes"] == 4096
    status, curve = get(store, "/memory/curve", run="run", worker="worker0", device="GPU0")
    assert status == 200 and curve["allocated"] == [4096, 0] and curve["reserved"] == [8192, 8192]


def test_events_and_stats(store):
    status, ev = get(store, "/memory/events", run="run", worker="worker0", sort="duration")
    assert status == 200 and ev["total"] == 1
    assert ev["rows"][0]["operator"] == "aten::empty" and ev["rows"][0]["duration"] == pytest.approx(485)
    status, st = get(store, "/memory/stats", run="run", worker="worker0")
    assert status == 200 and st["rows"][0]["name"] == "aten::empty"
    assert st["rows"][0]["self_alloc_size"] == 4096 and st["rows"][0]["size_increase"] == 4096


@pytest.mark.parametrize(
    ("route", "params", "status", "fragment"),
    [
        (
            "/memory/curve",
            {"run": "run", "worker": "worker0", "device": "GPU9"},
            400,
            "no memory records for device 'GPU9'",
        ),
        ("/memory/curve", {"run": "run", "worker": "worker0", "start": "x"}, 400, "'start' must be a number"),
        (
            "/memory/curve",
            {"run": "run", "worker": "worker0", "start": "10", "end": "5"},
            400,
            "must not be after",
        ),
        (
            "/memory/curve",
            {"run": "run", "worker": "worker0", "max_points": "2"},
            400,
            "'max_points' must be between",
        ),
        (
            "/memory/events",
            {"run": "run", "worker": "worker0", "sort": "random"},
            400,
            "'sort' must be one of",
        ),
        ("/memory/events", {"run": "run", "worker": "worker0", "limit": "0"}, 400, "'limit' must be between"),
        ("/memory/stats", {"run": "run", "worker": "nomem"}, 404, "has no memory records"),
        ("/memory/stats", {"run": "run"}, 400, "missing query parameter 'worker'"),
        ("/memory/devices", {"run": "nope", "worker": "w"}, 404, "no run named 'nope'"),
    ],
)
def test_bad_requests(store, route, params, status, fragment):
    got_status, body = get(store, route, **params)
    assert got_status == status and fragment in body["error"]


def test_routes_are_registered():
    from torch_tb_profiler.plugin import collect_routes

    routes = collect_routes()
    assert {"/memory/devices", "/memory/curve", "/memory/events", "/memory/stats", "/distributed"} <= set(
        routes
    )


def test_never_a_500_on_odd_values(store):
    for params in ({"start": "1e308", "end": "inf"}, {"min_bytes": "-5"}, {"offset": "99999"}):
        status, _ = get(store, "/memory/events", run="run", worker="worker0", **params)
        assert status in (200, 400)

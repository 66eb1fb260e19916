"""The Distributed route on a real 2-rank gloo DDP run (samples/ddp_gloo_2ranks) via a RunStore."""

from __future__ import annotations

import json

import pytest
from werkzeug.test import Client

from tests.fixtures.paths import SAMPLES
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.plugin import wsgi_app
from torch_tb_profiler.views import distributed as views


@pytest.fixture(scope="module")
def store():
    s = RunStore(str(SAMPLES), processes=0, settle_seconds=0)
    s.scan_once()
    assert s.wait_idle(120)
    yield s
    s.close()


def get(store, **params):
    r = Client(wsgi_app(views.ROUTES["/distributed"], store)).get("/", query_string=params)
    return r.status_code, json.loads(r.get_data())


def test_job(store):
    status, job = get(store, run="ddp_gloo_2ranks")
    assert status == 200
    assert [w["worker"] for w in job["workers"]] == ["rank0", "rank1"]
    assert job["job"] == "" and job["jobs"] == [{"name": "", "workers": 2}]  # one job: distinct ranks
    assert set(job["overlap"]) == {"rank0", "rank1"} and set(job["wait"]) == {"rank0", "rank1"}
    assert {r["collective"] for r in job["comm_ops"]["rank0"]} == {"all_reduce", "broadcast"}
    assert job["process_groups"][0]["backend"] == "cpu:gloo,cuda:gloo"
    status, limited = get(store, run="ddp_gloo_2ranks", span="1", max_rounds="3")
    assert status == 200 and len(limited["stragglers"]["rounds"]) == 3


@pytest.mark.parametrize(
    ("params", "status", "fragment"),
    [
        ({}, 400, "missing query parameter 'run'"),
        ({"run": "nope"}, 404, "no run named 'nope'"),
        ({"run": "ddp_gloo_2ranks", "span": "7"}, 404, "no loaded profile for span '7'"),
        ({"run": "ddp_gloo_2ranks", "max_rounds": "-1"}, 400, "'max_rounds' must be between"),
    ],
)
def test_errors(store, params, status, fragment):
    got, body = get(store, **params)
    assert got == status and fragment in body["error"]

"""``/operators`` answers a bounded page by default (issue 12, item 12): total and matched counts,
``offset``/``limit`` paging, ``q`` search, ``order``, and each measure's total for the pies."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest

from tests.fixtures.trace_builder import TraceBuilder
from tests.test_operators_routes import get
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.views import operators as view

NAMES = [f"aten::op_{i:02d}" for i in range(12)] + ["my::Special"]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunStore]:
    root = tmp_path_factory.mktemp("logdir")
    b = TraceBuilder()
    b.step(1, 0, 10_000)
    for i, name in enumerate(NAMES):
        b.op(name, 10 + 500 * i, 10 + i)  # host total 10, 11, 12, … µs
    path = b.write(root / "run" / "worker0.pt.trace.json.gz")
    os.utime(path, (time.time() - 60,) * 2)
    s = RunStore(str(root), processes=0, settle_seconds=1)
    s.scan_once()
    assert s.wait_idle(60)
    yield s
    s.close()


def ops(store: RunStore, **params: str) -> dict:
    status, body = get(store, "/operators", run="run", worker="worker0", **params)
    assert status == 200, body
    return body


def test_default_answer_is_bounded(store: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(view, "DEFAULT_LIMIT", 5)
    body = ops(store)
    assert body["total_rows"] == len(NAMES) and body["matched_rows"] == len(NAMES)
    assert len(body["rows"]) == 5 and body["offset"] == 0 and body["limit"] == 5
    assert [r["name"] for r in body["rows"]][:2] == ["my::Special", "aten::op_11"]


def test_pages_follow_each_other(store: RunStore) -> None:
    first = ops(store, limit="4")
    second = ops(store, limit="4", offset="4")
    last = ops(store, limit="4", offset="12")
    names = [r["name"] for r in first["rows"] + second["rows"] + last["rows"]]
    assert len(names) == len(set(names)) == 9  # 4 + 4 + the one row after offset 12 (of 13)
    assert ops(store, offset="100")["rows"] == []


def test_search_and_order(store: RunStore) -> None:
    body = ops(store, q="OP_1", sort="host_total_us", order="asc")
    assert body["matched_rows"] == 2 and body["total_rows"] == len(NAMES)
    assert [r["name"] for r in body["rows"]] == ["aten::op_10", "aten::op_11"]
    assert ops(store, q="[")["matched_rows"] == 0  # a plain substring, not a regex


def test_totals_cover_every_row(store: RunStore) -> None:
    body = ops(store, limit="1")
    expected = sum(10 + i for i in range(len(NAMES)))  # every row, not only the page
    assert body["totals"]["host_total_us"] == pytest.approx(expected)
    assert body["matrix_units"] is None  # a CPU profile: no TC columns to show


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"limit": "0"}, "'limit' must be between 1 and 100000"),
        ({"limit": "100001"}, "'limit' must be between 1 and 100000"),
        ({"offset": "-1"}, "'offset' must be between 0"),
        ({"order": "up"}, "'order' must be one of desc, asc"),
    ],
)
def test_bad_paging_parameters(store: RunStore, params: dict[str, str], message: str) -> None:
    status, body = get(store, "/operators", run="run", worker="worker0", **params)
    assert status == 400 and message in str(body)

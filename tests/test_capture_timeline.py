"""A replayed kernel's link to the launch that captured it: the capture trace opened on its own through the
Trace view's routes (``capture=<file>``, docs/api.md "Timeline")."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from werkzeug.test import Client

from tests.test_capture_merge import _run_with_captures
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.plugin import collect_routes, wsgi_app

RUN = "run=serve&worker=decode"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[RunStore]:
    s = RunStore(str(_run_with_captures(tmp_path)), processes=0, settle_seconds=0)
    s.scan_once()
    assert s.wait_idle(60)
    yield s
    s.close()


def _get(store: RunStore, route: str, query: str) -> tuple[int, dict]:
    answer = Client(wsgi_app(collect_routes()[route], store)).get(f"{route}?{query}")
    return answer.status_code, json.loads(answer.data)


def _kernel_id(store: RunStore, name: str) -> str:
    device = store.get_profile("serve", "decode", None).device
    return f"dev:{int(np.flatnonzero((device['name'] == name).to_numpy())[0])}"


def test_a_replayed_kernel_names_its_capture_launch_and_the_capture_opens_there(store: RunStore) -> None:
    status, kernel = _get(store, "/timeline/event", f"{RUN}&id={_kernel_id(store, 'add_kernel')}")
    assert status == 200 and kernel["args"]["captured by"] == "aten::add"
    link = kernel["capture"]
    assert link["file"] == "bs_32_rank0.json" and link["launch"].startswith("rt:")
    # the capture trace (_capture in test_capture_merge.py): aten::add is the second launch, its launch
    # call 200 + 10 µs after the capture trace's first event, 5 µs long, inside the op that made it
    query = f"{RUN}&capture={link['file']}"
    status, launch = _get(store, "/timeline/event", f"{query}&id={link['launch']}")
    assert status == 200 and launch["name"] == "hipLaunchKernel"
    status, tracks = _get(store, "/timeline/tracks", query)
    assert status == 200 and tracks["event_count"] > 0
    assert (launch["start_us"] - tracks["start_us"], launch["dur_us"]) == (210.0, 5.0)
    assert [(x["relation"], x["name"]) for x in launch["links"]] == [("operator", "aten::add")]
    names = [t["name"] for t in tracks["tracks"]]
    assert not any("graph replay" in n for n in names)  # the capture as recorded, not the merged replay


def test_an_unknown_capture_is_a_404_naming_the_known_ones(store: RunStore) -> None:
    status, answer = _get(store, "/timeline/tracks", f"{RUN}&capture=bs_8_rank0.json")
    assert status == 404
    assert "bs_8_rank0.json" in answer["error"] and "bs_32_rank0.json" in answer["error"]
    status, _ = _get(store, "/timeline/tracks", f"{RUN}&capture=../../etc/passwd")
    assert status == 404


def test_a_kernel_of_a_trace_without_captures_has_no_capture_link(tmp_path: Path) -> None:
    from tests.test_capture_merge import _replay

    _replay(tmp_path / "r" / "decode.pt.trace.json", [("gemm_kernel", 40)])
    s = RunStore(str(tmp_path), processes=0, settle_seconds=0)
    try:
        s.scan_once()
        assert s.wait_idle(60)
        device = s.get_profile("r", "decode", None).device
        answer = Client(wsgi_app(collect_routes()["/timeline/event"], s)).get(
            f"/timeline/event?run=r&worker=decode&id=dev:{len(device) - 1}"
        )
        assert answer.status_code == 200 and "capture" not in json.loads(answer.data)
    finally:
        s.close()

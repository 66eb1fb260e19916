""" "Show in timeline" from the Memory view (the op that made an allocation), a recommendation's evidence
(the operator or call it names) and a straggler round (the last rank's collective call, in that rank's
timeline), in chromium against a real TensorBoard: each lands on the Trace view with that event selected.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from urllib.parse import parse_qs, urlparse

import pytest

from tests.e2e.conftest import app_url
from tests.fixtures.builders_distributed import write_job
from tests.fixtures.tensorboard_server import TensorBoard, tensorboard
from tests.fixtures.trace_builder import V100, TraceBuilder

DETAILS = '[data-testid="timeline-details-name"]'


def url_key(page, key: str) -> str | None:
    return parse_qs(urlparse(page.url).query).get(key, [None])[0]


@pytest.fixture(scope="module")
def tb_links(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    logdir = tmp_path_factory.mktemp("links")
    # a GPU step with memory records and a blocking sync inside aten::item (the synchronization rule)
    b = TraceBuilder(device_properties=[V100])
    b.step(1, 0, 1000)
    add = b.op("aten::add", 1, 5)
    b.launch("elementwise_kernel", 2, 2, 10, 950, ext_id=add, blocks_per_sm=8, occupancy=90)
    b.op("aten::empty", 100, 20)
    b.memory(110, 4096, addr=7, total_allocated=4096, total_reserved=8192, device_type=1, device_id=0)
    item = b.op("aten::item", 500, 60)
    b.runtime("cudaStreamSynchronize", 505, 50, ext_id=item)
    b.memory(700, -4096, addr=7, total_allocated=0, total_reserved=8192, device_type=1, device_id=0)
    path = b.write(logdir / "gpu" / "w0.pt.trace.json.gz")
    os.utime(path, (time.time() - 60,) * 2)
    # a job of 4 ranks whose step 1 waits 100 µs for rank 2
    write_job(logdir / "job", 4, {0: (2, 100.0)})
    with tensorboard(logdir, tmp=tmp_path_factory.mktemp("tb")) as tb:
        tb.wait_loaded(timeout=120)
        yield tb


def test_memory_event_shows_the_op_that_allocated(tb_links, page, rec):
    page.goto(app_url(tb_links, run="gpu", view="Memory"))
    cell = page.locator('[data-testid="memory-events-table"] [role="cell"][data-col="operator"]').first
    cell.wait_for(timeout=60000)
    assert "aten::empty" in cell.inner_text()
    cell.locator('[data-testid="show-in-timeline"]').click()
    page.locator(DETAILS, has_text="aten::empty").wait_for(timeout=60000)
    assert url_key(page, "view") == "Trace" and url_key(page, "find") is None
    _, ev = tb_links.get("timeline/longest", run="gpu", worker="w0", name="aten::empty", kind="op")
    assert url_key(page, "sel") == ev["id"]
    assert rec.errors == []


def test_recommendation_evidence_shows_the_call_it_names(tb_links, page, rec):
    page.goto(app_url(tb_links, run="gpu", view="Overview"))
    rec_item = page.locator('[data-testid="recommendation"][data-id="synchronization"]')
    rec_item.wait_for(timeout=60000)
    rec_item.locator("summary").click()  # open the evidence
    links = rec_item.locator('[data-testid="evidence-show-in-timeline"]')
    assert links.count() == 2  # the sync call and the op that issued it
    links.first.click()
    page.locator(DETAILS, has_text="cudaStreamSynchronize").wait_for(timeout=60000)
    _, ev = tb_links.get("timeline/longest", run="gpu", worker="w0", name="cudaStreamSynchronize")
    assert url_key(page, "sel") == ev["id"]
    assert rec.errors == []


def test_straggler_round_shows_the_last_ranks_call(tb_links, page, rec):
    _, dist = tb_links.get("distributed", run="job")
    round_ = dist["stragglers"]["rounds"][0]
    assert round_["last_worker"] == "rank2"
    page.goto(app_url(tb_links, run="job", view="Distributed"))
    cell = page.locator('[data-testid="rounds-table"] [role="cell"][data-col="collective"]').first
    cell.wait_for(timeout=60000)
    cell.locator('[data-testid="show-in-timeline"]').click()
    page.wait_for_selector(DETAILS, timeout=60000)
    assert url_key(page, "view") == "Trace" and url_key(page, "worker") == "rank2"
    _, ev = tb_links.get(
        "timeline/longest", run="job", worker="rank2", at_us=round_["last_start_us"], kind="op"
    )
    assert url_key(page, "sel") == ev["id"]
    assert ev["start_us"] == pytest.approx(round_["last_start_us"])  # the call itself, not what holds it
    assert rec.errors == []

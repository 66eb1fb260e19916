"""Step time in two senses (issue 24, item 7): the Overview's step time runs to the end of the step's device
work, the Trace view's ruler draws the host range (ProfilerStep#N); both places say so, the ruler on
hover with both figures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.conftest import app_url
from tests.e2e.test_timeline import READY
from tests.fixtures.tensorboard_server import TensorBoard, tensorboard
from tests.fixtures.trace_builder import TraceBuilder


@pytest.fixture(scope="module")
def tb_steps(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    """Two 1 ms steps; the first launches a 700 µs kernel at 800 µs, running 500 µs past its host end."""
    logdir = tmp_path_factory.mktemp("steps")
    b = TraceBuilder(device_properties=[{"id": 0, "name": "NVIDIA A100-SXM4-80GB"}])
    for n, t, k_ts, k_dur in ((1, 0, 800, 700), (2, 1000, 1600, 100)):
        b.step(n, t, 1000)
        ext = b.op("aten::mm", t + 100, 300)
        b.launch("gemm", t + 150, 10, k_ts, k_dur, ext_id=ext)
    (logdir / "steps").mkdir()
    b.write(logdir / "steps" / "w0.pt.trace.json")
    with tensorboard(logdir, tmp=tmp_path_factory.mktemp("tb")) as tb:
        tb.wait_loaded(timeout=120)
        yield tb


def test_both_step_times_are_said_in_both_places(tb_steps, page, rec):
    _, spans = tb_steps.get("spans", run="steps", worker="w0")
    P = {"run": "steps", "worker": "w0", "span": spans[0]}
    _, overview = tb_steps.get("overview", **P)
    first = overview["steps"][0]
    host = first["host_end_us"] - first["host_start_us"]
    assert host == pytest.approx(1000) and first["duration_us"] > host + 100  # extended by its kernel
    page.goto(app_url(tb_steps, view="Overview", **P))
    note = page.locator('[data-testid="step-time-note"]')
    note.wait_for(timeout=60_000)
    assert "end of the device work" in note.inner_text() and "ruler" in note.inner_text()

    page.goto(app_url(tb_steps, view="Trace", **P))
    page.wait_for_selector(READY, timeout=60_000)
    _, tracks = tb_steps.get("timeline/tracks", **P)
    step = tracks["steps"][0]
    assert step["device_end_us"] - step["device_start_us"] == pytest.approx(first["duration_us"])
    ruler = page.locator('[data-testid="timeline-steps"]')
    view = page.evaluate("window.__timeline.view()")
    box = ruler.bounding_box()
    label_w = 210  # timeline/controller.ts LABEL_W
    mid = (step["start_us"] + step["end_us"]) / 2 - tracks["start_us"]
    x = label_w + (mid - view["t0"]) / (view["t1"] - view["t0"]) * (box["width"] - label_w)
    page.mouse.move(box["x"] + x, box["y"] + 8)
    page.wait_for_function("() => document.querySelector('[data-testid=\"timeline-steps\"]').title !== ''")
    title = ruler.get_attribute("title")
    assert title.startswith("Step 1: 1 ms host range") or title.startswith("Step 1: 1.00 ms host range"), (
        title
    )
    assert "to the end of its device work (the Overview's step time)" in title
    assert rec.errors == []

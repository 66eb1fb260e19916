"""What the Trace view's timeline draws, read back from its canvas in a real chromium: axis labels in
readable units (and in ``data-ticks``), merged boxes in the colour of what they hold, "Highlight all"
outlining matches without covering them, a collapsed group's density strip, track names."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator

import pytest

from tests.e2e.conftest import app_url
from tests.e2e.test_timeline import GPU_RUN, READY, _gpu_tracks, _longest_kernel, open_trace
from tests.fixtures.tensorboard_server import TensorBoard, tensorboard
from tests.fixtures.trace_builder import V100, TraceBuilder

LABEL = re.compile(r"^-?\d+(\.\d+)? (s|ms|µs|ns)$")
CANVAS = "document.querySelector('[data-testid=\"timeline\"] .tl-main canvas')"
ACCENT = (216, 89, 15)  # --accent, light theme


def axis_labels(page) -> list[str]:
    return json.loads(page.get_attribute('[data-testid="timeline"]', "data-ticks") or "[]")


def pixels(page, points: list[tuple[float, float]]) -> list[tuple[int, int, int]]:
    """The tracks canvas' colours at client points."""
    return [
        tuple(p)
        for p in page.evaluate(
            f"""(points) => {{
                const c = {CANVAS};
                const r = c.getBoundingClientRect();
                const k = c.width / r.width;
                const g = c.getContext('2d');
                return points.map(([x, y]) => Array.from(
                    g.getImageData(Math.floor((x - r.left) * k), Math.floor((y - r.top) * k), 1, 1).data.slice(0, 3)));
            }}""",
            [list(p) for p in points],
        )
    ]


def is_accent(rgb: tuple[int, int, int]) -> bool:
    return all(abs(a - b) <= 30 for a, b in zip(rgb, ACCENT, strict=True))


def busiest_stream(tracks: dict) -> dict:
    return max((t for t in tracks["tracks"] if t["kind"] == "stream"), key=lambda t: t["events"])


def test_axis_labels_are_in_readable_units(tb_gpu, page, rec):
    tracks = _gpu_tracks(tb_gpu)
    total = tracks["end_us"] - tracks["start_us"]
    open_trace(page, tb_gpu, run=GPU_RUN)
    labels = axis_labels(page)
    assert len(labels) >= 3 and all(LABEL.match(x) for x in labels), labels
    # a narrow window deep into the profile: "167.25 ms", never "167250 µs"
    t0 = round(total * 0.8, 3)
    open_trace(page, tb_gpu, run=GPU_RUN, t0=f"{t0}", t1=f"{t0 + 300}")
    labels = axis_labels(page)
    assert len(labels) >= 3, labels
    for x in labels:
        assert LABEL.match(x), labels
        value, unit = x.split(" ")
        assert abs(float(value)) < 1000, labels
        assert unit in ("ms", "s"), labels  # the ticks are past 1 ms: not in µs
    assert len(set(labels)) == len(labels)
    # each label is its tick's time: the first tick within one step of the window's start
    scale = {"s": 1e6, "ms": 1e3}
    first, second = (float(x.split(" ")[0]) * scale[x.split(" ")[1]] for x in labels[:2])
    assert t0 <= first <= t0 + (second - first) + 1e-6
    assert rec.errors == []


def test_merged_boxes_keep_the_colour_of_what_they_hold(tb_gpu, page, rec):
    tracks = _gpu_tracks(tb_gpu)
    stream = busiest_stream(tracks)
    open_trace(page, tb_gpu, run=GPU_RUN)  # the whole profile: kernels merge
    y = page.evaluate(f"window.__timeline.rowY({stream['id']}, 0)")
    assert y is not None
    x0 = page.evaluate(f"window.__timeline.x({tracks['start_us']})")
    x1 = page.evaluate(f"window.__timeline.x({tracks['end_us']})")
    mixed = page.evaluate(
        """([x0, x1, y]) => {
            const out = [];
            for (let x = Math.ceil(x0) + 1; x < x1 - 1; x++) {
                const h = window.__timeline.hitTest(x + 0.5, y);
                if (h && h.count > 1 && /^[\\d,]+ events$/.test(h.name)) out.push(x + 0.5);
            }
            return out;
        }""",
        [x0, x1, y],
    )
    assert len(mixed) >= 5, "no boxes of mixed kernels at this zoom"
    colours = pixels(page, [(x, y + dy) for x in mixed for dy in (-4, -2, 0, 2, 4)])
    saturated = [c for c in colours if max(c) - min(c) > 30]
    # grey hatching (was): every pixel grey; now the hashed colour of the major kernel under light stripes
    assert len(saturated) >= 0.4 * len(colours), colours[:20]
    assert rec.errors == []


def test_highlight_all_outlines_matches_without_covering_them(tb_gpu, page, rec):
    tracks = _gpu_tracks(tb_gpu)
    kernel = _longest_kernel(tb_gpu)
    params = {"run": GPU_RUN, "worker": "worker0", "span": "1"}
    _, found = tb_gpu.get("timeline/search", **params, q=kernel["name"], exact="1", limit=10000)
    assert found["total"] > 20
    # a window holding a dense run of the matches, each a pixel or two wide
    ms = sorted(found["matches"], key=lambda m: m["start_us"])
    first, last = ms[0], ms[min(len(ms), 40) - 1]
    t0 = first["start_us"] - tracks["start_us"]
    t1 = last["start_us"] + last["dur_us"] - tracks["start_us"]
    pad = (t1 - t0) * 0.05
    open_trace(page, tb_gpu, run=GPU_RUN, t0=f"{t0 - pad:.3f}", t1=f"{t1 + pad:.3f}")
    page.fill('[data-testid="timeline-search"]', kernel["name"])
    page.locator('[data-testid="timeline-search-count"]', has_text="match").wait_for()
    page.check('[data-testid="timeline-highlight"]')
    page.wait_for_selector(READY)
    page.wait_for_timeout(300)
    shown = [m for m in ms if m["start_us"] <= tracks["start_us"] + t1 and m["track"] == kernel["track"]]
    y = page.evaluate(f"window.__timeline.rowY({kernel['track']}, 0)")
    assert y is not None
    xs = page.evaluate(
        "(ms) => ms.map((m) => [window.__timeline.x(m.start_us), window.__timeline.x(m.start_us + m.dur_us)])",
        shown,
    )
    inside = sorted({float(x) + 0.5 for a, b in xs for x in range(int(a), max(int(a) + 1, int(b)))})
    assert len(inside) >= 20
    colours = pixels(page, [(x, y) for x in inside])
    covered = [x for x, c in zip(inside, colours, strict=True) if is_accent(c)]
    # the outline runs beside the boxes: none of their pixels is painted over
    assert len(covered) <= len(inside) * 0.05, (len(covered), len(inside))
    # and it is drawn: accent pixels right outside the run of matches
    (left,) = pixels(page, [(math.floor(xs[0][0]) - 0.5, y)])  # the pixel column before the first
    assert is_accent(left), left
    assert rec.errors == []


def test_a_collapsed_group_shows_its_density(tb_gpu, page, rec):
    tracks = _gpu_tracks(tb_gpu)
    stream = busiest_stream(tracks)
    open_trace(page, tb_gpu, run=GPU_RUN)
    key = f"g:{stream['group']}"
    y = page.evaluate(f"window.__timeline.labelY({key!r})")
    box = page.locator('[data-testid="timeline"] .tl-main canvas').bounding_box()
    page.mouse.click(box["x"] + 20, y)
    page.wait_for_timeout(200)
    assert page.evaluate(f"window.__timeline.labelY('t:{stream['id']}')") is None  # collapsed
    page.wait_for_selector(READY)
    page.wait_for_timeout(200)
    assert density_drawn(page, key, tracks) > 0.05, "the collapsed group's header shows nothing of its events"
    # zoomed in, the answers no longer hold the group's events (collapsing keeps them small): the strip
    # comes from the overview's answer
    page.locator('[data-testid="timeline"]').focus()
    for _ in range(8):
        page.keyboard.press("w")
    page.wait_for_timeout(300)
    page.wait_for_selector(READY)
    assert density_drawn(page, key, tracks) > 0.05, "no density strip once zoomed in"
    assert rec.errors == []


def density_drawn(page, key: str, tracks: dict) -> float:
    """The share of a group header's pixels, right of the labels, that differ from the header's colour."""
    y = page.evaluate(f"window.__timeline.labelY({key!r})")
    view = page.evaluate("window.__timeline.view()")
    t0, t1 = (tracks["start_us"] + max(0.0, view[k]) for k in ("t0", "t1"))
    x0, x1 = page.evaluate(f"[window.__timeline.x({t0}), window.__timeline.x({t1})]")
    xs = [x0 + (x1 - x0) * k / 400 for k in range(1, 400)]
    band = pixels(page, [(x, y + dy) for x in xs for dy in (-3, 0, 3, 6)])
    panel = max(set(band), key=band.count)  # the header's own colour
    drawn = [c for c in band if max(abs(a - b) for a, b in zip(c, panel, strict=True)) > 40]
    return len(drawn) / len(band)


@pytest.fixture(scope="module")
def tb_small(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    """One step on GPU 0: an op that overlaps its neighbour without nesting (one event moved), a GPU
    annotation with its stream only as its tid (as Kineto writes it), CUDA memory, and CPU memory records
    that reserve nothing."""
    logdir = tmp_path_factory.mktemp("small")
    b = TraceBuilder(device_properties=[V100])
    b.step(1, 0, 1000)
    mm = b.op("aten::mm", 100, 300)
    b.launch("sgemm", 150, 10, 500, 200, ext_id=mm)
    b.op("aten::add", 600, 50)
    b.op("aten::mul", 640, 50)  # starts inside aten::add, ends after it
    b._x("gpu_user_annotation", "ProfilerStep#1", 0, 1000, 0, 7, {"External id": 1})
    b.memory(120, 4096, 1, 4096, 2 * 1024**2, device_type=1, device_id=0)
    b.memory(130, 64, 2, 64, 0)
    b.write(logdir / "small" / "w0.pt.trace.json.gz")
    with tensorboard(logdir, tmp=tmp_path_factory.mktemp("tb")) as tb:
        tb.wait_loaded(timeout=120)
        yield tb


def test_track_names_read_alike(tb_small, page, rec):
    status, tracks = tb_small.get("timeline/tracks", run="small", worker="w0")
    assert status == 200
    names = [t["name"] for t in tracks["tracks"] if t["group"] == "d:0"]
    assert names == [
        "Stream 7",
        "Stream 7 annotations",
        "GPU 0 Utilization",
        "GPU 0 Allocated",
        "GPU 0 Reserved",
        "GPU 0 Stream 7 Queue length",
    ]
    counters = [t["name"] for t in tracks["tracks"] if t["kind"] == "counter"]
    assert "CPU Allocated" in counters and "CPU Reserved" not in counters  # 0 B throughout: hidden
    assert tracks["moved"] == 1
    page.goto(app_url(tb_small, run="small", view="Trace"))
    page.wait_for_selector(READY, timeout=60000)
    assert page.inner_text('[data-testid="timeline-moved"]') == "1 event moved to extra lanes"
    assert rec.errors == []

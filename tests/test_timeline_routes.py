"""The timeline routes through a real TensorBoard: binary == JSON, bad windows, event details; and
window answers against the truth of the shared traces (every overlapping event, none lost)."""

from __future__ import annotations

import gzip
import json
import struct
import tempfile
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tests.fixtures.paths import SHARED_TRACES
from tests.fixtures.tensorboard_server import PREFIX, TensorBoard, tensorboard
from tests.fixtures.trace_builder import TraceBuilder
from tests.test_timeline import build
from torch_tb_profiler.analysis.timeline import index as tl
from torch_tb_profiler.analysis.timeline import queries, windows
from torch_tb_profiler.ingest.parse import load_profile
from torch_tb_profiler.views.timeline import COLUMNS


@pytest.fixture(scope="module")
def tb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    root = tmp_path_factory.mktemp("logdir")
    (root / "run").mkdir()
    build(root / "run")
    dense(root / "dense")
    long_names(root / "long")
    with tensorboard(root, tmp=tmp_path_factory.mktemp("tblog")) as server:
        server.wait_loaded()
        yield server


P = {"run": "run", "worker": "w"}
DENSE = {"run": "dense", "worker": "w"}


def dense(folder: Path) -> None:
    """8 threads of 15 000 ops (1 µs every 10 µs): the whole profile at 20 000 px is 120 000 separate
    boxes (gaps of 9 µs, resolution 7.5 µs), over the cap; five of the threads are 75 000, under it."""
    b = TraceBuilder()
    for tid in range(8):
        for i in range(15000):
            b.op(f"op_{i % 20}", 10 * i, 1, tid=1 + tid)
    b.write(folder / "w.pt.trace.json.gz")


def long_names(folder: Path) -> None:
    """20 000 ops whose names are 700 bytes long: all matching one search, ~15 MB of JSON."""
    b = TraceBuilder()
    for i in range(20000):
        b.op(f"long_{i:05d}_" + "n" * 688, 10 * i, 1)
    b.write(folder / "w.pt.trace.json.gz")


def decode_bin(body: bytes) -> tuple[dict, dict[str, np.ndarray]]:
    assert body[:4] == b"TLW2"
    (size,) = struct.unpack("<I", body[4:8])
    header = json.loads(body[8 : 8 + size])
    at, n, cols = 8 + size, header["count"], {}
    assert at % 8 == 0
    for name, dtype in COLUMNS:  # the documented layout (docs/api.md)
        cols[name] = np.frombuffer(body, dtype=dtype, count=n, offset=at)
        at += cols[name].nbytes
    assert at == len(body)
    return header, cols


def test_tracks_and_binary_window_equal_json(tb: TensorBoard) -> None:
    status, tracks = tb.get("timeline/tracks", **P)
    assert status == 200 and tracks["event_count"] == 8 and tracks["moved"] == 2
    assert [s["name"] for s in tracks["steps"]] == ["ProfilerStep#1"]
    window = {"start_us": tracks["start_us"], "end_us": tracks["end_us"], "px": 50}
    status, js = tb.get("timeline", format="json", **P, **window)
    assert status == 200 and sum(i["count"] for i in js["items"]) == 8
    query = "&".join(f"{k}={v}" for k, v in {**P, **window}.items())
    req = urllib.request.Request(f"{tb.url}{PREFIX}/timeline?{query}", headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(req) as r:
        raw = r.read()
        body = gzip.decompress(raw) if r.headers.get("Content-Encoding") == "gzip" else raw
        assert r.headers["Content-Type"] == "application/octet-stream"
    header, cols = decode_bin(body)
    assert header["count"] == js["count"]
    for i, item in enumerate(js["items"]):
        name = header["names"][cols["name"][i]] or f"{cols['count'][i]} events"
        row = int(cols["row"][i])
        ident = None if row < 0 else f"{header['kinds'][cols['kind'][i]]}:{row}"
        assert (item["track"], item["depth"], item["name"], item["count"], item["id"]) == (
            cols["track"][i],
            cols["depth"][i],
            name,
            cols["count"][i],
            ident,
        )
        assert item["start_us"] == cols["ts"][i]
        assert item.get("major", item["name"]) == (header["names"][cols["major"][i]] or name)
        assert item["dur_us"] == pytest.approx(float(cols["dur"][i]), rel=1e-6)


def get_bin(tb: TensorBoard, **params: object) -> tuple[dict, dict[str, np.ndarray]]:
    query = "&".join(f"{k}={v}" for k, v in params.items())
    req = urllib.request.Request(f"{tb.url}{PREFIX}/timeline?{query}", headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(req) as r:
        raw = r.read()
        return decode_bin(gzip.decompress(raw) if r.headers.get("Content-Encoding") == "gzip" else raw)


def test_a_capped_answer_says_it_was_coarsened(tb: TensorBoard) -> None:
    _, tracks = tb.get("timeline/tracks", **DENSE)
    assert tracks["event_count"] == 120_000 and len(tracks["tracks"]) == 8
    whole = {"start_us": tracks["start_us"], "end_us": tracks["end_us"], "px": 20000}
    status, js = tb.get("timeline", format="json", **DENSE, **whole)
    header, cols = get_bin(tb, **DENSE, **whole)
    assert status == 200 and js["coarsened"] is True and header["coarsened"] is True
    assert js["resolution_us"] > (whole["end_us"] - whole["start_us"]) / 20000
    assert header["resolution_us"] == js["resolution_us"] and header["count"] == js["count"] <= 100_000
    assert int(cols["count"].sum()) == 120_000  # coarser, nothing lost
    # fewer tracks (ids and ranges) fit under the cap at the asked resolution
    some = tracks["tracks"][0]["id"], tracks["tracks"][4]["id"]
    status, js = tb.get("timeline", format="json", tracks=f"{some[0]}-{some[1]}", **DENSE, **whole)
    assert status == 200 and js["coarsened"] is False and js["count"] == 75_000
    assert js["resolution_us"] == pytest.approx((whole["end_us"] - whole["start_us"]) / 20000)
    listed = ",".join(str(t) for t in range(some[0], some[1] + 1))
    header, _ = get_bin(tb, tracks=listed, **DENSE, **whole)
    assert header["coarsened"] is False and header["count"] == 75_000


def test_search_within_a_range(tb: TensorBoard) -> None:
    _, tracks = tb.get("timeline/tracks", **DENSE)
    t0 = tracks["start_us"]
    status, s = tb.get("timeline/search", q="op_3", start_us=t0 + 25, end_us=t0 + 2000, **DENSE)
    # op_3 runs at 30, 230, ... µs on each of the 8 threads: 10 starts in 30..1830, 8 threads
    assert status == 200 and s["total"] == 80 and (s["start_us"], s["end_us"]) == (t0 + 25, t0 + 2000)
    assert all(t0 + 25 <= m["start_us"] + m["dur_us"] and m["start_us"] <= t0 + 2000 for m in s["matches"])
    _, everywhere = tb.get("timeline/search", q="op_3", limit=1, **DENSE)
    assert everywhere["total"] == 8 * 750 and "start_us" not in everywhere


def test_search_pages_and_the_first_match_from_a_time(tb: TensorBoard) -> None:
    """Enter in the search box goes to the first match at or after the window's start, and the page
    reaches matches past the first `limit` (issue 24)."""
    _, tracks = tb.get("timeline/tracks", **DENSE)
    t0 = tracks["start_us"]
    _, every = tb.get("timeline/search", q="op_3", limit=10_000, **DENSE)
    starts = [m["start_us"] for m in every["matches"]]
    assert every["offset"] == 0 and "from_rank" not in every and starts == sorted(starts)
    at = t0 + 100_000
    _, s = tb.get("timeline/search", q="op_3", limit=5, from_us=at, **DENSE)
    rank = sum(1 for x in starts if x < at)
    assert 0 < rank < every["total"]
    assert s["from_rank"] == rank and s["offset"] == rank
    assert [m["id"] for m in s["matches"]] == [m["id"] for m in every["matches"][rank : rank + 5]]
    # past the last match: from_rank says so, and the page is the first one (Enter wraps)
    _, late = tb.get("timeline/search", q="op_3", limit=5, from_us=tracks["end_us"] + 1, **DENSE)
    assert late["from_rank"] == late["total"] and late["offset"] == 0
    # an explicit offset: the last matches, beyond a small limit
    last = every["total"] - 3
    _, tail = tb.get("timeline/search", q="op_3", limit=100, offset=last, **DENSE)
    assert tail["offset"] == last and [m["id"] for m in tail["matches"]] == [
        m["id"] for m in every["matches"][last:]
    ]
    status, _ = tb.get("timeline/search", q="op_3", offset=-1, **DENSE)
    assert status == 400


def test_event_search_longest_aggregate_routes(tb: TensorBoard) -> None:
    status, found = tb.get("timeline/longest", name="sgemm", kind="kernel", **P)
    assert status == 200
    status, event = tb.get("timeline/event", id=found["id"], **P)
    assert status == 200 and event["name"] == "sgemm"
    assert {link["relation"] for link in event["links"]} == {"launched by", "operator"}
    status, s = tb.get("timeline/search", q="aten", **P)
    assert status == 200 and s["total"] == 4 and not s["truncated"]
    status, tracks = tb.get("timeline/tracks", **P)
    status, agg = tb.get("timeline/aggregate", start_us=tracks["start_us"], end_us=tracks["end_us"], **P)
    assert status == 200 and agg["events"] == 8


def test_longest_at_a_time_is_the_innermost_event_running_then() -> None:
    """`at_us` (one instance: the op of an allocation, a straggler's call): among the events running at
    that time, the one that started last; the longest of those starting together."""
    b = TraceBuilder()
    b.step(1, 0, 1000)
    outer = b.op("aten::linear", 100, 400)  # 100-500
    b.op("aten::addmm", 100, 300)  # 100-400: starts with the outer one, shorter
    b.op("aten::empty", 150, 10)  # 150-160: innermost at 155
    b.launch("gemm", 200, 5, 600, 50, ext_id=outer)
    profile = load_profile(str(b.write(Path(tempfile.mkdtemp()) / "w.pt.trace.json")))
    idx = tl.index(profile)
    start = profile.ops["ts"].min()  # the step's start: at_us is on the trace's clock

    def at(t: float, name: str | None = None, kind: str = "op") -> str | None:
        return (queries.longest(idx, name, kind, start + t) or {}).get("name")

    assert at(155) == "aten::empty"
    assert at(100) == "aten::linear"  # two start at 100: the longer one
    assert at(300) == "aten::linear"  # the same two are running: the longer one
    assert at(450) == "aten::linear"
    assert at(155, name="aten::linear") == "aten::linear"
    assert at(620, kind="kernel") == "gemm" and at(620) == "ProfilerStep#1"
    assert at(2000) is None


def write_shapes_trace(path: Path) -> Path:
    """`aten::mm` on two input shapes ([2, 3] twice, 100 and 120 µs; [8, 8] once, 500 µs), each launching a
    `gemm` kernel: grid 1×1×1 from the small calls (30 and 40 µs), 4×1×1 from the big one (300 µs). The
    longest of the name is never the longest of the small rows (issue 24, item 5)."""
    b = TraceBuilder(device_properties=[{"id": 0, "name": "NVIDIA A100-SXM4-80GB"}])
    b.step(1, 0, 3000)
    for ts, dur, dims, grid, k_dur in [
        (100, 100, [[2, 3]], (1, 1, 1), 30),
        (400, 120, [[2, 3]], (1, 1, 1), 40),
        (800, 500, [[8, 8]], (4, 1, 1), 300),
    ]:
        ext = b.op("aten::mm", ts, dur, input_dims=dims)
        b.launch("gemm", ts + 10, 5, ts + 1500, k_dur, ext_id=ext, grid=grid)
    return b.write(path)


def test_longest_of_one_row_grouped_by_shape_or_launch() -> None:
    from torch_tb_profiler.analysis.ops import kernels, operators

    profile = load_profile(str(write_shapes_trace(Path(tempfile.mkdtemp()) / "w.pt.trace.json")))
    idx = tl.index(profile)
    shapes = operators.operator_rows(profile)["input_shape"].unique().tolist()
    small = next(s for s in shapes if "2, 3" in s)
    op = queries.longest(idx, "aten::mm", "op", rows=operators.instance_rows(profile, "aten::mm", small))
    assert op is not None and op["dur_us"] == 120
    assert queries.longest(idx, "aten::mm", "op")["dur_us"] == 500  # by name: the big one
    launch = {"op_name": "aten::mm", "grid": "[1, 1, 1]", "block": "[128, 1, 1]", "regs": 32, "shmem": 0}
    k = queries.longest(idx, "gemm", "kernel", rows=kernels.instance_rows(profile, "gemm", launch))
    assert k is not None and k["dur_us"] == 40
    none = kernels.instance_rows(profile, "gemm", {**launch, "op_name": "aten::addmm"})
    assert queries.longest(idx, "gemm", "kernel", rows=none) is None


@pytest.mark.parametrize(
    "route,params,status,message",
    [
        ("timeline", {"start_us": 10, "end_us": 5}, 400, "greater than"),
        ("timeline", {"start_us": "nan", "end_us": 5}, 400, "finite"),
        ("timeline", {"start_us": 1, "end_us": 5, "px": 10**9}, 400, "'px'"),
        ("timeline", {"start_us": 1, "end_us": 5, "tracks": "99"}, 400, "unknown track"),
        ("timeline", {"start_us": 1, "end_us": 5, "tracks": "a"}, 400, "track ids"),
        ("timeline", {"start_us": 1, "end_us": 5, "tracks": "2-0"}, 400, "backwards"),
        ("timeline", {"start_us": 1, "end_us": 5, "tracks": "0-99"}, 400, "unknown track 99"),
        ("timeline", {"start_us": 1, "end_us": 5, "tracks": "-1"}, 400, "track ids"),
        ("timeline", {"start_us": 1}, 400, "required"),
        ("timeline", {"start_us": 1, "end_us": 5, "format": "xml"}, 400, "format"),
        ("timeline/event", {"id": "op:999999"}, 404, "no event"),
        ("timeline/event", {"id": "bogus"}, 400, "event id"),
        ("timeline/search", {}, 400, "'q'"),
        ("timeline/search", {"q": "a", "start_us": 5}, 400, "together"),
        ("timeline/search", {"q": "a", "start_us": 5, "end_us": 5}, 400, "greater than"),
        ("timeline/search", {"q": "a", "start_us": 5, "end_us": "inf"}, 400, "finite"),
        ("timeline/longest", {"name": "nothing"}, 404, "no event"),
        ("timeline/longest", {"at_us": "x"}, 400, "'at_us'"),
        ("timeline/longest", {"at_us": 1.0}, 404, "running at"),
        ("timeline/longest", {}, 400, "'name'"),
        ("timeline/longest", {"name": "aten::mm", "kind": "kernel", "input_shape": "[]"}, 400, "kind=op"),
        ("timeline/longest", {"name": "sgemm", "kind": "op", "grid": "[1, 1, 1]"}, 400, "kind=kernel"),
        ("timeline/longest", {"name": "sgemm", "kind": "kernel", "regs": "x"}, 400, "'regs'"),
        ("timeline/longest", {"name": "sgemm", "kind": "kernel", "grid": "[9, 9, 9]"}, 404, "launch shape"),
        ("timeline/aggregate", {"start_us": 3, "end_us": 3}, 400, "greater than"),
    ],
)
def test_bad_requests_get_a_message(
    tb: TensorBoard, route: str, params: dict, status: int, message: str
) -> None:
    got, body = tb.get(route, **P, **params)
    assert got == status and message in body["error"]


def test_unknown_or_failed_profile_is_404(tb: TensorBoard) -> None:
    got, body = tb.get("timeline/tracks", run="nope", worker="w")
    assert got == 404 and "error" in body


SHARED = sorted(SHARED_TRACES.glob("*/*/*.pt.trace.json*")) if SHARED_TRACES.is_dir() else []


@pytest.mark.skipif(not SHARED, reason="../shared/traces is absent")
@pytest.mark.parametrize("path", SHARED, ids=lambda p: p.parent.name + "/" + p.name[:30])
def test_windows_equal_the_truth_of_the_trace(path: Path) -> None:
    profile = load_profile(str(path))
    idx = tl.build_index(profile)
    truth = []  # (name, start, dur) of every timed event of the model
    for kind in tl.KINDS:
        t = getattr(profile, tl.TABLES[kind])
        truth += zip(
            t["name"].astype(str),
            t["ts"].to_numpy(float),
            np.maximum(t["end"], t["ts"]).to_numpy(float),
            strict=True,
        )
    names = np.array([n for n, _, _ in truth], dtype=object)
    ts = np.array([s for _, s, _ in truth])
    end = np.array([e for _, _, e in truth])
    assert idx.event_count == len(truth)
    rng = np.random.default_rng(7)
    for centre in rng.uniform(idx.start_us, idx.end_us, size=5):
        lo, hi = centre - 50, centre + 50  # 100 µs at 20,000 px: 0.005 µs per pixel
        w = windows.window(idx, lo, hi, px=20000, tracks=None)
        want = sorted(
            (str(n), float(s), float(e - s))
            for n, s, e in zip(names, ts, end, strict=True)
            if s <= hi and e >= lo and e - s >= w.resolution_us
        )
        got = sorted(
            (w.names[n], float(s), float(d))
            for n, s, d, c in zip(w.name, w.ts, w.dur, w.count, strict=True)
            if c == 1 and d >= w.resolution_us
        )
        assert got == want
        assert int(w.count.sum()) == int(np.count_nonzero((ts <= hi) & (end >= lo)))
    # coarse: the whole profile, boxes add up to every event
    w = windows.window(idx, idx.start_us, idx.end_us, px=2000, tracks=None)
    assert int(w.count.sum()) == idx.event_count
    # ops keep the op tree's depth where nothing was moved (and the op tree saw no partial overlap:
    # ns_resolution_trace has false ones below float resolution, issue 16)
    if profile.meta.partial_overlaps:
        return
    ops = profile.ops
    pos = idx.position["op"]
    moved_tracks = {t.id for t in idx.tracks if t.moved}
    keep = ~np.isin(idx.track[pos], list(moved_tracks))
    assert np.array_equal(idx.depth[pos][keep], ops["depth"].to_numpy()[keep])


def test_search_answers_are_pages_of_at_most_4_mib(tb: TensorBoard) -> None:
    # issue 28 item 12: at the documented maximum (limit 100,000) this search answered ~15 MB
    seen, offset, pages = [], 0, 0
    while offset is not None:
        url = f"{tb.url}{PREFIX}/timeline/search?run=long&worker=w&q=long_&limit=100000&offset={offset}"
        with urllib.request.urlopen(url) as r:
            body = r.read()
        assert len(body) <= 4 * 1024 * 1024
        page = json.loads(body)
        assert page["total"] == 20000 and page["offset"] == offset and page["matches"]
        assert page["truncated"] == (page["next_offset"] is not None)
        seen += [m["name"][:11] for m in page["matches"]]
        offset, pages = page["next_offset"], pages + 1
    assert pages >= 3 and seen == [f"long_{i:05d}_" for i in range(20000)]
    status, past = tb.get("timeline/search", run="long", worker="w", q="long_", offset=10**6)
    assert status == 200 and past["matches"] == [] and not past["truncated"]
    assert tb.get("timeline/search", run="long", worker="w", q="long_", offset=-1)[0] == 400

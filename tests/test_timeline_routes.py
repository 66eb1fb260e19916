"""The timeline routes through a real TensorBoard: binary == JSON, bad windows, event details; and
window answers against the truth of the shared traces (every overlapping event, none lost)."""

from __future__ import annotations

import gzip
import json
import struct
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tests.fixtures.paths import SHARED_TRACES
from tests.fixtures.tensorboard_server import PREFIX, TensorBoard, tensorboard
from tests.test_timeline import build
from torch_tb_profiler.analysis import timeline as tl
from torch_tb_profiler.ingest.parse import load_profile
from torch_tb_profiler.views.timeline import COLUMNS


@pytest.fixture(scope="module")
def tb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    root = tmp_path_factory.mktemp("logdir")
    (root / "run").mkdir()
    build(root / "run")
    with tensorboard(root, tmp=tmp_path_factory.mktemp("tblog")) as server:
        server.wait_loaded()
        yield server


P = {"run": "run", "worker": "w"}


def decode_bin(body: bytes) -> tuple[dict, dict[str, np.ndarray]]:
    assert body[:4] == b"TLW1"
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
        assert item["dur_us"] == pytest.approx(float(cols["dur"][i]), rel=1e-6)


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


@pytest.mark.parametrize(
    "route,params,status,message",
    [
        ("timeline", {"start_us": 10, "end_us": 5}, 400, "greater than"),
        ("timeline", {"start_us": "nan", "end_us": 5}, 400, "finite"),
        ("timeline", {"start_us": 1, "end_us": 5, "px": 10**9}, 400, "'px'"),
        ("timeline", {"start_us": 1, "end_us": 5, "tracks": "99"}, 400, "unknown track"),
        ("timeline", {"start_us": 1, "end_us": 5, "tracks": "a"}, 400, "track ids"),
        ("timeline", {"start_us": 1}, 400, "required"),
        ("timeline", {"start_us": 1, "end_us": 5, "format": "xml"}, 400, "format"),
        ("timeline/event", {"id": "op:999999"}, 404, "no event"),
        ("timeline/event", {"id": "bogus"}, 400, "event id"),
        ("timeline/search", {}, 400, "'q'"),
        ("timeline/longest", {"name": "nothing"}, 404, "no event"),
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
        w = tl.window(idx, lo, hi, px=20000, tracks=None)
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
    w = tl.window(idx, idx.start_us, idx.end_us, px=2000, tracks=None)
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

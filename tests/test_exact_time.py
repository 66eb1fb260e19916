"""Issue 27 item 4: epoch-scale µs timestamps with ns digits are read exactly (trace/exact_time.py).

The trace here is written as text, so its digits are exactly those below: a float64 at 1.7e15 µs holds
only multiples of 0.25 µs, and every expected figure is the decimal sum of the written durations.
"""

from __future__ import annotations

import gzip
import itertools
import json
import re
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

from tests.fixtures.paths import SHARED_TRACES
from torch_tb_profiler.analysis.device import breakdown
from torch_tb_profiler.ingest.parse import load_profile, load_whole
from torch_tb_profiler.model import Profile

B = 1712345678901234  # integer µs at the epoch
NS_TRACE = SHARED_TRACES / "hta_samples" / "ns_resolution_trace"


def _x(cat: str, name: str, ts: str, dur: str, tid: int = 1, **args: object) -> dict:
    return {
        "ph": "X",
        "cat": cat,
        "name": name,
        "pid": 1,
        "tid": tid,
        "ts": f"@{ts}@",
        "dur": dur,
        "args": args,
    }


def _events() -> list[dict]:
    """Offsets from B. One step [0.100, 50.100). Two sibling ops 0.205 µs apart whose ts round to the same float
    (B+0.750: .630 and .870 both lie within 0.125 of it). Four memcpys of 1.301 µs, 0.2 µs apart,
    and two kernels, launched from inside the step on one stream."""
    ev = [
        _x("user_annotation", "ProfilerStep#1", "0.100", "50.000"),
        _x("cpu_op", "aten::a", "0.630", "0.040"),
        _x("cpu_op", "aten::b", "0.870", "0.200"),
    ]
    copies = ["10.123", "11.624", "13.125", "14.626"]
    kernels = [("20.001", "2.503"), ("22.704", "3.333")]
    for i, (ts, dur, cat) in enumerate(
        [(t, "1.301", "gpu_memcpy") for t in copies] + [(t, d, "kernel") for t, d in kernels]
    ):
        ev.append(_x("cuda_runtime", "cudaLaunchKernel", f"{1 + i}.111", "0.500", correlation=100 + i))
        name = "Memcpy HtoD" if cat == "gpu_memcpy" else f"k{i}"
        dev = _x(cat, name, ts, dur, tid=7, correlation=100 + i, stream=7, device=0)
        dev["pid"] = 0
        ev.append(dev)
    return ev


def _text(events: list[dict], nan_dur: bool = False, base: int = B) -> str:
    """The trace as JSON text, each ts written as base + its offset in decimal digits."""
    doc = {"schemaVersion": 1, "deviceProperties": [], "traceEvents": events}
    text = json.dumps(doc)
    if nan_dur:  # a NaN makes the strict decoders refuse the file: the lenient reader takes it
        text = text.replace('"name": "aten::a"', '"name": "aten::a", "bad": NaN', 1)

    return re.sub(r'"@([^@]+)@"', lambda m: str(Decimal(base) + Decimal(m.group(1))), text)


EXPECTED = {
    "memcpy": Decimal("1.301") * 4,  # 5.204: on one stream, none overlapping
    "kernel": Decimal("2.503") + Decimal("3.333"),  # 5.836
}


def _check(p: Profile) -> None:
    assert p.meta.time_base_us == B
    avg = breakdown.average(p)
    for cat, want in EXPECTED.items():
        assert avg[cat] == pytest.approx(float(want), abs=1e-9), cat
    # the step ends at the data's end (docs/metrics.md "Step end rule"): the last kernel's, 22.704 + 3.333
    assert avg["duration"] == pytest.approx(26.037 - 0.100, abs=1e-9)
    ops = p.ops.set_index("name")
    # the siblings stay siblings: both children of the step, the second starting 0.205 after the first ends
    assert ops.loc["aten::a", "depth"] == ops.loc["aten::b", "depth"] == 1
    assert ops.loc["aten::b", "ts"] - ops.loc["aten::a", "end"] == pytest.approx(0.2, abs=1e-9)
    assert ops.loc["aten::a", "ts"] == pytest.approx(0.630, abs=1e-9)  # B.630 − B
    assert p.meta.partial_overlaps == 0


@pytest.mark.parametrize("how", ["whole", "gz", "chunked", "gz_chunked", "lenient", "lenient_chunked"])
def test_ns_digits_at_the_epoch_are_read_exactly(tmp_path: Path, how: str) -> None:
    text = _text(_events(), nan_dur=how.startswith("lenient"))
    gz = how.startswith("gz")
    path = tmp_path / ("t.pt.trace.json.gz" if gz else "t.pt.trace.json")
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    if how.endswith("chunked"):
        p = load_profile(str(path), chunk_bytes=600)
    else:
        p = load_whole(str(path))
    _check(p)


def test_every_road_gives_the_same_times(tmp_path: Path) -> None:
    path = tmp_path / "t.pt.trace.json"
    path.write_text(_text(_events()))
    whole, chunked = load_whole(str(path)), load_profile(str(path), chunk_bytes=600)
    for table in ("ops", "runtimes", "device"):
        for col in ("ts", "end"):
            a, b = getattr(whole, table)[col].to_numpy(), getattr(chunked, table)[col].to_numpy()
            assert np.allclose(a, b, rtol=0, atol=1e-9), (table, col)


def test_boot_clock_and_integer_epoch_traces_keep_base_zero(tmp_path: Path) -> None:
    boot = _text(_events(), base=5245848489445)  # Kineto's boot clock: a float64 resolves < 1 ns here
    path = tmp_path / "boot.pt.trace.json"
    path.write_text(boot)
    p = load_whole(str(path))
    assert p.meta.time_base_us == 0
    assert breakdown.average(p)["memcpy"] == pytest.approx(5.204, abs=0.004)  # 4 copies, ≤ 1 ns each
    ints = {"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "ts": B, "dur": 3, "pid": 1, "tid": 1}]}
    path.write_text(json.dumps(ints))
    assert load_whole(str(path)).meta.time_base_us == 0
    assert load_whole(str(path)).ops["ts"].iat[0] == float(B)


def _exact_per_step(path: Path, cat: str) -> Decimal:
    """Σ of the written durations of one device category / the number of ProfilerSteps: what the
    breakdown must give when that category's activities do not overlap each other or the kernels and
    every one lies inside the steps' window (both asserted here in decimal arithmetic)."""
    with gzip.open(path) as f:
        doc = json.loads(f.read(), parse_float=Decimal)
    events = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    steps = sorted((e["ts"], e["ts"] + e["dur"]) for e in events if e["name"].startswith("ProfilerStep#"))
    device = sorted(
        (e["ts"], e["ts"] + e["dur"], e["cat"])
        for e in events
        if e["cat"] in ("kernel", "gpu_memcpy", "gpu_memset")
    )
    assert all(b[0] >= a[1] for a, b in itertools.pairwise(device))  # one stream, no overlap
    assert device[0][0] >= steps[0][0]
    return sum((end - ts for ts, end, c in device if c == cat), Decimal(0)) / len(steps)


@pytest.mark.skipif(not NS_TRACE.is_dir(), reason="shared traces absent")
def test_ns_resolution_trace_per_step_figures_match_a_decimal_computation() -> None:
    path = next(NS_TRACE.glob("*.json.gz"))
    p = load_profile(str(path))
    avg = breakdown.average(p)
    assert len(breakdown.per_step(p)) == 5
    # decimal: memcpy 743.0808 (the float64 reading gave 740.25), kernel 93630.7204 (93634.65)
    for cat, key in (("gpu_memcpy", "memcpy"), ("kernel", "kernel"), ("gpu_memset", "memset")):
        want = _exact_per_step(path, cat)
        assert avg[key] == pytest.approx(float(want), abs=1e-6), (key, want)
    assert float(_exact_per_step(path, "gpu_memcpy")) == pytest.approx(743.0808, abs=1e-9)


def test_digits_are_split_exactly() -> None:
    from torch_tb_profiler.trace.exact_time import _split_digits

    whole, fraction = _split_digits([b"1712345678901234.630", b"-5.25", b"7", b"0.000000001"])
    assert whole.tolist() == [1712345678901234, -5, 7, 0]
    assert fraction.tolist() == [0.63, -0.25, 0.0, 1e-9]
    assert _split_digits([b"1.712345678901234630e15"]) is None  # an exponent: the decimal road


def test_a_ts_with_an_exponent_is_read_exactly_too(tmp_path: Path) -> None:
    """One ts written as 1.712345678901234630e15 (= B + 0.630): the whole trace takes the decimal road."""
    text = _text(_events()).replace(f'"ts": {B}.630', '"ts": 1.712345678901234630e15', 1)
    assert "e15" in text
    path = tmp_path / "t.pt.trace.json"
    path.write_text(text)
    _check(load_whole(str(path)))


def test_exported_counter_tracks_are_on_the_trace_clock(tmp_path: Path) -> None:
    """The Trace view's export adds GPU counter tracks to the file as written: their ts add the base back."""
    from torch_tb_profiler.analysis.timeline.counters import counter_events

    path = tmp_path / "t.pt.trace.json"
    path.write_text(_text(_events()))
    p = load_whole(str(path))
    ts = [e["ts"] for e in counter_events(p)]
    # the range starts at the first event, the step at B + 0.100 (a float64 there resolves 0.25 µs)
    assert min(ts) == pytest.approx(B + 0.1, abs=0.25)
    assert max(ts) == pytest.approx(B + 50.1, abs=0.25)  # the step range's end, the last of any event

"""Memory view on a synthetic 2.x trace, every figure computed by hand.

Thread 100, ProfilerStep#1 [0, 1000):
  aten::conv2d [10, 200) > aten::empty [20, 30), aten::convolution [40, 150) > aten::add [50, 60)
  aten::relu [300, 400); aten::zero_ [590, 610)
GPU0 records (addr, bytes, total allocated / reserved afterwards; 10 000 bytes live before profiling):
  @25  A +1000 (in aten::empty)        11 000 / 20 000
  @55  B +500  (in aten::add)          11 500 / 20 000
  @100 A −1000 (in aten::convolution)  10 500 / 20 000
  @310 C +2000 (in aten::relu)         12 500 / 22 000   <- peaks
  @350 B −500  (in aten::relu)         12 000 / 22 000
  @500 D +64   (no operator: directly in the step)  12 064 / 22 000
  @600 E −300  (in aten::zero_; allocated before profiling)  11 764 / 22 000
Other devices: CPU +8 @70, XPU0 +16 @80, PrivateUse1 1 +32 @85, unknown type 99 +4 @90.
"""

from __future__ import annotations

import pytest

from tests.fixtures.trace_builder import V100, TraceBuilder
from torch_tb_profiler.analysis.memory import usage as M
from torch_tb_profiler.ingest.loading import load_profile

GPU_RECORDS = [
    (25, 0x10, 1000, 11000, 20000),
    (55, 0x20, 500, 11500, 20000),
    (100, 0x10, -1000, 10500, 20000),
    (310, 0x30, 2000, 12500, 22000),
    (350, 0x20, -500, 12000, 22000),
    (500, 0x40, 64, 12064, 22000),
    (600, 0x50, -300, 11764, 22000),
]


@pytest.fixture(scope="module")
def profile(tmp_path_factory):
    b = TraceBuilder(device_properties=[V100])
    b.step(1, 0, 1000)
    b.op("aten::conv2d", 10, 190)
    b.op("aten::empty", 20, 10)
    b.op("aten::convolution", 40, 110)
    b.op("aten::add", 50, 10)
    b.op("aten::relu", 300, 100)
    b.op("aten::zero_", 590, 20)
    for ts, addr, nbytes, alloc, res in GPU_RECORDS:
        b.memory(ts, nbytes, addr, alloc, res, device_type=1, device_id=0)
    b.memory(70, 8, 0x99, 8, 0, device_type=0, device_id=-1)
    b.memory(80, 16, 0x98, 16, 0, device_type=12, device_id=0)
    b.memory(85, 32, 0x97, 32, 0, device_type=20, device_id=1)
    b.memory(90, 4, 0x96, 4, 0, device_type=99, device_id=0)
    path = b.write(tmp_path_factory.mktemp("mem") / "worker0.pt.trace.json")
    return load_profile(str(path))


def test_devices_every_type_gets_a_view(profile):
    devs = M.devices(profile)
    assert [d["device"] for d in devs] == ["GPU0", "XPU0", "PrivateUse1 1", "CPU", "Device type 99 #0"]
    gpu = devs[0]
    assert gpu["peak_allocated_bytes"] == 12500 and gpu["peak_reserved_bytes"] == 22000
    assert gpu["total_memory_bytes"] == V100["totalGlobalMem"]
    assert gpu["records"] == 7
    assert devs[3]["total_memory_bytes"] is None
    assert M.summary(profile)[0] == {
        "device": "GPU0",
        "peak_allocated_bytes": 12500,
        "peak_reserved_bytes": 22000,
    }


def test_curve_full_and_zoomed(profile):
    c = M.curve(profile, "GPU0")
    base = c["first_ts"] - 25
    assert [t - base for t in c["ts"]] == [r[0] for r in GPU_RECORDS]
    assert c["allocated"] == [r[3] for r in GPU_RECORDS]
    assert c["reserved"] == [r[4] for r in GPU_RECORDS]
    assert c["peak_allocated_ts"] - base == 310
    # zoom [300, 400]: the level in force at 300 (10 500 since @100) starts the step plot
    z = M.curve(profile, "GPU0", start=base + 300, end=base + 400)
    assert [t - base for t in z["ts"]] == [300, 310, 350]
    assert z["allocated"] == [10500, 12500, 12000]
    assert z["peak_allocated_bytes"] == 12500  # the device's peak, whatever the window


def test_curve_unknown_device_is_a_lookup_error(profile):
    with pytest.raises(LookupError, match="no memory records for device 'GPU7'"):
        M.curve(profile, "GPU7")


def test_events_pairing_operators_and_never_freed(profile):
    ev = M.events(profile, "GPU0", sort="size", limit=100)
    base = M.curve(profile, "GPU0")["first_ts"] - 25
    rows = [
        (
            r["operator"],
            r["bytes"],
            None if r["alloc_ts"] is None else r["alloc_ts"] - base,
            None if r["free_ts"] is None else r["free_ts"] - base,
            r["duration"],
        )
        for r in ev["rows"]
    ]
    assert rows == [
        ("aten::relu", 2000, 310, None, None),
        ("aten::conv2d (aten::empty)", 1000, 25, 100, 75),
        ("aten::add", 500, 55, 350, 295),
        ("aten::zero_", 300, None, 600, None),
        ("", 64, 500, None, None),
    ]
    assert ev["total"] == 5 and ev["never_freed"] == 2


def test_events_filters_and_paging(profile):
    base = M.curve(profile, "GPU0")["first_ts"] - 25
    # lifetimes meeting [320, 550]: B [55, 350], C [310, ∞), D [500, ∞), E (−∞, 600]
    ev = M.events(profile, "GPU0", start=base + 320, end=base + 550, sort="alloc_time")
    assert [r["bytes"] for r in ev["rows"]] == [500, 2000, 64, 300]
    big = M.events(profile, "GPU0", min_bytes=400, sort="size", offset=1, limit=1)
    assert big["total"] == 3 and [r["bytes"] for r in big["rows"]] == [1000]
    with pytest.raises(ValueError):
        M.events(profile, "GPU0", sort="bogus")


def _by_name(stats):
    return {r["name"]: r for r in stats["rows"]}


def test_operator_stats_self_and_total(profile):
    st = M.operator_stats(profile, "GPU0")
    rows = _by_name(st)
    assert set(rows) == {
        "aten::add",
        "aten::conv2d",
        "aten::convolution",
        "aten::empty",
        "aten::relu",
        "aten::zero_",
    }
    assert rows["aten::conv2d"] == {
        "name": "aten::conv2d",
        "calls": 1,
        "size_increase": 500.0,  # empty +1000, convolution −1000, add +500
        "self_size_increase": 0.0,
        "alloc_count": 2,
        "self_alloc_count": 0,
        "alloc_size": 1500.0,
        "self_alloc_size": 0.0,
    }
    assert (
        rows["aten::convolution"]["size_increase"] == -500
        and rows["aten::convolution"]["self_size_increase"] == -1000
    )
    assert rows["aten::relu"]["self_size_increase"] == 1500 and rows["aten::relu"]["self_alloc_size"] == 2000
    assert rows["aten::zero_"]["self_size_increase"] == -300 and rows["aten::zero_"]["alloc_count"] == 0
    assert st["records_without_operator"] == 1  # D, directly in the step


def test_operator_stats_time_range(profile):
    base = M.curve(profile, "GPU0")["first_ts"] - 25
    rows = _by_name(M.operator_stats(profile, "GPU0", start=base + 0, end=base + 120))
    assert set(rows) == {"aten::add", "aten::conv2d", "aten::convolution", "aten::empty"}
    assert rows["aten::conv2d"]["size_increase"] == 500
    assert rows["aten::convolution"]["self_size_increase"] == -1000


def test_other_devices_have_stats(profile):
    rows = _by_name(M.operator_stats(profile, "XPU0"))
    assert rows["aten::conv2d"]["alloc_size"] == 16 and rows["aten::convolution"]["self_alloc_count"] == 1
    unknown = M.operator_stats(profile, "Device type 99 #0")
    assert _by_name(unknown)["aten::conv2d"]["alloc_count"] == 1


def test_legacy_records_without_totals_or_addresses(tmp_path):
    b = TraceBuilder(style="legacy")
    b.op("aten::empty", 0, 10)
    b.raw(
        {
            "ph": "i",
            "s": "t",
            "name": "[memory]",
            "pid": b.pid,
            "tid": str(b.tid),
            "ts": b.base_ts + 5,
            "args": {"Device Type": 1, "Device Id": 0, "Bytes": 256},
        }
    )
    p = load_profile(str(b.write(tmp_path / "w.pt.trace.json")))
    (dev,) = M.devices(p)
    assert dev["device"] == "GPU0" and dev["peak_allocated_bytes"] is None and not dev["has_totals"]
    assert M.events(p, "GPU0")["total"] == 0 and not M.events(p, "GPU0")["has_addresses"]
    c = M.curve(p, "GPU0")  # no totals: the running sum of Bytes since the first record
    assert c["relative"] and c["allocated"] == [256] and c["reserved"] == [None]
    assert c["peak_increase_bytes"] == 256 and c["peak_allocated_bytes"] is None
    assert _by_name(M.operator_stats(p, "GPU0"))["aten::empty"]["self_alloc_size"] == 256


def test_records_without_any_operator(tmp_path):
    b = TraceBuilder()
    b.memory(5, 100, 1, 100, 200, device_type=1, device_id=0)
    b.memory(9, -100, 1, 0, 200, device_type=1, device_id=0)
    p = load_profile(str(b.write(tmp_path / "memonly.pt.trace.json")))
    assert M.devices(p)[0]["peak_allocated_bytes"] == 100
    (ev,) = M.events(p)["rows"]
    assert ev["operator"] == "" and ev["duration"] == 4
    st = M.operator_stats(p)
    assert st["rows"] == [] and st["records_without_operator"] == 2


def test_downsampled_curve_keeps_the_one_sample_peak(tmp_path):
    # 6000 records: a slow saw-tooth between 0 and ~1 MB, and one record 1 µs wide at 9 MB
    b = TraceBuilder()
    total = 0
    for i in range(6000):
        nbytes = 1000 if (i // 50) % 2 == 0 else -1000
        total += nbytes
        alloc = 9_000_000 if i == 4321 else total
        b.memory(10 + i, nbytes, 0x1000 + i, alloc, 10_000_000, device_type=1, device_id=0)
    p = load_profile(str(b.write(tmp_path / "saw.pt.trace.json")))
    c = M.curve(p, "GPU0", max_points=300)
    assert c["downsampled"] and len(c["ts"]) <= 300 and c["points_in_range"] == 6000
    i = c["allocated"].index(9_000_000)
    assert c["ts"][i] - c["first_ts"] == 4321
    assert c["peak_allocated_bytes"] == 9_000_000


def test_total_memory_of_a_non_cuda_accelerator(tmp_path):
    b = TraceBuilder(device_properties=[{"id": 1, "name": "Intel Max 1550", "totalGlobalMem": 68719476736}])
    b.memory(5, 64, 1, 64, 128, device_type=12, device_id=1)
    b.memory(6, 64, 2, 64, 0, device_type=0, device_id=-1)
    devs = {d["device"]: d for d in M.devices(load_profile(str(b.write(tmp_path / "xpu.pt.trace.json"))))}
    assert devs["XPU1"]["total_memory_bytes"] == 68719476736 and devs["CPU"]["total_memory_bytes"] is None


def test_real_cpu_sample_peak_equals_the_largest_total_in_the_file():
    import gzip
    import json

    from tests.fixtures.paths import SAMPLES

    path = sorted((SAMPLES / "resnet_like_cpu").glob("*.pt.trace.json.gz"))[0]
    raw = json.loads(gzip.decompress(path.read_bytes()))
    totals = [e["args"]["Total Allocated"] for e in raw["traceEvents"] if e.get("name") == "[memory]"]
    (cpu,) = M.devices(load_profile(str(path)))
    assert cpu["device"] == "CPU" and cpu["records"] == len(totals)
    assert cpu["peak_allocated_bytes"] == max(totals)
    c = M.curve(load_profile(str(path)), "CPU")
    assert max(v for v in c["allocated"] if v is not None) == max(totals)

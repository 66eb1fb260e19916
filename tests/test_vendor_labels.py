"""Every answer names the device by its kind and uses the vendor's own terms, or omits a figure that does
not exist: no SM / Tensor-Core / CUDA wording for a non-NVIDIA device, no figure from Kineto's occupancy
placeholder, nothing labelled with a device kind without device activity.

Hand-built traces check each wording; the invariant runs over every trace in ../shared/traces."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from tests.fixtures.builders_overview import load
from tests.fixtures.paths import SHARED_TRACES
from tests.fixtures.shared_profiles import TRACES
from tests.fixtures.shared_profiles import shared_profile as _profile
from tests.fixtures.trace_builder import V100, TraceBuilder
from torch_tb_profiler.analysis.core.accelerator import accelerator, lost_launches
from torch_tb_profiler.analysis.device import gpu_metrics
from torch_tb_profiler.analysis.diff import compare as D
from torch_tb_profiler.analysis.ops import kernels
from torch_tb_profiler.analysis.overview import page as overview
from torch_tb_profiler.analysis.overview.recommendations import recommendations
from torch_tb_profiler.analysis.timeline.counters import counter_events
from torch_tb_profiler.analysis.timeline.index import index as timeline_index
from torch_tb_profiler.cli import compare_report

MI300 = {**V100, "name": "AMD Instinct MI300X", "computeMajor": 9, "computeMinor": 4, "warpSize": 64}
# NVIDIA-only wording (case-sensitive words: "cudaLaunchKernel" or "CUDAFunctor" in a name do not match)
NVIDIA_TERMS = re.compile(r"\bCUDA\b|\bSMs?\b|SM [Ee]fficiency|[Tt]ensor[ -][Cc]ores?|\bTC\b")


def _host_bound(runtime: str, kernel: str, props: dict, runtime_cat: str | None = None) -> TraceBuilder:
    """One step: 500 µs of host work, then one 100 µs kernel: the device idles while the host works."""
    b = TraceBuilder(device_properties=[props])
    b.step(1, 0, 1000)
    b.op("aten::add", 10, 500, ext_id=1)
    if runtime_cat is None:
        b.launch(kernel, 20, 5, 600, 100, ext_id=1, runtime_name=runtime)
    else:  # a vendor's own categories (MTIA)
        b.raw({"ph": "X", "cat": runtime_cat, "name": runtime, "pid": b.pid, "tid": b.tid,
               "ts": b.base_ts + 20, "dur": 5, "args": {"correlation": 7, "External id": 1}})  # fmt: skip
        b.raw({"ph": "X", "cat": "mtia_ccp_events", "name": kernel, "pid": 9, "tid": 1,
               "ts": b.base_ts + 600, "dur": 100, "args": {"correlation": 7, "External id": 1, "device": 9}})  # fmt: skip
    return b


def test_rocm_advice_says_hip_graphs(tmp_path: Path) -> None:
    profile = load(_host_bound("hipLaunchKernel", "Cijk_Alik_Bljk_MT64x16x32_MI16x16x1_SN", MI300), tmp_path)
    (rec,) = [r for r in recommendations(profile) if r["id"] == "host_bound"]
    assert "HIP graphs" in rec["text"] and not NVIDIA_TERMS.search(rec["text"] + rec["title"])
    assert rec["title"] == "GPU idle while the host works"


def test_mtia_advice_names_no_graphs_and_the_kind(tmp_path: Path) -> None:
    b = _host_bound("launch", "fused_mm_16x16", {"id": 9, "name": None}, runtime_cat="mtia_runtime")
    profile = load(b, tmp_path)
    assert accelerator(profile).platform == "MTIA"
    (rec,) = [r for r in recommendations(profile) if r["id"] == "host_bound"]
    assert rec["title"] == "MTIA idle while the host works"
    assert "graph" not in rec["text"] and "GPU" not in rec["text"]


def test_mtia_timeline_names_the_device_mtia(tmp_path: Path) -> None:
    b = _host_bound("launch", "fused_mm_16x16", {"id": 9, "name": None}, runtime_cat="mtia_runtime")
    profile = load(b, tmp_path)
    idx = timeline_index(profile)
    devices = [g["name"] for g in idx.groups if g["kind"] == "device"]
    assert devices and all(n.startswith("MTIA 9") for n in devices)  # was "GPU 9"
    counters = [t.name for t in idx.tracks if t.kind == "counter"]
    assert "MTIA 9 Utilization" in counters  # was "GPU 9 Utilization"
    assert not any("SM" in n for n in counters)  # was a 0 % "Est. SM Efficiency" track
    assert not any("SM" in e["name"] for e in counter_events(profile))


def test_rocm_timeline_and_export_have_no_sm_efficiency(tmp_path: Path) -> None:
    profile = load(_host_bound("hipLaunchKernel", "Cijk_MT64x16x32_MI16x16x1", MI300), tmp_path)
    names = {e["name"] for e in counter_events(profile)}
    assert names == {"GPU 0 Utilization"}  # the export wrote "GPU 0 Est. SM Efficiency" of 0 too


def test_cuda_keeps_its_sm_efficiency_track(tmp_path: Path) -> None:
    b = TraceBuilder(device_properties=[V100])
    b.step(1, 0, 1000)
    b.launch("volta_sgemm_64x64_nn", 2, 2, 10, 600, blocks_per_sm=0.5, occupancy=20)
    names = {e["name"] for e in counter_events(load(b, tmp_path))}
    assert names == {"GPU 0 Utilization", "GPU 0 Est. SM Efficiency"}


def test_cli_compare_says_matrix_cores_on_rocm(tmp_path: Path) -> None:
    a = load(_host_bound("hipLaunchKernel", "Cijk_MT64x16x32_MI16x16x1", MI300), tmp_path / "a")
    b = load(_host_bound("hipLaunchKernel", "triton_poi_fused_add_0", MI300), tmp_path / "b")
    text = compare_report.render(D.compare(a, b), top=5)
    (line,) = [ln for ln in text.splitlines() if ln.startswith("GPU 0:")]
    assert "matrix cores 100.0% → 0.0%" in line  # was "tensor cores"
    assert "SM eff." not in line and "occupancy" not in line  # neither ROCm trace gives them
    assert not NVIDIA_TERMS.search(line)


# --- the invariant over every shared trace ----------------------------------------------------------


def _texts(value) -> list[str]:
    """Every label and sentence of an answer: strings that are not kernel or operator names."""
    if isinstance(value, dict):
        return [
            t for k, v in value.items() if k not in ("name", "names", "top_host_ranges") for t in _texts(v)
        ]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v)]
    return [value] if isinstance(value, str) else []


@pytest.mark.shared
@pytest.mark.parametrize("rel", TRACES)
def test_vendor_terms_and_kinds(rel: str) -> None:
    profile = _profile(rel)
    acc = accelerator(profile)
    answer = overview.page(profile)
    has_work = (
        len(profile.device) > 0 or lost_launches(profile) > 0 or "hpu_op" in json.dumps(profile.meta.counts)
    )
    # nothing labelled with a device kind without device activity
    assert (answer["device_type"] != "CPU") == has_work, answer["device_type"]
    kernel_devices = set(profile.device["device"][profile.device["kind"] == "kernel"].astype(int))
    assert {g["id"] for g in answer["gpus"]} <= kernel_devices
    idx = timeline_index(profile)
    names = [g["name"] for g in idx.groups if g["kind"] == "device"]
    if acc.platform is not None:
        assert all(n.split(" ")[0] in (acc.kind, "Device") for n in names), names
    if acc.platform == "CUDA":
        return
    # a non-NVIDIA device: no NVIDIA wording in the overview, kernel, operator and timeline answers
    for text in _texts({k: v for k, v in answer.items() if k != "labels"}):
        assert not NVIDIA_TERMS.search(text), text
    assert answer["matrix_units"] in (None, "Matrix Cores")
    assert acc.matrix_units in (None, "Matrix Cores")
    for g in answer["gpus"]:
        assert g["sm_efficiency_pct"] is None and g["achieved_occupancy_pct"] is None
        assert g["compute_capability"] is None
    table = kernels.kernel_table(profile)
    assert table["mean_blocks_per_sm"].isna().all() and table["mean_achieved_occupancy_pct"].isna().all()
    tracks = [t.name for t in idx.tracks if t.kind == "counter"]
    assert not any(NVIDIA_TERMS.search(t) for t in tracks), tracks
    assert not any(NVIDIA_TERMS.search(e["name"]) for e in counter_events(profile))


@pytest.mark.shared
@pytest.mark.parametrize("rel", TRACES)
def test_no_figure_from_the_occupancy_placeholder(rel: str) -> None:
    profile = _profile(rel)
    k = profile.device[profile.device["kind"] == "kernel"]
    occ = k["occupancy"].to_numpy(dtype=np.float64)
    placeholder = (occ == 0) & ~(k["warps_per_sm"].to_numpy(dtype=np.float64) < 1)
    # a kernel whose every call wrote the placeholder has no mean occupancy
    only = set(k["name"][placeholder]) - set(k["name"][~placeholder & ~np.isnan(occ)])
    table = kernels.kernel_table(profile).set_index("name")
    for name in only:
        assert np.isnan(table.loc[name, "mean_achieved_occupancy_pct"]), name
    # the GPU figure is the kernel-time-weighted mean over the computed values only (within the window)
    for g in gpu_metrics.gpu_summary(profile):
        sel = (k["device"].to_numpy() == g["id"]) & ~placeholder & ~np.isnan(occ)
        if not sel.any():
            assert g["achieved_occupancy_pct"] is None
        else:
            lo, hi = float(np.min(occ[sel])), float(np.max(occ[sel]))
            assert (
                g["achieved_occupancy_pct"] is None or lo - 1e-9 <= g["achieved_occupancy_pct"] <= hi + 1e-9
            )
    for rec in recommendations(profile):
        if rec["id"] == "low_occupancy":
            for f in rec["evidence"]["kernels"]:
                assert f["name"] not in only or f["mean_achieved_occupancy_pct"] is None


def test_shared_traces_listed() -> None:
    if not SHARED_TRACES.is_dir():
        pytest.skip("../shared/traces absent")
    assert len(TRACES) >= 10


def test_rocm_counts_compute_units_not_sms(tmp_path: Path) -> None:
    from torch_tb_profiler.analysis.distributed.job import _gpu_info

    profile = load(
        _host_bound("hipLaunchKernel", "Cijk_MT64x16x32_MI16x16x1", {**MI300, "numSms": 304}), tmp_path
    )
    (gpu,) = gpu_metrics.gpu_summary(profile)
    assert gpu["num_sms"] is None and gpu["compute_units"] == 304  # deviceProperties' numSms is the CU count
    info = _gpu_info(profile)["GPU0"]
    assert "sms" not in info and info["compute_units"] == 304


def test_diff_compares_mtia_kernels_and_names_the_kind(tmp_path: Path) -> None:
    def mtia(path: Path):
        return load(
            _host_bound("launch", "fused_mm_16x16", {"id": 9, "name": None}, runtime_cat="mtia_runtime"), path
        )

    d = D.compare(mtia(tmp_path / "a"), mtia(tmp_path / "b"))
    assert [k["name"] for k in d["kernels"]] == [
        "fused_mm_16x16"
    ]  # was skipped: only "GPU" sides had kernels
    assert d["sort_metric"] == "device_self_us"
    text = compare_report.render(d, top=5)
    assert "MTIA 9: utilization 10.0% → 10.0%" in text and "GPU" not in text

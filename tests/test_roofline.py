"""Roofline (analysis/roofline): who holds the work, trace counts over the model, the peaks table and
its matching, the figures and MFU by hand, the route and the CLI (docs/metrics.md, "Roofline")."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.paths import REPO
from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.analysis.roofline import attribution as A
from torch_tb_profiler.analysis.roofline import figures as F
from torch_tb_profiler.analysis.roofline import peaks as P
from torch_tb_profiler.analysis.roofline.mfu import mfu
from torch_tb_profiler.ingest.parse import load_profile

BF16 = "c10::BFloat16"
H100 = {"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85018279936, "numSms": 132,
        "computeMajor": 9, "computeMinor": 0}  # fmt: skip
MM_DIMS = [[32, 4096], [4096, 4096]]


def gemm_trace(
    path: Path, kernel_us: float = 20.0, props: dict | None = None, flops_arg: float | None = None
) -> Path:
    """One step of 100 µs: aten::linear → aten::mm launching one bf16 GEMM kernel of ``kernel_us``."""
    b = TraceBuilder(device_properties=[props if props is not None else H100])
    b.step(1, 0, 100)
    b.op("aten::linear", 5, 80, input_dims=[[32, 4096], [4096, 4096], []], input_types=[BF16, BF16, ""])
    args = {"flops": flops_arg} if flops_arg is not None else None
    ext = b.op("aten::mm", 10, 60, input_dims=MM_DIMS, input_types=[BF16, BF16], args=args)
    b.launch("sm90_xmma_gemm_bf16bf16_bf16f32", 20, 5, 30, kernel_us, ext_id=ext)
    return b.write(path)


def test_the_leaf_op_holds_the_work_once(tmp_path: Path) -> None:
    p = load_profile(str(gemm_trace(tmp_path / "t.pt.trace.json")))
    hold = A.holders(p)
    assert list(p.ops["name"].to_numpy()[hold["op"]]) == ["aten::mm"]  # not aten::linear as well
    rows = F.op_rows(p)
    assert list(rows["name"]) == ["aten::mm"] and rows["flops"].iloc[0] == 2 * 32 * 4096 * 4096
    assert rows["source"].iloc[0] == "model"


def test_figures_by_hand(tmp_path: Path) -> None:
    p = load_profile(str(gemm_trace(tmp_path / "t.pt.trace.json")))
    dev = F.device(p)
    assert dev["matched_peak_name"] == "H100 SXM" and dev["how"] == "name"
    row = F.op_rows(p).iloc[0]
    flops, moved = 1_073_741_824, 34_078_720
    assert row["intensity"] == pytest.approx(flops / moved)  # 31.51 FLOP/B
    assert row["tflops_per_s"] == pytest.approx(flops / 20 / 1e6)  # 53.69
    assert row["tb_per_s"] == pytest.approx(moved / 20 / 1e6)  # 1.704
    # ridge 989.5 / 3.35 = 295.4 FLOP/B > 31.5: memory-bound, the roof is 31.51 × 3.35 = 105.55 TFLOP/s
    assert row["bound"] == "memory"
    assert row["pct_of_roofline"] == pytest.approx(100 * 1.703936 / 3.35)  # 50.86 %
    assert row["time_lost_us"] == pytest.approx(20 * (1 - 1.703936 / 3.35))  # 9.83 µs
    k = F.kernel_rows(p).iloc[0]
    assert (
        k["known_calls"] == 1
        and k["flops"] == flops
        and k["pct_of_roofline"] == pytest.approx(50.8637, rel=1e-4)
    )


def test_mfu_by_hand(tmp_path: Path) -> None:
    p = load_profile(str(gemm_trace(tmp_path / "t.pt.trace.json")))
    m = mfu(p)
    assert m["dtype"] == "bf16" and m["peak_tflops"] == 989.5
    # 1.0737e9 FLOP in a 100 µs step on 989.5 TFLOP/s
    assert m["per_step"][0]["mfu"] == pytest.approx(1_073_741_824 / (100e-6 * 989.5e12))  # 1.085 %
    assert m["mean"] == pytest.approx(m["per_step"][0]["mfu"]) and m["known_flops_share"] == 1.0


def test_trace_flops_arg_beats_the_model(tmp_path: Path) -> None:
    p = load_profile(str(gemm_trace(tmp_path / "t.pt.trace.json", flops_arg=1e9)))
    row = F.op_rows(p).iloc[0]
    assert row["flops"] == 1e9 and row["source"] == "trace" and row["bytes_source"] == "model"


def test_inductor_counts_on_triton_kernels(tmp_path: Path) -> None:
    b = TraceBuilder(device_properties=[H100])
    b.step(1, 0, 100)
    ext = b.annotation("Torch-Compiled Region", 5, 80)
    extra = {"kernel_flop": 2_000_000_000, "kernel_num_gb": 0.004}
    b.launch("triton_poi_fused_mm_0", 10, 5, 20, 10, ext_id=ext, runtime_name="cuLaunchKernel", driver=True,
             extra_args=extra)  # fmt: skip
    p = load_profile(str(b.write(tmp_path / "t.pt.trace.json")))
    k = F.kernel_rows(p).iloc[0]
    assert k["flops"] == 2e9 and k["bytes"] == 4e6 and k["source"] == "trace"
    assert k["tflops_per_s"] == pytest.approx(2e9 / 10 / 1e6)  # 200 TFLOP/s
    op = F.op_rows(p).iloc[0]
    assert op["name"] == "Torch-Compiled Region" and op["flops"] == 2e9 and op["source"] == "trace"
    # no dtype: no peak to compare with, absolute figures only
    assert op["pct_of_roofline"] != op["pct_of_roofline"] or op["peak_dtype"] in ("", None)


def test_missing_shapes_give_null_with_a_reason(tmp_path: Path) -> None:
    b = TraceBuilder(device_properties=[H100])
    b.step(1, 0, 100)
    ext = b.op("aten::mm", 10, 60)
    b.launch("sm90_gemm", 20, 5, 30, 20, ext_id=ext)
    p = load_profile(str(b.write(tmp_path / "t.pt.trace.json")))
    assert not len(A.holders(p)) and not A.has_flops(p)
    k = F.kernel_rows(p).iloc[0]
    assert k["known_calls"] == 0 and k["flops"] != k["flops"] and k["time_lost_us"] != k["time_lost_us"]
    assert mfu(p)["mean"] is None


def test_unknown_device_gives_absolute_figures_only(tmp_path: Path) -> None:
    props = {"id": 0, "name": "Some Accelerator 9000", "totalGlobalMem": 1 << 34, "numSms": 7}
    p = load_profile(str(gemm_trace(tmp_path / "t.pt.trace.json", props=props)))
    dev = F.device(p)
    assert dev["matched_peak_name"] is None and "not in the peaks table" in dev["how"]
    row = F.op_rows(p).iloc[0]
    assert row["tflops_per_s"] == pytest.approx(53.687, rel=1e-4)
    assert row["pct_of_roofline"] != row["pct_of_roofline"] and row["bound"] == ""
    assert mfu(p)["mean"] is None and mfu(p)["reason"]


# ---- the peaks table --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "memory_gib", "sms", "expected"),
    [
        ("Tesla V100-SXM2-16GB", 16, 80, "V100 SXM2"),
        ("Tesla V100-PCIE-32GB", 32, 80, "V100 PCIe"),
        ("Tesla V100-DGXS-32GB", 31.7, 80, "V100 SXM2"),  # kineto_samples: DGX Station's SXM2 part
        ("NVIDIA A100-SXM4-40GB", 39.4, 108, "A100 40GB (PCIe/SXM4)"),
        ("NVIDIA A100-PG509-200", 39.4, 108, "A100 40GB (PCIe/SXM4)"),
        ("NVIDIA A100-SXM4-80GB", 79.2, 108, "A100 80GB SXM4"),
        ("NVIDIA A100 80GB PCIe", 79.2, 108, "A100 80GB PCIe"),
        ("NVIDIA H100 80GB HBM3", 79.2, 132, "H100 SXM"),
        ("NVIDIA H100 PCIe", 79.2, 114, "H100 PCIe"),
        ("NVIDIA H100 NVL", 93.1, 132, "H100 NVL"),
        ("NVIDIA H200", 139.8, 132, "H200 SXM"),
        ("NVIDIA H200 NVL", 139.8, 132, "H200 NVL"),
        ("NVIDIA B200", 178.4, 148, "B200 (HGX)"),
        ("NVIDIA GB200", 184.0, 152, None),  # an SM count the table does not have: not a guess
        ("NVIDIA L4", 22.0, 58, "L4"),
        ("NVIDIA L40S", 44.5, 142, "L40S"),
        ("NVIDIA GeForce RTX 2080 Ti", 10.7, 68, "GeForce RTX 2080 Ti"),
        ("NVIDIA GeForce RTX 3090", 23.7, 82, "GeForce RTX 3090"),
        ("NVIDIA GeForce RTX 4090", 23.6, 128, "GeForce RTX 4090"),
        ("AMD Instinct MI210", 64, 104, "MI210"),
        ("AMD Instinct MI250X/MI250", 64, 110, "MI250X (one GCD)"),
        ("AMD Instinct MI250X/MI250", 64, 104, "MI250 (one GCD)"),
        ("AMD Instinct MI300X", 192, 304, "MI300X"),
        ("AMD Instinct MI300X VF", 191.5, 304, "MI300X"),
        ("AMD Instinct MI325X", 256, 304, "MI325X"),
        ("AMD Instinct MI355X", 288, 256, "MI355X"),
    ],
)
def test_names_match_their_products(name: str, memory_gib: float, sms: int, expected: str | None) -> None:
    props = {"name": name, "totalGlobalMem": int(memory_gib * P.GIB), "numSms": sms}
    found = P.match(props, "ROCm" if "AMD" in name else "CUDA")
    assert (found.peak.name if found.peak else None) == expected, found.how


def test_every_row_cites_a_source_and_has_dense_peaks() -> None:
    for peak in P.BUILTIN:
        assert peak.source and peak.tb_per_s > 0 and set(peak.tflops) <= set(P.DTYPES)
        assert "fp32" in peak.tflops and ("bf16" in peak.tflops or "fp16" in peak.tflops)


def test_without_a_name_the_architecture_sm_count_and_memory_must_name_one_product() -> None:
    vllm = {"name": "", "totalGlobalMem": 206141652992, "computeMajor": 9, "computeMinor": 4, "numSms": 304}
    found = P.match(vllm, "ROCm")
    assert found.peak.name == "MI300X" and found.how == "architecture"
    with_gcn = {
        "name": "",
        "gcnArchName": "gfx942:sramecc+:xnack-",
        "totalGlobalMem": 256 * P.GIB,
        "numSms": 304,
    }
    assert P.match(with_gcn, "ROCm").peak.name == "MI325X"
    # gfx90a with 104 CUs and 64 GiB is an MI210 or one GCD of an MI250: no match
    mi2xx = {
        "name": "AMD Radeon Graphics",
        "totalGlobalMem": 68702699520,
        "computeMajor": 9,
        "computeMinor": 0,
        "numSms": 104,
    }
    found = P.match(mi2xx, "ROCm")
    assert found.peak is None and "several products" in found.how
    # sm_70 with 80 SMs and 32 GiB: V100 SXM2, PCIe or V100S (rows without a memory size stay candidates)
    v100 = {"name": "", "totalGlobalMem": 34084028416, "computeMajor": 7, "computeMinor": 0, "numSms": 80}
    assert P.match(v100, "CUDA").peak is None
    # compute capability alone never names a product
    assert P.match({"name": "", "computeMajor": 9, "computeMinor": 0}, "CUDA").peak is None
    h100 = {"name": "", "totalGlobalMem": 85018279936, "computeMajor": 9, "computeMinor": 0, "numSms": 132}
    assert P.match(h100, "CUDA").peak.name == "H100 SXM"


def test_a_user_file_names_other_devices(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "peaks.json"
    f.write_text(
        json.dumps(
            [{"name": "Lab card", "match": "Accelerator 9000", "peaks": {"bf16": 100.0}, "tb_per_s": 1.0}]
        )
    )
    monkeypatch.setenv(P.PEAKS_ENV, str(f))
    props = {"id": 0, "name": "Some Accelerator 9000", "totalGlobalMem": 1 << 34, "numSms": 7}
    p = load_profile(str(gemm_trace(tmp_path / "t.pt.trace.json", props=props)))
    dev = F.device(p)
    assert dev["matched_peak_name"] == "Lab card" and dev["how"] == "user file"
    row = F.op_rows(p).iloc[0]
    # roof at 31.5 FLOP/B: min(100, 31.5 × 1) = 31.5 TFLOP/s; achieved 53.7: above the (wrong) roof
    assert row["pct_of_roofline"] == pytest.approx(100 * 53.6870912 / (1_073_741_824 / 34_078_720))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"name": "x", "match": "y", "peaks": {"int3": 1}, "tb_per_s": 1}]))
    with pytest.raises(ValueError, match="unknown dtypes"):
        P.user_peaks(str(bad))


def test_fp32_on_tensor_cores_uses_the_tf32_peak() -> None:
    dev = {"peaks": {"fp32": 67.0, "tf32": 494.5}}
    assert F.peak_dtype("fp32", 1.0, dev, "CUDA") == "tf32"
    assert F.peak_dtype("fp32", 0.0, dev, "CUDA") == "fp32"
    assert F.peak_dtype("fp32", 1.0, dev, "ROCm") == "fp32"


# ---- the CLI ----------------------------------------------------------------------------------------


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "torch_tb_profiler", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )


def test_summary_json_and_text(tmp_path: Path) -> None:
    trace = gemm_trace(tmp_path / "run" / "w.pt.trace.json")
    r = cli("summary", str(trace), "--json")
    assert r.returncode == 0, r.stderr
    roof = json.loads(r.stdout)["profiles"][0]["roofline"]
    assert roof["device"]["matched_peak_name"] == "H100 SXM" and roof["device"]["peaks"]["bf16"] == 989.5
    op = roof["ops"][0]
    assert set(op) == set(__import__("torch_tb_profiler.analysis.roofline.summary", fromlist=["x"]).ROW_KEYS)
    assert op["name"] == "aten::mm" and op["bound"] == "memory" and op["source"] == "model"
    assert roof["mfu"]["mean"] == pytest.approx(0.010851, rel=1e-3)
    text = cli("summary", str(trace)).stdout
    assert "Roofline: operators by time lost" in text and "MFU 1.09 % (bf16)" in text


def test_compare_fails_on_an_mfu_drop(tmp_path: Path) -> None:
    base = gemm_trace(tmp_path / "base" / "w.pt.trace.json", kernel_us=20)
    # the same work, its kernel 60 µs instead of 20 in a 100 µs step: MFU is the same (per step time)…
    same = gemm_trace(tmp_path / "same" / "w.pt.trace.json", kernel_us=60)
    assert cli("compare", str(base), str(same), "--fail-on", "mfu<-5%").returncode == 0
    # … a longer step with the same FLOPs lowers it
    b = TraceBuilder(device_properties=[H100])
    b.step(1, 0, 200)
    ext = b.op("aten::mm", 10, 60, input_dims=MM_DIMS, input_types=[BF16, BF16])
    b.launch("sm90_xmma_gemm_bf16bf16_bf16f32", 20, 5, 30, 20, ext_id=ext)
    slow = b.write(tmp_path / "slow" / "w.pt.trace.json")
    r = cli("compare", str(base), str(slow), "--fail-on", "mfu<-5%", "--json")
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert doc["mfu"]["rel"] == pytest.approx(-0.5) and doc["verdict"]["failed"][0]["rule"] == "mfu<-5%"
    unknown = gemm_trace(tmp_path / "unknown" / "w.pt.trace.json", props={"id": 0, "name": "X"})
    r = cli("compare", str(base), str(unknown), "--fail-on", "mfu<-5%")
    assert r.returncode == 2 and "cannot be checked" in r.stderr


def test_peaks_flag(tmp_path: Path) -> None:
    f = tmp_path / "p.json"
    f.write_text(json.dumps([{"name": "Lab", "match": "^X$", "peaks": {"bf16": 10.0}, "tb_per_s": 0.5}]))
    trace = gemm_trace(tmp_path / "run" / "w.pt.trace.json", props={"id": 0, "name": "X"})
    r = cli("summary", str(trace), "--json", "--peaks", str(f))
    assert json.loads(r.stdout)["profiles"][0]["roofline"]["device"]["matched_peak_name"] == "Lab"
    (tmp_path / "bad.json").write_text("{")
    assert cli("summary", str(trace), "--peaks", str(tmp_path / "bad.json")).returncode == 2

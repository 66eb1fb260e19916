"""analysis/diff/compare.py and diff_rules.py on built traces with hand-computed figures."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.fixtures.builders_diff import cpu_steps, gpu_trace, kernel_steps
from tests.fixtures.paths import REPO
from torch_tb_profiler.analysis.diff import compare as D
from torch_tb_profiler.analysis.diff import rules as R
from torch_tb_profiler.analysis.diff.kernel_family import demangled_prefix, family
from torch_tb_profiler.ingest.loading import load_profile


def _load(path: Path, run: str):
    return load_profile(str(path), run=run, worker="w0", span="1")


@pytest.fixture
def pair(tmp_path: Path):
    base = _load(gpu_trace(tmp_path / "base.pt.trace.json.gz", experiment=False), "base")
    exp = _load(gpu_trace(tmp_path / "exp.pt.trace.json.gz", experiment=True), "exp")
    return base, exp


def test_step_level(pair) -> None:
    d = D.compare(*pair)
    s = d["steps"]
    # steps: 1000 and 1000 µs vs 800 and 800 µs: no spread, so any change is significant
    assert (s["baseline"], s["experiment"], s["delta"]) == (1000.0, 800.0, -200.0)
    assert s["rel"] == pytest.approx(-0.2)
    assert s["noise"] == 0.0 and s["significant"]
    b = d["breakdown_us"]
    # kernel: 400 vs 200; runtime: the 10 µs launch; cpu_exec: mm 200 − 10 + relu/gelu 50 = 240;
    # other: the rest of the step (1000 − 650 = 350, 800 − 450 = 350)
    assert (b["kernel"]["baseline"], b["kernel"]["experiment"], b["kernel"]["rel"]) == (400.0, 200.0, -0.5)
    assert (b["runtime"]["baseline"], b["runtime"]["delta"]) == (10.0, 0.0)
    assert (b["cpu_exec"]["baseline"], b["cpu_exec"]["experiment"]) == (240.0, 240.0)
    assert (b["other"]["baseline"], b["other"]["experiment"]) == (350.0, 350.0)
    assert not b["other"]["significant"]  # no change
    assert "communication" not in b  # neither side communicates: not listed
    assert b["dataloader"]["delta"] == 0.0
    assert sum(b[c]["delta"] for c in b) == pytest.approx(s["delta"])


def test_operators_added_removed_and_per_step(pair) -> None:
    d = D.compare(*pair)
    ops = {o["name"]: o for o in d["operators"]}
    assert [o["name"] for o in d["operators"]] == ["aten::mm", "aten::gelu", "aten::relu"]
    mm = ops["aten::mm"]
    assert mm["status"] == "both"
    # per step: one call, host total 200, host self 200 − 10 (its launch), device self 400 → 200
    assert mm["baseline"] == {
        "calls": 1.0, "host_self_us": 190.0, "host_total_us": 200.0, "device_self_us": 400.0, "device_total_us": 400.0
    }  # fmt: skip
    assert mm["delta"]["device_self_us"] == -200.0 and mm["rel"]["device_self_us"] == -0.5
    assert ops["aten::relu"]["status"] == "removed" and ops["aten::relu"]["experiment"] is None
    assert (
        ops["aten::relu"]["delta"]["host_total_us"] == -50.0
        and ops["aten::relu"]["rel"]["host_total_us"] == -1.0
    )
    assert ops["aten::gelu"]["status"] == "added" and ops["aten::gelu"]["rel"]["host_total_us"] is None
    assert d["sort_metric"] == "device_self_us"


def test_by_input_shape(pair) -> None:
    d = D.compare(*pair, group_by="name_input_shape")
    mm = next(o for o in d["operators"] if o["name"] == "aten::mm")
    assert mm["input_shape"] == "[[8, 8], [8, 8]]" and mm["status"] == "both"


def test_renamed_kernel_is_matched(pair) -> None:
    d = D.compare(*pair)
    assert len(d["kernels"]) == 1
    k = d["kernels"][0]
    assert k["status"] == "renamed"
    assert k["name"] == "void gemm_kernel<256, 32>(float*)"
    assert k["baseline_name"] == "void gemm_kernel<128, 64>(float*)"
    assert (k["baseline"]["total_us"], k["experiment"]["total_us"], k["delta"]["total_us"]) == (
        400.0,
        200.0,
        -200.0,
    )
    assert k["delta"]["mean_us"] == -200.0 and k["delta"]["calls"] == 0.0


def test_waterfall_sums_to_total(pair) -> None:
    w = D.compare(*pair)["waterfall"]
    # the only change: aten::mm's device self time (−200); no category outside the device ones changed
    assert w["total_delta_us"] == -200.0
    assert w["items"] == [{"name": "aten::mm", "kind": "operator", "delta_us": -200.0}]
    assert w["other_us"] == 0.0


def test_self_comparison_is_zero_and_passes_every_rule(pair) -> None:
    base, _ = pair
    d = D.compare(base, base)
    assert d["steps"]["delta"] == 0.0 and not d["steps"]["significant"]
    assert all(v["delta"] == 0.0 for v in d["breakdown_us"].values())
    assert all(all(x in (0.0, None) for x in o["delta"].values()) for o in d["operators"] + d["kernels"])
    assert all(o["status"] == "both" for o in d["operators"] + d["kernels"])
    rules = [
        R.parse(t)
        for t in ("step_time>+0%", "kernel>=+1us", "op:aten::mm.device_total>+0%", "cpu_exec<-0.1%")
    ]
    v = R.verdict(rules, d)
    assert v["failed"] == [] and len(v["passed"]) == 4


def test_rules_on_the_pair(pair) -> None:
    d = D.compare(*pair)
    outcome = {t: R.evaluate(R.parse(t), d)["failed"] for t in (
        "step_time<-10%",  # −20 %: fails
        "step_time<-25%",  # −20 % is not below −25 %
        "op:aten::mm.device_self<-150us",  # −200 µs
        "op:aten::mm.device_self<-0.3ms",  # −200 µs is not below −300 µs
        "op:aten::gelu.host_total>+10%",  # added: +inf %
        "op:aten::relu.calls<0",  # removed: −1 call per step
        "kernel:void gemm_kernel<128, 64>(float*).total<-40%",  # found by its baseline name: −50 %
        "kernel>+1%",
    )}  # fmt: skip
    assert outcome == {
        "step_time<-10%": True,
        "step_time<-25%": False,
        "op:aten::mm.device_self<-150us": True,
        "op:aten::mm.device_self<-0.3ms": False,
        "op:aten::gelu.host_total>+10%": True,
        "op:aten::relu.calls<0": True,
        "kernel:void gemm_kernel<128, 64>(float*).total<-40%": True,
        "kernel>+1%": False,
    }
    with pytest.raises(R.RuleError, match="neither profile"):
        R.evaluate(R.parse("op:aten::nope.calls>0"), d)
    with pytest.raises(R.RuleError, match="cannot be checked"):
        R.evaluate(R.parse("communication>+5%"), d)  # neither side communicates


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("step_time", "expected FIGURE CMP VALUE"),
        ("step_time>>5%", "unknown figure"),
        ("op:aten::mm>5%", "FIELD one of"),
        ("op:aten::mm.bogus>5%", "FIELD one of"),
        ("step_time>5MB", "does not fit"),
        ("memory:GPU0.peak_allocated>5ms", "does not fit"),
        ("step_time>5%x", "expected FIGURE CMP VALUE"),
        ("nonsense:x.y>1", "unknown figure"),
    ],
)
def test_bad_rules(text: str, message: str) -> None:
    with pytest.raises(R.RuleError, match=message):
        R.parse(text)


def test_rule_units() -> None:
    assert R.parse("step_time>+2ms").threshold == 2000.0
    assert R.parse("memory:GPU0.peak_reserved>1MiB").threshold == 1024**2
    assert R.parse("kernel:a<b>.calls>=3").threshold == 3.0
    r = R.parse("op:Optimizer.step#SGD.step.host_total<=-5%")
    assert (r.name, r.field, r.cmp, r.threshold, r.relative) == (
        "Optimizer.step#SGD.step",
        "host_total_us",
        "<=",
        -5.0,
        True,
    )


def test_noise_rule(tmp_path: Path) -> None:
    base = _load(cpu_steps(tmp_path / "b.pt.trace.json", [1000, 1200]), "b")  # mean 1100, half-range 100
    near = _load(cpu_steps(tmp_path / "n.pt.trace.json", [1150, 1150]), "n")  # +50: within the noise
    far = _load(cpu_steps(tmp_path / "f.pt.trace.json", [1300, 1300]), "f")  # +200: beyond it
    d_near, d_far = D.compare(base, near), D.compare(base, far)
    assert d_near["steps"]["noise"] == 100.0 and d_near["steps"]["delta"] == 50.0
    assert not d_near["steps"]["significant"] and d_far["steps"]["significant"]
    rule = R.parse("step_time>+1%")
    assert not R.evaluate(rule, d_near)["failed"]  # +4.5 % but within the steps' spread
    assert R.evaluate(rule, d_far)["failed"]
    assert d_near["sort_metric"] == "host_self_us" and d_near["kernels"] == []


def test_operator_noise(tmp_path: Path) -> None:
    # aten::mm spans each step less 2 µs: host total 998 and 1198 µs (mean 1098, half-range 100)
    base = _load(cpu_steps(tmp_path / "b.pt.trace.json", [1000, 1200]), "b")
    near = _load(cpu_steps(tmp_path / "n.pt.trace.json", [1150, 1150]), "n")  # 1148: +50
    far = _load(cpu_steps(tmp_path / "f.pt.trace.json", [1300, 1300]), "f")  # 1298: +200
    mm_near = D.compare(base, near)["operators"][0]
    mm_far = D.compare(base, far)["operators"][0]
    assert mm_near["delta"]["host_total_us"] == 50.0 and mm_near["noise"]["host_total_us"] == 100.0
    assert not mm_near["significant"]["host_total_us"] and mm_far["significant"]["host_total_us"]
    assert mm_near["noise"]["calls"] == 0.0 and not mm_near["significant"]["calls"]  # one call a step
    rule = R.parse("op:aten::mm.host_total>+1%")
    out = R.evaluate(rule, D.compare(base, near))
    assert (out["noise"], out["significant"], out["failed"]) == (100.0, False, False)  # +4.6 % in noise
    assert R.evaluate(rule, D.compare(base, far))["failed"]


def test_an_operator_missing_from_a_step_counts_0_there(tmp_path: Path) -> None:
    # aten::add: 100 µs in step 1 only -> per step 100 and 0: mean 50, half-range 50
    once = _load(kernel_steps(tmp_path / "o.pt.trace.json", [100, 100], extra_in_step1=True), "o")
    d = D.compare(once, once)
    add = next(o for o in d["operators"] if o["name"] == "aten::add")
    assert add["baseline"]["host_total_us"] == 50.0 and add["noise"]["host_total_us"] == 50.0
    assert add["noise"]["calls"] == 0.5
    # against a profile without it: delta −50 is not beyond the noise of 50; an added op (one side
    # without spread, noise 0) is significant
    none = _load(kernel_steps(tmp_path / "z.pt.trace.json", [100, 100]), "z")
    removed = next(o for o in D.compare(once, none)["operators"] if o["name"] == "aten::add")
    assert removed["status"] == "removed" and removed["delta"]["host_total_us"] == -50.0
    assert removed["noise"]["host_total_us"] == 50.0 and not removed["significant"]["host_total_us"]


def test_kernel_noise(tmp_path: Path) -> None:
    # k_gemm: 100 and 300 µs (per step: total mean 200, half-range 100; mean per call the same)
    base = _load(kernel_steps(tmp_path / "b.pt.trace.json", [100, 300]), "b")
    near = _load(kernel_steps(tmp_path / "n.pt.trace.json", [250, 250]), "n")  # +50
    far = _load(kernel_steps(tmp_path / "f.pt.trace.json", [350, 350]), "f")  # +150
    k_near = D.compare(base, near)["kernels"][0]
    k_far = D.compare(base, far)["kernels"][0]
    assert (k_near["baseline"]["total_us"], k_near["delta"]["total_us"]) == (200.0, 50.0)
    assert k_near["noise"] == {"calls": 0.0, "total_us": 100.0, "mean_us": 100.0}
    assert k_near["significant"] == {"calls": False, "total_us": False, "mean_us": False}
    assert k_far["significant"] == {"calls": False, "total_us": True, "mean_us": True}
    rule = R.parse("kernel:k_gemm.total>+10%")
    assert not R.evaluate(rule, D.compare(base, near))["failed"]  # +25 %, but within the noise
    assert R.evaluate(rule, D.compare(base, far))["failed"]  # +75 %


def test_cpu_against_gpu_explains_instead_of_zero(tmp_path: Path, pair) -> None:
    cpu = _load(cpu_steps(tmp_path / "c.pt.trace.json", [1000, 1000]), "cpu")
    d = D.compare(cpu, pair[0])
    k = d["breakdown_us"]["kernel"]
    assert k["baseline"] is None and k["delta"] is None
    assert "CPU-only" in k["note"]
    assert (
        k["spread"]["baseline"] is None and k["spread"]["experiment"]["mean"] == 400.0 and k["noise"] is None
    )
    assert any("CPU profile and the experiment a GPU one" in n for n in d["notes"])
    assert d["gpus"][0]["utilization_pct"]["baseline"] is None
    assert any("GPU 0 ran kernels only in the experiment" in n for n in d["notes"])


def test_memoized_per_pair(pair) -> None:
    assert D.compare(*pair) is D.compare(*pair)
    assert D.compare(*pair) is not D.compare(*pair, group_by="name_input_shape")


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("volta_sgemm_128x64_nn", "volta_sgemm_#x#_nn"),
        ("void at::native::vectorized_elementwise_kernel<4, at::native::Foo<float>>(int, float*)",
         "at::native::vectorized_elementwise_kernel"),
        ("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_3FooEEEviT0_", "at::native::vectorized_elementwise_kernel"),
        ("_Z10add_kernelPfS_", "add_kernel"),
    ],
)  # fmt: skip
def test_kernel_family(name: str, key: str) -> None:
    assert family(name) == key


def test_demangled_prefix_ignores_plain_names() -> None:
    assert demangled_prefix("ncclKernel_AllReduce") is None
    assert family("void gemm_kernel<128, 64>(float*)") == family("void gemm_kernel<256, 32>(float*)")
    assert family("ampere_sgemm_64x32_tn") != family("ampere_sgemm_64x32_nn")


def _ts_fields(interface: str) -> set[str]:
    """The field names of one ``export interface`` of frontend/src/api/diff.ts (first level only)."""
    text = (REPO / "frontend" / "src" / "api" / "diff.ts").read_text()
    body = text.split(f"export interface {interface} ", 1)[1]
    fields, depth = set(), 0
    for line in body.splitlines()[1:]:
        if depth == 0 and line.startswith("}"):
            break
        m = re.match(r"^  (\w+)\??:", line)
        if depth == 0 and m:
            fields.add(m.group(1))
        depth += line.count("{") - line.count("}")
    return fields


def test_frontend_types_spell_the_answer(pair) -> None:
    d = D.compare(*pair)
    assert _ts_fields("DiffAnswer") == set(d)
    assert _ts_fields("GpuDiff") == set(d["gpus"][0])
    assert {"noise", "significant", "spread"} <= _ts_fields("NoisyChange") and set(d["steps"]) <= (
        _ts_fields("NoisyChange") | {"baseline", "experiment", "delta", "rel"}
    )
    assert _ts_fields("WaterfallItem") == set(d["waterfall"]["items"][0])
    assert _ts_fields("DiffSide") == set(d["baseline"])


def _with_memory(path: Path, peak: int) -> Path:
    from tests.fixtures.trace_builder import TraceBuilder

    b = TraceBuilder()
    b.step(1, 0, 1000)
    b.op("aten::empty", 10, 20)
    b.memory(15, peak, addr=1, total_allocated=peak, total_reserved=2048, device_type=1, device_id=0)
    b.memory(25, -peak, addr=1, total_allocated=0, total_reserved=2048, device_type=1, device_id=0)
    return b.write(path)


def test_memory_peaks_and_rules(tmp_path: Path) -> None:
    base = _load(_with_memory(tmp_path / "a.pt.trace.json", 256), "a")
    exp = _load(_with_memory(tmp_path / "b.pt.trace.json", 512), "b")
    d = D.compare(base, exp)
    (row,) = d["memory"]
    assert row["device"] == "GPU0"
    assert row["peak_allocated_bytes"] == {"baseline": 256, "experiment": 512, "delta": 256, "rel": 1.0}
    assert row["peak_reserved_bytes"]["delta"] == 0
    assert R.evaluate(R.parse("memory:GPU0.peak_allocated>+50%"), d)["failed"]
    assert not R.evaluate(R.parse("memory:GPU0.peak_allocated>+1KiB"), d)["failed"]
    with pytest.raises(R.RuleError, match="no memory records for device 'GPU1'"):
        R.evaluate(R.parse("memory:GPU1.peak_allocated>0"), d)


def test_a_gpu_figure_one_trace_lacks_is_explained(tmp_path: Path, pair) -> None:
    from tests.fixtures.trace_builder import V100, TraceBuilder

    b = TraceBuilder(device_properties=[V100])
    b.step(1, 0, 1000)
    mm = b.op("aten::mm", 100, 200)
    b.launch("void gemm_kernel<128, 64>(float*)", 110, 10, 400, 400, ext_id=mm)  # no occupancy, no blocks/SM
    d = D.compare(_load(b.write(tmp_path / "n.pt.trace.json"), "n"), pair[1])
    occ = d["gpus"][0]["achieved_occupancy_pct"]
    assert occ["baseline"] is None and occ["experiment"] == 50.0 and occ["delta"] is None
    assert "GPU 0: the baseline's trace gives no achieved occupancy: it is not compared" in d["notes"]


def _memory_without_totals(path: Path) -> Path:
    """A CPU step with [memory] records as PyTorch < 1.10 wrote them: no Total Allocated/Reserved."""
    from tests.fixtures.trace_builder import TraceBuilder

    b = TraceBuilder()
    b.step(1, 0, 1000)
    b.op("aten::empty", 10, 50)
    for i, (addr, nbytes) in enumerate([(1, 4096), (2, 1024), (1, -4096)]):
        b.raw({"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": b.pid,
               "tid": b.tid, "ts": b.base_ts + 20 + i,
               "args": {"Device Type": 0, "Device Id": -1, "Addr": addr, "Bytes": nbytes}})  # fmt: skip
    return b.write(path)


def test_memory_note_when_both_sides_have_records_without_totals(tmp_path: Path) -> None:
    """Issue 24, item 8: two runs with memory records but no totals (kineto resnet50 0 vs 4) are not
    "neither side recorded memory"."""
    base = _load(_memory_without_totals(tmp_path / "a.pt.trace.json"), "a")
    exp = _load(_memory_without_totals(tmp_path / "b.pt.trace.json"), "b")
    notes = D.compare(base, exp)["notes"]
    assert not any("neither side recorded memory" in n for n in notes), notes
    assert any(n.startswith("both sides recorded memory without totals") for n in notes), notes

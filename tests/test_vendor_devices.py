"""One device per physical device across the Overview, Memory and the timeline, on every shared trace
of every vendor (skipped when ../shared/traces is absent; docs/metrics.md "Device ids").

For each trace:
- the timeline's device groups are exactly the devices the other views name: the ids of device
  activities (the Overview's GPUs are those with kernels) and of accelerator memory records;
- a device named by the Overview, Memory and the timeline is named alike: Memory's label is
  ``<kind><id>`` and the timeline group's name starts ``<kind> <id>``, kind being the Overview's;
- memory records never sit on an accelerator that ran no device activity while another did (the
  split that ROCm's agent indices caused: kernels on 2, memory on HIP 0);
- the properties shown for a device are those of the deviceProperties entry with its id.
"""

from __future__ import annotations

import pytest

from tests.fixtures.paths import SHARED_TRACES
from tests.fixtures.shared_profiles import shared_profile as _profile
from torch_tb_profiler.analysis.core.accelerator import accelerator
from torch_tb_profiler.analysis.device.gpu_metrics import gpu_summary
from torch_tb_profiler.analysis.memory import usage
from torch_tb_profiler.analysis.timeline.index import index as timeline_index
from torch_tb_profiler.ingest.parse import load_profile

pytestmark = pytest.mark.shared

_SKIP = ("kineto_oracle", "kineto_test_fixtures")
TRACES = (
    sorted(
        str(p.relative_to(SHARED_TRACES))
        for p in SHARED_TRACES.rglob("*.json*")
        if p.name != "execution_details.json" and not any(s in p.parts for s in _SKIP)
    )
    if SHARED_TRACES.is_dir()
    else []
)


def test_every_vendor_is_here() -> None:
    if not SHARED_TRACES.is_dir():
        pytest.skip("../shared/traces absent")
    platforms = {accelerator(_profile(rel)).platform for rel in TRACES}
    assert {"CUDA", "ROCm"} <= platforms and len(TRACES) >= 20


@pytest.mark.parametrize("rel", TRACES)
def test_one_device_group_per_device(rel: str) -> None:
    p = _profile(rel)
    kind = accelerator(p).kind
    activity = {int(d) for t in (p.device, p.gpu_annotations, p.syncs) for d in t["device"] if d >= 0}
    overview = {g["id"] for g in gpu_summary(p)}
    memory = {d["device_id"]: d["device"] for d in usage.devices(p) if d["device_type"] != 0}
    groups = {int(g["id"][2:]): g["name"] for g in timeline_index(p).groups if g["kind"] == "device"}
    assert overview <= activity
    assert set(groups) == activity | set(memory), rel
    if activity:
        assert set(memory) <= activity, (
            f"{rel}: memory on {sorted(memory)}, device work on {sorted(activity)}"
        )
    for dev, label in memory.items():
        assert label == f"{kind}{dev}", rel
    for dev, name in groups.items():
        assert name.startswith(f"{kind} {dev}"), (rel, name)


@pytest.mark.parametrize("rel", TRACES)
def test_device_properties_are_the_devices_own(rel: str) -> None:
    p = _profile(rel)
    for g in gpu_summary(p):
        props = p.meta.device_property(g["id"])
        assert props or not p.meta.device_properties, f"{rel}: GPU {g['id']} has no deviceProperties entry"
        assert g["name"] == props.get("name") and g["memory_bytes"] == props.get("totalGlobalMem"), rel
    assert not [w for w in p.meta.warnings if "device ids do not agree" in w], rel


# the vendors no shared trace has: hand-built in the shape their profilers write
_VENDORS = {
    # platform: (runtime category, kernel category, memory device type, device id)
    "MTIA": ("mtia_runtime", "mtia_ccp_events", 19, 9),
    "XPU": ("xpu_runtime", "kernel", 12, 1),
}


@pytest.mark.parametrize("platform", sorted(_VENDORS))
def test_other_vendors_show_one_device(tmp_path, platform: str) -> None:
    from tests.fixtures.trace_builder import TraceBuilder

    runtime_cat, kernel_cat, mem_type, dev = _VENDORS[platform]
    b = TraceBuilder(device_properties=[{"id": dev, "name": f"{platform} card", "totalGlobalMem": 1 << 34}])
    b.step(1, 0, 1000)
    ext = b.op("aten::mm", 10, 100)
    b.launch("mm_kernel", 20, 5, 200, 300, ext_id=ext, device=dev)
    b.memory(15, 4096, 0x10, 4096, 8192, device_type=mem_type, device_id=dev)
    for e in b.events:
        if e.get("cat") == "cuda_runtime":
            e["cat"] = runtime_cat
        elif e.get("cat") == "kernel":
            e["cat"] = kernel_cat
    p = load_profile(str(b.write(tmp_path / f"{platform}.pt.trace.json")))
    assert accelerator(p).kind == platform
    assert [g["id"] for g in gpu_summary(p)] == [dev]
    assert [d["device"] for d in usage.devices(p)] == [f"{platform}{dev}"]
    groups = [g["name"] for g in timeline_index(p).groups if g["kind"] == "device"]
    assert groups == [f"{platform} {dev} ({platform} card)"]

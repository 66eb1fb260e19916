"""Memory view against the original plugin's answers on its own samples (../shared/traces)."""

from __future__ import annotations

import json

import pytest

from tests.fixtures.paths import SHARED_TRACES, shared_trace
from torch_tb_profiler.analysis.memory import usage as M
from torch_tb_profiler.ingest.loading import load_profile

pytestmark = pytest.mark.shared
KB = 1024


@pytest.mark.parametrize("run", ["resnet50_num_workers_0", "resnet50_num_workers_4"])
@pytest.mark.parametrize("span", [1, 2])
def test_operator_stats_match_the_original(run, span):
    """Every row of the original's memory table (KB, per device CPU/GPU0): calls, size increase,
    allocation count and size, self and total. These PyTorch 1.9 traces have no addresses and no
    totals, so the original (and we) show no curve and no events."""
    shared_trace(f"kineto_samples/{run}")
    files = sorted((SHARED_TRACES / "kineto_samples" / run).glob("*.pt.trace.json.gz"))
    profile = load_profile(str(files[span - 1]))
    oracle = json.loads(shared_trace(f"kineto_oracle/{run}/worker0/span-{span}/memory.json").read_text())
    assert {d["device"] for d in M.devices(profile)} == set(oracle["rows"])
    for device, rows in oracle["rows"].items():
        ours = {r["name"]: r for r in M.operator_stats(profile, device)["rows"]}
        assert set(ours) == {r[0] for r in rows}
        for name, calls, incr, self_incr, cnt, self_cnt, size, self_size in rows:
            r = ours[name]
            assert r["calls"] == calls, name
            assert r["size_increase"] / KB == pytest.approx(incr, abs=0.01), name
            assert r["self_size_increase"] / KB == pytest.approx(self_incr, abs=0.01), name
            assert (r["alloc_count"], r["self_alloc_count"]) == (cnt, self_cnt), name
            assert r["alloc_size"] / KB == pytest.approx(size, abs=0.01), name
            assert r["self_alloc_size"] / KB == pytest.approx(self_size, abs=0.01), name
    curve = json.loads(shared_trace(f"kineto_oracle/{run}/worker0/span-{span}/memory_curve.json").read_text())
    assert curve["rows"] == {} and all(d["peak_allocated_bytes"] is None for d in M.devices(profile))
    # we draw the relative curve instead: the running sum of Bytes ends at the span's net change
    ours = M.curve(profile, "GPU0", max_points=100_000)
    assert (
        ours["relative"] and ours["allocated"][-1] == profile.memory.query("device_type == 1")["bytes"].sum()
    )

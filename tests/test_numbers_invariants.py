"""Invariants of the operator and step figures on every shared trace (skipped when absent).

- no op has a negative host self time;
- every linked runtime call lies inside its op (and its host op) on its own thread;
- device self summed over all ops, and over the operator table's rows, equals the attributed device
  time (device activities linked to some op);
- every step lies inside the profile's data.
"""

from __future__ import annotations

import pytest

from tests.fixtures.paths import SHARED_TRACES
from tests.fixtures.shared_profiles import TRACES
from tests.fixtures.shared_profiles import shared_profile as _profile
from torch_tb_profiler.analysis.core import steps
from torch_tb_profiler.analysis.device import breakdown
from torch_tb_profiler.analysis.ops import operators
from torch_tb_profiler.model.build import nesting_tolerance

pytestmark = pytest.mark.shared


def test_there_are_shared_traces() -> None:
    if not SHARED_TRACES.is_dir():
        pytest.skip("../shared/traces absent")
    assert len(TRACES) >= 7


@pytest.mark.parametrize("rel", TRACES)
def test_no_negative_host_self(rel: str) -> None:
    host_self = operators.op_stats(_profile(rel))["host_self"]
    # a trace without host ops (GPU-only activities) has no rows: nothing is negative (its min() is NaN)
    assert not (host_self < -1e-6).any(), host_self.nsmallest(3)


@pytest.mark.parametrize("rel", TRACES)
def test_linked_runtime_calls_lie_inside_their_op(rel: str) -> None:
    p = _profile(rel)
    tol = nesting_tolerance(p.ops, p.runtimes)
    for column in ("op", "host_op"):
        rts = p.runtimes[p.runtimes[column].to_numpy() >= 0]
        ops = p.ops.loc[rts[column].to_numpy()]
        same_thread = (ops["pid"].to_numpy() == rts["pid"].to_numpy()) & (
            ops["tid"].to_numpy() == rts["tid"].to_numpy()
        )
        inside = (ops["ts"].to_numpy() <= rts["ts"].to_numpy() + tol) & (
            rts["end"].to_numpy() <= ops["end"].to_numpy() + tol
        )
        assert (same_thread & inside).all(), (column, int((~(same_thread & inside)).sum()))


@pytest.mark.parametrize("rel", TRACES)
def test_device_self_adds_up_to_the_attributed_device_time(rel: str) -> None:
    p = _profile(rel)
    attributed = float(p.device["dur"].to_numpy()[p.device["op"].to_numpy() >= 0].sum())
    assert operators.op_stats(p)["device_self"].sum() == pytest.approx(attributed, abs=0.01)
    table = operators.operator_table(p)
    assert table["device_self_us"].sum() == pytest.approx(attributed, abs=0.01)


@pytest.mark.parametrize("rel", TRACES)
def test_steps_lie_inside_the_data(rel: str) -> None:
    p = _profile(rel)
    s = steps.steps(p)
    end = steps.data_end(p)
    first = min(float(t["ts"].min()) for t in (p.ops, p.runtimes, p.device) if len(t))
    assert (s["host_start"] >= first).all() and (s["host_end"] <= end).all()
    assert (s["start"] >= first).all() and (s["end"] <= end).all()


def test_ns_resolution_trace_has_no_false_partial_overlaps() -> None:
    p = _profile("hta_samples/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz")
    assert p.meta.partial_overlaps == 0


def test_triton_example_step_ends_with_the_profile() -> None:
    """ProfilerStep#1 never closed (its host range runs 13.3 s); the profiler span ends 1.67 ms
    after the step began, so the step ends there and is no longer almost all Other."""
    p = _profile("hta_samples/triton_example/triton_example.pt.trace.json.gz")
    ((_, _, span_end),) = p.meta.profiler_spans
    (row,) = breakdown.per_step(p).to_dict(orient="records")
    assert row["end"] == span_end
    assert row["duration"] < 2000  # µs, not 13.3 s
    assert row["other"] / row["duration"] < 0.5

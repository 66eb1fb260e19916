"""Property-based fuzzing (issue 12), bounded to a fixed number of examples so the suite stays fast.

- Event fields: any JSON a field may hold (huge and non-finite numbers, wrong types, deep nesting) gives
  a profile (possibly with warnings) or a per-file message, never a bare exception, and the summary of
  a loaded profile computes.
- Route parameters: any text in any parameter of any route, and any path under the static ``assets/``,
  through a real TensorBoard, answers < 500.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fixtures.tensorboard_server import TensorBoard, tensorboard
from tests.fixtures.trace_builder import V100, TraceBuilder
from tests.test_routes_bad_input import EXTRA_PARAMS, REQUIRED, ROUTES
from torch_tb_profiler.analysis.overview.summary import profile_summary
from torch_tb_profiler.ingest.parse import load_job

EVENT_EXAMPLES = 60
ROUTE_EXAMPLES = 150
STATIC_EXAMPLES = 40

# edge values first: hypothesis draws the first branch most often
_EDGES = [
    0,
    -1,
    1,
    2**63 - 1,
    2**63,
    2**64 + 1,
    -(2**63) - 1,
    1e308,
    float("inf"),
    float("-inf"),
    float("nan"),
    0.5,
]
_numbers = st.one_of(
    st.sampled_from(_EDGES),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
)
_scalars = st.one_of(st.none(), st.booleans(), _numbers, st.text(max_size=20))
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
_ARG_KEYS = [
    "External id",
    "external id",
    "correlation",
    "Input Dims",
    "Input type",
    "Call stack",
    "device",
    "stream",
    "Bytes",
    "Addr",
    "Device Type",
    "Device Id",
    "Python id",
    "Python parent id",
    "Collective name",
    "In msg nelems",
    "Group size",
    "registers per thread",
    "grid",
    "block",
]
_events = st.fixed_dictionaries(
    {
        "ph": st.one_of(st.just("X"), st.sampled_from(["X", "i", "s", "f", "M", "C", "b", "e", 7, None])),
        "cat": st.sampled_from(
            ["cpu_op", "kernel", "cuda_runtime", "python_function", "gpu_memcpy", "fwdbwd", "", 3]
        ),
        "name": st.one_of(
            st.text(max_size=30),
            st.sampled_from(["[memory]", "ProfilerStep#1", "ProfilerStep#99999999999999999999"]),
        ),
    },
    optional={
        "ts": _numbers,
        "dur": _numbers,
        "pid": _values,
        "tid": _values,
        "id": _values,
        "args": st.dictionaries(st.sampled_from(_ARG_KEYS), st.one_of(_numbers, _values), max_size=5),
    },
)
_BARE_EXCEPTION = re.compile(r"^\w*(Error|Exception)\b")


def _base_events() -> list[dict[str, Any]]:
    b = TraceBuilder(device_properties=[V100])
    b.step(1, 0, 1000)
    ext = b.op("aten::mm", 10, 500)
    b.launch("gemm", 20, 5, 600, 50, ext_id=ext)
    return b.to_dict()["traceEvents"]


@settings(
    max_examples=EVENT_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    extra=st.lists(_events, max_size=6),
    top=st.dictionaries(
        st.sampled_from(["deviceProperties", "distributedInfo", "schemaVersion", "baseTimeNanoseconds"]),
        _values,
        max_size=2,
    ),
)
def test_any_event_fields_load_or_fail_clearly(
    tmp_path: Path, extra: list[dict[str, Any]], top: dict[str, Any]
) -> None:
    path = tmp_path / "w.pt.trace.json"
    path.write_text(
        json.dumps({"traceEvents": [*_base_events(), *extra], **top})
    )  # NaN/Infinity as Python writes them
    outcome = load_job(str(path))
    if isinstance(outcome, str):
        assert not _BARE_EXCEPTION.match(outcome), outcome
        return
    assert outcome.meta.event_count >= len(_base_events())  # the good events are never lost
    assert not any("truncated" in w for w in outcome.meta.warnings), outcome.meta.warnings  # it is complete
    profile_summary(outcome, 5)


@pytest.fixture(scope="module")
def tb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    root = tmp_path_factory.mktemp("fuzz")
    for worker in ("w0", "w1"):
        path = root / "gpu" / f"{worker}.pt.trace.json"
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps({"traceEvents": _base_events(), "deviceProperties": [V100]}))
        os.utime(path, (time.time() - 60,) * 2)
    with tensorboard(root, tmp=tmp_path_factory.mktemp("tb")) as server:
        server.wait_loaded()
        yield server


_param_text = st.one_of(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40),
    st.sampled_from(["gpu", "w0", "1", "0", "-1", "nan", "inf", "1e309", "9" * 30, "\x00", "../..", "%00"]),
)


@settings(
    max_examples=ROUTE_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    route=st.sampled_from(ROUTES),
    params=st.dictionaries(
        st.sampled_from(["run", "worker", "span", *EXTRA_PARAMS, "q", "id", "start_us", "end_us"]),
        _param_text,
        max_size=5,
    ),
    keep_good=st.booleans(),
)
def test_any_route_parameters_answer_below_500(
    tb: TensorBoard, route: str, params: dict[str, str], keep_good: bool
) -> None:
    query = {"run": "gpu", "worker": "w0", "span": "1", **REQUIRED.get(route, {})} if keep_good else {}
    query.update(params)
    status, body = tb.get(route, **query)
    assert status < 500, (route, query, body)


@settings(
    max_examples=STATIC_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    name=st.one_of(st.sampled_from(["\x00", "..", "../../etc/passwd", "a" * 300, "index.js"]), _param_text)
)
def test_any_static_path_answers_below_500(tb: TensorBoard, name: str) -> None:
    status, body = tb.get("assets/" + quote(name, safe=""))
    assert status < 500, (name, body)

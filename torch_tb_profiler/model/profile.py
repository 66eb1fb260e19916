"""The Profile: everything one trace file (one run/worker/span) says, as linked column tables.

Tables and columns are documented in docs/architecture.md; analyses read only from here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd


@dataclass
class TraceMeta:
    device_properties: list[dict[str, Any]] = field(default_factory=list)
    distributed_info: dict[str, Any] | None = None
    schema_version: Any = None
    base_time_ns: int | None = None
    trace_name: str | None = None
    display_time_unit: str | None = None
    framework: str | None = None
    top_level: dict[str, Any] = field(default_factory=dict)  # other top-level metadata keys
    counts: dict[str, int] = field(default_factory=dict)  # events per "ph:cat"
    unknown_categories: dict[str, int] = field(default_factory=dict)
    partial_overlaps: int = 0  # op-tree events that overhang their enclosing event (see architecture.md)
    warnings: list[str] = field(default_factory=list)  # repairs and salvage notes
    process_names: dict[str, str] = field(default_factory=dict)
    thread_names: dict[tuple[str, str], str] = field(default_factory=dict)
    profiler_spans: list[tuple[str, float, float]] = field(default_factory=list)  # "PyTorch Profiler (0)"...
    event_count: int = 0
    # graph captures merged into the replays (analysis/captures/match.py): captures, unmatched replays
    graph_captures: dict[str, Any] | None = None
    # device ids of device activities renumbered to one id per physical device (model/devices.py):
    # [written, shown] pairs; empty when every id stands as written
    device_ids: list[list[int]] = field(default_factory=list)
    # µs every time of the tables is relative to: 0, or a trace's epoch-scale ns timestamps read exactly
    # (trace/exact_time.py): the trace's own time of a table time t is time_base_us + t
    time_base_us: int = 0

    def device_property(self, device: int) -> dict[str, Any]:
        for props in self.device_properties:
            if props.get("id") == device:
                return props
        return {}


@dataclass
class Profile:
    run: str
    worker: str
    span: str
    source: str  # the file it came from
    meta: TraceMeta
    ops: pd.DataFrame
    runtimes: pd.DataFrame
    device: pd.DataFrame
    gpu_annotations: pd.DataFrame
    python: pd.DataFrame
    comms: pd.DataFrame
    memory: pd.DataFrame
    syncs: pd.DataFrame
    flows: pd.DataFrame
    steps: pd.DataFrame
    others: pd.DataFrame
    # the trace's own ph "C" counters (name, key, pid, ts, value); absent from traces that have none
    counters: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=["name", "key", "pid", "ts", "value"])
    )
    # answers of analyses, computed once per profile (analysis modules own their keys)
    cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def has_device(self) -> bool:
        """Any device activity (kernels, copies, sets) or host->device API calls."""
        return len(self.device) > 0 or len(self.runtimes) > 0

    @property
    def kernels(self) -> pd.DataFrame:
        return self.device[self.device["kind"] == "kernel"]

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["cache"] = {}  # cached answers are cheap to recompute; don't ship them between processes
        return state

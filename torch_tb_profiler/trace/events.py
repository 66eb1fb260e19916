"""The typed events of a trace and its top-level object: what every decoder (strict, chunked, lenient)
produces. ``args`` stay raw JSON here; ``args.py`` decodes them per event kind."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

EMPTY_ARGS = msgspec.Raw(b"{}")
NULL = msgspec.Raw(b"null")


class Event(msgspec.Struct, gc=False):
    ph: str = ""
    cat: str = ""
    name: str = ""
    ts: float = 0.0
    dur: float = 0.0
    pid: int | str = 0
    tid: int | str = 0
    id: int | str | None = None
    bp: str = ""
    args: msgspec.Raw = EMPTY_ARGS


class TraceObject(msgspec.Struct, gc=False):
    """The top-level object: the events plus the metadata keys any generation writes."""

    traceEvents: list[Event] = []
    schemaVersion: int | str | None = None
    deviceProperties: msgspec.Raw = NULL
    computeProperties: msgspec.Raw = NULL
    distributedInfo: msgspec.Raw = NULL
    baseTimeNanoseconds: int | float | None = None
    displayTimeUnit: str | None = None
    traceName: str | None = None
    Framework: str | None = None
    record_shapes: Any = None
    profile_memory: Any = None
    with_stack: Any = None
    with_modules: Any = None
    with_flops: Any = None
    trace_id: str | None = None
    host_name: str | None = None
    cupti_version: Any = None
    cuda_runtime_version: Any = None
    cuda_driver_version: Any = None
    hip_runtime_version: Any = None
    pytorch_version: Any = None
    torch_version: Any = None


@dataclass
class DecodedTrace:
    events: list[Event]
    top: dict[str, Any]  # metadata keys present in the file (deviceProperties etc. decoded)
    repairs: list[str] = field(default_factory=list)  # what had to be fixed to read the file
    time_base: int = 0  # µs subtracted from every ts (read exactly: trace/exact_time.py)

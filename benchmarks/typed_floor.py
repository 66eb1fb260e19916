"""The reference decode of performance.md: msgspec into typed Structs of the fields every event needs.

``args`` stays ``msgspec.Raw`` (bytes, decoded later only for the events that need them) and the
Structs opt out of the garbage collector, so no Python object is made per argument.
"""

from __future__ import annotations

import msgspec


class Event(msgspec.Struct, gc=False):
    ph: str = ""
    cat: str = ""
    name: str = ""
    ts: float = 0.0
    dur: float = 0.0
    pid: int | str = 0
    tid: int | str = 0
    args: msgspec.Raw = msgspec.Raw(b"")


class Trace(msgspec.Struct, gc=False):
    traceEvents: list[Event] = []


def decode(data: bytes) -> list[Event]:
    return msgspec.json.decode(data, type=Trace).traceEvents

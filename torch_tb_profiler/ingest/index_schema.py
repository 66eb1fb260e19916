"""What an index file may hold: an index is untrusted input like a trace (docs/security.md), so it is
checked on reading as strictly as a parse is trusted, and anything else raises ``IndexFormatError``
(the loader then ignores the index with a warning and parses the trace again).

- **Tables**: exactly the columns a parse produces, each in the dtype a parse gives it. The dtype comes
  from this schema, never from the file (a file naming ``<U100000000`` would make every read allocate
  gigabytes); text columns must be Arrow dictionaries of strings; numbers carry no nulls.
- **Ids**: every row reference (``ops.parent``, ``device.runtime``, ``flows.fwd_op``...) within its
  table, the op tree in depth-first order, timestamps finite.
- **Header**: the meta fields, the summary's facts and rank part, and the stored answers have the types
  (and, for answers, the shape) the code that wrote them gives them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa


class IndexFormatError(Exception):
    """The bytes are not a complete index of this format."""


TEXT, F8, I8, I4, U1, U2, BOOL = "text", "float64", "int64", "int32", "uint8", "uint16", "bool"
_BASE = {"name": TEXT, "ts": F8, "dur": F8, "end": F8, "pid": TEXT, "tid": TEXT}

# table -> column -> kind, as trace/tables.py, model/build.py, analysis/distributed/job.py and
# ingest/index_timeline.py make them (tests/test_index_hostile.py checks it against parses of every sample)
TABLES: dict[str, dict[str, str]] = {
    "ops": {
        **_BASE,
        **dict.fromkeys(("cat", "input_dims", "input_types", "call_stack", "concrete_inputs"), TEXT),
        **dict.fromkeys(("ext_id", "seq", "fwd_tid", "replay", "parent", "depth", "last"), I8),
        "flops": F8,
    },
    "runtimes": {
        **_BASE,
        "cat": TEXT,
        "kernel": TEXT,
        **dict.fromkeys(("ext_id", "corr", "graph_id", "graph_node_id", "op", "host_op"), I8),
    },
    "device": {
        **_BASE,
        **dict.fromkeys(("kind", "grid", "block", "collective", "dtype", "pg_name"), TEXT),
        **dict.fromkeys(("device", "stream", "corr", "ext_id", "in_nelems", "out_nelems", "group_size"), I8),
        **dict.fromkeys(("coll_seq", "graph_id", "graph_node_id", "runtime", "op"), I8),
        **dict.fromkeys(("regs", "shmem", "blocks_per_sm", "warps_per_sm", "occupancy", "bytes"), F8),
        **dict.fromkeys(("bandwidth", "kernel_flop", "kernel_num_gb"), F8),
    },
    "gpu_annotations": {**_BASE, "device": I8, "stream": I8, "ext_id": I8},
    "python": {**_BASE, "py_id": I8, "py_parent_id": I8, "py_module_id": I8},
    "comms": {
        **dict.fromkeys(("collective", "dtype", "pg_name", "pg_desc", "pg_ranks"), TEXT),
        **dict.fromkeys(("op", "in_nelems", "out_nelems", "group_size", "coll_seq", "rank"), I8),
    },
    "memory": {
        "ts": F8,
        "pid": TEXT,
        "tid": TEXT,
        **dict.fromkeys(("device_type", "device_id", "addr", "bytes", "op"), I8),
        "total_allocated": F8,
        "total_reserved": F8,
    },
    "syncs": {**_BASE, "device": I8, "stream": I8, "corr": I8, "kind": TEXT},
    "flows": {"flow_id": TEXT, "fwd_op": I8, "bwd_op": I8},
    "steps": {
        "number": I8,
        "name": TEXT,
        "ts": F8,
        "end": F8,
        "kind": TEXT,
        "context_tokens": I8,
        "generation_tokens": I8,
    },
    "others": {**_BASE, "cat": TEXT},
    "counters": {"name": TEXT, "key": TEXT, "pid": TEXT, "ts": F8, "value": F8},
    "summary.calls": {
        **dict.fromkeys(("collective", "pg", "dtype", "pid", "tid"), TEXT),
        **dict.fromkeys(("seq", "group_size", "bytes", "kernels", "step", "peer"), I8),
        **dict.fromkeys(("host_ts", "host_end", "dev_ts", "dev_end", "latency"), F8),
        "on_device": BOOL,
    },
    "timeline.events": {"ts": F8, "end": F8, "name": I4, "kind": U1, "row": I4, "track": U2, "depth": U2},
    "timeline.names": {"name": TEXT},
    "timeline.counters": {"track": I4, "ts": F8, "value": F8},
}
# columns a parse makes only for some traces: table -> column -> kind
OPTIONAL: dict[str, dict[str, str]] = {
    # a trace merged with its graph captures (model/build.py): each replayed kernel's capture launch
    "device": {"capture": I8, "capture_launch": I8},
}
# the dtypes a stored column may be read as: what parses produce, nothing the file makes up
_READ_DTYPES = {TEXT, F8, I8, I4, U1, U2, BOOL, "object", "str"}
_ARROW = {kind: pa.from_numpy_dtype(np.dtype(kind)) for kind in (F8, I8, I4, U1, U2, BOOL)}

# row references: (table, column) -> the table it points into (-1: none)
_REFS = {
    ("ops", "replay"): "runtimes",
    ("runtimes", "op"): "ops",
    ("runtimes", "host_op"): "ops",
    ("device", "runtime"): "runtimes",
    ("device", "op"): "ops",
    ("memory", "op"): "ops",
    ("comms", "op"): "ops",
    ("flows", "fwd_op"): "ops",
    ("flows", "bwd_op"): "ops",
}


# ---- columns -------------------------------------------------------------------------------------------
def check_columns(table: str, schema: pa.Schema, rows: int | None = None) -> None:
    """The stored columns are the parse's, in its types (an empty table may hold any allowed type;
    ``rows`` None: the names only, before the rows are read)."""
    want = TABLES.get(table)
    if want is None:
        raise IndexFormatError(f"table {table}: not a table of this format")
    names = list(schema.names)
    if table == "summary.calls" and rows in (0, None) and not names:
        return  # a profile without a rank part stores an empty table
    optional = {c: k for c, k in OPTIONAL.get(table, {}).items() if c in names}
    want = {**want, **optional}
    if sorted(names) != sorted(want) or len(set(names)) != len(names):
        missing, extra = sorted(set(want) - set(names)), sorted(set(names) - set(want))
        raise IndexFormatError(
            f"table {table}: columns differ from a parse's (missing {missing}, extra {extra})"
        )
    for field in schema:
        kind = want[field.name]
        if not rows:
            continue
        if kind == TEXT:
            ok = pa.types.is_dictionary(field.type) and pa.types.is_string(field.type.value_type)
        else:
            ok = field.type == _ARROW[kind]
        if not ok:
            raise IndexFormatError(
                f"table {table}: column {field.name} is {field.type}, a parse makes {kind}"
            )


def read_dtype(table: str, column: str, stored: str, rows: int) -> str:
    """The dtype a column is read as: the schema's; for text the stored flavour of str when it is one;
    for an empty column whatever allowed dtype was stored (parses make empty columns of several)."""
    kind = TABLES[table].get(column) or OPTIONAL[table][column]
    if rows == 0 and stored in _READ_DTYPES:
        return "object" if stored == TEXT else stored
    if kind == TEXT:
        return stored if stored in ("str", "object") else "object"
    return kind


def check_numbers(table: str, column: str, chunked: pa.ChunkedArray) -> None:
    if chunked.null_count:
        raise IndexFormatError(f"table {table}: column {column} has missing values")


# ---- the profile's tables --------------------------------------------------------------------------
def check_tables(frames: dict[str, pd.DataFrame]) -> None:
    """Row references within their tables, the op tree depth-first, timestamps finite."""
    sizes = {name: len(frame) for name, frame in frames.items()}
    for (table, column), target in _REFS.items():
        _in_range(frames[table], table, column, -1, sizes[target])
    ops = frames["ops"]
    if len(ops):
        rows = np.arange(len(ops))
        parent, last = ops["parent"].to_numpy(), ops["last"].to_numpy()
        if (parent < -1).any() or (parent >= rows).any():
            raise IndexFormatError("table ops: a parent is not an earlier row")
        if (last <= rows).any() or (last > len(ops)).any():
            raise IndexFormatError("table ops: a subtree's end is out of range")
        if (ops["depth"].to_numpy() < 0).any():
            raise IndexFormatError("table ops: negative depth")
    for table, frame in frames.items():
        if "ts" in frame.columns and len(frame) and not np.isfinite(frame["ts"].to_numpy()).all():
            raise IndexFormatError(f"table {table}: a timestamp is not finite")


def check_calls(calls: pd.DataFrame, steps: int) -> None:
    if len(calls):
        _in_range(calls, "summary.calls", "step", -1, steps)


def check_timeline(entry: Any, tables: dict[str, pd.DataFrame], sizes: dict[str, int], kinds: tuple) -> None:
    """The stored timeline index against its profile: event rows within their kind's table, names,
    tracks and kinds in range (``sizes``: rows per kind, from the profile's tables)."""
    expect(
        entry,
        {
            "span": ["num"],
            "groups": [{"*": "str"}],
            "tracks": [{"id": "int", "group": "str", "kind": "str", "name": "str", "*": "json"}],
            "table_rows": {"*": "int"},
        },
        "timeline",
    )
    if len(entry["span"]) != 2 or entry["table_rows"] != sizes:
        raise IndexFormatError("timeline: span or table sizes differ from the profile")
    events = tables["timeline.events"]
    names, tracks = len(tables["timeline.names"]), len(entry["tracks"])
    _in_range(events, "timeline.events", "name", 0, names)
    _in_range(events, "timeline.events", "track", 0, tracks)
    _in_range(tables["timeline.counters"], "timeline.counters", "track", 0, tracks)
    kind, row = events["kind"].to_numpy(), events["row"].to_numpy()
    if (kind >= len(kinds)).any():
        raise IndexFormatError("timeline: unknown event kind")
    limits = np.array([sizes[k] for k in kinds], dtype=np.int64)
    if (row < 0).any() or (row >= limits[kind]).any():
        raise IndexFormatError("timeline: an event's row is out of its table")


def _in_range(frame: pd.DataFrame, table: str, column: str, lo: int, hi: int) -> None:
    values = frame[column].to_numpy()
    if values.size and (values.min() < lo or values.max() >= hi):
        raise IndexFormatError(f"table {table}: {column} out of range [{lo}, {hi})")


# ---- header values -------------------------------------------------------------------------------------
META = {
    "device_properties": [{"*": "json"}],
    "distributed_info": ("opt", {"*": "json"}),
    "schema_version": "json",
    "base_time_ns": ("opt", "int"),
    "trace_name": ("opt", "str"),
    "display_time_unit": ("opt", "str"),
    "framework": ("opt", "str"),
    "top_level": {"*": "json"},
    "counts": {"*": "int"},
    "unknown_categories": {"*": "int"},
    "partial_overlaps": "int",
    "warnings": ["str"],
    "process_names": {"*": "str"},
    "thread_names": [("tuple", "str", "str", "str")],
    "profiler_spans": [("tuple", "str", "num", "num")],
    "event_count": "int",
    "graph_captures": ("opt", {"*": "json"}),
    "device_ids": [("tuple", "int", "int")],
}
PROFILE = {"run": "str", "worker": "str", "span": "str", "source": "str"}
FACTS = {"kernels": "bool", "memory": "bool", "module": "bool", "comms": "bool"}
RANK_PART = {
    "info": {"*": "json"},
    "host_name": "str",
    "main_pid": ("opt", "str"),
    "process_name": "str",
    "steps": ["str"],
    "step_bounds": [("tuple", "num", "num")],
    "overlap": [["num"]],
    "gpus": {"*": {"*": "json"}},
    "warnings": ["str"],
}


def expect(value: Any, spec: Any, where: str) -> None:
    """``value`` has the JSON shape ``spec``: "str", "int", "num", "bool", "json" (anything); a dict of
    keys to specs (every key required; "*" the spec of any other key); [spec] a list of such items;
    ("opt", spec) also None; ("tuple", a, b, ...) a list of exactly those items."""
    if not _fits(value, spec):
        raise IndexFormatError(f"{where}: not of the stored type ({_brief(value)})")


def _fits(value: Any, spec: Any) -> bool:
    if isinstance(spec, str):
        return _SCALARS[spec](value)
    if isinstance(spec, list):
        return isinstance(value, list) and all(_fits(v, spec[0]) for v in value)
    if isinstance(spec, tuple):
        if spec[0] == "opt":
            return value is None or _fits(value, spec[1])
        items = spec[1:]
        return isinstance(value, list) and len(value) == len(items) and all(map(_fits, value, items))
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        return False
    other = spec.get("*")
    for key, sub in spec.items():
        if key != "*" and (key not in value or not _fits(value[key], sub)):
            return False
    return other is None or all(_fits(v, other) for k, v in value.items() if k not in spec)


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


_SCALARS = {
    "str": lambda v: isinstance(v, str),
    "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "num": _is_num,
    "bool": lambda v: isinstance(v, bool),
    "json": lambda v: True,
}


def _brief(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def conforms(answer: Any, reference: Any) -> bool:
    """A stored answer has the shape of one computed now (``reference``, from any profile): every key of a
    reference dict present with a conforming value, lists of conforming items (against the reference's
    first item), numbers finite; a None or empty list in the reference says nothing about the answer."""
    if reference is None:
        return True
    if isinstance(reference, dict):
        return isinstance(answer, dict) and all(
            k in answer and conforms(answer[k], sub) for k, sub in reference.items()
        )
    if isinstance(reference, list):
        return isinstance(answer, list) and (not reference or all(conforms(a, reference[0]) for a in answer))
    if answer is None:
        return True
    if isinstance(reference, bool):
        return isinstance(answer, bool)
    if _is_num(reference):
        return _is_num(answer) and math.isfinite(answer)
    return isinstance(answer, type(reference))

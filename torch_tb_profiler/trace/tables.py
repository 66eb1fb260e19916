"""Decoded events -> one column table per event kind (see docs/architecture.md for the columns).

Events are grouped by (ph, cat) first, so the per-kind work is a handful of list comprehensions and one
batched ``args`` decode per kind rather than per-event Python dispatch.
"""

from __future__ import annotations

import dataclasses
import math
import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter, itemgetter
from typing import Any

import msgspec
import numpy as np
import pandas as pd

from torch_tb_profiler.trace import args as A
from torch_tb_profiler.trace import limits
from torch_tb_profiler.trace.events import Event
from torch_tb_profiler.trace.schema import (
    CATEGORY_KINDS,
    FWDBWD_FLOW_CATEGORIES,
    KNOWN_OTHER,
    LAUNCH_FLOW_CATEGORIES,
    MEMORY_EVENT_NAME,
    OP_CATEGORY,
    Kind,
)
from torch_tb_profiler.trace.utf8 import utf8_text


@dataclass
class Tables:
    ops: pd.DataFrame
    runtimes: pd.DataFrame
    device: pd.DataFrame
    gpu_annotations: pd.DataFrame
    python: pd.DataFrame
    memory: pd.DataFrame
    syncs: pd.DataFrame
    others: pd.DataFrame
    comms: pd.DataFrame  # collective args of ops; column ``op`` = row in ``ops`` (before sorting)
    flow_points: pd.DataFrame  # fwdbwd flow endpoints: flow_id, ph, pid, tid, ts
    counters: pd.DataFrame  # the trace's own ``ph: "C"`` samples: name, key, pid, ts, value
    counts: dict[str, int] = field(default_factory=dict)
    unknown_categories: dict[str, int] = field(default_factory=dict)
    process_names: dict[str, str] = field(default_factory=dict)
    thread_names: dict[tuple[str, str], str] = field(default_factory=dict)
    scaffold: list[tuple[str, float, float]] = field(default_factory=list)  # (name, ts, end) profiler spans
    warnings: list[str] = field(default_factory=list)  # values dropped or cut while building (_Notes)
    time_base: int = 0  # µs the times are relative to (trace/exact_time.py)


class _Notes:
    """Values the tables could not hold as they were (an id past int64, a 1 GB name): each is dropped or
    cut, and summed up here as one warning per (what, field) naming the first event concerned."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str], list[Any]] = {}  # (what, field) -> [count, first example]

    def add(self, what: str, field_name: str, example: str) -> None:
        entry = self._seen.setdefault((what, field_name), [0, example])
        entry[0] += 1

    def lines(self) -> list[str]:
        return [
            f"{count} event{'s' if count > 1 else ''}: {what} in '{name}' (first: {example})"
            for (what, name), (count, example) in self._seen.items()
        ]


_current = threading.local()  # the _Notes of the build_tables call running on this thread


def _notes() -> _Notes:
    notes = getattr(_current, "notes", None)
    if notes is None:
        notes = _current.notes = _Notes()
    return notes


def _describe(cols: dict[str, Any] | None, row: int) -> str:
    if cols is None or "name" not in cols or row >= len(cols["name"]):
        return f"event #{row} of its kind"
    name = str(cols["name"][row])
    return f"event '{name[:80]}' at ts {cols['ts'][row]:.0f}"


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 30 else text[:27] + "..."


def _args(
    raws: list[msgspec.Raw], kind: type[A.A], cols: dict[str, Any] | None, offset: int = 0
) -> list[Any]:
    """``args.decode_batch`` with every dropped out-of-range number noted on the current build."""
    dropped: A.Dropped = []
    out = A.decode_batch(raws, kind, dropped)
    for row, key, value in dropped:
        _notes().add(
            f"value {_short(value)} does not fit 64 bits, dropped", key, _describe(cols, offset + row)
        )
    return out


def _pick(events: Sequence[Event], idx: np.ndarray) -> list[Event]:
    if idx.size == 0:
        return []
    if idx.size == 1:
        return [events[int(idx[0])]]
    return list(itemgetter(*idx.tolist())(events))


def _col(values: list[Any], dtype: type) -> np.ndarray:
    return np.array(values, dtype=dtype) if values else np.empty(0, dtype=dtype)


def _strs(values: Iterable[Any]) -> list[str]:
    return ["" if v is None else v if v.isascii() else utf8_text(v) for v in values]


def _interned(values: list[Any], field_name: str = "a string") -> np.ndarray:
    """Values as an object array of str, equal values sharing one str object (pid/tid/name); a string
    longer than ``max_string_bytes`` (``trace/limits.py``) is cut, with a warning."""
    canonical: dict[str, str] = {}
    mapping = {v: canonical.setdefault(s := v if isinstance(v, str) else str(v), s) for v in set(values)}
    lo, hi = _INT64
    for v in mapping:
        if isinstance(v, int) and not lo <= v < hi:
            _notes().add(
                f"value {_short(v)} does not fit 64 bits, kept as text", field_name, f"'{mapping[v]}'"
            )
    cap = limits.get("max_string_bytes")
    for value, text in mapping.items():
        if not text.isascii():
            text = mapping[value] = utf8_text(text)
        if len(text) > cap:
            mapping[value] = text[:cap] + "...[cut]"
            _notes().add(
                f"a {limits.human(len(text))} string cut to {limits.human(cap)} "
                f"({limits.how_to_raise('max_string_bytes')})",
                field_name,
                f"'{text[:60]}...'",
            )
    return np.fromiter(map(mapping.__getitem__, values), dtype=object, count=len(values))


def _floats(items: Sequence[Any], name: str) -> np.ndarray:
    """One float attribute of every struct, straight into an array (faster than a list for floats,
    slower for ints, which go through ``_col``)."""
    return np.fromiter(map(attrgetter(name), items), dtype=np.float64, count=len(items))


def _ext(args: list[Any]) -> np.ndarray:
    """External id (either spelling); 0 means none in legacy traces."""
    ext = _col([x.ext_id for x in args], np.int64)
    legacy = _col([x.ext_id_legacy for x in args], np.int64)
    ext = np.where(ext >= 0, ext, legacy)
    ext[ext == 0] = -1
    return ext


def _raw_texts(raws: list[msgspec.Raw], strip_spaces: bool) -> list[str]:
    """Raw JSON values as text, in one pass over one joined buffer ("" where absent)."""
    if not raws:
        return []
    blob = b"\x00".join(raws)
    if strip_spaces:
        blob = blob.translate(None, b" \n\t")
    texts = blob.decode("utf-8", errors="replace").split("\x00")
    return ["" if t == "null" else t for t in texts]


def _raws(events: list[Event]) -> list[msgspec.Raw]:
    """The events' raw args; empties ``events`` (callers have taken every other field already)."""
    raws = [e.args for e in events]
    events.clear()
    return raws


def _base(events: list[Event]) -> dict[str, Any]:
    ts = _floats(events, "ts")
    dur = np.maximum(_floats(events, "dur"), 0.0)
    return {
        "name": _interned([e.name for e in events], "name"),
        "ts": ts,
        "dur": dur,
        "end": ts + dur,
        "pid": _interned([e.pid for e in events], "pid"),
        "tid": _interned([e.tid for e in events], "tid"),
    }


_INT64 = (-(1 << 63), 1 << 63)


def _device_ids(args: list[Any], pids: list[int | str], cols: dict[str, Any]) -> np.ndarray:
    """args.device, else a numeric pid (Kineto writes device activities with pid = device); a pid past
    int64 gives no device (noted: the event keeps its pid, as text)."""
    device = _col([x.device for x in args], np.int64)
    lo, hi = _INT64
    numeric = [p if isinstance(p, int) else -1 for p in pids]
    for row, p in enumerate(numeric if numeric and (min(numeric) < lo or max(numeric) >= hi) else ()):
        if not lo <= p < hi:
            _notes().add(
                f"value {_short(p)} does not fit 64 bits, no device taken from it",
                "pid",
                _describe(cols, row),
            )
            numeric[row] = -1
    return np.where(device >= 0, device, _col(numeric, np.int64))


def build_tables(events: list[Event], time_base: int = 0) -> Tables:
    """``time_base``: the µs the events' ts were read relative to (``DecodedTrace.time_base``)."""
    _current.notes = _Notes()
    try:
        tables = _build_tables(events)
        tables.warnings = _current.notes.lines()
        tables.time_base = time_base
        return tables
    finally:
        _current.notes = None


def _build_tables(events: list[Event]) -> Tables:
    counts: dict[str, int] = {}
    unknown: Counter[str] = Counter()
    by_kind: dict[Kind, list[np.ndarray]] = {k: [] for k in Kind}
    memory_parts: list[np.ndarray] = []
    fwdbwd_parts: list[np.ndarray] = []
    meta_parts: list[np.ndarray] = []
    counter_parts: list[np.ndarray] = []
    for ph, cat, idx in _groups(events):
        size = len(idx)
        counts[f"{ph}:{cat}" if cat else ph] = size
        lcat = cat.lower()
        if ph == "X":
            kind = CATEGORY_KINDS.get(lcat)
            if kind is None:
                kind = Kind.OTHER
                if lcat not in KNOWN_OTHER:
                    unknown[cat or "(no category)"] += size
            by_kind[kind].append(idx)
        elif ph in ("i", "I"):
            memory_parts.append(idx)  # filtered by name below
        elif ph in ("s", "f", "t") and lcat in FWDBWD_FLOW_CATEGORIES:
            fwdbwd_parts.append(idx)
        elif ph == "M":
            meta_parts.append(idx)
        elif ph == "C":
            counter_parts.append(idx)
        elif ph in ("s", "f", "t") and lcat in LAUNCH_FLOW_CATEGORIES:
            pass  # duplicates the correlation args
        # other phases (async b/e ...) are counted only

    def take(kind: Kind) -> list[Event]:
        parts = by_kind[kind]
        return _pick(events, np.sort(np.concatenate(parts))) if parts else []

    kinds = {kind: take(kind) for kind in Kind}
    memory_events = [e for e in _pick(events, _cat(memory_parts)) if e.name == MEMORY_EVENT_NAME]
    flow_events = _pick(events, _cat(fwdbwd_parts))
    process_names, thread_names = _metadata(_pick(events, _cat(meta_parts)))
    counters = _counter_table(_pick(events, _cat(counter_parts)))
    scaffold = [(utf8_text(e.name), e.ts, e.ts + e.dur) for e in kinds.pop(Kind.SCAFFOLD)]
    # from here each kind's list alone holds its events: each table builder empties its list once it
    # has what it needs, so the events (and then the file's text, held by their raw args) drain early
    events.clear()
    ops, comms = _ops_table(kinds.pop(Kind.OP))
    return Tables(
        ops=ops,
        runtimes=_runtime_table(kinds.pop(Kind.RUNTIME)),
        device=_device_table(kinds.pop(Kind.KERNEL), kinds.pop(Kind.MEMCPY), kinds.pop(Kind.MEMSET)),
        gpu_annotations=_annotation_table(kinds.pop(Kind.GPU_ANNOTATION)),
        python=_python_table(kinds.pop(Kind.PYTHON)),
        memory=_memory_table(memory_events),
        syncs=_sync_table(kinds.pop(Kind.SYNC)),
        others=_other_table(kinds.pop(Kind.OTHER)),
        comms=comms,
        flow_points=_flow_table(flow_events),
        counters=counters,
        counts=counts,
        unknown_categories=dict(unknown),
        process_names=process_names,
        thread_names=thread_names,
        scaffold=scaffold,
    )


_FRAMES = (
    "ops",
    "runtimes",
    "device",
    "gpu_annotations",
    "python",
    "memory",
    "syncs",
    "others",
    "flow_points",
    "counters",
)


def concat_tables(parts: list[Tables]) -> Tables:
    """Tables of consecutive pieces of one file (in file order) -> the tables of the whole file."""
    if len(parts) == 1:
        return parts[0]
    bases = [p.time_base for p in parts if p.time_base]
    base = min(bases) if bases else 0
    parts = [_rebased(p, base) for p in parts]
    frames = {name: _concat_frames([getattr(p, name) for p in parts]) for name in _FRAMES}
    comms = []
    offset = 0
    for p in parts:  # comms point at rows of ops: shift them past the earlier pieces' ops
        comms.append(p.comms.assign(op=p.comms["op"].to_numpy() + offset))
        offset += len(p.ops)
    counts: Counter[str] = Counter()
    unknown: Counter[str] = Counter()
    process_names: dict[str, str] = {}
    thread_names: dict[tuple[str, str], str] = {}
    scaffold: list[tuple[str, float, float]] = []
    warnings: list[str] = []
    for p in parts:
        warnings.extend(w for w in p.warnings if w not in warnings)
        counts.update(p.counts)
        unknown.update(p.unknown_categories)
        process_names.update(p.process_names)  # a later event wins, as in one pass over the file
        thread_names.update(p.thread_names)
        scaffold.extend(p.scaffold)
    return Tables(
        **frames,
        comms=_concat_frames(comms),
        counts=dict(counts),
        unknown_categories=dict(unknown),
        process_names=process_names,
        thread_names=thread_names,
        scaffold=scaffold,
        warnings=warnings,
        time_base=base,
    )


_TIME_COLUMNS = ("ts", "end")


def _rebased(part: Tables, base: int) -> Tables:
    """The part's times relative to ``base`` instead of its own (chunks read their bases apart)."""
    shift = float(part.time_base - base)
    if shift == 0.0:
        return part
    changes: dict[str, Any] = {}
    for name in _FRAMES:
        frame = getattr(part, name)
        cols = {c: frame[c].to_numpy(np.float64) + shift for c in _TIME_COLUMNS if c in frame.columns}
        changes[name] = frame.assign(**cols) if cols else frame
    scaffold = [(name, ts + shift, end + shift) for name, ts, end in part.scaffold]
    return dataclasses.replace(part, **changes, scaffold=scaffold, time_base=base)


def _concat_frames(frames: list[pd.DataFrame]) -> pd.DataFrame:
    non_empty = [f for f in frames if len(f)]
    if not non_empty:
        return frames[0]
    if len(non_empty) == 1:
        return non_empty[0]
    return pd.concat(non_empty, ignore_index=True)


def _groups(events: list[Event]) -> list[tuple[str, str, np.ndarray]]:
    """(ph, cat, rows in file order) for each distinct (ph, cat), in one pass over the events."""
    by_key: dict[tuple[str, str], list[int]] = {}
    for i, e in enumerate(events):
        key = (e.ph, e.cat)
        try:
            by_key[key].append(i)
        except KeyError:
            by_key[key] = [i]
    return [(ph, cat, np.array(rows, dtype=np.int64)) for (ph, cat), rows in by_key.items()]


def _cat(parts: list[np.ndarray]) -> np.ndarray:
    return np.sort(np.concatenate(parts)) if parts else np.empty(0, dtype=np.int64)


_CHUNK = 50_000  # ops' args are decoded in chunks: legacy "Call stack" strings are large and repetitive


def _ops_table(events: list[Event]) -> tuple[pd.DataFrame, pd.DataFrame]:
    cols = _base(events)
    cols["cat"] = _interned([OP_CATEGORY.get(e.cat.lower(), "cpu_op") for e in events])
    raws = _raws(events)
    parts: dict[str, list[Any]] = {
        k: []
        for k in (
            "ext_id",
            "seq",
            "fwd_tid",
            "flops",
            "input_dims",
            "input_types",
            "concrete_inputs",
            "call_stack",
        )
    }
    stacks: dict[str, str] = {}
    comm_rows: list[int] = []
    comm_args: list[A.OpArgs] = []
    for lo in range(0, len(raws), _CHUNK):
        args = _args(raws[lo : lo + _CHUNK], A.OpArgs, cols, lo)
        parts["ext_id"].append(_ext(args))
        parts["seq"].append(_col([x.seq for x in args], np.int64))
        parts["fwd_tid"].append(_col([x.fwd_tid for x in args], np.int64))
        dims = [a.input_dims if bytes(a.input_dims) != b"null" else a.input_dims_legacy for a in args]
        parts["input_dims"].extend(_raw_texts(dims, True))
        parts["input_types"].extend(_raw_texts([a.input_types for a in args], False))
        concrete = [a.concrete_inputs for a in args]
        # most traces have none: skip the join (an absent field is the shared default object)
        absent = all(c is A.NULL for c in concrete)
        parts["concrete_inputs"].extend([""] * len(concrete) if absent else _raw_texts(concrete, False))
        parts["flops"].append(_col([x.flops for x in args], np.float64))
        parts["call_stack"].extend(
            stacks.setdefault(a.call_stack, a.call_stack) if a.call_stack else "" for a in args
        )
        for i, a in enumerate(args):
            if a.collective is not None:
                comm_rows.append(lo + i)
                comm_args.append(a)
    for name in ("ext_id", "seq", "fwd_tid"):
        cols[name] = np.concatenate(parts[name]) if parts[name] else np.empty(0, dtype=np.int64)
    cols["flops"] = np.concatenate(parts["flops"]) if parts["flops"] else np.empty(0, dtype=np.float64)
    for name in ("input_dims", "input_types", "concrete_inputs", "call_stack"):
        cols[name] = _interned(parts[name], name)
    ops = pd.DataFrame(cols)
    c = comm_args
    comms = pd.DataFrame(
        {
            "op": _col(comm_rows, np.int64),
            "collective": _strs(a.collective for a in c),
            "in_nelems": _col([x.in_nelems for x in c], np.int64),
            "out_nelems": _col([x.out_nelems for x in c], np.int64),
            "dtype": _strs(a.dtype for a in c),
            "group_size": _col([x.group_size for x in c], np.int64),
            "pg_name": _strs(a.pg_name for a in c),
            "pg_desc": _strs(a.pg_desc for a in c),
            "pg_ranks": _strs(a.pg_ranks for a in c),
            "coll_seq": _col([x.coll_seq for x in c], np.int64),
            "rank": _col([x.rank for x in c], np.int64),
        }
    )
    return ops, comms


def _runtime_table(events: list[Event]) -> pd.DataFrame:
    cols = _base(events)
    cols["cat"] = _interned([e.cat.lower() for e in events])
    args = _args(_raws(events), A.RuntimeArgs, cols)
    cols["ext_id"] = _ext(args)
    corr = _col([x.corr for x in args], np.int64)
    cols["corr"] = np.where(corr >= 0, corr, _col([x.cid for x in args], np.int64))
    cols["kernel"] = _interned(_strs(a.kernel for a in args))
    cols["graph_id"] = _col([x.graph_id for x in args], np.int64)
    cols["graph_node_id"] = _col([x.graph_node_id for x in args], np.int64)
    return pd.DataFrame(cols)


_DEVICE_FLOATS = (
    "regs",
    "shmem",
    "blocks_per_sm",
    "warps_per_sm",
    "occupancy",
    "bytes",
    "bandwidth",
    "kernel_flop",
    "kernel_num_gb",
)


def _device_table(kernels: list[Event], memcpys: list[Event], memsets: list[Event]) -> pd.DataFrame:
    kinds = ["kernel"] * len(kernels) + ["memcpy"] * len(memcpys) + ["memset"] * len(memsets)
    events = kernels + memcpys + memsets
    for part in (kernels, memcpys, memsets):
        part.clear()
    cols = _base(events)
    cols["kind"] = _interned(kinds)
    pids = [e.pid for e in events]
    args = _args(_raws(events), A.DeviceArgs, cols)
    cols["device"] = _device_ids(args, pids, cols)
    cols["stream"] = _col([x.stream for x in args], np.int64)
    cols["corr"] = _col([x.corr for x in args], np.int64)
    cols["ext_id"] = _ext(args)
    cols["grid"] = _interned(_raw_texts([a.grid for a in args], False))
    cols["block"] = _interned(_raw_texts([a.block for a in args], False))
    for name in _DEVICE_FLOATS:
        cols[name] = _floats(args, name)
    cols["collective"] = _interned(_strs(a.collective for a in args))
    cols["in_nelems"] = _col([x.in_nelems for x in args], np.int64)
    cols["out_nelems"] = _col([x.out_nelems for x in args], np.int64)
    cols["dtype"] = _interned(_strs(a.dtype for a in args))
    cols["group_size"] = _col([x.group_size for x in args], np.int64)
    cols["pg_name"] = _interned(_strs(a.pg_name for a in args))
    cols["coll_seq"] = _col([x.coll_seq for x in args], np.int64)
    cols["graph_id"] = _col([x.graph_id for x in args], np.int64)
    cols["graph_node_id"] = _col([x.graph_node_id for x in args], np.int64)
    return pd.DataFrame(cols)


def _annotation_table(events: list[Event]) -> pd.DataFrame:
    cols = _base(events)
    pids = [e.pid for e in events]
    args = _args(_raws(events), A.AnnotationArgs, cols)
    cols["device"] = _device_ids(args, pids, cols)
    cols["stream"] = _col([x.stream for x in args], np.int64)
    cols["ext_id"] = _ext(args)
    return pd.DataFrame(cols)


def _python_table(events: list[Event]) -> pd.DataFrame:
    cols = _base(events)
    args = _args(_raws(events), A.PythonArgs, cols)
    cols["py_id"] = _col([x.py_id for x in args], np.int64)
    cols["py_parent_id"] = _col([-1 if a.py_parent_id is None else a.py_parent_id for a in args], np.int64)
    cols["py_module_id"] = _col([x.py_module_id for x in args], np.int64)
    return pd.DataFrame(cols)


def _memory_table(events: list[Event]) -> pd.DataFrame:
    args = _args(
        [e.args for e in events],
        A.MemoryArgs,
        {"name": [e.name for e in events], "ts": _floats(events, "ts")},
    )
    return pd.DataFrame(
        {
            "ts": _floats(events, "ts"),
            "pid": _interned([e.pid for e in events], "pid"),
            "tid": _interned([e.tid for e in events], "tid"),
            "device_type": _col([x.device_type for x in args], np.int64),
            "device_id": _col([x.device_id for x in args], np.int64),
            "addr": _col([x.addr for x in args], np.int64),
            "bytes": _col([x.bytes for x in args], np.int64),
            "total_allocated": _floats(args, "total_allocated"),
            "total_reserved": _floats(args, "total_reserved"),
        }
    )


def _sync_table(events: list[Event]) -> pd.DataFrame:
    cols = _base(events)
    args = _args(_raws(events), A.SyncArgs, cols)
    cols["device"] = _col([x.device for x in args], np.int64)
    cols["stream"] = _col([x.stream for x in args], np.int64)
    cols["corr"] = _col([x.corr for x in args], np.int64)
    cols["kind"] = _strs(a.kind for a in args)
    return pd.DataFrame(cols)


def _other_table(events: list[Event]) -> pd.DataFrame:
    cols = _base(events)
    cols["cat"] = _interned([e.cat for e in events])
    return pd.DataFrame(cols)


def _flow_table(events: list[Event]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "flow_id": _interned(["" if e.id is None else e.id for e in events], "id"),
            "ph": _strs(e.ph for e in events),
            "pid": _interned([e.pid for e in events], "pid"),
            "tid": _interned([e.tid for e in events], "tid"),
            "ts": _floats(events, "ts"),
        }
    )


def _counter_table(events: list[Event]) -> pd.DataFrame:
    """One row per (event, numeric arg): a ``ph: "C"`` event sets each series named by an args key."""
    names: list[str] = []
    keys: list[str] = []
    pids: list[Any] = []
    ts: list[float] = []
    values: list[float] = []
    for e in events:
        try:
            args = msgspec.json.decode(e.args)
        except msgspec.DecodeError:
            continue
        if not isinstance(args, dict) or not isinstance(e.ts, int | float):
            continue
        for key, value in args.items():
            if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
                names.append(e.name)
                keys.append(utf8_text(str(key)))
                pids.append(e.pid)
                ts.append(float(e.ts))
                values.append(float(value))
    return pd.DataFrame(
        {
            "name": _interned(names),
            "key": _interned(keys),
            "pid": _interned(pids, "pid"),
            "ts": np.asarray(ts, dtype=np.float64),
            "value": np.asarray(values, dtype=np.float64),
        }
    )


def _metadata(events: list[Event]) -> tuple[dict[str, str], dict[tuple[str, str], str]]:
    processes: dict[str, str] = {}
    threads: dict[tuple[str, str], str] = {}
    if not events:
        return processes, threads
    args = msgspec.json.decode(b"[" + b",".join(e.args for e in events) + b"]")
    for e, a in zip(events, args, strict=True):
        label = a.get("name") if isinstance(a, dict) else None
        if not isinstance(label, str):
            continue
        label = utf8_text(label)
        pid, tid = utf8_text(str(e.pid)), utf8_text(str(e.tid))
        if e.name == "process_name":
            processes[pid] = label
        elif e.name == "thread_name":
            threads[(pid, tid)] = label
    return processes, threads

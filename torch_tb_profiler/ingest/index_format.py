"""A Profile <-> bytes: the persisted index's file format (docs/architecture.md, "Persisted index").

One file per trace file::

    MAGIC (8 bytes) | header length (8 bytes, little endian) | header (JSON) | table 0 | table 1 | ...

The header holds the format version, the source's identity, the Profile's scalar fields and meta, and
per table its byte range and the CRC-32 of those bytes. The first table of the body is the *summary*:
the distributed analysis's per-rank figures (``analysis.distributed.RankPart``: its collective calls as a
table, the rest in the header) and which views the profile has, readable with the header alone
(``summary_size`` + ``loads_summary``), so a job of many ranks is served without reading the event
tables (docs/architecture.md, "Persisted index"). Each table is one Arrow IPC stream
(lz4-compressed buffers). When the profile's timeline index had been built, its tables follow the
event tables (``index_timeline``: a re-opened profile draws its Trace view without building it).
String columns are stored as dictionaries (one copy of each distinct value);
reading them back gives one Python str per distinct value, shared by every row that has it, as a fresh
parse does. Numbers keep their exact dtype. A file that is short, has a wrong checksum, or does not
decode raises ``IndexFormatError``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import struct
import threading
import zlib
from dataclasses import dataclass
from dataclasses import field as dc_field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from torch_tb_profiler.analysis.timeline.index import INDEX_KEY
from torch_tb_profiler.ingest import index_schema, index_timeline
from torch_tb_profiler.ingest.index_schema import IndexFormatError, expect
from torch_tb_profiler.model.profile import Profile, TraceMeta
from torch_tb_profiler.trace.version import VERSION as __version__

log = logging.getLogger(__name__)

MAGIC = b"TTBPIDX\x01"
# 2: the summary (per-rank distributed figures, view facts) before the tables; 3: the timeline index
FORMAT_VERSION = 3
_LEN = struct.Struct("<Q")
_DTYPE_KEY = b"dtype"
_COMPRESSION = "lz4"
_TABLES = [
    f.name
    for f in dataclasses.fields(Profile)
    if f.name not in ("run", "worker", "span", "source", "meta", "cache")
]
_SUMMARY_CALLS = "summary.calls"
STORED_OVERVIEW_MIN_EVENTS = 100_000  # events from which the index stores the overview answer (_answers)
# the code that decides what a Profile holds, what its summary says and how both are stored: an index made
# by other code is not current (the summary is computed by analysis/: all of it counts)
_MODEL_SOURCES = (
    "trace",
    "model",
    "analysis",
    "ingest/parse.py",
    "ingest/parse_split.py",
    "ingest/index_format.py",
)


__all__ = ["IndexFormatError", "IndexedSummary", "dumps", "loads", "loads_summary"]
_FAULTS = (KeyError, IndexError, TypeError, ValueError, AttributeError, OverflowError, pa.ArrowException)


@dataclass
class IndexedSummary:
    """What a job-level view needs of one profile, read from its index without the event tables."""

    run: str
    worker: str
    span: str
    source: str
    meta: TraceMeta
    facts: dict[str, bool]  # which views the profile has (view_facts)
    part: Any  # analysis.distributed.RankPart, None when the profile has no collective and no distributedInfo
    cache: dict[Any, Any] = dc_field(default_factory=dict)  # answers memoized on it, as on a Profile
    # the rank part's calls table as stored (Arrow IPC, checksum verified) until decode_calls makes it
    # ``part.calls``: decoding a thousand ranks' tables at once costs a fraction of one by one
    calls_ipc: bytes | None = None
    answers: dict[str, Any] = dc_field(default_factory=dict)  # route answers stored whole ("overview")
    problem: str | None = None  # set when its stored calls turned out unreadable (decode_calls)


def view_facts(profile: Profile) -> dict[str, bool]:
    """Which per-profile views apply (views/core.py lists a run's views from these)."""
    from torch_tb_profiler.analysis.modules.tree import has_module_view
    from torch_tb_profiler.analysis.roofline.attribution import has_flops

    return {
        "roofline": bool(has_flops(profile)),
        "kernels": len(profile.kernels) > 0,
        "memory": len(profile.memory) > 0,
        "module": bool(has_module_view(profile)),
        "comms": len(profile.comms) > 0,
    }


def has_rank_part(profile: Profile) -> bool:
    """Profiles whose distributed figures are computed and stored: those that take part in a job."""
    return bool(len(profile.comms) or profile.meta.distributed_info)


def _code_digest() -> str:
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256(__version__.encode())
    for rel in _MODEL_SOURCES:
        target = root / rel
        for path in sorted(target.rglob("*.py")) if target.is_dir() else [target]:
            digest.update(path.relative_to(root).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


# format version + release + a digest of the parser/model source: a new release (or a changed parser in
# a development tree) never reads an index written by another
MODEL_VERSION = f"{FORMAT_VERSION}-{__version__}-{_code_digest()}"


def dumps(profile: Profile, identity: dict[str, Any]) -> bytes:
    """The index file of a profile; ``identity`` (JSON-able) names the source version it was made from.

    Raises IndexFormatError for a column this format cannot hold exactly."""
    summary, calls = _summary_to_json(profile)
    names = [_SUMMARY_CALLS, *_TABLES]
    bodies = [
        _table_bytes(_SUMMARY_CALLS, calls, compression=None)
    ]  # tens of rows: lz4 costs more than it saves
    bodies += [_table_bytes(name, getattr(profile, name)) for name in _TABLES]
    timeline = index_timeline.to_parts(profile)  # None when its timeline index was not built
    if timeline is not None:
        names += list(timeline[1])
        bodies += [_table_bytes(name, frame) for name, frame in timeline[1].items()]
    tables: dict[str, list[int]] = {}
    offset = 0
    for name, body in zip(names, bodies, strict=True):
        tables[name] = [offset, len(body), zlib.crc32(body)]
        offset += len(body)
    header = {
        "model_version": MODEL_VERSION,
        "identity": identity,
        "profile": {
            "run": profile.run,
            "worker": profile.worker,
            "span": profile.span,
            "source": profile.source,
        },
        "meta": _meta_to_json(profile.meta),
        "summary": summary,
        "timeline": timeline[0] if timeline is not None else None,
        "tables": tables,
        "body_bytes": offset,
    }
    head = json.dumps(header, separators=(",", ":")).encode()
    return b"".join([MAGIC, _LEN.pack(len(head)), head, *bodies])


def read_header(data: bytes | memoryview) -> tuple[dict[str, Any], int]:
    """The header and where the body starts; needs only the first bytes of the file (see header_size)."""
    if len(data) < len(MAGIC) + _LEN.size or bytes(data[: len(MAGIC)]) != MAGIC:
        raise IndexFormatError("not an index file (bad magic)")
    (size,) = _LEN.unpack_from(data, len(MAGIC))
    start = len(MAGIC) + _LEN.size
    if len(data) < start + size:
        raise IndexFormatError("truncated header")
    try:
        header = json.loads(bytes(data[start : start + size]))
    except ValueError as e:
        raise IndexFormatError(f"unreadable header: {e}") from None
    if not isinstance(header, dict) or "tables" not in header:
        raise IndexFormatError("unreadable header")
    return header, start + size


def header_size(prefix: bytes) -> int:
    """Bytes needed to read the header, from the file's first 16 bytes."""
    if len(prefix) < len(MAGIC) + _LEN.size or prefix[: len(MAGIC)] != MAGIC:
        raise IndexFormatError("not an index file (bad magic)")
    return len(MAGIC) + _LEN.size + _LEN.unpack_from(prefix, len(MAGIC))[0]


def summary_size(header: dict[str, Any], body_start: int) -> int:
    """Bytes from the file's start that hold the header and the summary (loads_summary needs no more)."""
    try:
        offset, length, _crc = header["tables"][_SUMMARY_CALLS]
        return body_start + int(offset) + int(length)
    except (KeyError, TypeError, ValueError) as e:
        raise IndexFormatError(f"no summary: {type(e).__name__}: {e}") from None


def loads_summary(data: bytes | memoryview) -> IndexedSummary:
    """The summary of an index file from its first ``summary_size`` bytes (raises IndexFormatError)."""
    header, start = read_header(data)
    try:
        calls = _table_body(memoryview(data), start, header, _SUMMARY_CALLS)
        info, summary = _checked_header(header)
        out = IndexedSummary(
            run=info["run"],
            worker=info["worker"],
            span=info["span"],
            source=info["source"],
            meta=_meta_from_json(header["meta"]),
            facts=dict(summary["facts"]),
            part=_part_from_json(summary["rank_part"], None),
            answers=dict(summary["answers"]),
        )
        if out.part is not None:
            # the table's schema now (its rows are decoded with the job's other ranks: decode_calls)
            index_schema.check_columns(_SUMMARY_CALLS, pa.ipc.open_stream(pa.py_buffer(calls)).schema)
            out.calls_ipc = bytes(calls)
    except IndexFormatError:
        raise
    except _FAULTS as e:
        raise IndexFormatError(f"unreadable index summary: {type(e).__name__}: {e}") from None
    if out.part is not None:  # analysis.distributed.summarize_worker finds it as on a Profile
        from torch_tb_profiler.analysis.distributed.job import RANK_PART_KEY

        out.cache[RANK_PART_KEY] = out.part
    return out


_DECODE_LOCK = threading.Lock()


def decode_calls(summaries: list[IndexedSummary]) -> None:
    """Give every summary's rank part its calls table (``part.calls``), decoding those still stored in
    one pass: the Arrow tables of one schema are concatenated, converted to pandas once, and cut back
    into one frame per summary (1024 2.x NCCL ranks: ~0.2 s, against ~2 s one by one)."""
    with _DECODE_LOCK:
        todo = [s for s in summaries if s.part is not None and s.part.calls is None]
        tables: dict[int, pa.Table] = {}
        for i, s in enumerate(todo):
            try:
                tables[i] = pa.ipc.open_stream(pa.py_buffer(s.calls_ipc)).read_all()
            except _FAULTS as e:
                _drop_part(s, e)
        groups: dict[bytes, list[int]] = {}
        for i, table in tables.items():
            groups.setdefault(table.schema.serialize().to_pybytes(), []).append(i)
        for members in groups.values():
            try:
                _decode_group([todo[i] for i in members], [tables[i] for i in members])
            except (IndexFormatError, *_FAULTS):
                # one bad rank never takes its job down: decode them one by one, dropping the bad ones
                for i in members:
                    try:
                        _decode_group([todo[i]], [tables[i]])
                    except (IndexFormatError, *_FAULTS) as e:
                        _drop_part(todo[i], e)


def _decode_group(members: list[IndexedSummary], tables: list[pa.Table]) -> None:
    combined = pa.concat_tables(tables).unify_dictionaries().combine_chunks()
    frame = _frame_from_table(combined, _SUMMARY_CALLS)
    at = 0
    parts = []
    for s, table in zip(members, tables, strict=True):
        rows = table.num_rows
        # a view of the rows (the analysis never uses the index labels: it concatenates them)
        calls = frame.iloc[at : at + rows]
        index_schema.check_calls(calls, len(s.part.steps))
        parts.append(calls)
        at += rows
    for s, calls in zip(members, parts, strict=True):
        s.part.calls = calls
        s.calls_ipc = None


def _drop_part(summary: IndexedSummary, why: Exception) -> None:
    """A summary whose calls do not decode: its rank is left out of job views, with a warning."""
    from torch_tb_profiler.analysis.distributed.job import RANK_PART_KEY

    log.warning("index summary of %s: collective calls unreadable (%s); rank left out", summary.source, why)
    summary.part = None
    summary.calls_ipc = None
    summary.cache.pop(RANK_PART_KEY, None)
    summary.problem = f"its index's collective calls are unreadable ({why}); the rank is left out of the job"


def _table_body(view: memoryview, start: int, header: dict[str, Any], name: str) -> memoryview:
    offset, length, crc = header["tables"][name]
    body = view[start + offset : start + offset + length]
    if len(body) != length:
        raise IndexFormatError(f"table {name}: truncated")
    if zlib.crc32(body) != crc:
        raise IndexFormatError(f"table {name}: checksum mismatch")
    return body


def _read_table(view: memoryview, start: int, header: dict[str, Any], name: str) -> pd.DataFrame:
    return _table_from_bytes(_table_body(view, start, header, name), name)


def loads(data: bytes | memoryview) -> Profile:
    """The Profile stored in an index file (raises IndexFormatError); its stored per-rank distributed
    figures are put in its cache, as if computed from it."""
    header, start = read_header(data)
    view = memoryview(data)
    if len(view) != start + int(header.get("body_bytes", -1)):
        raise IndexFormatError(
            f"index is {len(view)} bytes, its header says {start + header.get('body_bytes', 0)}"
        )
    frames: dict[str, pd.DataFrame] = {}
    try:
        info, summary = _checked_header(header)
        for name in _TABLES:
            frames[name] = _read_table(view, start, header, name)
        index_schema.check_tables(frames)
        meta = _meta_from_json(header["meta"])
        part = _part_from_json(summary["rank_part"], _read_table(view, start, header, _SUMMARY_CALLS))
        if part is not None:
            index_schema.check_calls(part.calls, len(part.steps))
    except IndexFormatError:
        raise
    except _FAULTS as e:
        raise IndexFormatError(f"unreadable index: {type(e).__name__}: {e}") from None
    profile = Profile(
        run=info["run"], worker=info["worker"], span=info["span"], source=info["source"], meta=meta, **frames
    )
    if part is not None:
        from torch_tb_profiler.analysis.distributed.job import RANK_PART_KEY

        profile.cache[RANK_PART_KEY] = part
    if header.get("timeline"):
        try:
            stored = {name: _read_table(view, start, header, name) for name in index_timeline.TABLES}
            index_timeline.check(header["timeline"], stored, profile)
            profile.cache[INDEX_KEY] = index_timeline.from_parts(header["timeline"], stored)
        except IndexFormatError:
            raise
        except _FAULTS as e:
            raise IndexFormatError(f"unreadable timeline index: {type(e).__name__}: {e}") from None
    return profile


def _checked_header(header: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The header's profile names and summary, every field of the stored type (index_schema.py)."""
    expect(header, {"profile": index_schema.PROFILE, "meta": index_schema.META, "summary": {}}, "header")
    summary = header["summary"]
    expect(summary, {"facts": index_schema.FACTS, "rank_part": "json", "answers": {}}, "summary")
    if summary["rank_part"] is not None:
        expect(summary["rank_part"], index_schema.RANK_PART, "summary rank part")
    _check_answers(summary["answers"])
    return header["profile"], summary


_reference: dict[str, Any] = {}


def _check_answers(answers: dict[str, Any]) -> None:
    """Stored answers are only those this code stores, in the shape it computes them."""
    from torch_tb_profiler.analysis.overview.page import page

    for name, answer in answers.items():
        if name != "overview":
            raise IndexFormatError(f"summary: unknown stored answer {name!r}")
        if "overview" not in _reference:  # the shape of the answer, from the profile of an empty trace
            _reference["overview"] = page(_empty_profile())
        if not index_schema.conforms(answer, _reference["overview"]):
            raise IndexFormatError("summary: the stored overview answer lacks fields or has others' types")


def _empty_profile() -> Profile:
    from torch_tb_profiler.model.build import profile_from_tables
    from torch_tb_profiler.trace.tables import build_tables

    return profile_from_tables(build_tables([]), {}, [], 0, "", "", "", "")


# ---- summary -----------------------------------------------------------------------------------------
def _summary_to_json(profile: Profile) -> tuple[dict[str, Any], pd.DataFrame]:
    """The summary's header entry and its calls table (empty when the profile has no rank part)."""
    from torch_tb_profiler.analysis.distributed.job import rank_part

    part = rank_part(profile) if has_rank_part(profile) else None
    entry: dict[str, Any] = {"facts": view_facts(profile), "rank_part": None, "answers": _answers(profile)}
    if part is None:
        return entry, pd.DataFrame(index=pd.RangeIndex(0))
    fields = {
        "info": part.info,
        "host_name": part.host_name,
        "main_pid": part.main_pid,
        "process_name": part.process_name,
        "steps": part.steps,
        "step_bounds": [list(b) for b in part.step_bounds],
        "overlap": part.overlap,
        "gpus": part.gpus,
        "warnings": part.warnings,
    }
    try:
        json.dumps(fields)
    except (TypeError, ValueError) as e:
        raise IndexFormatError(f"distributed figures cannot be stored: {e}") from None
    entry["rank_part"] = fields
    return entry, part.calls


def _answers(profile: Profile) -> dict[str, Any]:
    """Route answers stored whole: the overview of a big trace (~20 kB on a 322 MB trace, 0.6-0.9 s to
    compute), so that re-opening a logdir answers it from the summary, before the event tables are read.
    Not for small traces: on a 2.x NCCL rank (5 k events) it costs 0.1-0.2 s, twice the rest of the index
    write, and on demand it is as quick."""
    from torch_tb_profiler.analysis.overview.page import page

    if profile.meta.event_count < STORED_OVERVIEW_MIN_EVENTS:
        return {}
    try:
        data = page(profile)
        json.dumps(data, allow_nan=False)
    except Exception as e:  # the index never fails for it: the route computes it then
        log.warning("overview of %s not stored in its index: %s", profile.source, e)
        return {}
    return {"overview": data}


def _part_from_json(fields: dict[str, Any] | None, calls: pd.DataFrame | None) -> Any:
    if fields is None:
        return None
    from torch_tb_profiler.analysis.distributed.job import RankPart

    return RankPart(
        info=dict(fields["info"]),
        host_name=str(fields["host_name"]),
        main_pid=fields["main_pid"],
        process_name=str(fields.get("process_name", "")),
        calls=calls,
        steps=[str(s) for s in fields["steps"]],
        step_bounds=[(float(lo), float(hi)) for lo, hi in fields["step_bounds"]],
        overlap=[[float(v) for v in row] for row in fields["overlap"]],
        gpus=fields["gpus"],
        warnings=[str(w) for w in fields["warnings"]],
    )


# ---- tables ------------------------------------------------------------------------------------------
def _table_bytes(name: str, frame: pd.DataFrame, compression: str | None = _COMPRESSION) -> bytes:
    if not isinstance(frame.index, pd.RangeIndex) or frame.index.start != 0 or frame.index.step != 1:
        raise IndexFormatError(f"table {name}: index is not 0..n-1")
    arrays, fields = [], []
    for column, series in frame.items():
        if not isinstance(column, str):
            raise IndexFormatError(f"table {name}: column name {column!r} is not a string")
        array = _column_to_arrow(name, column, series)
        arrays.append(array)
        fields.append(pa.field(column, array.type, metadata={_DTYPE_KEY: str(series.dtype).encode()}))
    table = pa.Table.from_arrays(arrays, schema=pa.schema(fields))
    sink = pa.BufferOutputStream()
    options = pa.ipc.IpcWriteOptions(compression=compression)
    with pa.ipc.new_stream(sink, table.schema, options=options) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _column_to_arrow(table: str, column: str, series: pd.Series) -> pa.Array:
    dtype = series.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "biuf":
        return pa.array(series.to_numpy())
    if isinstance(dtype, pd.StringDtype) or (isinstance(dtype, np.dtype) and dtype.kind == "O"):
        codes, uniques = pd.factorize(series, use_na_sentinel=True)
        values = np.asarray(uniques, dtype=object)
        if not all(isinstance(v, str) for v in values):
            raise IndexFormatError(f"table {table}: column {column} holds values other than strings")
        indices = pa.array(codes.astype(np.int32), mask=codes < 0)
        return pa.DictionaryArray.from_arrays(indices, pa.array(values, type=pa.string()))
    raise IndexFormatError(f"table {table}: column {column} has dtype {dtype}, which the index cannot hold")


def _table_from_bytes(body: memoryview, name: str) -> pd.DataFrame:
    reader = pa.ipc.open_stream(pa.py_buffer(body))
    index_schema.check_columns(name, reader.schema)  # its names, before any row is decompressed
    return _frame_from_table(reader.read_all(), name)


def _frame_from_table(table: pa.Table, name: str) -> pd.DataFrame:
    """A stored table as a parse makes it: its columns and dtypes from index_schema, never from the file."""
    rows = len(table)
    index_schema.check_columns(name, table.schema, rows)
    columns: dict[str, Any] = {}
    for field, chunked in zip(table.schema, table.columns, strict=True):
        stored = (field.metadata or {}).get(_DTYPE_KEY, b"").decode(errors="replace")
        dtype = index_schema.read_dtype(name, field.name, stored, rows)
        if not pa.types.is_dictionary(chunked.type):
            index_schema.check_numbers(name, field.name, chunked)
        columns[field.name] = _column_from_arrow(chunked, dtype, rows)
    return pd.DataFrame(columns, index=pd.RangeIndex(rows), columns=list(table.column_names))


def _column_from_arrow(chunked: pa.ChunkedArray, dtype: str, rows: int) -> Any:
    if pa.types.is_dictionary(chunked.type):
        chunked = chunked.unify_dictionaries() if chunked.num_chunks > 1 else chunked
        values = np.empty(rows, dtype=object)
        at = 0
        for chunk in chunked.chunks:
            strings = chunk.dictionary.to_numpy(zero_copy_only=False).astype(object)
            codes = chunk.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.intp)
            if codes.size and (codes.max() >= len(strings) or codes.min() < -1):
                raise IndexFormatError("a dictionary code is out of range")
            part = (
                strings.take(np.maximum(codes, 0))
                if len(strings)
                else np.full(len(codes), None, dtype=object)
            )
            part[codes < 0] = np.nan if dtype != "object" else None
            values[at : at + len(part)] = part
            at += len(part)
        return pd.Series(values, dtype=dtype or object, copy=False)
    if rows == 0:
        return pd.Series([], dtype=dtype)
    out = np.array(chunked.to_numpy(), copy=True)  # writable, like a freshly parsed column
    return out.astype(dtype, copy=False)


# ---- meta --------------------------------------------------------------------------------------------
def _meta_to_json(meta: TraceMeta) -> dict[str, Any]:
    data = dataclasses.asdict(meta)
    data["thread_names"] = [[pid, tid, name] for (pid, tid), name in meta.thread_names.items()]
    data["profiler_spans"] = [list(span) for span in meta.profiler_spans]
    try:
        json.dumps(data)
    except (TypeError, ValueError) as e:
        raise IndexFormatError(f"trace metadata cannot be stored: {e}") from None
    return data


def _meta_from_json(data: dict[str, Any]) -> TraceMeta:
    data = dict(data)
    data["thread_names"] = {(pid, tid): name for pid, tid, name in data["thread_names"]}
    data["profiler_spans"] = [tuple(span) for span in data["profiler_spans"]]
    known = {f.name for f in dataclasses.fields(TraceMeta)}
    return TraceMeta(**{k: v for k, v in data.items() if k in known})

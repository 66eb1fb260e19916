"""One trace file -> Profile. Kept lean (trace + model; the capture merge of analysis/captures/ only when
a run has capture traces): the loading pool's processes import it.

A big file is read as a stream of chunks (``trace/chunks.py``), each turned into tables before the next
is read; anything the chunked reader cannot handle falls back to reading the whole file with the
repairing decoder, so both roads give the same Profile.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from torch_tb_profiler.model import Profile
from torch_tb_profiler.model.build import build_profile, profile_from_tables
from torch_tb_profiler.model.graph_replays import Merger, ReplayMerge
from torch_tb_profiler.trace.chunks import CHUNK_BYTES, NotChunkable, decoded_chunks, text_size
from torch_tb_profiler.trace.decode import TraceDecodeError, decode, read_bytes
from torch_tb_profiler.trace.limits import LimitError
from torch_tb_profiler.trace.tables import Tables, build_tables, concat_tables

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CaptureSource:
    """A graph capture trace of the run (ingest/discovery.py): a local path and what
    ``execution_details.json`` says of it."""

    path: str
    file: str  # its name, as execution_details.json gives it
    batch_size: int | None = None
    mode: str | None = None


def load_profile(
    path: str,
    run: str = "",
    worker: str = "",
    span: str = "",
    chunk_bytes: int = CHUNK_BYTES,
    captures: Sequence[CaptureSource] = (),
) -> Profile:
    """Parse one local trace file into a Profile (raises TraceDecodeError when unreadable); with
    ``captures``, the graph replays it holds are merged with them (analysis/captures/match.py)."""
    merger = _merger(captures, path) if captures else None
    size = text_size(path)
    if size is not None and size >= 2 * chunk_bytes:
        try:
            part = read_chunks(path, chunk_bytes)
        except NotChunkable as e:
            log.debug("%s: reading it whole (%s)", path, e)
        else:
            return part.profile(run, worker, span, path, merger)
    return load_whole(path, run, worker, span, merger)


def load_whole(
    path: str,
    run: str = "",
    worker: str = "",
    span: str = "",
    merger: Merger | None = None,
) -> Profile:
    """The whole file decoded at once, with every repair (see trace/decode.py)."""
    decoded = decode(read_bytes(path))
    return build_profile(decoded, run=run, worker=worker, span=span, source=path, merger=merger)


def _merger(captures: Sequence[CaptureSource], path: str) -> Merger:
    """Parse the capture traces (each failure reported, never fatal) and match them on the tables."""
    from torch_tb_profiler.analysis.captures.match import CaptureTrace, plan_merge, trace_rank

    loaded: list[CaptureTrace] = []
    failed: list[str] = []
    for c in captures:
        try:
            profile = load_profile(c.path)
            rank = trace_rank({"distributedInfo": profile.meta.distributed_info or {}}, c.file)
            loaded.append(CaptureTrace(c.file, profile, c.batch_size, c.mode, rank))
        except Exception as e:  # a broken capture costs its attribution, not the run's trace
            failed.append(f"capture {c.file} could not be read: {type(e).__name__}: {e}")

    def merge(tables: Tables, top: dict[str, Any]) -> ReplayMerge | None:
        plan = plan_merge(tables, loaded, trace_rank(top, path)) if loaded else None
        if failed:
            plan = plan or ReplayMerge(ops=pd.DataFrame(), kernel_ops=np.zeros((0, 2), dtype=np.int64))
            plan.report.setdefault("captures", [])
            plan.report["unmatched"] = [*failed, *plan.report.get("unmatched", [])]
        return plan

    return merge


@dataclass
class TablesPart:
    """Tables of a range of a file's chunks, with the metadata keys those chunks held."""

    tables: list[Tables] = field(default_factory=list)
    top: dict[str, Any] = field(default_factory=dict)
    event_count: int = 0
    reached_end: bool = False  # the range held the file's last chunk
    repairs: list[str] = field(default_factory=list)  # what the chunks' lenient decoding fixed

    def extend(self, other: TablesPart) -> None:
        self.tables.extend(other.tables)
        self.top.update(other.top)
        self.event_count += other.event_count
        self.reached_end = other.reached_end
        self.repairs.extend(r for r in other.repairs if r not in self.repairs)

    def profile(
        self,
        run: str,
        worker: str,
        span: str,
        source: str,
        merger: Merger | None = None,
    ) -> Profile:
        tables = concat_tables(self.tables)
        self.tables = []
        return profile_from_tables(
            tables, self.top, self.repairs, self.event_count, run, worker, span, source, merger=merger
        )


def read_chunks(
    path: str, chunk_bytes: int = CHUNK_BYTES, first: int = 0, stop: int | None = None
) -> TablesPart:
    """Tables of chunks ``first`` .. ``stop - 1`` of the file (raises NotChunkable)."""
    part = TablesPart()
    for chunk in decoded_chunks(path, chunk_bytes, first, stop):
        decoded = chunk.decoded
        part.top.update(decoded.top)
        part.event_count += len(decoded.events)
        part.repairs.extend(r for r in decoded.repairs if r not in part.repairs)
        part.tables.append(build_tables(decoded.events, decoded.time_base))  # empties the list as it goes
        part.reached_end = chunk.last
    return part


def load_job(
    path: str, reader: Callable[[str], Profile] = load_profile, captures: Sequence[CaptureSource] = ()
) -> Profile | str:
    """Runs in a pool process: a Profile (merged with the run's graph captures), or the reason the file
    could not be read."""
    try:
        return load_profile(path, captures=captures) if captures else reader(path)
    except (TraceDecodeError, LimitError) as e:
        return str(e)
    except OSError as e:  # gone, unreadable, a symlink loop...
        return f"cannot read the file: {e.strerror or e}"
    except RecursionError:
        return "the file nests JSON too deeply to be read"
    except MemoryError:
        return "out of memory while parsing this file"
    except Exception as e:  # a bug of ours must not take the server down; report it on the file
        log.debug("load failed: %s", traceback.format_exc())
        return f"{type(e).__name__}: {e}"


def warm_up() -> None:
    """Submitted to the pool at start: importing this module (numpy, pandas, msgspec) then
    overlaps TensorBoard's own start-up instead of delaying the first trace."""

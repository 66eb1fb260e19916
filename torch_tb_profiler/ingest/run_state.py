"""What the store knows of each trace file (``FileState``), what run-level routes need of a loaded profile
(``Facts``, kept while the full profile is evicted), and the ``runs`` answer built from them."""

from __future__ import annotations

import concurrent.futures as cf
import posixpath
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from torch_tb_profiler.ingest.budget import Resident
from torch_tb_profiler.ingest.discovery import EXECUTION_DETAILS, TraceFile
from torch_tb_profiler.ingest.names import display
from torch_tb_profiler.ingest.storage import Location
from torch_tb_profiler.model import Profile

if TYPE_CHECKING:  # index_format needs pyarrow, which the plugin runs without (no index then)
    from torch_tb_profiler.ingest.capture_profiles import CaptureProfiles
    from torch_tb_profiler.ingest.index_format import IndexedSummary


@dataclass
class FileState:
    file: TraceFile
    status: str = "pending"  # pending | waiting (still being written) | loading | ready | error
    error: str | None = None
    warnings: list[str] = field(default_factory=list)
    signature: tuple[Any, ...] = ()
    generation: int = 0
    from_index: bool = False  # the profile was read from the persisted index (persist.py), not parsed
    evictions: int = 0  # times its full profile was dropped to keep within the memory budget
    fetching_since: float | None = None  # time.monotonic() when its remote download started (None: none)


@dataclass(frozen=True)
class Facts:
    """What the run-level routes need of a loaded profile, kept while its full profile is evicted."""

    worker: str
    kernels: bool
    memory: bool
    module_view: bool
    comms: bool
    distributed_info: bool
    framework: str | None
    graph_captures: dict[str, Any] | None = None  # the capture merge's report (meta.graph_captures)
    roofline: bool = False  # some FLOPs can be known (analysis/roofline/attribution.has_flops)
    world_size: int | None = None  # distributedInfo's world_size (None: not in the trace)

    @staticmethod
    def of(profile: Profile) -> Facts:
        from torch_tb_profiler.analysis.modules.tree import has_module_view
        from torch_tb_profiler.analysis.roofline.attribution import has_flops

        return Facts(
            worker=profile.worker,
            kernels=bool(len(profile.kernels)),
            memory=bool(len(profile.memory)),
            module_view=has_module_view(profile),
            comms=bool(len(profile.comms)),
            distributed_info=bool(profile.meta.distributed_info),
            framework=profile.meta.framework,
            graph_captures=profile.meta.graph_captures,
            roofline=has_flops(profile),
            world_size=world_size_of(profile.meta.distributed_info),
        )


FINISHED = ("ready", "error")  # a file's statuses once its load has ended


def world_size_of(info: Any) -> int | None:
    """distributedInfo's world_size when it is an integer."""
    w = info.get("world_size") if isinstance(info, dict) else None
    return w if isinstance(w, int) and not isinstance(w, bool) else None


def _shown(loc: Location, path: str) -> str:
    return display(loc.relpath(path))


def run_summary(
    name: str,
    states: list[FileState],
    loc: Location,
    memory: Callable[[FileState], str | None],
    sizes: dict[str, int],
    facts: dict[str, Facts] | None = None,
) -> dict[str, Any]:
    """A run's entry of the runs answer with every file (``run_head`` + ``file_entry``/``file_notes``)."""
    entry = run_head(name, states, facts)
    entry["files"] = [file_entry(s, loc, memory, sizes) for s in states]
    notes = [file_notes(s, loc) for s in states]
    entry["errors"] = [e for errors, _w in notes for e in errors]
    entry["warnings"] = [w for _e, warnings in notes for w in warnings]
    return entry


def run_head(name: str, states: list[FileState], facts: dict[str, Facts] | None = None) -> dict[str, Any]:
    """A run's own fields: its state, progress over all its files, its capture traces."""
    total = len(states)
    done = [s for s in states if s.status in FINISHED]
    ready = sum(1 for s in states if s.status == "ready")
    if len(done) < total:
        state = "loading"
    elif ready == 0:
        state = "error"
    else:
        state = "ready"
    return {
        "name": name,
        "state": state,
        "progress": {
            "files_done": len(done),
            "files_total": total,
            "bytes_done": sum(s.file.info.size for s in done),
            "bytes_total": sum(s.file.info.size for s in states),
        },
        "captures": _captures(states, facts or {}),
        "device_activity": _device_activity(states, facts or {}),
    }


def _device_activity(states: list[FileState], facts: dict[str, Facts]) -> bool | None:
    """Whether the run's loaded profiles have device activity (kernels); None before any has loaded."""
    known = [f.kernels for s in states if (f := facts.get(s.file.info.path)) is not None]
    return any(known) if known else None


def file_entry(
    s: FileState, loc: Location, memory: Callable[[FileState], str | None], sizes: dict[str, int]
) -> dict[str, Any]:
    return {
        "file": _shown(loc, s.file.info.path),
        "worker": s.file.worker,
        "span": s.file.span,
        "size": s.file.info.size,
        "status": s.status,
        "from_index": s.from_index,
        "memory": memory(s),
        "memory_bytes": sizes.get(s.file.info.path),  # estimated bytes while resident
        "evictions": s.evictions,
    }


def file_notes(s: FileState, loc: Location) -> tuple[Sequence[dict[str, Any]], Sequence[dict[str, Any]]]:
    """The file's entries in its run's errors and warnings."""
    if s.status != "error" and not s.warnings and s.fetching_since is None:
        return _NO_NOTES  # the usual file: nothing allocated for it (the runs answer's pages)
    where = {"file": _shown(loc, s.file.info.path), "worker": s.file.worker, "span": s.file.span}
    errors = [{**where, "message": s.error}] if s.status == "error" else []
    warnings = [{**where, "message": w} for w in bounded_messages(s.warnings)]
    since = s.fetching_since
    if s.status == "loading" and since is not None and time.monotonic() - since >= FETCH_STALL_S:
        waited = time.monotonic() - since
        warnings.append(
            {
                **where,
                "message": f"downloading it has not finished after {waited:.0f} s (a stalled endpoint?)",
            }
        )
    return errors, warnings


_NO_NOTES: tuple[Sequence[dict[str, Any]], Sequence[dict[str, Any]]] = ((), ())
FETCH_STALL_S = 30.0  # a download running this long is reported on its file
MAX_FILE_WARNINGS = 50  # warnings listed per file in runs (the rest counted): an answer stays bounded
MAX_MESSAGE_CHARS = 4000


def bounded_messages(messages: list[str]) -> list[str]:
    """At most MAX_FILE_WARNINGS messages of at most MAX_MESSAGE_CHARS each, and how many were left out."""
    out = [
        m if len(m) <= MAX_MESSAGE_CHARS else m[: MAX_MESSAGE_CHARS - 1] + "…"
        for m in messages[:MAX_FILE_WARNINGS]
    ]
    if len(messages) > MAX_FILE_WARNINGS:
        out.append(f"… and {len(messages) - MAX_FILE_WARNINGS} more warnings")
    return out


def _captures(states: list[FileState], facts: dict[str, Facts]) -> dict[str, Any] | None:
    """The run's graph capture traces (discovery.py) and, once its traces are loaded, what their merge
    found: batch sizes, replays matched, why others were not; None for a run without a capture folder."""
    held = {posixpath.basename(c.path) for s in states for c in s.file.captures}
    if not held:
        return None
    reports = [f.graph_captures for s in states if (f := facts.get(s.file.info.path)) and f.graph_captures]
    entries = [c for r in reports for c in r.get("captures", [])]
    traces = sorted({c["file"] for c in entries} or (held - {EXECUTION_DETAILS}))
    return {
        "files": traces,
        "batch_sizes": sorted({c["batch_size"] for c in entries if c.get("batch_size") is not None}),
        "matched_replays": sum(c.get("matched_replays", 0) for c in entries),
        "unmatched": [u for r in reports for u in r.get("unmatched", [])][:20],
        "merged": bool(reports),
    }


class StatusCounts:
    """How many of the store's files are in each status, kept as they change (``set``, ``add``,
    ``remove``, under the store's lock), so that the ``runs`` answer's ``loading`` and ``memory`` cost
    nothing per file: every page of a 50,000-file logdir would otherwise walk every file."""

    def __init__(self) -> None:
        self.by_status: dict[str, int] = {}
        self.version = 0  # changes with every count: what is derived from the files' states is stale

    def add(self, state: FileState) -> None:
        self.by_status[state.status] = self.by_status.get(state.status, 0) + 1
        self.version += 1

    def remove(self, state: FileState) -> None:
        self.by_status[state.status] -= 1
        self.version += 1

    def set(self, state: FileState, status: str) -> None:
        """``state.status = status``, counted."""
        self.remove(state)
        state.status = status
        self.add(state)

    @property
    def unfinished(self) -> int:
        return sum(n for status, n in self.by_status.items() if status not in FINISHED)

    @property
    def ready(self) -> int:
        return self.by_status.get("ready", 0)


class StoreState:
    """The run store's state, as its parts (residency.py, run_queries.py) see it: RunStore.__init__ sets
    every attribute (loading.py says what each holds)."""

    location: Location | None
    resident: Resident
    _lock: threading.RLock
    _files: dict[str, FileState]  # by path
    _counts: StatusCounts  # of _files' statuses
    _run_heads: dict[str, bytes]  # run -> its run_head as JSON, for the runs pages (run_queries.py)
    _run_heads_key: tuple[int, int]  # (the tree, the counts' version) the kept heads are of
    _profiles: dict[str, Profile]  # by path: the resident full profiles
    _facts: dict[str, Facts]
    _summaries: dict[str, IndexedSummary]
    _answers: dict[str, dict[str, Any]]
    _reloading: dict[str, cf.Future[Profile]]
    _background: threading.local
    _held: dict[str, list[Any]]
    _room: threading.Condition
    _seen_nbytes: dict[str, int]
    _serving: threading.local
    _index: dict[tuple[str, str, str], str]  # (run, worker, span) -> path
    _tree: RunTree  # _index by run and worker
    _scan_error: str | None
    _scan_warnings: list[str]
    _captures: CaptureProfiles  # the runs' graph capture traces opened on their own (the Trace view's link)


class RunTree:
    """The scan's (run, worker, span) -> path keys grouped by run and worker, built once per scan, so that
    the routes' lookups cost the files of one run (or less), not of the logdir."""

    def __init__(self) -> None:
        self.runs: dict[str, dict[str, list[tuple[str, str]]]] = {}  # run -> worker -> [(span, path)]
        self.count = 0
        self.names: list[str] = []  # the runs by name
        self.starts: list[int] = []  # each run's first file's place among the logdir's files
        self.flat: dict[str, list[str]] = {}  # run -> its files' paths by worker, then span

    @staticmethod
    def of(index: dict[tuple[str, str, str], str]) -> RunTree:
        tree = RunTree()
        for (run, worker, span), path in index.items():
            tree.runs.setdefault(run, {}).setdefault(worker, []).append((span, path))
        for workers in tree.runs.values():
            for spans in workers.values():
                spans.sort(key=lambda sp: int(sp[0]))
        tree.runs = {r: dict(sorted(w.items())) for r, w in sorted(tree.runs.items())}
        tree.count = len(index)
        tree.names = list(tree.runs)
        tree.flat = {r: [p for spans in w.values() for _s, p in spans] for r, w in tree.runs.items()}
        at = 0
        for workers in tree.runs.values():
            tree.starts.append(at)
            at += sum(len(spans) for spans in workers.values())
        return tree

    def first_key(self, run: str) -> tuple[str, str, str] | None:
        """The file a run opens on: its first worker's first span (by name, as ``min`` of the keys)."""
        workers = self.runs.get(run)
        if not workers:
            return None
        worker = next(iter(workers))
        return (run, worker, min(s for s, _p in workers[worker]))

    def paths(self, run: str) -> list[tuple[str, str, str]]:
        """(worker, span, path) of every file of the run, by worker then span (as sorted keys)."""
        return [
            (w, s, p)
            for w, spans in self.runs.get(run, {}).items()
            for s, p in sorted(spans, key=lambda x: x[0])
        ]

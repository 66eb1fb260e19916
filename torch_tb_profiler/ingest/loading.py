"""Loading: trace files -> Profiles, in the background, with progress and errors per run.

``RunStore`` owns the state the HTTP routes read: runs, their files, loaded profiles, progress and
errors. A scanner thread rescans the logdir every ``interval`` seconds; settled new or changed files
are parsed in a bounded process pool (never more processes than cores); deleted files disappear; a
failed file is retried when it changes. Requests only read snapshots and are never blocked by loading.
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
import os
import posixpath
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from torch_tb_profiler.ingest.budget import Resident, limit_arenas
from torch_tb_profiler.ingest.capture_profiles import CaptureProfiles
from torch_tb_profiler.ingest.captures import capture_sources
from torch_tb_profiler.ingest.discovery import Scanner, TraceFile
from torch_tb_profiler.ingest.errors import NotFound
from torch_tb_profiler.ingest.names import display
from torch_tb_profiler.ingest.parse import CaptureSource, load_profile
from torch_tb_profiler.ingest.persist import IndexStore
from torch_tb_profiler.ingest.pool import ParserPool
from torch_tb_profiler.ingest.private_dir import fingerprint
from torch_tb_profiler.ingest.residency import Residency
from torch_tb_profiler.ingest.run_queries import RunQueries
from torch_tb_profiler.ingest.run_state import Facts, FileState, RunTree, StatusCounts, world_size_of
from torch_tb_profiler.ingest.storage import Location, StorageError, local_copy, resolve
from torch_tb_profiler.model import Profile
from torch_tb_profiler.trace.decode import TraceDecodeError

if TYPE_CHECKING:  # index_format needs pyarrow, which the plugin runs without (no index then)
    from torch_tb_profiler.ingest.index_format import IndexedSummary

__all__ = ["RunStore", "load_profile"]  # load_profile (parse.py): the one-file entry point, re-exported

log = logging.getLogger(__name__)

DEFAULT_INTERVAL_S = 5.0
# keys of Profile.cache: the fingerprint (private_dir.fingerprint) and local path of the file it was parsed from
SOURCE_FINGERPRINT, SOURCE_LOCAL = "source.fingerprint", "source.local"
SCAN_STALL_S = float(
    os.environ.get("TORCH_PROFILER_SCAN_STALL_S", "") or 30.0
)  # a listing this slow is reported


class RunStore(Residency, RunQueries):
    """The runs of one logdir: scanning, loading jobs, the persisted index; the memory budget's side is
    ``Residency`` (residency.py), the routes' answers ``RunQueries`` (run_queries.py)."""

    def __init__(
        self,
        logdir: str,
        interval: float = DEFAULT_INTERVAL_S,
        processes: int | None = None,
        settle_seconds: float = 2.0,
        location: Location | None = None,
        index: IndexStore | None = None,
        on_indexed: Callable[[Profile], None] | None = None,
        on_loaded: Callable[[Profile], None] | None = None,
        memory_budget: int | None = None,
    ) -> None:
        self.logdir = logdir
        # full profiles kept in memory, least recently used dropped past the budget (budget.py; None: all)
        self.resident = Resident(memory_budget)
        if memory_budget is not None:
            limit_arenas()
        self.index = index  # persisted index: read before parsing, written after (None: never)
        # called on the loading thread with each profile read from the index, once it is ready (the
        # plugin computes its overview there: a re-opened logdir answers its first request at once)
        self._on_indexed = on_indexed
        # called on the loading thread with every profile once it is ready (parsed or from the index);
        # must return at once (the plugin queues the profile's distributed summary on its own thread)
        self._on_loaded = on_loaded
        self.interval = interval
        self._settle_seconds = settle_seconds
        self._scan_error: str | None = None
        self._scan_warnings: list[str] = []
        self.location: Location | None = location
        self._scanner: Scanner | None = Scanner(location, settle_seconds) if location else None
        self._lock = threading.RLock()
        self._files: dict[str, FileState] = {}  # by path
        self._counts = StatusCounts()  # how many of them in each status (every status change goes through it)
        self._run_heads: dict[str, bytes] = {}  # run_queries.runs_page's per-run heads, as JSON
        self._run_heads_key = (0, -1)
        self._profiles: dict[str, Profile] = {}  # by path: the resident full profiles
        self._facts: dict[str, Facts] = {}  # by path: kept while the full profile is evicted
        # by path: index summaries (index_format.IndexedSummary) of files whose full profile was not read
        # at load (a current index, not the file a run opens on): job views answer from them
        self._summaries: dict[str, IndexedSummary] = {}
        self._reloading: dict[str, cf.Future[Profile]] = {}  # by path: an evicted profile being read again
        self._background = threading.local()  # set on a thread doing work ahead of the user (warmup.py)
        # profiles held by requests in flight (residency.serving): path -> [profile, holders]; they count
        # against the budget until released, are never dropped meanwhile, and are shared, not read again
        self._held: dict[str, list[Any]] = {}
        self._room = threading.Condition(self._lock)  # notified when a held profile is released
        self._seen_nbytes: dict[str, int] = {}  # each file's last estimated size (to make room before a read)
        self._serving = threading.local()  # the paths the current request holds
        # by path: small answers (the overview) kept while the full profile is evicted, until the file changes
        self._answers: dict[str, dict[str, Any]] = {}
        self._opening: dict[str, cf.Future[Profile]] = {}  # by path: whole reads after a summary (_load)
        self._index: dict[tuple[str, str, str], str] = {}  # (run, worker, span) -> path
        self._tree = RunTree()  # the same keys by run and worker, for the routes (linear in files)
        self._scanned = threading.Event()
        self._stop = threading.Event()
        self._idle = threading.Condition(self._lock)
        self._inflight = 0
        cores = os.cpu_count() or 1
        workers = cores if processes is None else max(0, min(processes, cores))
        self.pool = ParserPool(workers)
        self._captures = CaptureProfiles(lambda local: self.pool.parse(local))
        # fetching remote files and waiting on the pool happens on these threads
        self._dispatch = cf.ThreadPoolExecutor(
            max_workers=max(2, workers), thread_name_prefix="profiler-fetch"
        )
        self._thread: threading.Thread | None = None
        # the listing runs on its own thread so that a stalled one is reported (scan_error) within
        # SCAN_STALL_S while it goes on (the backends' timeouts end it: cloud_fs.remote_timeouts)
        self._lister = cf.ThreadPoolExecutor(max_workers=1, thread_name_prefix="profiler-list")
        self._listing: cf.Future[Any] | None = None

    # ---- lifecycle -------------------------------------------------------------------------------
    def _recycle_pool(self, loads_left: int = 0) -> None:
        """After a big file, once nothing (else) loads, renew the pool's processes (``ParserPool.renew``).
        ``loads_left``: the loads that may still be in flight (1 from the parse that just ended: the
        processes go before that load writes its index, while TensorBoard's own process grows)."""
        with self._idle:
            if self._inflight > loads_left:
                return
        self.pool.renew()

    def start(self) -> RunStore:
        self.pool.warm()
        self._thread = threading.Thread(target=self._loop, name="profiler-scan", daemon=True)
        self._thread.start()
        return self

    def close(self, terminate: bool = False) -> None:
        """Stop scanning and loading; ``terminate`` also kills the pool's processes, so that a parse in
        progress cannot hold up the interpreter's exit (it joins executors' workers)."""
        self._stop.set()
        self._dispatch.shutdown(wait=False, cancel_futures=True)
        self._lister.shutdown(wait=False, cancel_futures=True)
        self.pool.close(terminate)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.scan_once()
            except Exception:
                log.exception("logdir scan failed")
            self._stop.wait(self.interval)

    def wait_first_scan(self, timeout: float) -> bool:
        return self._scanned.wait(timeout)

    def wait_idle(self, timeout: float = 60.0) -> bool:
        """Block until no file is being loaded (for tests and the CLI)."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while self._inflight:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
        return True

    # ---- scanning --------------------------------------------------------------------------------
    def _ensure_scanner(self) -> Scanner | None:
        """Resolve the logdir (again) until it works: a missing extra or bad options is a scan error."""
        if self._scanner is None:
            try:
                self.location = resolve(self.logdir)
            except StorageError as e:
                self._scan_error = str(e)
                self._scanned.set()
                return None
            self._scanner = Scanner(self.location, self._settle_seconds)
        return self._scanner

    def scan_once(self) -> None:
        scanner = self._ensure_scanner()
        if scanner is None:
            return
        if self._listing is None:
            self._listing = self._lister.submit(scanner.scan)
        try:
            result = self._listing.result(timeout=SCAN_STALL_S)
        except cf.TimeoutError:  # still listing: say so, look again on the next round
            with self._lock:
                self._scan_error = (
                    f"listing {self.logdir} has not answered for {SCAN_STALL_S:.0f} s (a stalled or "
                    "unreachable endpoint?); still trying, what was loaded is kept"
                )
            self._scanned.set()
            return
        finally:
            if self._listing is not None and self._listing.done():
                self._listing = None
        with self._lock:
            self._scan_error = result.error
            self._scan_warnings = result.warnings
            if result.error is not None:
                self._scanned.set()
                return  # keep what was loaded; retried on the next scan
            present = {f.info.path: f for f in result.files}
            settled = {f.info.path for f in result.settled}
            for path in list(self._files):
                if path not in present:  # deleted
                    self._counts.remove(self._files.pop(path))
                    self._drop(path)
            self._index = {f.key: f.info.path for f in result.files}
            self._tree = RunTree.of(self._index)
            for path, f in present.items():
                state = self._files.get(path)
                signature = (
                    f.info.size,
                    f.info.mtime,
                    f.info.etag,
                    *((c.size, c.mtime, c.etag) for c in f.captures),
                )
                if state is None:
                    state = self._files[path] = FileState(f)
                    self._counts.add(state)
                state.file = f
                for held in (self._profiles.get(path), self._summaries.get(path)):
                    if held is not None:
                        held.run, held.worker, held.span = f.key
                if state.signature == signature and state.status in ("loading", "ready", "error"):
                    continue
                if path not in settled:
                    self._counts.set(state, "waiting")
                    continue
                state.signature = signature
                state.generation += 1
                self._answers.pop(path, None)
                if f.info.problem:  # not a regular file, a broken symlink: never opened
                    self._counts.set(state, "error")
                    state.error, state.warnings = f.info.problem, []
                    self._drop(path)
                    continue
                self._counts.set(state, "loading")
                state.error = None
                self._inflight += 1
                self._dispatch.submit(self._load, path, state.generation)
        self._scanned.set()

    def _load(self, path: str, generation: int) -> None:
        try:
            with self._lock:
                state = self._files.get(path)
                if state is None or state.generation != generation:
                    return
                f = state.file
            if self._summary_only(path, f, generation):
                return
            outcome, index_note, from_index, fetch_failed = self._read(f)
            facts = Facts.of(outcome) if not isinstance(outcome, str) else None
            with self._lock:
                state = self._files.get(path)
                if state is None or state.generation != generation:
                    return  # changed or deleted while loading: a newer load takes over
                if isinstance(outcome, str):
                    self._counts.set(state, "error")
                    state.error, state.warnings = outcome, []
                    state.from_index = False
                    self._drop(path)
                    if fetch_failed:
                        state.signature = ()  # not the file's fault: the next scan fetches it again
                else:
                    outcome.run, outcome.worker, outcome.span = state.file.key
                    outcome.source = path
                    self._counts.set(state, "ready")
                    state.error, state.warnings = None, list(outcome.meta.warnings)
                    state.warnings += [index_note] if index_note else []
                    state.from_index = from_index
                    self._profiles[path] = outcome
                    assert facts is not None
                    self._facts[path] = facts
            self._settle_pending(path, outcome)
            # first what only queues work for other threads (the timeline index), then the slow parts
            if self._on_loaded is not None and not isinstance(outcome, str):
                try:
                    self._on_loaded(outcome)
                except Exception:
                    log.exception("after loading %s", f.info.path)
            if not isinstance(outcome, str):
                if not from_index:
                    self._save_index(f, outcome)
                self._used(path, outcome, loaded=True)
            if from_index and self._on_indexed is not None:
                assert not isinstance(outcome, str)
                try:
                    self._on_indexed(outcome)
                except Exception:
                    log.exception("after reading the index of %s", f.info.path)
        finally:
            self._settle_pending(path, "its load ended early")
            with self._idle:
                self._inflight -= 1
                idle = self._inflight == 0
                self._idle.notify_all()
            if idle:
                self._recycle_pool()

    def _settle_pending(self, path: str, outcome: Profile | str) -> None:
        """Hand the whole read of a file made ready from its summary to the views waiting for it."""
        with self._lock:
            pending = self._opening.pop(path, None)
            if pending is None:
                return
            if self._reloading.get(path) is pending:
                del self._reloading[path]
        if isinstance(outcome, str):
            pending.set_exception(
                NotFound(f"{display(posixpath.basename(path))} could not be read: {outcome}")
            )
        else:
            pending.set_result(outcome)

    def _summary_only(self, path: str, f: TraceFile, generation: int) -> bool:
        """Load a file from its index's summary alone (index_format.loads_summary), when it has a current
        index and is not the file its run opens on (first worker, first span: read whole, for its
        overview). Its full profile is read when a view of that worker asks (``_resident_profile``).
        False when the file must be read whole."""
        if self.index is None or self.location is None:
            return False
        with self._lock:
            run = f.key[0]
            opening = f.key == self._tree.first_key(run)
        try:
            lookup = self.index.load_summary(self.location, f.info, f.captures)
        except Exception as e:  # the index is an optimisation: never let it cost the file
            log.warning("reading the index summary of %s failed: %s", f.info.path, e)
            return False
        summary = lookup.summary
        if summary is None:
            return False  # absent, stale or unreadable: _read says why and parses
        with self._lock:
            state = self._files.get(path)
            if state is None or state.generation != generation:
                return True  # changed or deleted meanwhile: a newer load takes over
            summary.run, summary.worker, summary.span = f.key
            summary.source = path
            self._drop(path)
            self._counts.set(state, "ready")
            state.error, state.warnings = None, list(summary.meta.warnings)
            state.from_index = True
            self._summaries[path] = summary
            facts = summary.facts
            self._facts[path] = Facts(
                worker=summary.worker,
                kernels=facts["kernels"],
                memory=facts["memory"],
                module_view=facts["module"],
                comms=facts["comms"],
                distributed_info=bool(summary.meta.distributed_info),
                framework=summary.meta.framework,
                graph_captures=summary.meta.graph_captures,
                roofline=bool(facts.get("roofline", False)),
                world_size=world_size_of(summary.meta.distributed_info),
            )
            if opening:
                # the file its run opens on: ready now (its overview answer is in the summary), read whole
                # right after by the caller; a view asking meanwhile waits for that read (_resident_profile)
                self._reloading[path] = self._opening[path] = cf.Future()
        return not opening

    def _read(self, f: TraceFile) -> tuple[Profile | str, str | None, bool, bool]:
        """The file's full profile (from its current index, else parsed: the caller writes the index) or
        why not: (profile or error message, index warning, read from the index, fetch failed)."""
        fetch_failed = False
        indexed, index_note = self._from_index(f)
        try:
            assert self.location is not None
            if indexed is not None:
                outcome: Profile | str = indexed
            else:
                local = self._fetch(f)
                identity = fingerprint(local)  # before parsing: a later change shows as a mismatch
                sources, notes = capture_sources(self.location, f.captures) if f.captures else ([], [])
                outcome = self._parse(local, sources)
                if not isinstance(outcome, str):
                    outcome.cache[SOURCE_FINGERPRINT], outcome.cache[SOURCE_LOCAL] = identity, local
                    outcome.meta.warnings.extend(notes)
        except StorageError as e:  # a network blip or credentials: try again on the next scan
            outcome, fetch_failed = str(e), True
        except TraceDecodeError as e:  # no longer a regular file
            outcome = str(e)
        except OSError as e:
            outcome = f"cannot read the file: {e.strerror or e}"
        except Exception as e:  # a broken pool
            outcome = f"{type(e).__name__}: {e}"
        return outcome, index_note, indexed is not None, fetch_failed

    def _fetch(self, f: TraceFile) -> str:
        """The file's local copy; while a remote download runs, its start is on the file's state so that
        the runs answer reports one that stalls (run_state.file_notes)."""
        assert self.location is not None
        state = self._files.get(f.info.path)
        if state is not None and not self.location.is_local:
            state.fetching_since = time.monotonic()
        try:
            return local_copy(self.location, f.info)
        finally:
            if state is not None:
                state.fetching_since = None

    def _from_index(self, f: TraceFile) -> tuple[Profile | None, str | None]:
        """The file's current index, if any, and a warning when an existing one was unusable (its key
        includes the run's capture files, for a trace merged with its graph captures)."""
        if self.index is None or self.location is None:
            return None, None
        try:
            lookup = self.index.load(self.location, f.info, f.captures)
        except Exception as e:  # the index is an optimisation: never let it cost the file
            log.warning("reading the index of %s failed: %s", f.info.path, e)
            return None, None
        if lookup.profile is not None:
            lookup.profile.run, lookup.profile.worker, lookup.profile.span = f.key
            lookup.profile.source = f.info.path
        return lookup.profile, lookup.problem

    def _save_index(self, f: TraceFile, profile: Profile) -> None:
        if self.index is None or self.location is None:
            return
        try:
            self.index.save(self.location, f.info, profile, f.captures)
        except Exception as e:
            log.warning("could not write the index of %s to %s: %s", f.info.path, self.index.url, e)

    def _parse(self, local: str, captures: list[CaptureSource]) -> Profile | str:
        outcome = self.pool.parse(local, captures)
        self._recycle_pool(loads_left=1)
        return outcome

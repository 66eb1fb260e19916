"""Loading: trace files -> Profiles, in the background, with progress and errors per run.

``RunStore`` owns the state the HTTP routes read: runs, their files, loaded profiles, progress and
errors. A scanner thread rescans the logdir every ``interval`` seconds; settled new or changed files
are parsed in a bounded process pool (never more processes than cores); deleted files disappear; a
failed file is retried when it changes. Requests only read snapshots and are never blocked by loading.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import dataclasses
import logging
import multiprocessing
import os
import posixpath
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from torch_tb_profiler.ingest.budget import Resident, profile_nbytes, release_freed_memory
from torch_tb_profiler.ingest.discovery import Scanner, TraceFile
from torch_tb_profiler.ingest.errors import Ambiguous, NotFound
from torch_tb_profiler.ingest.names import display
from torch_tb_profiler.ingest.parse import load_job, load_profile, warm_up
from torch_tb_profiler.ingest.parse_split import head_job, new_jobdir, tail_job, tail_start
from torch_tb_profiler.ingest.persist import IndexStore
from torch_tb_profiler.ingest.private_dir import fingerprint
from torch_tb_profiler.ingest.storage import Location, StorageError, local_copy, resolve
from torch_tb_profiler.model import Profile
from torch_tb_profiler.trace import chunks
from torch_tb_profiler.trace.decode import TraceDecodeError

if TYPE_CHECKING:  # index_format needs pyarrow, which the plugin runs without (no index then)
    from torch_tb_profiler.ingest.index_format import IndexedSummary

__all__ = ["RunStore", "load_profile"]  # load_profile (parse.py): the one-file entry point, re-exported

log = logging.getLogger(__name__)

DEFAULT_INTERVAL_S = 5.0
# keys of Profile.cache: the fingerprint (private_dir.fingerprint) and local path of the file it was parsed from
SOURCE_FINGERPRINT, SOURCE_LOCAL = "source.fingerprint", "source.local"


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

    @staticmethod
    def of(profile: Profile) -> Facts:
        from torch_tb_profiler.analysis.modules.tree import has_module_view

        return Facts(
            worker=profile.worker,
            kernels=bool(len(profile.kernels)),
            memory=bool(len(profile.memory)),
            module_view=has_module_view(profile),
            comms=bool(len(profile.comms)),
            distributed_info=bool(profile.meta.distributed_info),
            framework=profile.meta.framework,
        )


RECYCLE_AFTER_BYTES = 64 << 20  # JSON text of a file after which the pool's processes are renewed


class RunStore:
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
        self._profiles: dict[str, Profile] = {}  # by path: the resident full profiles
        self._facts: dict[str, Facts] = {}  # by path: kept while the full profile is evicted
        # by path: index summaries (index_format.IndexedSummary) of files whose full profile was not read
        # at load (a current index, not the file a run opens on): job views answer from them
        self._summaries: dict[str, IndexedSummary] = {}
        self._reloading: dict[str, cf.Future[Profile]] = {}  # by path: an evicted profile being read again
        self._background = threading.local()  # set on a thread doing work ahead of the user (warmup.py)
        # by path: small answers (the overview) kept while the full profile is evicted, until the file changes
        self._answers: dict[str, dict[str, Any]] = {}
        self._opening: dict[str, cf.Future[Profile]] = {}  # by path: whole reads after a summary (_load)
        self._index: dict[tuple[str, str, str], str] = {}  # (run, worker, span) -> path
        self._scanned = threading.Event()
        self._stop = threading.Event()
        self._idle = threading.Condition(self._lock)
        self._inflight = 0
        cores = os.cpu_count() or 1
        workers = cores if processes is None else max(0, min(processes, cores))
        self._workers = workers
        self._warm: cf.Future[None] | None = None
        self._pool_lock = threading.Lock()
        self._pool = self._new_pool()
        self._pool_dirty = False  # it parsed a big file since it started (see _recycle_pool)
        # fetching remote files and waiting on the pool happens on these threads
        self._dispatch = cf.ThreadPoolExecutor(
            max_workers=max(2, workers), thread_name_prefix="profiler-fetch"
        )
        self._thread: threading.Thread | None = None

    # ---- lifecycle -------------------------------------------------------------------------------
    def _new_pool(self) -> cf.Executor:
        if self._workers == 0:
            return cf.ThreadPoolExecutor(max_workers=1, thread_name_prefix="profiler-load")
        ctx = multiprocessing.get_context("spawn")  # TensorBoard is multi-threaded: never fork it
        return cf.ProcessPoolExecutor(max_workers=self._workers, mp_context=ctx)

    def _recycle_pool(self, loads_left: int = 0) -> None:
        """After a big file, once nothing (else) loads, let the pool's processes exit: an idle process
        that parsed 500 MB of JSON keeps ~250 MB resident (freed objects stay in its heap). The next
        parse starts a fresh process (~1 s of imports), which only happens when new files arrive.
        ``loads_left``: the loads that may still be in flight (1 from the parse that just ended: the
        processes go before that load writes its index, while TensorBoard's own process grows)."""
        with self._idle:
            if self._inflight > loads_left:
                return
        with self._pool_lock:
            if not self._pool_dirty or self._workers == 0:
                return
            old, self._pool, self._pool_dirty = self._pool, self._new_pool(), False
        old.shutdown(wait=False)  # what was submitted still runs; the processes exit when done

    def start(self) -> RunStore:
        if self._workers:
            # one process imports while TensorBoard starts; loads wait for it, so a lone file does not
            # start a second process (~100 MB) - more start on demand when several files wait
            self._warm = self._submit(warm_up)
        self._thread = threading.Thread(target=self._loop, name="profiler-scan", daemon=True)
        self._thread.start()
        return self

    def close(self, terminate: bool = False) -> None:
        """Stop scanning and loading; ``terminate`` also kills the pool's processes, so that a parse in
        progress cannot hold up the interpreter's exit (it joins executors' workers)."""
        self._stop.set()
        self._dispatch.shutdown(wait=False, cancel_futures=True)
        if terminate:
            for process in list((getattr(self._pool, "_processes", None) or {}).values()):
                with contextlib.suppress(Exception):
                    process.terminate()
        self._pool.shutdown(wait=False, cancel_futures=True)

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
        result = scanner.scan()
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
                    del self._files[path]
                    self._drop(path)
            self._index = {f.key: f.info.path for f in result.files}
            for path, f in present.items():
                state = self._files.get(path)
                signature = (f.info.size, f.info.mtime, f.info.etag)
                if state is None:
                    state = self._files[path] = FileState(f)
                state.file = f
                for held in (self._profiles.get(path), self._summaries.get(path)):
                    if held is not None:
                        held.run, held.worker, held.span = f.key
                if state.signature == signature and state.status in ("loading", "ready", "error"):
                    continue
                if path not in settled:
                    state.status = "waiting"
                    continue
                state.signature = signature
                state.generation += 1
                self._answers.pop(path, None)
                if f.info.problem:  # not a regular file, a broken symlink: never opened
                    state.status, state.error, state.warnings = "error", f.info.problem, []
                    self._drop(path)
                    continue
                state.status = "loading"
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
                    state.status, state.error, state.warnings = "error", outcome, []
                    state.from_index = False
                    self._drop(path)
                    if fetch_failed:
                        state.signature = ()  # not the file's fault: the next scan fetches it again
                else:
                    outcome.run, outcome.worker, outcome.span = state.file.key
                    outcome.source = path
                    state.status, state.error, state.warnings = "ready", None, list(outcome.meta.warnings)
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
            opening = f.key == min(k for k in self._index if k[0] == run)
        try:
            lookup = self.index.load_summary(self.location, f.info)
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
            state.status, state.error, state.warnings = "ready", None, list(summary.meta.warnings)
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
                local = local_copy(self.location, f.info)
                identity = fingerprint(local)  # before parsing: a later change shows as a mismatch
                outcome = self._parse(local)
                if not isinstance(outcome, str):
                    outcome.cache[SOURCE_FINGERPRINT], outcome.cache[SOURCE_LOCAL] = identity, local
        except StorageError as e:  # a network blip or credentials: try again on the next scan
            outcome, fetch_failed = str(e), True
        except TraceDecodeError as e:  # no longer a regular file
            outcome = str(e)
        except OSError as e:
            outcome = f"cannot read the file: {e.strerror or e}"
        except Exception as e:  # a broken pool
            outcome = f"{type(e).__name__}: {e}"
        return outcome, index_note, indexed is not None, fetch_failed

    # ---- the memory budget -----------------------------------------------------------------------
    def _drop(self, path: str) -> None:
        """Forget a file's profile and facts (deleted, failed); call with the lock held."""
        self._profiles.pop(path, None)
        self._facts.pop(path, None)
        self._answers.pop(path, None)
        self._summaries.pop(path, None)
        self.resident.discard(path)

    def _used(self, path: str, profile: Profile, loaded: bool = False) -> None:
        """Record a use of a resident profile (its size now, cache included) and drop the least recently
        used others past the budget. A request still holding a dropped profile keeps it alive until
        it answers; the next request reads it again. ``loaded``: just loaded by the scan, not asked
        for: it ranks as the least recently used, so loading never evicts a profile a user opened (it
        is dropped itself when there is no room)."""
        self.resident.touch(path, profile_nbytes(profile), recent=not loaded)
        dropped = self.resident.over_budget()
        if not dropped:
            return
        with self._lock:
            gone = [self._profiles.pop(key, None) for key in dropped]
            for key, held in zip(dropped, gone, strict=True):
                if held is not None and (state := self._files.get(key)):
                    state.evictions += 1
        gone.clear()  # the last references (unless a request still uses one): freed here
        release_freed_memory()
        log.info("memory budget: dropped %d profile(s) (%s)", len(dropped), ", ".join(dropped))

    @contextlib.contextmanager
    def in_background(self) -> Iterator[None]:
        """Work ahead of the user on this thread (warmup.py): under a budget, its lookups only see
        resident profiles (an evicted one is NotFound: not read again to be warmed) and do not count as
        uses, so warming never evicts the profile a user is looking at."""
        self._background.on = True
        try:
            yield
        finally:
            self._background.on = False

    def _resident_profile(self, path: str, keep: bool = True) -> Profile:
        """The full profile of a ready file: resident, or read again (index, else parse) when evicted.
        Concurrent requests for one evicted file share one read. ``keep=False`` (job-level views, which
        go through every worker): under a budget, a profile read again is not kept and a resident one is
        not marked used, so a pass over the job does not evict the worker the user is looking at."""
        background = self.resident.budget is not None and getattr(self._background, "on", False)
        keep = (keep and not background) or self.resident.budget is None
        with self._lock:
            profile = self._profiles.get(path)
            state = self._files.get(path)
            if profile is None and background:
                raise NotFound(f"{display(posixpath.basename(path))} is evicted: not read again ahead of use")
            if profile is None and (state is None or state.status != "ready"):
                raise NotFound(f"{display(posixpath.basename(path))} is not loaded")
            pending = self._reloading.get(path) if profile is None else None
            owner = profile is None and pending is None
            if owner:
                assert state is not None
                pending = self._reloading[path] = cf.Future()
                f, generation = state.file, state.generation
        if profile is not None:
            if keep:
                self._used(path, profile)
            return profile
        assert pending is not None
        if not owner:
            profile = pending.result()
            with self._lock:
                kept = self._profiles.get(path) is profile
            if keep and kept:
                self._used(path, profile)
            return profile
        try:
            outcome, note, from_index, _failed = self._read(f)
            if isinstance(outcome, str):
                raise NotFound(f"{display(posixpath.basename(path))} could not be read again: {outcome}")
            if not from_index:
                self._save_index(f, outcome)  # the next read of it is a fast one
            with self._lock:
                state = self._files.get(path)
                outcome.run, outcome.worker, outcome.span = f.key
                outcome.source = path
                if state is not None and state.generation == generation and keep:
                    self._profiles[path] = outcome
                    if note:  # its index's tables were unreadable (the summary was fine): parsed instead
                        state.warnings.append(note)
                    state.from_index = state.from_index and from_index
            pending.set_result(outcome)
        except BaseException as e:
            pending.set_exception(e)
            raise
        finally:
            with self._lock:
                self._reloading.pop(path, None)
        log.info("memory budget: read %s again%s", path, "" if keep else " (not kept: a job-level view)")
        if keep:
            self._used(path, outcome)
        return outcome

    def _from_index(self, f: TraceFile) -> tuple[Profile | None, str | None]:
        """The file's current index, if any, and a warning when an existing one was unusable."""
        if self.index is None or self.location is None:
            return None, None
        try:
            lookup = self.index.load(self.location, f.info)
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
            self.index.save(self.location, f.info, profile)
        except Exception as e:
            log.warning("could not write the index of %s to %s: %s", f.info.path, self.index.url, e)

    def _submit(self, fn: Any, *args: Any) -> cf.Future[Any]:
        """Submit to the pool; a process it starts meanwhile does not re-run TensorBoard's main script."""
        with _main_script_hidden(), self._pool_lock:
            return self._pool.submit(fn, *args)

    def _parse(self, local: str) -> Profile | str:
        """A big file is split between two pool processes (parse_split.py); others take one."""
        chunk = chunks.CHUNK_BYTES
        if (chunks.text_size(local) or 0) >= RECYCLE_AFTER_BYTES:
            self._pool_dirty = True
        first_tail = tail_start(local, chunk) if self._workers >= 2 else None
        if first_tail is None:
            if self._warm is not None:
                self._warm.result()  # a lone file does not start a second process while the first warms
            outcome = self._submit(load_job, local).result()
        else:  # a split file wants two processes anyway: submitting now starts the second one at once
            jobdir = new_jobdir()
            try:
                head = self._submit(head_job, local, jobdir, first_tail, chunk)
                self._submit(tail_job, local, jobdir, first_tail, chunk)
                outcome = head.result()
            finally:
                shutil.rmtree(jobdir, ignore_errors=True)
        self._recycle_pool(loads_left=1)
        return outcome

    # ---- queries (all answer from a consistent snapshot, without waiting on loads) ---------------
    def runs(self) -> list[dict[str, Any]]:
        with self._lock:
            by_run: dict[str, list[FileState]] = {}
            sizes = self.resident.sizes()
            for state in self._files.values():
                by_run.setdefault(state.file.run, []).append(state)
            out = []
            for name in sorted(by_run):
                states = sorted(by_run[name], key=lambda s: (s.file.worker, int(s.file.span)))
                assert self.location is not None
                out.append(_run_summary(name, states, self.location, self._memory_state, sizes))
            return out

    def _memory_state(self, state: FileState) -> str | None:
        """'resident', 'summary' (only its index summary was read: the full profile is read when a view of
        that worker asks), 'evicted' (dropped for the memory budget; read again on use) or None (not ready)."""
        path = state.file.info.path
        if state.status != "ready":
            return None
        if path in self._profiles:
            return "resident"
        return "summary" if path in self._summaries and not state.evictions else "evicted"

    def memory(self) -> dict[str, Any]:
        """The budget and the estimated bytes of the resident full profiles (budget.py)."""
        with self._lock:
            resident = len(self._profiles)
            evicted = sum(1 for s in self._files.values() if s.status == "ready") - resident
        return {
            "budget_bytes": self.resident.budget,
            "resident_bytes": self.resident.total,
            "resident_files": resident,
            "evicted_files": evicted,
        }

    @property
    def scan_error(self) -> str | None:
        return self._scan_error

    @property
    def scan_warnings(self) -> list[str]:
        """What the last listing skipped (a directory it could not list, a symlink loop...)."""
        return list(self._scan_warnings)

    def run_names(self) -> list[str]:
        with self._lock:
            return sorted({s.file.run for s in self._files.values()})

    def profiles_of_run(self, run: str) -> list[Profile]:
        """Every loaded profile of the run (evicted ones read again: for tests and the CLI, not routes)."""
        with self._lock:
            self._require_run(run)
            paths = [
                path for (r, _w, _s), path in sorted(self._index.items()) if r == run and path in self._facts
            ]
        out = []
        for path in paths:
            with contextlib.suppress(NotFound):
                out.append(self._resident_profile(path, keep=False))
        return out

    def facts_of_run(self, run: str) -> list[Facts]:
        """What the run-level routes need of each loaded profile of the run (resident or evicted)."""
        with self._lock:
            self._require_run(run)
            return [
                dataclasses.replace(fact, worker=w) if fact.worker != w else fact
                for (r, w, _s), path in sorted(self._index.items())
                if r == run and (fact := self._facts.get(path))
            ]

    def workers(self, run: str) -> list[str]:
        with self._lock:
            self._require_run(run)
            return sorted({w for (r, w, _s) in self._index if r == run})

    def spans(self, run: str, worker: str) -> list[str]:
        with self._lock:
            self._require_run(run)
            spans = sorted((s for (r, w, s) in self._index if r == run and w == worker), key=int)
            if not spans:
                raise NotFound(f"run '{run}' has no worker '{worker}'")
            return spans

    def get_profile(self, run: str, worker: str, span: str | None) -> Profile:
        return self._resident_profile(self._ready_path(run, worker, span))

    def kept_answer(self, run: str, worker: str, span: str | None, name: str) -> Any:
        """A small answer kept for a ready file (``keep_answer``) or stored in its index summary; None
        when there is none (the caller computes it from the profile)."""
        path = self._ready_path(run, worker, span)
        with self._lock:
            kept = self._answers.get(path, {}).get(name)
            if kept is None and (summary := self._summaries.get(path)) is not None:
                kept = getattr(summary, "answers", {}).get(name)
            return kept

    def keep_answer(self, profile: Profile, name: str, data: Any) -> None:
        """Keep a small answer computed from a resident profile, for later requests (evicted or not)."""
        with self._lock:
            if self._profiles.get(profile.source) is profile:
                self._answers.setdefault(profile.source, {})[name] = data

    def _ready_path(self, run: str, worker: str, span: str | None) -> str:
        """The path of the file named by run, worker and span, when it is loaded (else NotFound)."""
        with self._lock:
            spans = self.spans(run, worker)
            if span is None or span == "default":
                if len(spans) != 1:
                    raise Ambiguous(f"worker '{worker}' has {len(spans)} spans; choose one with 'span'")
                span = spans[0]
            path = self._index.get((run, worker, span))
            if path is None:
                raise NotFound(
                    f"worker '{worker}' of run '{run}' has no span '{span}' (spans: {', '.join(spans)})"
                )
            state = self._files[path]
            if path not in self._profiles and state.status != "ready":
                if state.status == "error":
                    raise NotFound(f"{display(posixpath.basename(path))} could not be loaded: {state.error}")
                raise NotFound(f"{display(posixpath.basename(path))} is still loading")
        return path

    def job_members(self, run: str, span: str | None) -> list[Profile | IndexedSummary]:
        """One entry per worker of the run for the span (None: each worker's first span) for job-level
        views: its index summary when that holds the distributed figures (no full profile is read), else
        its full profile (read again when evicted)."""
        with self._lock:
            picks: list[Profile | IndexedSummary | str] = []
            for worker in self.workers(run):
                spans = self.spans(run, worker)
                path = self._index.get((run, worker, span if span is not None else spans[0]))
                state = self._files.get(path) if path is not None else None
                if path is None or state is None or state.status != "ready":
                    continue
                summary = self._summaries.get(path)
                picks.append(summary if summary is not None and summary.part is not None else path)
        out: list[Profile | IndexedSummary] = []
        for pick in picks:
            if isinstance(pick, str):
                with contextlib.suppress(NotFound):
                    out.append(self._resident_profile(pick, keep=False))
            else:
                out.append(pick)
        summaries = [p for p in out if not isinstance(p, Profile)]
        if summaries:  # their calls tables, decoded in one pass
            from torch_tb_profiler.ingest.index_format import decode_calls

            decode_calls(summaries)
        return out

    def get_run_profiles(self, run: str, span: str | None) -> list[Profile]:
        """One profile per worker of the run for the given span (span None: each worker's only/first span)."""
        with self._lock:
            paths = []
            for worker in self.workers(run):
                spans = self.spans(run, worker)
                chosen = span if span is not None else spans[0]
                path = self._index.get((run, worker, chosen))
                state = self._files.get(path) if path is not None else None
                if path is not None and (path in self._profiles or (state and state.status == "ready")):
                    paths.append(path)
        out = []
        for path in paths:  # evicted ones are read again (one at a time; each may evict the one before)
            with contextlib.suppress(NotFound):
                out.append(self._resident_profile(path, keep=False))
        return out

    def _require_run(self, run: str) -> None:
        if not any(r == run for (r, _w, _s) in self._index):
            raise NotFound(f"no run named '{run}'")


_MAIN_LOCK = threading.Lock()


@contextlib.contextmanager
def _main_script_hidden() -> Iterator[None]:
    """A ``spawn`` child runs the parent's ``__main__`` file again (as ``__mp_main__``) before its job.
    Under TensorBoard that file is the ``tensorboard`` console script, whose imports cost a pool process
    about a second and 50 MB; our jobs need nothing from it. Processes start synchronously inside
    ``submit``, so hiding ``__main__.__file__`` around it is enough (the lock makes it safe across our
    dispatch threads; nothing else reads it at run time)."""
    main = sys.modules.get("__main__")
    with _MAIN_LOCK:
        path = getattr(main, "__file__", None)
        if main is None or path is None or getattr(main, "__spec__", None) is not None:
            yield
            return
        del main.__file__
        try:
            yield
        finally:
            main.__file__ = path


def _shown(loc: Location, path: str) -> str:
    return display(loc.relpath(path))


def _run_summary(
    name: str,
    states: list[FileState],
    loc: Location,
    memory: Callable[[FileState], str | None],
    sizes: dict[str, int],
) -> dict[str, Any]:
    total = len(states)
    done = [s for s in states if s.status in ("ready", "error")]
    errors = [
        {
            "file": _shown(loc, s.file.info.path),
            "worker": s.file.worker,
            "span": s.file.span,
            "message": s.error,
        }
        for s in states
        if s.status == "error"
    ]
    warnings = [
        {"file": _shown(loc, s.file.info.path), "worker": s.file.worker, "span": s.file.span, "message": w}
        for s in states
        for w in s.warnings
    ]
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
        "files": [
            {
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
            for s in states
        ],
        "errors": errors,
        "warnings": warnings,
    }

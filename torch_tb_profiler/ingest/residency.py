"""The memory budget's side of the run store: which full profiles stay in memory, least recently used
dropped past the budget (budget.py), and an evicted profile read again (index, else parse) on use.
``Residency`` is a part of ``RunStore`` (loading.py), on its state and lock."""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import logging
import posixpath
import time
from collections.abc import Iterator

from torch_tb_profiler.ingest.budget import profile_nbytes, release_freed_memory
from torch_tb_profiler.ingest.errors import NotFound
from torch_tb_profiler.ingest.names import display
from torch_tb_profiler.ingest.run_state import StoreState
from torch_tb_profiler.model import Profile

log = logging.getLogger(__name__)

READ_PEAK_FACTOR = 2  # reading a profile (the index's bytes, Arrow buffers, the frames) vs. keeping it
ADMISSION_WAIT_S = 30.0  # the longest a request waits for room in the budget before reading anyway


class Residency(StoreState):
    """The memory budget's methods of RunStore; they use RunStore's ``_read(file)`` (a file's full
    profile) and ``_save_index(file, profile)``."""

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
        nbytes = profile_nbytes(profile)
        self.resident.touch(path, nbytes, recent=not loaded)
        with self._lock:
            self._seen_nbytes[path] = nbytes
            pinned = set(self._held)
        self._evict(self.resident.over_budget(pinned))

    def _evict(self, dropped: list[str]) -> None:
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
    def serving(self) -> Iterator[None]:
        """One request (plugin.wsgi_app): the profiles it gets are held until it has answered. Under a
        budget, requests in flight may hold distinct profiles only as far as their sizes (with the
        caches they had grown, as last estimated) fit the budget: a request for another one waits (at
        most ADMISSION_WAIT_S) while other requests hold profiles (its own count too: they are in
        memory), until they are released, so memory is bounded however many clients ask
        at once. A held profile is never dropped (that would free nothing while it is used) and a request
        for an evicted profile another request still holds gets that one, never a second copy."""
        outer = getattr(self._serving, "paths", None)
        self._serving.paths = [] if outer is None else outer
        try:
            yield
        finally:
            if outer is None:
                paths, self._serving.paths = self._serving.paths, None
                self._release(paths)

    def _admit(self, path: str) -> None:
        """Reserve ``path`` for this request (call without the lock); waits for room as ``serving`` says."""
        mine = getattr(self._serving, "paths", None)
        if mine is None or path in mine:
            return
        budget = self.resident.budget
        deadline = time.monotonic() + ADMISSION_WAIT_S
        with self._room:
            while budget is not None:
                # profiles another request holds (also when this one shares them): they stay in memory
                # until that request answers, so they are what waiting can free
                others = [p for p, (_profile, count) in self._held.items() if count > (p in mine)]
                if path in self._held or not others:
                    break
                guess = max(self._seen_nbytes.values(), default=0)  # a file never read yet: the largest
                need = self._seen_nbytes.get(path, guess)
                if path not in self._profiles:  # to be read again: reading peaks at about twice its size
                    need *= READ_PEAK_FACTOR
                if sum(self._seen_nbytes.get(p, guess) for p in self._held) + need <= budget:
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    log.info("memory budget: %s admitted after %.0f s without room", path, ADMISSION_WAIT_S)
                    break
                self._room.wait(min(left, 1.0))
            held = self._held.setdefault(path, [None, 0])
            held[1] += 1
            mine.append(path)

    def _hold(self, path: str, profile: Profile) -> None:
        """Call with the lock held: the profile a reservation (``_admit``) stands for."""
        held = self._held.get(path)
        if held is not None and held[0] is None:
            held[0] = profile

    def _release(self, paths: list[str]) -> None:
        if not paths:
            return
        freed = False
        with self._lock:
            for path in paths:
                held = self._held.get(path)
                if held is not None:
                    held[1] -= 1
                    if held[1] <= 0:
                        del self._held[path]
                        freed = freed or path not in self._profiles  # dropped while held: gone now
            self._room.notify_all()
            pinned = set(self._held)
        self._evict(self.resident.over_budget(pinned))  # what was kept over budget for them goes now
        if freed:
            release_freed_memory()

    def under_pressure(self) -> bool:
        """A budget that has had to drop profiles: work ahead of the user (warmup.py) waits then."""
        with self._lock:
            return self.resident.budget is not None and any(s.evictions for s in self._files.values())

    def _make_room(self, path: str) -> None:
        """Before reading an evicted profile again under a budget: drop profiles no request holds, to
        fit it (its last estimated size)."""
        if self.resident.budget is None:
            return
        with self._lock:
            need = self._seen_nbytes.get(path, 0)
            pinned = set(self._held)
        self._evict(self.resident.over_budget(pinned, extra=need))

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
        not marked used, so a pass over the job does not evict the worker the user is looking at; it is
        still held by the request like any other (admitted under the budget, counted while the request
        runs, shared with concurrent requests), so job-level reads from many clients stay bounded too."""
        background = self.resident.budget is not None and getattr(self._background, "on", False)
        transient = not keep and self.resident.budget is not None and not background
        keep = (keep and not background) or self.resident.budget is None
        held_here = keep or transient
        if held_here:
            self._admit(path)
        with self._lock:
            profile = self._profiles.get(path)
            shared = self._held.get(path, [None])[0] if held_here else None
            if profile is None and shared is not None:  # evicted while a request holds it: share it
                profile = shared
                if keep:
                    self._profiles[path] = shared
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
            if held_here:
                with self._lock:
                    self._hold(path, profile)
            if keep:
                self._used(path, profile)
            return profile
        assert pending is not None
        if not owner:
            profile = pending.result()
            with self._lock:
                kept = self._profiles.get(path) is profile
                if (keep and kept) or transient:
                    self._hold(path, profile)
            if keep and kept:
                self._used(path, profile)
            return profile
        try:
            if keep:
                self._make_room(path)
            outcome, note, from_index, _failed = self._read(f)
            if isinstance(outcome, str):
                raise NotFound(f"{display(posixpath.basename(path))} could not be read again: {outcome}")
            if not from_index:
                self._save_index(f, outcome)  # the next read of it is a fast one
            with self._lock:
                state = self._files.get(path)
                outcome.run, outcome.worker, outcome.span = f.key
                outcome.source = path
                if transient:
                    self._hold(path, outcome)  # not kept: held (and counted) until the request ends
                if state is not None and state.generation == generation and keep:
                    self._profiles[path] = outcome
                    self._hold(path, outcome)
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
        release_freed_memory()  # the read's own buffers (the index's bytes, Arrow's) are freed by now
        log.info("memory budget: read %s again%s", path, "" if keep else " (not kept: a job-level view)")
        if keep:
            self._used(path, outcome)
        return outcome

"""Background warm-up of the views a user opens after the overview.

The first answer of some views is computed on first use and then kept on the profile (the per-op
table: 0.3 s on a 322 MB trace, 1 s on 1 GB; a 64-worker run's distributed analysis: 4 s). Once the
overview of a profile has been asked for, a background thread asks the other views' first questions
itself, with the parameters the frontend sends, so that opening them later answers from the cache.
It waits while files are loading, handles each profile once, and skips views that do not apply
(their 404). The timeline index alone is also built as soon as the profile a run opens on has loaded
(``prepare_timeline``): the Trace view's first draw then finds it ready. ``analysis/cache.memoized`` makes a request that arrives mid-computation wait for that
computation instead of repeating it.
"""

from __future__ import annotations

import logging
import queue
import threading
from typing import TYPE_CHECKING

from werkzeug.wrappers import Request

from torch_tb_profiler.ingest.errors import LookupFailed
from torch_tb_profiler.views.common import Handler, HttpError

if TYPE_CHECKING:
    from torch_tb_profiler.ingest.loading import RunStore

log = logging.getLogger(__name__)

TIMELINE_REQUEST = "/timeline/tracks"  # builds the timeline index
# (route, extra parameters): the frontend's first request of each view after the overview
WARM_REQUESTS: tuple[tuple[str, dict[str, str]], ...] = (
    ("/operators", {"group_by": "name"}),
    ("/kernels", {"group_by": "name"}),
    ("/memory/stats", {}),
    ("/distributed", {}),
    (TIMELINE_REQUEST, {}),
    ("/modules", {}),
)
_QUEUED = "warmup.queued"
LOAD_WAIT_S = 60.0  # at most this long waiting for loads to finish before warming anyway


class Warmer:
    def __init__(self, store: RunStore, routes: dict[str, Handler]) -> None:
        self._store = store
        self._requests = [(path, routes[path], extra) for path, extra in WARM_REQUESTS if path in routes]
        # (run, worker, span, only these routes or None for all)
        self._queue: queue.Queue[tuple[str, str, str | None, tuple[str, ...] | None]] = queue.Queue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def request(self, run: str, worker: str, span: str | None) -> None:
        """Warm the views of this profile (after its overview was served); cheap, never raises, never waits
        (the overview may have been answered from the index before the full profile is read)."""
        self._put((run, worker, span, None))

    def prepare_timeline(self, run: str, worker: str, span: str | None) -> None:
        """Build this profile's timeline index in the background (it has just loaded); never raises."""
        self._put((run, worker, span, (TIMELINE_REQUEST,)))

    def _put(self, item: tuple[str, str, str | None, tuple[str, ...] | None]) -> None:
        with self._lock:
            self._queue.put(item)
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="profiler-warm", daemon=True)
                self._thread.start()

    def wait(self, timeout: float) -> bool:
        """Block until every requested warm-up is done (for tests)."""
        done = threading.Event()
        threading.Thread(target=lambda: (self._queue.join(), done.set()), daemon=True).start()
        return done.wait(timeout)

    def _loop(self) -> None:
        while True:
            run, worker, span, only = self._queue.get()
            try:
                if only is None:  # loading first: it is what the user waits for...
                    self._store.wait_idle(LOAD_WAIT_S)
                # ...but not for the timeline index (prepare_timeline): the Trace view's first draw waits
                # for it, while the loader may still be writing the persisted index of that same profile
                if only is None and not self._first_time(run, worker, span):
                    continue
                self._warm(run, worker, span, only)
            finally:
                self._queue.task_done()

    def _first_time(self, run: str, worker: str, span: str | None) -> bool:
        """Whether this profile is resident and not warmed yet (marked on the profile itself: a reloaded
        file is warmed again)."""
        try:
            with self._store.in_background():
                profile = self._store.get_profile(run, worker, span)
        except LookupFailed:
            return False
        with self._lock:
            if profile.cache.get(_QUEUED):
                return False
            profile.cache[_QUEUED] = True
        return True

    def _warm(self, run: str, worker: str, span: str | None, only: tuple[str, ...] | None) -> None:
        for path, handler, extra in self._requests:
            if only is not None and path not in only:
                continue
            params = {"run": run, "worker": worker, **extra}
            if span is not None:
                params["span"] = span
            try:
                with self._store.in_background():  # never reads an evicted profile again, nor evicts one
                    handler(Request.from_values(path=path, query_string=params), self._store)
            except (HttpError, LookupFailed):
                pass  # the view does not apply to this profile (no memory records, no kernels...)
            except Exception:  # a bug of ours: the real request will report it; keep warming the rest
                log.exception("warming %s for %s/%s failed", path, run, worker)

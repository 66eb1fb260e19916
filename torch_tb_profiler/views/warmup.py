"""Background warm-up of the views a user opens after the overview.

The first answer of some views is computed on first use and then kept on the profile (the per-op
table: 0.3 s on a 322 MB trace, 1 s on 1 GB; a 64-worker run's distributed analysis: 4 s). Once the
overview of a profile has been asked for, a background thread asks the other views' first questions
itself, with the parameters the frontend sends, so that opening them later answers from the cache.
It waits while files are loading, handles each profile once, and skips views that do not apply
(their 404). ``analysis/cache.memoized`` makes a request that arrives mid-computation wait for that
computation instead of repeating it. (The timeline index of the profile a run opens on is not built
here but by the plugin as soon as that profile is ready: plugin._on_loaded.)
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from werkzeug.wrappers import Request

from torch_tb_profiler.analysis.roofline.attribution import has_flops
from torch_tb_profiler.ingest.errors import LookupFailed
from torch_tb_profiler.views.common import Handler, HttpError

if TYPE_CHECKING:
    from torch_tb_profiler.ingest.loading import RunStore

log = logging.getLogger(__name__)

# (route, extra parameters): the frontend's first request of each view after the overview
WARM_REQUESTS: tuple[tuple[str, dict[str, str]], ...] = (
    ("/operators", {"group_by": "name"}),
    ("/kernels", {"group_by": "name"}),
    ("/memory/stats", {}),
    ("/distributed", {}),
    ("/timeline/tracks", {}),  # builds the timeline index
    ("/modules", {}),
    ("/roofline", {"by": "ops", "limit": "5000"}),
    ("/analysis", {"n": "5"}),
)
# views warmed only where they are listed (the view list's own test, cheap)
ONLY_WHEN: dict[str, Callable[[Any], bool]] = {
    "/roofline": has_flops,
    "/analysis": lambda profile: bool(len(profile.device)),
}
_QUEUED = "warmup.queued"
LOAD_WAIT_S = 60.0  # at most this long waiting for loads to finish before warming anyway


class Warmer:
    def __init__(self, store: RunStore, routes: dict[str, Handler]) -> None:
        self._store = store
        self._requests = [(path, routes[path], extra) for path, extra in WARM_REQUESTS if path in routes]
        self._queue: queue.Queue[tuple[str, str, str | None]] = queue.Queue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def request(self, run: str, worker: str, span: str | None) -> None:
        """Warm the views of this profile (after its overview was served); cheap, never raises, never waits
        (the overview may have been answered from the index before the full profile is read)."""
        with self._lock:
            self._queue.put((run, worker, span))
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
            run, worker, span = self._queue.get()
            try:
                self._store.wait_idle(LOAD_WAIT_S)  # loading first: it is what the user waits for
                # under a budget that drops profiles, warming would compete with the users' requests
                # for the room (its caches grow the profiles, re-read ones would be warmed again)
                if self._store.under_pressure() or not self._first_time(run, worker, span):
                    continue
                self._warm(run, worker, span)
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

    def _warm(self, run: str, worker: str, span: str | None) -> None:
        for path, handler, extra in self._requests:
            params = {"run": run, "worker": worker, **extra}
            if span is not None:
                params["span"] = span
            try:
                with self._store.in_background():  # never reads an evicted profile again, nor evicts one
                    only_when = ONLY_WHEN.get(path)
                    if only_when is not None and not only_when(self._store.get_profile(run, worker, span)):
                        continue
                    handler(Request.from_values(path=path, query_string=params), self._store)
            except (HttpError, LookupFailed):
                pass  # the view does not apply to this profile (no memory records, no kernels...)
            except Exception:  # a bug of ours: the real request will report it; keep warming the rest
                log.exception("warming %s for %s/%s failed", path, run, worker)

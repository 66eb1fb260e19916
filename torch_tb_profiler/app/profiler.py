"""``ProfilerApp``: one logdir's store, its routes and the work done ahead of the user, as the WSGI apps
TensorBoard's plugin and the standalone server mount under ``/data/plugin/pytorch_profiler``."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable
from typing import Any

from werkzeug.wrappers import Request

from torch_tb_profiler.app.settings import ENV_INTERVAL, ENV_PROCESSES, ENV_STORAGE_OPTIONS, Settings
from torch_tb_profiler.app.wsgi import STATIC_DIR, collect_routes, static_app, stop_on_signals, wsgi_app
from torch_tb_profiler.ingest import budget
from torch_tb_profiler.ingest.errors import LookupFailed
from torch_tb_profiler.ingest.loading import DEFAULT_INTERVAL_S, RunStore
from torch_tb_profiler.ingest.persist import IndexUnavailable, open_store
from torch_tb_profiler.model import Profile
from torch_tb_profiler.views import distributed as distributed_view
from torch_tb_profiler.views.warmup import Warmer

log = logging.getLogger(__name__)


class ProfilerApp:
    """Starts scanning ``settings.logdir`` at once; ``apps()`` maps each route path to its WSGI app."""

    def __init__(self, settings: Settings, *, handle_signals: bool = True) -> None:
        interval = settings.scan_interval or float(os.environ.get(ENV_INTERVAL, DEFAULT_INTERVAL_S))
        if settings.storage_options:
            os.environ[ENV_STORAGE_OPTIONS] = settings.storage_options  # storage.resolve reads it
        processes = os.environ.get(ENV_PROCESSES)
        try:
            index = open_store(settings.index_dir)
        except IndexUnavailable as e:
            log.warning("persisted index disabled: %s", e)
            index = None
        memory_budget = budget.configured_budget(settings.memory_budget)
        log.info("memory budget for full profiles: %s", budget.describe(memory_budget))
        self.store = RunStore(
            settings.logdir,
            interval=interval,
            processes=int(processes) if processes else None,
            index=index,
            memory_budget=memory_budget,
            on_indexed=self._prepare_overview,
            on_loaded=self._on_loaded,
        )
        self.routes = collect_routes()
        self.warmer = Warmer(self.store, self.routes)
        self.store.start()
        if handle_signals:
            stop_on_signals(self.store)

    def _opens_on(self, profile: Profile) -> bool:
        """Whether the frontend shows this profile first in its run (first worker, first span). Work done
        ahead of the user is done for that one only: a run of 1024 ranks must not cost 1024 of it."""
        try:
            worker = self.store.workers(profile.run)[0]
            span = self.store.spans(profile.run, worker)[0]
        except LookupFailed:
            return False
        return (profile.worker, profile.span) == (worker, span)

    def _prepare_overview(self, profile: Profile) -> None:
        """A profile read from the index is ready in a fraction of a second: compute what its overview
        needs (kept on the profile) before the user asks; nothing when its index stored the answer."""
        if self._opens_on(profile):
            from torch_tb_profiler.analysis.overview.page import overview

            with contextlib.suppress(LookupFailed):
                if self.store.kept_answer(profile.run, profile.worker, profile.span, "overview") is not None:
                    return
            overview(profile)

    def _on_loaded(self, profile: Profile) -> None:
        """On the loading thread, once a profile is ready: queue its distributed summary; for the profile
        its run opens on, build the timeline index now, before the loader writes the persisted index
        (whose summary computes most views' tables: seconds on a 1 GB trace) or computes the overview.
        In one process they would share the interpreter lock, and the Trace view's first draw waits for
        this index alone (0.3 s for 322 MB of JSON, 0.9 s for 1 GB)."""
        distributed_view.prepare(profile)
        if self._opens_on(profile):
            from torch_tb_profiler.analysis.timeline import index as timeline

            timeline.index(profile)

    def _overview_served(self, request: Request) -> None:
        """The user is looking at this profile: warm its other views in the background."""
        span = request.args.get("span") or None
        self.warmer.request(request.args.get("run", ""), request.args.get("worker", ""), span)

    def apps(self) -> dict[str, Callable[..., Any]]:
        """Route path (``/runs``, ``/assets/*``…) -> WSGI app, relative to the plugin's prefix."""
        apps: dict[str, Callable[..., Any]] = {
            path: wsgi_app(h, self.store, self._overview_served if path == "/overview" else None)
            for path, h in self.routes.items()
        }
        files = static_app(STATIC_DIR)
        apps["/index.html"] = files
        apps["/index.js"] = files
        apps["/assets/*"] = files
        if STATIC_DIR.is_dir():
            for entry in STATIC_DIR.iterdir():
                if entry.is_file():
                    apps.setdefault(f"/{entry.name}", files)
        return apps

    def close(self, terminate: bool = False) -> None:
        self.store.close(terminate=terminate)

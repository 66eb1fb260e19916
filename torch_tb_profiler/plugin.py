"""The TensorBoard plugin: a route table over the views, plus the static frontend.

Routes live under ``/data/plugin/pytorch_profiler/``. Handlers come from the modules listed in
``views.VIEW_MODULES``; this module only wires them up, validates nothing itself and computes nothing.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import logging
import mimetypes
import os
import posixpath
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tensorboard.plugins import base_plugin
from werkzeug.wrappers import Request, Response

from torch_tb_profiler.ingest import budget
from torch_tb_profiler.ingest.errors import Ambiguous, LookupFailed
from torch_tb_profiler.ingest.loading import DEFAULT_INTERVAL_S, RunStore
from torch_tb_profiler.ingest.persist import INDEX_DIR_ENV, IndexUnavailable, open_store
from torch_tb_profiler.model import Profile
from torch_tb_profiler.trace import limits
from torch_tb_profiler.views import VIEW_MODULES
from torch_tb_profiler.views import distributed as distributed_view
from torch_tb_profiler.views.common import Handler, HttpError, error_response, json_response
from torch_tb_profiler.views.warmup import Warmer

log = logging.getLogger(__name__)

PLUGIN_NAME = "pytorch_profiler"
STATIC_DIR = Path(__file__).parent / "static"
ENV_INTERVAL = "TORCH_PROFILER_SCAN_INTERVAL"
ENV_PROCESSES = "TORCH_PROFILER_PROCESSES"
ENV_STORAGE_OPTIONS = "TORCH_PROFILER_STORAGE_OPTIONS"

# the app loads nothing from anywhere but the plugin's own routes (TensorBoard's validator accepts this)
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
    "font-src 'self' data:; connect-src 'self'; object-src 'none'"
)

_FALLBACK_PAGE = """<!doctype html><meta charset="utf-8"><title>PyTorch Profiler</title>
<body><h1>PyTorch Profiler</h1><p>The frontend bundle is missing; the JSON API is at <a href="runs">runs</a>.</p>"""


def collect_routes() -> dict[str, Handler]:
    routes: dict[str, Handler] = {}
    for name in VIEW_MODULES:
        module = importlib.import_module(name)
        for path, handler in module.ROUTES.items():
            if path in routes:
                raise RuntimeError(f"route {path} defined twice ({name})")
            routes[path] = handler
    return routes


def wsgi_app(
    handler: Handler, store: RunStore, served: Callable[[Request], None] | None = None
) -> Callable[..., Any]:
    """The handler as a WSGI app; ``served(request)`` is told of each successful answer."""

    @Request.application
    def app(request: Request) -> Response:
        try:
            with store.serving():  # the profiles it uses are held (and counted) until it has answered
                data = handler(request, store)
        except HttpError as e:
            return error_response(e.status, e.message)
        except LookupFailed as e:
            return error_response(400 if isinstance(e, Ambiguous) else 404, str(e))
        except Exception as e:  # a bug of ours: say so, keep serving
            log.exception("route %s failed", request.path)
            return error_response(500, f"internal error in {request.path}: {type(e).__name__}: {e}")
        if served is not None:
            try:
                served(request)
            except Exception:  # a hook's failure never costs the user the answer
                log.exception("after %s", request.path)
        if isinstance(data, Response):
            return data
        return json_response(data, request=request)

    return app


def static_app(root: Path) -> Callable[..., Any]:
    @Request.application
    def app(request: Request) -> Response:
        rel = request.path.split(f"/{PLUGIN_NAME}/", 1)[-1] or "index.html"
        rel = posixpath.normpath(rel).lstrip("/")
        target = _static_target(root, rel)
        if target is None:
            if rel == "index.html":
                return Response(_FALLBACK_PAGE, mimetype="text/html", headers=_html_headers())
            return error_response(404, f"no such file: {rel}")
        mimetype = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        if target.suffix in (".js", ".mjs"):
            mimetype = "text/javascript"
        headers = _html_headers() if mimetype == "text/html" else {"X-Content-Type-Options": "nosniff"}
        return Response(target.read_bytes(), mimetype=mimetype, headers=headers)

    return app


def _static_target(root: Path, rel: str) -> Path | None:
    """The bundle file a request names, or None: outside the bundle, missing, or not a valid path at all
    (a NUL byte or a name too long make the OS refuse it: that is a 404, not a 500)."""
    if rel.startswith("..") or any(ord(c) < 32 for c in rel):
        return None
    try:
        target = (root / rel).resolve()
        if root.resolve() not in target.parents or not target.is_file():
            return None
    except (OSError, ValueError):
        return None
    return target


def _html_headers() -> dict[str, str]:
    return {"X-Content-Type-Options": "nosniff", "Content-Security-Policy": CONTENT_SECURITY_POLICY}


def _stop_on_signals(store: RunStore) -> None:
    """On SIGTERM/SIGINT, kill the loading processes before TensorBoard's own handler exits: the exit
    joins executor workers, and a parse in progress would otherwise hold it up for its whole length."""
    for number in (signal.SIGTERM, signal.SIGINT):
        try:
            previous = signal.getsignal(number)

            def handler(signum: int, frame: Any, previous: Any = previous) -> None:
                store.close(terminate=True)
                if callable(previous):
                    previous(signum, frame)
                elif previous == signal.SIG_IGN:
                    return
                elif signum == signal.SIGINT:
                    raise KeyboardInterrupt
                else:
                    raise SystemExit(0)

            signal.signal(number, handler)
        except ValueError:  # not the main thread (an embedding app): its own shutdown applies
            return


class TorchProfilerPlugin(base_plugin.TBPlugin):
    plugin_name = PLUGIN_NAME

    def __init__(self, context: base_plugin.TBContext) -> None:
        flags = getattr(context, "flags", None)
        logdir = getattr(context, "logdir", None) or getattr(flags, "logdir", "") or ""
        if not logdir and flags is not None and getattr(flags, "logdir_spec", ""):
            logdir = flags.logdir_spec.split(",")[0].split(":", 1)[-1]  # first dir of name:dir pairs
        interval = getattr(flags, "profiler_scan_interval", None) or float(
            os.environ.get(ENV_INTERVAL, DEFAULT_INTERVAL_S)
        )
        options = getattr(flags, "profiler_storage_options", None)
        if options:
            os.environ[ENV_STORAGE_OPTIONS] = options  # storage.resolve reads it
        processes = os.environ.get(ENV_PROCESSES)
        try:
            index = open_store(getattr(flags, "profiler_index_dir", None))
        except IndexUnavailable as e:
            log.warning("persisted index disabled: %s", e)
            index = None
        memory_budget = budget.configured_budget(getattr(flags, "profiler_memory_budget", None))
        log.info("memory budget for full profiles: %s", budget.describe(memory_budget))
        self.store = RunStore(
            logdir,
            interval=interval,
            processes=int(processes) if processes else None,
            index=index,
            memory_budget=memory_budget,
            on_indexed=self._prepare_overview,
            on_loaded=self._on_loaded,
        )
        self._routes = collect_routes()
        self._warmer = Warmer(self.store, self._routes)
        self.store.start()
        _stop_on_signals(self.store)

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
        self._warmer.request(request.args.get("run", ""), request.args.get("worker", ""), span)

    def get_plugin_apps(self) -> dict[str, Callable[..., Any]]:
        apps: dict[str, Callable[..., Any]] = {
            path: wsgi_app(h, self.store, self._overview_served if path == "/overview" else None)
            for path, h in self._routes.items()
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

    def is_active(self) -> bool:
        self.store.wait_first_scan(timeout=10.0)
        return bool(self.store.run_names())

    def frontend_metadata(self) -> base_plugin.FrontendMetadata:
        return base_plugin.FrontendMetadata(
            es_module_path="/index.js", tab_name="PyTorch Profiler", disable_reload=True
        )


class TorchProfilerLoader(base_plugin.TBLoader):
    """Adds the plugin's flags to TensorBoard and creates the plugin."""

    def define_flags(self, parser: Any) -> None:
        group = parser.add_argument_group(PLUGIN_NAME)
        group.add_argument(
            "--profiler_scan_interval",
            type=float,
            default=None,
            help=f"seconds between rescans of the logdir for new or changed traces "
            f"(default {DEFAULT_INTERVAL_S:g}; env {ENV_INTERVAL})",
        )
        group.add_argument(
            "--profiler_storage_options",
            type=str,
            default=None,
            help=f"JSON object of fsspec storage options for a cloud logdir (env {ENV_STORAGE_OPTIONS})",
        )
        group.add_argument(
            "--profiler_limit",
            action="append",
            default=None,
            metavar="NAME=VALUE",
            help="change a limit on what one trace may cost (repeatable; NAME one of "
            f"{', '.join(limits.LIMITS)}; VALUE a number, sizes may end in k/M/G; see docs/security.md)",
        )
        group.add_argument(
            "--profiler_index_dir",
            type=str,
            default=None,
            help="where the persisted index of parsed traces lives: a folder or URL (s3://bucket/prefix), "
            f"'off' to disable (default: a per-user cache folder; env {INDEX_DIR_ENV})",
        )
        group.add_argument(
            "--profiler_memory_budget",
            type=str,
            default=None,
            metavar="SIZE",
            help="memory for full profiles (500MB, 2GiB, 25%% of RAM, or 'off'): past it the least recently "
            "used are dropped and read again from the index on demand (default: half of RAM; env "
            f"{budget.BUDGET_ENV}; see docs/scale.md)",
        )

    def fix_flags(self, flags: Any) -> None:
        options = getattr(flags, "profiler_storage_options", None)
        if options:
            try:
                if not isinstance(json.loads(options), dict):
                    raise ValueError("not an object")
            except ValueError as e:
                raise base_plugin.FlagsError(
                    f"--profiler_storage_options must be a JSON object: {e}"
                ) from None
        index_dir = getattr(flags, "profiler_index_dir", None)
        if index_dir:
            try:
                open_store(index_dir)
            except IndexUnavailable as e:
                raise base_plugin.FlagsError(f"--profiler_index_dir: {e}") from None
        for assignment in getattr(flags, "profiler_limit", None) or []:
            try:
                limits.set_from_flag(assignment)  # sets the environment: pool processes inherit it
            except ValueError as e:
                raise base_plugin.FlagsError(f"--profiler_limit: {e}") from None
        try:
            budget.configured_budget(getattr(flags, "profiler_memory_budget", None))
        except ValueError as e:
            source = (
                "--profiler_memory_budget"
                if getattr(flags, "profiler_memory_budget", None)
                else budget.BUDGET_ENV
            )
            raise base_plugin.FlagsError(f"{source}: {e}") from None
        interval = getattr(flags, "profiler_scan_interval", None)
        if interval is not None and interval <= 0:
            raise base_plugin.FlagsError("--profiler_scan_interval must be positive")

    def load(self, context: base_plugin.TBContext) -> TorchProfilerPlugin:
        return TorchProfilerPlugin(context)

"""``torch-tb-profiler serve``: ``ProfilerApp``'s routes at the paths TensorBoard gives them
(``/data/plugin/pytorch_profiler/…``, under ``--path-prefix`` when set), the page at ``/``, served by
waitress (docs/architecture.md says why). TensorBoard is never imported on this path."""

from __future__ import annotations

import logging
import platform
import sys
import threading
from collections.abc import Callable, Iterable
from typing import Any

from werkzeug.wrappers import Request, Response

from torch_tb_profiler.app.profiler import ProfilerApp
from torch_tb_profiler.app.settings import Settings
from torch_tb_profiler.app.wsgi import PLUGIN_NAME
from torch_tb_profiler.views.common import error_response, json_response

log = logging.getLogger(__name__)

PLUGIN_PATH = f"/data/plugin/{PLUGIN_NAME}"
DEFAULT_THREADS = 8
WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def normalize_prefix(prefix: str | None) -> str:
    """``"proxy/tb/"`` -> ``"/proxy/tb"``; empty or ``"/"`` -> ``""``. Refuses what is no URL path."""
    text = (prefix or "").strip()
    if any(c in text for c in "?#\\") or any(ord(c) < 33 for c in text):
        raise ValueError(f"--path-prefix must be a URL path, got {prefix!r}")
    parts = [p for p in text.split("/") if p]
    if any(p in (".", "..") for p in parts):
        raise ValueError(f"--path-prefix must not hold '.' or '..': {prefix!r}")
    return "".join(f"/{p}" for p in parts)


class Dispatcher:
    """One WSGI app over the plugin's route table: exact paths, ``/assets/*`` by prefix, ``/`` redirected
    to the page (relative ``Location``, so a proxy's own prefix is kept), ``/server`` saying what serves."""

    def __init__(self, apps: dict[str, WsgiApp], prefix: str = "", facts: Callable[[], dict] | None = None):
        self.prefix = prefix
        self.exact = {p: a for p, a in apps.items() if not p.endswith("/*")}
        self.wild = {p[:-1]: a for p, a in apps.items() if p.endswith("/*")}  # "/assets/" -> app
        self.facts = facts or (lambda: {})

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "") or "/"
        if self.prefix:
            if path != self.prefix and not path.startswith(self.prefix + "/"):
                return error_response(404, f"not under the path prefix {self.prefix}")(
                    environ, start_response
                )
            path = path[len(self.prefix) :] or "/"
        if path == "/":
            query = environ.get("QUERY_STRING", "")
            target = f"{PLUGIN_PATH.lstrip('/')}/index.html" + (f"?{query}" if query else "")
            if not (environ.get("PATH_INFO", "") or "/").endswith("/"):
                target = f"{self.prefix.rsplit('/', 1)[-1]}/{target}"  # "/p" -> "p/data/…"
            return Response(status=302, headers={"Location": target})(environ, start_response)
        if path == "/server":
            return json_response(self.facts(), request=Request(environ))(environ, start_response)
        if path == PLUGIN_PATH or path == PLUGIN_PATH + "/":
            path = PLUGIN_PATH + "/index.html"
        if not path.startswith(PLUGIN_PATH + "/"):
            return error_response(404, f"no such path: {path}")(environ, start_response)
        route = path[len(PLUGIN_PATH) :]
        app = self.exact.get(route)
        if app is None:
            app = next((a for p, a in self.wild.items() if route.startswith(p)), None)
        if app is None:
            return error_response(404, f"no such route: {route}")(environ, start_response)
        return app(environ, start_response)


def server_facts(app: ProfilerApp, logdir: str) -> dict[str, Any]:
    """What ``/server`` answers: asked at any time, so ``tensorboard_imported`` is true the moment any
    route has imported it (the tests ask after every route)."""
    import waitress

    from torch_tb_profiler.trace.version import VERSION

    return {
        "server": "torch-tb-profiler serve",
        "version": VERSION,
        "wsgi_server": f"waitress {getattr(waitress, '__version__', '') or _dist_version('waitress')}",
        "python": platform.python_version(),
        "logdir": logdir,
        "tensorboard_imported": any(
            (m == "tensorboard" or m.startswith("tensorboard.")) and mod is not None  # None: blocked
            for m, mod in list(sys.modules.items())
        ),
    }


def _dist_version(name: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "?"


class Server:
    """A bound waitress server over one ``ProfilerApp``; ``url`` is the page's address."""

    def __init__(
        self,
        settings: Settings,
        host: str = "127.0.0.1",
        port: int = 6006,
        prefix: str = "",
        threads: int = DEFAULT_THREADS,
        handle_signals: bool = True,
    ) -> None:
        from waitress.server import create_server

        self.prefix = normalize_prefix(prefix)
        self.app = ProfilerApp(settings, handle_signals=handle_signals)
        wsgi = Dispatcher(self.app.apps(), self.prefix, lambda: server_facts(self.app, settings.logdir))
        try:
            self.waitress = create_server(
                wsgi,
                host=host,
                port=port,
                threads=threads,
                ident="torch-tb-profiler",
                clear_untrusted_proxy_headers=True,
            )
        except BaseException:
            self.app.close(terminate=True)
            raise
        listening = getattr(self.waitress, "effective_listen", None)
        bound = listening[0][1] if listening else self.waitress.effective_port  # the OS's for --port 0
        shown = f"[{host}]" if ":" in host else host
        self.port = int(bound)
        self.url = f"http://{shown}:{self.port}{self.prefix}/"
        self._thread: threading.Thread | None = None

    def run(self) -> None:
        """Serve until SIGTERM/SIGINT (their handler ends the parser processes, then raises out of the loop).
        waitress's own ``run`` waits up to 5 s for busy request threads; ours waits 1 s (they are daemon
        threads of a read-only server: nothing is lost)."""
        srv = self.waitress
        try:
            srv.asyncore.loop(
                timeout=srv.adj.asyncore_loop_timeout, map=self._map(), use_poll=srv.adj.asyncore_use_poll
            )
        except (SystemExit, KeyboardInterrupt):
            pass
        finally:
            self.close()

    def _map(self) -> dict[Any, Any]:
        srv = self.waitress
        return srv._map if hasattr(srv, "_map") else srv.map  # one socket, or one per address

    def start_background(self) -> None:
        """Serve from a daemon thread (the notebook helper): it ends with the process."""
        self._thread = threading.Thread(target=self.waitress.run, name="torch-tb-profiler-serve", daemon=True)
        self._thread.start()

    def close(self) -> None:
        from waitress import wasyncore

        try:
            self.waitress.task_dispatcher.shutdown(timeout=1)
            wasyncore.close_all(self._map())
        finally:
            self.app.close(terminate=True)

"""The route table as WSGI apps (errors as JSON answers), the static frontend with its headers, and the
signal handlers that end the loading processes first."""

from __future__ import annotations

import importlib
import logging
import mimetypes
import posixpath
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

from werkzeug.wrappers import Request, Response

from torch_tb_profiler.ingest.errors import Ambiguous, LookupFailed
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.views import VIEW_MODULES
from torch_tb_profiler.views.common import Handler, HttpError, error_response, json_response

log = logging.getLogger(__name__)

PLUGIN_NAME = "pytorch_profiler"
STATIC_DIR = Path(__file__).resolve().parents[1] / "static"

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


def stop_on_signals(store: RunStore) -> None:
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

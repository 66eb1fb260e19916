"""``torch_tb_profiler.show(logdir, …)``: the page in a notebook cell. One background server per logdir
and kernel, on 127.0.0.1 (a free port unless ``port`` is given), started on first use and reused after;
its threads are daemon threads and an ``atexit`` hook ends its parser processes, so it stops with the
kernel. Signals stay the kernel's own (an interrupt must not stop the server)."""

from __future__ import annotations

import atexit
import os
import threading
from urllib.parse import urlencode

from torch_tb_profiler.app.settings import Settings, check
from torch_tb_profiler.serve.server import PLUGIN_PATH, Server

PROXY_ENV = "TORCH_PROFILER_NOTEBOOK_PROXY"  # e.g. "/proxy/{port}/" behind jupyter-server-proxy
_servers: dict[str, Server] = {}
_lock = threading.Lock()


def _key(logdir: str) -> str:
    return logdir if "://" in logdir else os.path.realpath(os.path.expanduser(logdir))


def server_for(logdir: str, port: int = 0) -> Server:
    """The running server of this logdir, or a new one (``port`` only matters for a new one)."""
    key = _key(logdir)
    with _lock:
        server = _servers.get(key)
        if server is None:
            settings = Settings(logdir=key)
            check(settings)
            server = Server(settings, host="127.0.0.1", port=port, handle_signals=False)
            server.start_background()
            _servers[key] = server
        return server


def page_url(server: Server, proxy_url: str | None = None, **selection: str | None) -> str:
    """The page's address with the selection in its query string (the frontend reads it); through a
    proxy, ``proxy_url`` (``{port}`` filled in) replaces ``http://127.0.0.1:PORT/``."""
    query = urlencode({k: v for k, v in selection.items() if v})
    base = proxy_url.format(port=server.port) if proxy_url else server.url
    if not base.endswith("/"):
        base += "/"
    return f"{base}{PLUGIN_PATH.lstrip('/')}/index.html" + (f"?{query}" if query else "")


def show(
    logdir: str,
    view: str | None = None,
    run: str | None = None,
    worker: str | None = None,
    span: str | None = None,
    height: int = 800,
    port: int = 0,
    proxy_url: str | None = None,
) -> None:
    if not isinstance(height, int) or isinstance(height, bool) or not 100 <= height <= 10_000:
        raise ValueError(f"height must be a whole number of pixels, 100..10000, got {height!r}")
    server = server_for(str(logdir), port)
    url = page_url(
        server, proxy_url or os.environ.get(PROXY_ENV), view=view, run=run, worker=worker, span=span
    )
    try:
        from IPython.display import IFrame, display
    except ImportError:  # not in a notebook: say where the page is
        print(url)
        return
    display(IFrame(url, width="100%", height=height))


def stop_all() -> None:
    """Stop every server this process started (also run at exit)."""
    with _lock:
        servers = list(_servers.values())
        _servers.clear()
    for server in servers:
        server.close()


atexit.register(stop_all)

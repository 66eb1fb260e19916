"""What every view's HTTP handlers share: parameter parsing, profile lookup, JSON answers.

A view module exposes ``ROUTES: dict[str, Handler]`` (path under the plugin, e.g. ``"/overview"``).
A handler takes ``(request, store)`` and returns plain data (encoded as JSON) or a werkzeug Response.
Raise ``HttpError`` for bad input: it becomes a 400/404 with a message; nothing a user sends may cause
a 500.
"""

from __future__ import annotations

import gzip
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np
import pandas as pd
from werkzeug.wrappers import Request, Response

from torch_tb_profiler.trace.utf8 import utf8_data

if TYPE_CHECKING:
    from torch_tb_profiler.ingest.loading import RunStore
    from torch_tb_profiler.model import Profile

Handler = Callable[[Request, "RunStore"], Any]


class HttpError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def bad_request(message: str) -> HttpError:
    return HttpError(400, message)


def not_found(message: str) -> HttpError:
    return HttpError(404, message)


def param(request: Request, name: str, default: str | None = None) -> str:
    """A required (default None) or optional string parameter."""
    value = request.args.get(name)
    if value is None or value == "":
        if default is None:
            raise bad_request(f"missing query parameter '{name}'")
        return default
    return value


def choice_param(request: Request, name: str, choices: tuple[str, ...], default: str) -> str:
    value = param(request, name, default)
    if value not in choices:
        raise bad_request(f"'{name}' must be one of {', '.join(choices)}; got '{value}'")
    return value


def int_param(request: Request, name: str, default: int | None, lo: int = 0, hi: int = 1 << 31) -> int:
    """An integer parameter in [lo, hi]; required when ``default`` is None."""
    raw = param(request, name, None if default is None else str(default))
    try:
        value = int(raw)
    except ValueError:
        raise bad_request(f"'{name}' must be an integer; got '{raw}'") from None
    if not lo <= value <= hi:
        raise bad_request(f"'{name}' must be between {lo} and {hi}; got {value}")
    return value


def float_param(request: Request, name: str) -> float | None:
    """An optional float (e.g. a time in µs); None when absent."""
    raw = request.args.get(name)
    if raw is None or raw == "":
        return None
    try:
        value = float(raw)
    except ValueError:
        raise bad_request(f"'{name}' must be a number; got '{raw}'") from None
    if not math.isfinite(value):
        raise bad_request(f"'{name}' must be finite; got '{raw}'")
    return value


def rows_containing(table: pd.DataFrame, query: str, columns: tuple[str, ...]) -> pd.DataFrame:
    """The rows where any of ``columns`` (those the table has) contains ``query``, case-insensitively
    (a plain substring, the tables' search box); all rows for an empty query."""
    if not query:
        return table
    needle = query.lower()
    hit = pd.Series(False, index=table.index)
    for column in columns:
        if column in table.columns:
            hit |= table[column].astype(str).str.lower().str.contains(needle, regex=False)
    return table[hit]


def profile_param(request: Request, store: RunStore) -> Profile:
    """The profile named by run, worker and span (span optional when the worker has one)."""
    run = param(request, "run")
    worker = param(request, "worker")
    span = request.args.get("span") or None
    return store.get_profile(run, worker, span)


def _default(obj: Any) -> Any:
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.bool_):
        return bool(obj)
    raise TypeError(f"cannot encode {type(obj).__name__}")


_encoder = msgspec.json.Encoder(enc_hook=_default)


def json_response(data: Any, status: int = 200, request: Request | None = None) -> Response:
    try:
        body = _encoder.encode(data)  # msgspec writes NaN/Infinity as null
    except UnicodeEncodeError:  # a lone surrogate the model did not escape: escape it here, still JSON
        body = _encoder.encode(utf8_data(data))
    headers = {"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"}
    accepts_gzip = request is not None and "gzip" in request.headers.get("Accept-Encoding", "")
    if accepts_gzip and len(body) > 64 * 1024:
        body = gzip.compress(body, compresslevel=1)
        headers["Content-Encoding"] = "gzip"
    return Response(body, status=status, mimetype="application/json", headers=headers)


def error_response(status: int, message: str) -> Response:
    return json_response({"error": message, "status": status}, status=status)

"""The Trace view's route: the trace file itself, with GPU counter tracks added, ready for Perfetto."""

from __future__ import annotations

import gzip
import posixpath
import re

import msgspec
from werkzeug.wrappers import Request, Response

from torch_tb_profiler.analysis.trace_counters import counter_events
from torch_tb_profiler.loading import RunStore
from torch_tb_profiler.trace.decode import read_bytes
from torch_tb_profiler.views.common import HttpError, profile_param

_EVENTS_ARRAY = re.compile(rb'"traceEvents"\s*:\s*\[')


def with_counters(data: bytes, counters: list[dict]) -> bytes:
    """The trace bytes with the counter events spliced in at the start of the event array."""
    if not counters:
        return data
    encoded = msgspec.json.encode(counters)[1:-1]  # the events without the surrounding brackets
    match = _EVENTS_ARRAY.search(data)
    if match is not None:
        at = match.end()
    elif data.lstrip()[:1] == b"[":  # a bare top-level event array
        at = data.index(b"[") + 1
    else:
        return data
    rest = data[at:].lstrip()
    separator = b"" if rest[:1] == b"]" else b","
    return data[:at] + encoded + separator + data[at:]


def trace(request: Request, store: RunStore) -> Response:
    profile = profile_param(request, store)
    try:
        data = read_bytes(profile.source)
    except OSError as e:
        raise HttpError(404, f"the trace file is no longer readable: {e}") from None
    body = gzip.compress(with_counters(data, counter_events(profile)), compresslevel=1)
    name = posixpath.basename(profile.source)
    if name.endswith(".gz"):
        name = name[:-3]
    headers = {
        "Content-Disposition": f'attachment; filename="{name}.gz"',
        "X-Content-Type-Options": "nosniff",
    }
    return Response(body, mimetype="application/gzip", headers=headers)


ROUTES = {"/trace": trace}

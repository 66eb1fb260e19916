"""Worker names for the trace files PyTorch Lightning's ``PyTorchProfiler`` writes.

Lightning (2.x) exports one trace per stage through ``tensorboard_trace_handler(dirpath, worker)`` with
``worker = "<stage>-[<filename>-][<local rank>-]<action>"``, e.g.
``fit-perf-[Strategy]SingleDeviceStrategy.training_step.1796081280690249986.pt.trace.json``, in
``dirpath`` (by default the logger's ``lightning_logs/version_N``). Its stage is ``fit``,
``validate``, ``test`` or ``predict``; its action the step hook that triggered the export. Such a
worker is shown as ``<stage>.<hook>`` (``fit.training_step``, ``fit.validation_step`` for the
validation inside ``fit``, ``test.test_step``), with ``.rank<k>`` appended when Lightning wrote a
rank; the ``filename`` part is dropped.
"""

from __future__ import annotations

import re

LIGHTNING_WORKER = re.compile(
    r"^(?P<stage>fit|validate|test|predict|sanity_check)-(?:.*?-)??(?:(?P<rank>\d+)-)?"
    r"\[[A-Za-z_]\w*\]\w+\.(?P<hook>\w+_step)$"
)


def lightning_worker(worker: str) -> str:
    """The readable name of a Lightning trace's worker part; any other name unchanged."""
    m = LIGHTNING_WORKER.match(worker)
    if m is None:
        return worker
    name = f"{m.group('stage')}.{m.group('hook')}"
    return f"{name}.rank{m.group('rank')}" if m.group("rank") else name

"""Worker names for the trace files PyTorch Lightning's ``PyTorchProfiler`` writes.

Lightning (2.x) exports one trace per stage through ``tensorboard_trace_handler(dirpath, worker)`` with
``worker = "<stage>-[<filename>-][<local rank>-]<action>"``, e.g.
``fit-perf-[Strategy]SingleDeviceStrategy.training_step.1796081280690249986.pt.trace.json``, in
``dirpath`` (by default the logger's ``lightning_logs/version_N``). Its stage is ``fit``,
``validate``, ``test`` or ``predict``; its action the step hook that triggered the export. Such a
worker is shown as ``[<filename>.]<stage>.<hook>[.rank<k>]``: ``perf.fit.training_step``,
``perf.fit.validation_step`` (the validation inside ``fit``), ``test.test_step`` (no filename),
``perf.fit.training_step.rank1`` (Lightning writes the local rank when the world size is above 1). The
filename is kept so that two profilers writing into one folder stay two sets of workers. Digits
before the action are read as the rank: a filename ending in ``-<digits>`` is ambiguous in
Lightning's own naming.
"""

from __future__ import annotations

import re

LIGHTNING_WORKER = re.compile(
    r"^(?P<stage>fit|validate|test|predict|sanity_check)-(?:(?P<filename>.*?)-)??(?:(?P<rank>\d+)-)?"
    r"\[[A-Za-z_]\w*\]\w+\.(?P<hook>\w+_step)$",
    re.DOTALL,
)
RANK_SUFFIX = re.compile(r"\.rank\d+$")


def lightning_worker(worker: str) -> str:
    """The readable name of a Lightning trace's worker part; any other name unchanged."""
    m = LIGHTNING_WORKER.match(worker)
    if m is None:
        return worker
    name = f"{m.group('stage')}.{m.group('hook')}"
    if m.group("filename"):
        name = f"{m.group('filename')}.{name}"
    return f"{name}.rank{m.group('rank')}" if m.group("rank") else name


SHOWN_WORKER = re.compile(
    r"^(?:.+\.)?(?:fit|validate|test|predict|sanity_check)\.\w+_step(?:\.rank\d+)?$", re.DOTALL
)


def is_lightning_worker(name: str) -> bool:
    """Whether a worker name is one ``lightning_worker`` gave (``perf.fit.training_step.rank1``)."""
    return bool(SHOWN_WORKER.match(name))

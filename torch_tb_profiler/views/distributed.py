"""Distributed view route: every worker of a run for one span, analysed as one job.

``/distributed?run=&span=&max_rounds=&top=`` (span optional: each worker's only or first span). See
docs/api.md, "Distributed".
"""

from __future__ import annotations

import threading

from werkzeug.wrappers import Request

from torch_tb_profiler.analysis import distributed as D
from torch_tb_profiler.analysis.distributed_matrix import scale_sections
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.views.common import int_param, not_found, param

_RECENT_JOBS = 4
_recent: dict[tuple, tuple[list[D.WorkerComm], dict]] = {}
_recent_lock = threading.Lock()


def job(request: Request, store: RunStore) -> dict:
    run = param(request, "run")
    span = request.args.get("span") or None
    if span == "default":
        span = None
    profiles = store.get_run_profiles(run, span)
    if not profiles:
        raise not_found(f"run '{run}' has no loaded profile" + (f" for span '{span}'" if span else ""))
    # each profile is reduced to a compact summary (memoized on it) before the job is analysed
    max_rounds = int_param(request, "max_rounds", 200, lo=0, hi=100_000)
    top = int_param(request, "top", 5, lo=1, hi=1000)  # named ranks per list of the scale sections
    workers = [D.summarize_worker(p.worker, p) for p in profiles]
    # worker summaries are memoized on their profiles, so identical objects mean an identical job;
    # one job at a time: the background warm-up (warmup.py) and a request may ask for the same one
    key = (tuple(id(w) for w in workers), max_rounds, top)
    with _recent_lock:
        hit = _recent.get(key)
        if hit is not None and all(a is b for a, b in zip(hit[0], workers, strict=True)):
            return hit[1]
        result = D.analyze_job(workers, max_rounds)
        result.update(scale_sections(result, top))
        _recent[key] = (workers, result)
        while len(_recent) > _RECENT_JOBS:
            _recent.pop(next(iter(_recent)))
    return result


ROUTES = {"/distributed": job}

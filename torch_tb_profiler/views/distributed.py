"""Distributed view route: the workers of a run for one span, analysed as one job.

``/distributed?run=&span=&job=&max_rounds=&top=`` (span optional: each worker's only or first span;
job: one of the span's jobs, analysis/distributed/job_split.py, by default the largest). See docs/api.md,
"Distributed".
"""

from __future__ import annotations

import logging
import queue
import threading

from werkzeug.wrappers import Request

from torch_tb_profiler.analysis.distributed import job as D
from torch_tb_profiler.analysis.distributed.job_split import default_job
from torch_tb_profiler.analysis.distributed.matrix import scale_sections
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.model import Profile
from torch_tb_profiler.views.common import int_param, not_found, param

log = logging.getLogger(__name__)

_RECENT_JOBS = 4
_recent: dict[tuple, tuple[list[D.WorkerComm], dict]] = {}
_recent_lock = threading.Lock()


def job(request: Request, store: RunStore) -> dict:
    run = param(request, "run")
    span = request.args.get("span") or None
    if span == "default":
        span = None
    # index summaries where the workers have them (a job of many ranks is served without reading any
    # full profile), else the full profiles
    profiles = store.job_members(run, span)
    if not profiles:
        raise not_found(f"run '{run}' has no loaded profile" + (f" for span '{span}'" if span else ""))
    # each profile is reduced to a compact summary (memoized on it) before the job is analysed
    max_rounds = int_param(request, "max_rounds", 200, lo=0, hi=100_000)
    top = int_param(request, "top", 5, lo=1, hi=1000)  # named ranks per list of the scale sections
    workers, left_out = [], []
    for p in profiles:  # one worker whose figures cannot be made never takes its job down
        try:
            workers.append(D.summarize_worker(p.worker, p))
        except Exception as e:
            log.exception("distributed summary of %s failed", p.source)
            left_out.append(
                f"worker {p.worker} left out: its distributed figures failed ({type(e).__name__}: {e})"
            )
    if not workers:
        raise not_found(f"run '{run}': no worker's distributed figures could be made; " + "; ".join(left_out))
    # the span's workers may be several jobs (Lightning's stages): one is analysed, ``job`` picks it
    found = D.split_jobs(workers)
    name = request.args.get("job")
    if name is None:
        name = default_job(found)
    if name not in dict(found):
        known = ", ".join(repr(n) for n, _ in found)
        raise not_found(
            f"no job '{name}' in run '{run}'" + (f" span '{span}'" if span else "") + f"; jobs: {known}"
        )
    everyone, workers = workers, dict(found)[name]
    # worker summaries are memoized on their profiles, so identical objects mean an identical job;
    # one job at a time: the background warm-up (warmup.py) and a request may ask for the same one
    key = (tuple(id(w) for w in everyone), name, max_rounds, top)
    with _recent_lock:
        hit = _recent.get(key)
        if hit is not None and all(a is b for a, b in zip(hit[0], everyone, strict=True)):
            return hit[1]
        result = D.analyze_job(workers, max_rounds)
        result["warnings"] = [*left_out, *result.get("warnings", [])]
        result.update(scale_sections(result, top))
        result["job"] = name
        result["jobs"] = [{"name": n, "workers": len(ws)} for n, ws in found]
        _recent[key] = (everyone, result)
        while len(_recent) > _RECENT_JOBS:
            _recent.pop(next(iter(_recent)))
    return result


_pending: queue.Queue[Profile] = queue.Queue()
_summarizer: threading.Thread | None = None
_summarizer_lock = threading.Lock()


def prepare(profile: Profile) -> None:
    """Queue the distributed summary of a just-loaded profile (RunStore's ``on_loaded``; returns at once).

    A job's first answer needs every rank's summary (~0.1 s each on a 2.x NCCL rank): computed one by one
    on request, a 1024-rank job's first answer took 94 s after loading. A background thread computes them
    while the other files load, so the first request only analyses the job. Profiles of a single
    worker without collectives or ``distributedInfo`` are skipped."""
    global _summarizer
    if not (len(profile.comms) or profile.meta.distributed_info):
        return
    _pending.put(profile)
    with _summarizer_lock:
        if _summarizer is None:
            _summarizer = threading.Thread(target=_summarize_loop, name="profiler-distributed", daemon=True)
            _summarizer.start()


def _summarize_loop() -> None:
    while True:
        profile = _pending.get()
        try:
            D.summarize_worker(profile.worker, profile)  # memoized on the profile: the route reuses it
        except Exception:  # the request will report it; keep going with the other profiles
            log.exception("distributed summary of %s failed", profile.source)
        finally:
            del profile
            _pending.task_done()


def wait_prepared(timeout: float) -> bool:
    """Block until every queued summary is done (for tests and benchmarks)."""
    done = threading.Event()
    threading.Thread(target=lambda: (_pending.join(), done.set()), daemon=True).start()
    return done.wait(timeout)


ROUTES = {"/distributed": job}

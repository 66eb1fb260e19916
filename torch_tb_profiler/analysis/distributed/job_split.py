"""Which workers of a run's span form a distributed job, and which of them are the same rank.

A run's span may hold workers that are not ranks of one job: PyTorch Lightning writes one trace per
stage and hook (``perf.fit.training_step``, ``perf.fit.validation_step``, ``perf.test.test_step``...,
model/lightning_names.py), each of them once per rank under DDP. Rules (docs/metrics.md,
"Distributed: jobs and ranks"):

- a worker's rank and world size come from its trace's ``distributedInfo``; a worker without it takes
  the rank its name carries (``rank-3``, ``worker3``), except Lightning's names, whose ``.rank<k>`` is
  Lightning's local rank (it repeats on every node);
- two workers are the same rank when their ranks are equal; Lightning workers without any rank are
  all the one process of a single-device run; any other worker without a rank is a rank of its own;
- when no rank has two workers, the span is one job (named ``""``); otherwise its workers are split by
  role, the worker name without its rank part (``perf.fit.training_step.rank1`` ->
  ``perf.fit.training_step``, ``eval_rank3`` -> ``eval_``), one job per role, named by it.

A job of one worker has no cross-rank figures: ``summary`` leaves it out; the Distributed view still
answers for it (a single rank).
"""

from __future__ import annotations

import re
from typing import TypeVar

from torch_tb_profiler.model.lightning_names import RANK_SUFFIX, is_lightning_worker

RANK_PART = re.compile(r"rank[-_]?\d+|worker[-_]?\d+", re.I)

W = TypeVar("W")


def name_rank_allowed(worker: str) -> bool:
    """Whether the rank in a worker's name may stand for its rank (not Lightning's local rank)."""
    return not is_lightning_worker(worker)


def role(worker: str) -> str:
    """The worker name without its rank part."""
    if is_lightning_worker(worker):
        return RANK_SUFFIX.sub("", worker)
    return RANK_PART.sub("", worker)


def _rank_key(worker: str, rank: int | None) -> tuple[str, str]:
    if rank is not None:
        return ("rank", str(rank))
    if is_lightning_worker(worker):
        return ("single-process", "")
    return ("worker", worker)


def split(workers: list[tuple[str, int | None, W]]) -> list[tuple[str, list[W]]]:
    """(job name, members) for (worker name, rank, member) triples, jobs sorted by name (the one job
    of a span without a shared rank is named ""); members keep their order."""
    keys = [_rank_key(w, r) for w, r, _ in workers]
    if len(set(keys)) == len(keys):
        return [("", [m for _, _, m in workers])]
    jobs: dict[str, list[W]] = {}
    for w, _, m in workers:
        jobs.setdefault(role(w), []).append(m)
    return sorted(jobs.items())


def default_job(jobs: list[tuple[str, list[W]]]) -> str:
    """The job the Distributed view opens on: the one with the most workers, the first by name on a tie."""
    return min(jobs, key=lambda j: (-len(j[1]), j[0]))[0] if jobs else ""

"""The plugin's flags, shared by TensorBoard's loader and ``torch-tb-profiler serve``: one definition,
one check, so both accept and refuse the same values with the same messages."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from typing import Any

from torch_tb_profiler.ingest import budget
from torch_tb_profiler.ingest.loading import DEFAULT_INTERVAL_S
from torch_tb_profiler.ingest.persist import INDEX_DIR_ENV, IndexUnavailable, open_store
from torch_tb_profiler.trace import limits

ENV_INTERVAL = "TORCH_PROFILER_SCAN_INTERVAL"
ENV_PROCESSES = "TORCH_PROFILER_PROCESSES"
ENV_STORAGE_OPTIONS = "TORCH_PROFILER_STORAGE_OPTIONS"


@dataclass(frozen=True)
class Settings:
    """What one app is started with; ``None`` means "the environment variable, else the default"."""

    logdir: str
    scan_interval: float | None = None
    storage_options: str | None = None
    index_dir: str | None = None
    memory_budget: str | None = None
    limits: tuple[str, ...] = ()

    @classmethod
    def from_flags(cls, logdir: str, flags: Any) -> Settings:
        """From parsed flags (an argparse namespace, TensorBoard's or ours; missing attributes are None)."""
        return cls(
            logdir=logdir,
            scan_interval=getattr(flags, "profiler_scan_interval", None),
            storage_options=getattr(flags, "profiler_storage_options", None),
            index_dir=getattr(flags, "profiler_index_dir", None),
            memory_budget=getattr(flags, "profiler_memory_budget", None),
            limits=tuple(getattr(flags, "profiler_limit", None) or ()),
        )


def define_flags(parser: argparse.ArgumentParser | Any) -> None:
    """Add the ``--profiler_*`` flags to a parser or argument group."""
    parser.add_argument(
        "--profiler_scan_interval",
        type=float,
        default=None,
        help=f"seconds between rescans of the logdir for new or changed traces "
        f"(default {DEFAULT_INTERVAL_S:g}; env {ENV_INTERVAL})",
    )
    parser.add_argument(
        "--profiler_storage_options",
        type=str,
        default=None,
        help=f"JSON object of fsspec storage options for a cloud logdir (env {ENV_STORAGE_OPTIONS})",
    )
    parser.add_argument(
        "--profiler_limit",
        action="append",
        default=None,
        metavar="NAME=VALUE",
        help="change a limit on what one trace may cost (repeatable; NAME one of "
        f"{', '.join(limits.LIMITS)}; VALUE a number, sizes may end in k/M/G; see docs/security.md)",
    )
    parser.add_argument(
        "--profiler_index_dir",
        type=str,
        default=None,
        help="where the persisted index of parsed traces lives: a folder or URL (s3://bucket/prefix), "
        f"'off' to disable (default: a per-user cache folder; env {INDEX_DIR_ENV})",
    )
    parser.add_argument(
        "--profiler_memory_budget",
        type=str,
        default=None,
        metavar="SIZE",
        help="memory for full profiles (500MB, 2GiB, 25%% of RAM, or 'off'): past it the least recently "
        "used are dropped and read again from the index on demand (default: half of RAM; env "
        f"{budget.BUDGET_ENV}; see docs/scale.md)",
    )


def check(settings: Settings) -> None:
    """Refuse bad values (``ValueError`` naming the flag); apply the limits, which live in the environment
    so that pool processes inherit them."""
    if settings.storage_options:
        try:
            if not isinstance(json.loads(settings.storage_options), dict):
                raise ValueError("not an object")
        except ValueError as e:
            raise ValueError(f"--profiler_storage_options must be a JSON object: {e}") from None
    if settings.index_dir:
        try:
            open_store(settings.index_dir)
        except IndexUnavailable as e:
            raise ValueError(f"--profiler_index_dir: {e}") from None
    for assignment in settings.limits:
        try:
            limits.set_from_flag(assignment)
        except ValueError as e:
            raise ValueError(f"--profiler_limit: {e}") from None
    try:
        budget.configured_budget(settings.memory_budget)
    except ValueError as e:
        source = "--profiler_memory_budget" if settings.memory_budget else budget.BUDGET_ENV
        raise ValueError(f"{source}: {e}") from None
    if settings.scan_interval is not None and settings.scan_interval <= 0:
        raise ValueError("--profiler_scan_interval must be positive")

"""The ``analyses`` entry of ``summary --json`` (one key per analysis of this family) and the Analysis
view's details beyond it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torch_tb_profiler.analysis.core.cache import memoized
from torch_tb_profiler.analysis.waits import critical_path, idle, launches, queues, sequences, temporal
from torch_tb_profiler.model import Profile

# key -> function of the profile giving that key's plain-JSON value
SECTIONS: dict[str, Callable[[Profile], Any]] = {
    "idle_time": idle.idle_rows,
    "temporal": temporal.temporal_rows,
    "launch": launches.summary,
    "queue": queues.summary,
    "sequences": lambda profile: sequences.sequences(profile),
    "critical_path": critical_path.summary,
}

# key -> function of (profile, sequence length) giving one of the Analysis view's details
DETAILS: dict[str, Callable[[Profile, int], Any]] = {
    "idle_longest": lambda profile, _n: idle.longest(profile),
    "idle_intervals": lambda profile, _n: idle.interval_stats(profile),
    "launch_outliers": lambda profile, _n: launches.outliers(profile),
    "launch_bound": lambda profile, _n: launches.launch_bound_by_step(profile),
    "bandwidth": lambda profile, _n: queues.bandwidth_summary(profile),
    "sequences": lambda profile, n: sequences.sequences(profile, n),
    "critical_path": lambda profile, _n: critical_path.critical_paths(profile),
}


def summary(profile: Profile) -> dict[str, Any]:
    """Every analysis of the family, by key; device figures None on a profile without device activity.
    Cached (the warm-up computes it: views/warmup.py)."""
    if not len(profile.device):
        return {key: None for key in SECTIONS}
    return memoized(profile, "waits.summary", lambda: {key: f(profile) for key, f in SECTIONS.items()})


def details(profile: Profile, sequence_length: int) -> dict[str, Any]:
    """The Analysis view's details by key (the longest idle intervals, the sequences of N kernels…);
    cached per sequence length."""
    return memoized(
        profile,
        f"waits.details.{sequence_length}",
        lambda: {key: f(profile, sequence_length) for key, f in DETAILS.items()},
    )

"""The ``analyses`` entry of ``summary --json``: one key per analysis of this family."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torch_tb_profiler.model import Profile

# key -> function of the profile giving that key's plain-JSON value (each module adds its own)
SECTIONS: dict[str, Callable[[Profile], Any]] = {}


def summary(profile: Profile) -> dict[str, Any]:
    """Every analysis of the family, by key; a key whose analysis failed is None."""
    return {key: compute(profile) for key, compute in SECTIONS.items()}


# key -> function of (profile, sequence length) giving the Analysis view's details beyond the summary
DETAILS: dict[str, Callable[[Profile, int], Any]] = {}


def details(profile: Profile, sequence_length: int) -> dict[str, Any]:
    """The Analysis view's details by key (the longest idle intervals, the sequences of N kernels…)."""
    return {key: compute(profile, sequence_length) for key, compute in DETAILS.items()}

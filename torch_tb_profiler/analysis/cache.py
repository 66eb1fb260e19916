"""Per-profile memo for derived tables (steps, per-op statistics, ...).

Analyses are pure functions of an immutable ``Profile``; what several views need (the device-extended
steps, the per-op time table) is computed once and kept on the profile object itself, so it lives
and dies with the profile.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_ATTR = "_analysis_cache"


def memoized(profile: Any, key: str, compute: Callable[[], T]) -> T:
    """``compute()`` once per (profile, key)."""
    store = getattr(profile, _ATTR, None)
    if store is None:
        store = {}
        try:
            object.__setattr__(profile, _ATTR, store)
        except (AttributeError, TypeError):  # a profile that cannot carry attributes: no caching
            return compute()
    if key not in store:
        store[key] = compute()
    return store[key]

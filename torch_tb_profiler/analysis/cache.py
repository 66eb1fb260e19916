"""Per-profile memo for derived tables (steps, per-op statistics, ...).

Analyses are pure functions of an immutable ``Profile``; what several views need (the device-extended
steps, the per-op time table) is computed once and kept in ``profile.cache``, so it lives and dies
with the profile. Keys are prefixed by the owning module.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def memoized(profile: Any, key: str, compute: Callable[[], T]) -> T:
    """``compute()`` once per (profile, key)."""
    store = getattr(profile, "cache", None)
    if not isinstance(store, dict):
        return compute()
    if key not in store:
        store[key] = compute()
    return store[key]

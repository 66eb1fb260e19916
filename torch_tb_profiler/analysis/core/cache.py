"""Per-profile memo for derived tables (steps, per-op statistics, ...).

Analyses are pure functions of an immutable ``Profile``; what several views need (the device-extended
steps, the per-op time table) is computed once and kept in ``profile.cache``, so it lives and dies
with the profile. Keys are prefixed by the owning module.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_LOCKS_GUARD = threading.Lock()


def memoized(profile: Any, key: str, compute: Callable[[], T]) -> T:
    """``compute()`` once per (profile, key), also when several threads ask at once (a request and the
    background warm-up, warmup.py): the later ones wait for the first one's answer."""
    store = getattr(profile, "cache", None)
    if not isinstance(store, dict):
        return compute()
    if key in store:
        return store[key]
    with _LOCKS_GUARD:
        lock = store.setdefault(("lock", key), threading.Lock())
    with lock:  # nested keys take other locks; a cycle would already be infinite recursion
        if key not in store:
            store[key] = compute()
    return store[key]

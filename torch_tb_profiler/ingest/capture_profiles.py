"""A run's graph capture traces opened as profiles of their own, for the Trace view's link from a replayed
kernel to the launch that captured it (``capture=<file>`` on the per-profile routes, docs/api.md).

A capture is parsed on first use (in the parser pool, as the merge parsed it, so that its rows are the
ones the merge recorded) and kept while it is among the few used last; it is never a run of its own.
"""

from __future__ import annotations

import posixpath
import threading
from collections import OrderedDict
from collections.abc import Callable

from torch_tb_profiler.ingest.errors import NotFound
from torch_tb_profiler.ingest.names import display
from torch_tb_profiler.ingest.storage import FileInfo, Location, local_copy
from torch_tb_profiler.model import Profile

KEPT_CAPTURES = 4  # capture profiles kept in memory (they are small: one capture phase each)


class CaptureProfiles:
    """Capture traces parsed on demand, the last ``KEPT_CAPTURES`` kept (by path and version)."""

    def __init__(self, parse: Callable[[str], Profile | str]) -> None:
        self._parse = parse
        self._kept: OrderedDict[tuple, Profile] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, loc: Location, captures: tuple[FileInfo, ...], file: str, owner: Profile) -> Profile:
        """The profile of the capture trace named ``file`` among the run's capture folder's files."""
        named = [c for c in captures if posixpath.basename(c.path) == file and not c.problem]
        merged = {str(c.get("file")) for c in (owner.meta.graph_captures or {}).get("captures", [])}
        if not named or file not in merged:
            known = ", ".join(sorted(merged)) or "none"
            raise NotFound(f"this profile has no graph capture trace '{display(file)}' (captures: {known})")
        info = named[0]
        key = (info.path, info.size, info.mtime, info.etag)
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                return self._kept[key]
        outcome = self._parse(local_copy(loc, info))
        if isinstance(outcome, str):
            raise NotFound(f"the capture trace {display(file)} could not be loaded: {outcome}")
        outcome.run, outcome.worker, outcome.span = owner.run, owner.worker, owner.span
        with self._lock:
            self._kept[key] = outcome
            while len(self._kept) > KEPT_CAPTURES:
                self._kept.popitem(last=False)
        return outcome

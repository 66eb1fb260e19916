"""Loading: trace files -> Profiles, in the background, with progress and errors per run."""

from __future__ import annotations

from torch_tb_profiler.model import Profile
from torch_tb_profiler.model.build import build_profile
from torch_tb_profiler.trace.decode import decode, read_bytes


def load_profile(path: str, run: str = "", worker: str = "", span: str = "") -> Profile:
    """Parse one local trace file into a Profile (raises TraceDecodeError when unreadable)."""
    return build_profile(decode(read_bytes(path)), run=run, worker=worker, span=span, source=path)

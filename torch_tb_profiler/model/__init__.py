"""The per-trace model: a ``Profile`` of linked column tables, built by ``build_profile``."""

from torch_tb_profiler.model.profile import Profile, TraceMeta

__all__ = ["Profile", "TraceMeta"]

"""Graph replays of one profile (docs/metrics.md, "Graph replays").

The model gives each graph launch call a ``graph_replay`` range that owns the device activities the
launch started (model/graph_replays.py). Here:

- a *replay* is one graph launch call; its *replayed* activities are the device rows linked to it
  (``device.runtime`` is the launch call);
- replayed device time = Σ dur of the replayed activities; its share = replayed / Σ dur of all device
  activities;
- attributed = the part of it that lies on operators (none without a capture trace: the replay range
  holds it), unattributed = replayed − attributed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from torch_tb_profiler.analysis.core.cache import memoized
from torch_tb_profiler.model.graph_replays import GRAPH_REPLAY_CAT, graph_launches

# what the Overview tells a user whose replays are not attributed to operators
HOW_TO_CAPTURE = (
    "To attribute it, profile the graph capture as well (record_shapes=True, with_stack=True) and keep "
    "its trace in capture_traces/ beside this trace, with execution_details.json naming each capture "
    "file, as vLLM's and SGLang's capture profiling writes them."
)


def replayed_mask(profile) -> np.ndarray:
    """Per row of ``device``: started by a graph launch call (cached)."""

    def build() -> np.ndarray:
        dev = profile.device
        if not len(dev):
            return np.zeros(0, dtype=bool)
        is_launch = np.zeros(len(profile.runtimes) + 1, dtype=bool)  # the extra slot stands for -1
        is_launch[graph_launches(profile.runtimes)] = True
        runtime = dev["runtime"].to_numpy(dtype=np.int64)
        return is_launch[np.where(runtime >= 0, runtime, len(profile.runtimes))]

    return memoized(profile, "graphs.replayed", build)


def replay_ops(profile) -> np.ndarray:
    """Per row of ``ops``: a graph replay range."""
    ops = profile.ops
    return (ops["cat"] == GRAPH_REPLAY_CAT).to_numpy() if len(ops) else np.zeros(0, dtype=bool)


def replayed_copies(profile) -> np.ndarray:
    """Per row of ``ops``: a capture-time op copied onto a graph replay (``ops.replay >= 0``)."""
    ops = profile.ops
    if "replay" not in ops.columns:
        return np.zeros(len(ops), dtype=bool)
    return ops["replay"].to_numpy() >= 0


def host_ranges(profile) -> np.ndarray:
    """Per row of ``ops``: a range that ran on the host in this trace (not a copy onto a replay)."""
    return ~replayed_copies(profile)


def replay_stats(profile) -> dict[str, Any]:
    """Replays, replayed device time and how much of it operators hold (µs), cached."""
    return memoized(profile, "graphs.stats", lambda: _stats(profile))


def _stats(profile) -> dict[str, Any]:
    dev = profile.device
    mask = replayed_mask(profile)
    dur = dev["dur"].to_numpy(dtype=np.float64) if len(dev) else np.zeros(0)
    replayed = float(dur[mask].sum())
    total = float(dur.sum())
    on_replay_rows = 0.0
    if mask.any():
        op = dev["op"].to_numpy(dtype=np.int64)[mask]
        held = replay_ops(profile)
        linked = op >= 0
        on_replay_rows = float(dur[mask][linked][held[op[linked]]].sum())
    unattributed = on_replay_rows
    return {
        "replays": int(graph_launches(profile.runtimes).size),
        "replayed_activities": int(mask.sum()),
        "replayed_device_us": replayed,
        "attributed_device_us": replayed - unattributed,
        "unattributed_device_us": unattributed,
        "replayed_share": replayed / total if total > 0 else 0.0,
        "unattributed_share": unattributed / total if total > 0 else 0.0,
    }


def overview_note(profile) -> dict[str, Any] | None:
    """The Overview's word on graph replays: None when the profile has none."""
    stats = replay_stats(profile)
    if not stats["replays"]:
        return None
    pct = 100.0 * stats["unattributed_share"]
    if stats["unattributed_device_us"] > 0:
        text = (
            f"{pct:.1f} % of device time ran in {stats['replays']} graph replay(s) that this trace cannot "
            "attribute to operators: it is shown on 'graph replay' rows. " + HOW_TO_CAPTURE
        )
    else:
        text = (
            f"{stats['replays']} graph replay(s): all their device time is attributed to the operators "
            "that captured them (capture traces merged)."
        )
    return {**stats, "text": text, **merge_report(profile)}


def merge_report(profile) -> dict[str, Any]:
    """What the capture merge said (model meta): the captures matched and why replays were not."""
    merged = profile.meta.graph_captures or {}
    return {"captures": merged.get("captures", []), "unmatched": merged.get("unmatched", [])}

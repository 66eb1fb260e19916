"""PyTorch Lightning: where each step's host time goes among Lightning's hooks.

The hook ranges are the ``hooks`` tree of analysis/modules/tree.py (``[pl][profile]…`` actions). Each
instant of a step's host range goes to the first of these parts whose hook ranges cover it (docs/
metrics.md, "Lightning hooks per step"):

1. ``data_fetching``: the loops' fetch (``…_dataloader_next``, ``…val_next``/``test_next``/
   ``predict_next``) and the batch transfer hooks (``batch_to_device``, ``transfer_batch_to_device``,
   ``on_before_batch_transfer``, ``on_after_batch_transfer``);
2. ``step``: ``training_step``, ``validation_step``, ``test_step``, ``predict_step``;
3. ``backward``: ``backward`` (and the ``on_before_backward``/``on_after_backward`` hooks inside it);
4. ``optimizer``: ``optimizer_step``, ``optimizer_zero_grad``, ``configure_gradient_clipping``,
   ``clip_gradients`` (an ``optimizer_step`` holds the closure that runs training_step and backward:
   those instants went to parts 2 and 3 first);
5. ``callbacks``: ``[Callback]…`` hooks and every other ``on_…`` hook;
6. ``other_hooks``: any other Lightning range (``run_training_batch``...);
7. ``outside_hooks``: the rest of the step.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from torch_tb_profiler.analysis.core.cache import memoized
from torch_tb_profiler.analysis.core.steps import steps as step_table
from torch_tb_profiler.analysis.modules import tree as modules
from torch_tb_profiler.model import intervals as iv

PARTS = ("data_fetching", "step", "backward", "optimizer", "callbacks", "other_hooks", "outside_hooks")

_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "data_fetching",
        re.compile(r"(_dataloader_next|\.(val|test|predict)_next|batch_to_device|_batch_transfer)$"),
    ),
    ("step", re.compile(r"\.(training|validation|test|predict)_step$")),
    ("backward", re.compile(r"\.(backward|on_before_backward|on_after_backward)$")),
    (
        "optimizer",
        re.compile(r"\.(optimizer_step|optimizer_zero_grad|configure_gradient_clipping|clip_gradients)$"),
    ),
    ("callbacks", re.compile(r"^\[Callback\]|\.on_\w+$")),
)


def part_of(hook: str) -> str:
    """The part a hook's displayed name (``[Strategy]S.backward``) belongs to."""
    for part, rule in _RULES:
        if rule.search(hook):
            return part
    return "other_hooks"


def breakdown(profile) -> list[dict[str, Any]]:
    """Per step (host range): number, name, duration_us and ``parts`` (µs per PARTS entry, summing to
    the duration); [] when the profile has no Lightning hooks."""
    return memoized(profile, "lightning.breakdown", lambda: _breakdown(profile))


def _breakdown(profile) -> list[dict[str, Any]]:
    tree = modules.tree(profile, "hooks")
    if not len(tree.nodes):
        return []
    part = np.asarray([part_of(n) for n in tree.nodes["name"]], dtype=object)
    inst = tree.instances
    inst_part = part[inst["node"].to_numpy()]
    st = step_table(profile)
    out = []
    for k, (number, name, lo, hi) in enumerate(
        zip(st["number"], st["name"], st["host_start"], st["host_end"], strict=True)
    ):
        in_step = (inst["step"] == k).to_numpy()
        claimed = iv.EMPTY
        parts: dict[str, float] = {}
        for p in PARTS[:-1]:
            sel = in_step & (inst_part == p)
            ranges = iv.union(inst["ts"].to_numpy()[sel], inst["end"].to_numpy()[sel])
            ranges = iv.subtract(iv.clip(ranges, float(lo), float(hi)), claimed)
            parts[p] = iv.total(ranges)
            claimed = iv.union(
                np.concatenate([claimed[0], ranges[0]]), np.concatenate([claimed[1], ranges[1]])
            )
        parts["outside_hooks"] = max(float(hi - lo) - iv.total(claimed), 0.0)
        out.append({"number": int(number), "name": str(name), "duration_us": float(hi - lo), "parts": parts})
    return out

"""Graph replays in the model: one host range per graph launch call, so that replayed device work has an
owner of its own (docs/metrics.md, "Graph replays").

A CUDA/HIP graph launch (``cudaGraphLaunch``, ``cuGraphLaunch``, ``hipGraphLaunch``, …) starts every
kernel of the graph with one call: each replayed kernel carries that call's correlation id. Linked like
any launch, their device time would land on whatever range encloses the call (a step annotation,
``Torch-Compiled Region``, a user range) as its *device self*. Instead each launch call gets a range of
its own, ``cat = "graph_replay"``, with the call's thread and interval: the op tree places it under the
enclosing range, the launch call and its kernels link to it, and the enclosing range keeps only what it
launched itself.

With a capture trace (analysis/captures/), the ops that launched the graph's kernels at capture time are
copied in (``ReplayMerge``): one copy per replay, on a *replay thread* of the launching thread (its
``tid`` plus " (graph replay)"), each spanning the device time of the replayed kernels it launched (its own
and its descendants'), with ``replay`` = the launch call's row in ``runtimes`` (-1 on every host op). The
replayed kernels link to those copies. A copy ran no host code in this trace: its host times are 0. The
``nn.Module`` ranges that enclosed those ops at capture time are copied the same way into ``python``
(the Module view's tree of the graph).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from torch_tb_profiler.trace.tables import Tables

GRAPH_LAUNCH = re.compile(r"^(cuda|cu|hip)GraphLaunch")
GRAPH_REPLAY_CAT = "graph_replay"
GRAPH_REPLAY_NAME = "graph replay"
REPLAY_THREAD = " (graph replay)"  # appended to the launching thread's tid for the copies' thread


@dataclass
class ReplayMerge:
    """What a capture merge adds to a replay trace's model."""

    ops: pd.DataFrame  # the copies: rows in the raw ops' columns plus ``replay``
    kernel_ops: np.ndarray  # (n, 2) int64: (raw device row, row of ``ops`` that launched it)
    report: dict[str, Any] = field(default_factory=dict)  # captures matched, replays unmatched (meta)
    python: pd.DataFrame | None = None  # copies of the capture's nn.Module ranges, on the replay threads
    # (n, 3) int64: (raw device row, capture index, row of the capture's runtimes that launched it)
    kernel_launches: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), dtype=np.int64))


# what a trace's graph replays ran at capture time, from its tables and its metadata keys (ingest/parse.py)
Merger = Callable[["Tables", dict[str, Any]], "ReplayMerge | None"]


def with_replayed_ops(ops: pd.DataFrame, merge: ReplayMerge | None) -> tuple[pd.DataFrame, np.ndarray]:
    """``ops`` with its ``replay`` column (-1: a host op) and the merge's copies appended; for each copy,
    its row in the returned table (before the op tree sorts it)."""
    ops = ops.assign(replay=np.full(len(ops), -1, dtype=np.int64))
    if merge is None or not len(merge.ops):
        return ops, np.zeros(0, dtype=np.int64)
    copies = merge.ops[list(ops.columns)]
    for column in ("name", "cat", "pid", "tid", "input_dims", "input_types", "concrete_inputs", "call_stack"):
        copies[column] = copies[column].astype(ops[column].dtype)
    rows = np.arange(len(ops), len(ops) + len(copies), dtype=np.int64)
    return pd.concat([ops, copies], ignore_index=True), rows


def graph_launches(runtimes: pd.DataFrame) -> np.ndarray:
    """Rows of ``runtimes`` that launch a graph (tested once per distinct name)."""
    if not len(runtimes):
        return np.zeros(0, dtype=np.int64)
    codes, names = pd.factorize(runtimes["name"].to_numpy())
    is_launch = np.fromiter((bool(GRAPH_LAUNCH.match(str(n))) for n in names), dtype=bool, count=len(names))
    return np.flatnonzero(is_launch[codes]) if len(names) else np.zeros(0, dtype=np.int64)


def replay_name(graph_id: int) -> str:
    """A replay row's name: per graph when its kernels say which graph they belong to."""
    return GRAPH_REPLAY_NAME if graph_id < 0 else f"{GRAPH_REPLAY_NAME} (graph {graph_id})"


def with_replay_ranges(
    ops: pd.DataFrame, runtimes: pd.DataFrame, device: pd.DataFrame
) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """``ops`` with one ``graph_replay`` row appended per graph launch call; the launch calls' rows in
    ``runtimes`` and, for each, the row of its range in the returned table (before the op tree sorts it)."""
    launches = graph_launches(runtimes)
    if not launches.size:
        return ops, launches, launches
    corr = runtimes["corr"].to_numpy()[launches]
    graph_of = _graph_ids(device, corr)
    added = pd.DataFrame(
        {column: _defaults(ops[column], launches.size) for column in ops.columns},
    )
    for column in ("ts", "dur", "end", "pid", "tid"):
        added[column] = runtimes[column].to_numpy()[launches]
    added["cat"] = GRAPH_REPLAY_CAT
    added["name"] = [replay_name(int(g)) for g in graph_of]
    for column in ("name", "cat", "pid", "tid"):
        added[column] = added[column].astype(ops[column].dtype)
    rows = np.arange(len(ops), len(ops) + launches.size, dtype=np.int64)
    return pd.concat([ops, added], ignore_index=True), launches, rows


def _graph_ids(device: pd.DataFrame, corr: np.ndarray) -> np.ndarray:
    """Per launch correlation id: the ``graph id`` its replayed kernels carry (-1 when they carry none)."""
    if not len(device) or "graph_id" not in device.columns:
        return np.full(corr.size, -1, dtype=np.int64)
    by_corr = (
        pd.DataFrame({"corr": device["corr"].to_numpy(), "graph": device["graph_id"].to_numpy()})
        .groupby("corr", sort=False)["graph"]
        .max()
    )
    return by_corr.reindex(corr).fillna(-1).to_numpy().astype(np.int64)


def _defaults(column: pd.Series, n: int) -> np.ndarray:
    """The model's missing value for a column: -1 for ints, NaN for floats, "" for strings."""
    kind = column.dtype.kind if isinstance(column.dtype, np.dtype) else "O"
    if kind in "iu":
        return np.full(n, -1, dtype=column.dtype)
    if kind == "f":
        return np.full(n, np.nan, dtype=column.dtype)
    return np.full(n, "", dtype=object)


def with_replayed_modules(python: pd.DataFrame, merge: ReplayMerge | None) -> pd.DataFrame:
    """The python table with the merge's copies of module ranges appended."""
    if merge is None or merge.python is None or not len(merge.python):
        return python
    copies = merge.python[list(python.columns)].copy()
    for column in ("name", "pid", "tid"):
        copies[column] = copies[column].astype(python[column].dtype)
    return pd.concat([python, copies], ignore_index=True)


def on_replay_thread(tids: np.ndarray) -> np.ndarray:
    """Per thread id: a replay thread (its events are copies of capture-time ranges)."""
    distinct, codes = np.unique(np.asarray(tids, dtype=str), return_inverse=True)
    verdict = np.fromiter((str(t).endswith(REPLAY_THREAD) for t in distinct), dtype=bool, count=len(distinct))
    return verdict[codes] if len(distinct) else np.zeros(0, dtype=bool)

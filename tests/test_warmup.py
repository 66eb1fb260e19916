"""The background warm-up after an overview, and the memo that makes it safe to run beside requests."""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

import pytest

from tests.fixtures.trace_builder import TraceBuilder, busy_trace
from torch_tb_profiler.analysis.core.cache import memoized
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.model import Profile
from torch_tb_profiler.plugin import collect_routes
from torch_tb_profiler.views.warmup import Warmer


def test_memo_computes_once_when_threads_ask_together() -> None:
    class Holder:
        def __init__(self) -> None:
            self.cache: dict = {}

    holder = Holder()
    calls: list[int] = []

    def compute() -> list[int]:
        calls.append(1)
        time.sleep(0.2)  # long enough for the other threads to arrive mid-computation
        return [42]

    answers: list[object] = []
    threads = [
        threading.Thread(target=lambda: answers.append(memoized(holder, "k", compute))) for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    assert len(answers) == 4 and all(a is answers[0] for a in answers)


def _store(logdir: Path) -> RunStore:
    for f in logdir.rglob("*.json*"):
        old = time.time() - 60
        os.utime(f, (old, old))
    store = RunStore(str(logdir), processes=0, settle_seconds=0)
    store.scan_once()
    assert store.wait_idle(60)
    return store


def _profile(store: RunStore, run: str, worker: str) -> Profile:
    return store.get_profile(run, worker, None)


def test_overview_warms_the_other_views(tmp_path: Path) -> None:
    busy_trace(tmp_path / "run" / "w0.pt.trace.json", steps=20)
    busy_trace(tmp_path / "run" / "w1.pt.trace.json", steps=20)
    store = _store(tmp_path)
    try:
        warmer = Warmer(store, collect_routes())
        warmer.request("run", "w0", None)
        assert warmer.wait(60)
        cache = _profile(store, "run", "w0").cache
        assert "operators.table.name" in cache
        assert "kernels.table.name" in cache
        # under the key of the frontend's request, which names the first device
        assert "views.memory.stats:CPU:None:None" in cache
        # the run-level distributed analysis summarised every worker of the run
        assert "distributed.worker.w1" in _profile(store, "run", "w1").cache
        # a later request is answered from what the warm-up computed
        table = cache["operators.table.name"]
        routes = collect_routes()
        from werkzeug.wrappers import Request

        answer = routes["/operators"](Request.from_values(query_string={"run": "run", "worker": "w0"}), store)
        assert answer["total_rows"] == len(table)
        assert cache["operators.table.name"] is table
    finally:
        store.close()


def test_roofline_and_analysis_are_warmed_where_they_apply(tmp_path: Path) -> None:
    from tests.test_roofline import gemm_trace

    (tmp_path / "run").mkdir()
    gemm_trace(tmp_path / "run" / "w0.pt.trace.json")
    b = TraceBuilder()  # a GEMM recorded without shapes: no FLOPs can be known, no Roofline view
    b.step(1, 0, 100)
    ext = b.op("aten::mm", 10, 60)
    b.launch("sm90_xmma_gemm_bf16bf16_bf16f32", 20, 5, 30, 20.0, ext_id=ext)
    b.write(tmp_path / "other" / "w0.pt.trace.json")
    store = _store(tmp_path)
    try:
        warmer = Warmer(store, collect_routes())
        for run in ("run", "other"):
            warmer.request(run, "w0", None)
        assert warmer.wait(60)
        assert any(str(k).startswith("roofline.op_rows") for k in _profile(store, "run", "w0").cache)
        assert not any(str(k).startswith("roofline.op_rows") for k in _profile(store, "other", "w0").cache)
        # the Analysis view's first answer (n = 5), on both: they have device activity
        for run in ("run", "other"):
            cache = _profile(store, run, "w0").cache
            assert "waits.summary" in cache and "waits.details.5" in cache
    finally:
        store.close()


def test_views_that_do_not_apply_are_skipped_quietly(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    b = TraceBuilder()  # host ops only: no kernels, no memory records, one worker
    b.step(1, 0, 1000)
    b.op("aten::add", 10, 100)
    b.write(tmp_path / "run" / "w0.pt.trace.json")
    store = _store(tmp_path)
    try:
        warmer = Warmer(store, collect_routes())
        with caplog.at_level(logging.WARNING, logger="torch_tb_profiler"):
            warmer.request("run", "w0", None)
            assert warmer.wait(60)
        assert "operators.table.name" in _profile(store, "run", "w0").cache
        assert "waits.summary" not in _profile(store, "run", "w0").cache  # no device activity
        assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    finally:
        store.close()


def test_each_profile_is_warmed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    busy_trace(tmp_path / "run" / "w0.pt.trace.json", steps=5)
    store = _store(tmp_path)
    try:
        warmer = Warmer(store, collect_routes())
        warmed: list[tuple] = []
        monkeypatch.setattr(warmer, "_warm", lambda *key: warmed.append(key))
        for _ in range(3):
            warmer.request("run", "w0", None)
        warmer.request("run", "no-such-worker", None)  # unknown: ignored, never raises
        assert warmer.wait(60)
        assert warmed == [("run", "w0", None)]
    finally:
        store.close()


def test_the_timeline_index_of_the_first_profile_is_built_once_it_loads(tmp_path: Path) -> None:
    """Nothing is asked: TensorBoard's plugin builds the index of the profile the page opens on (first
    worker, first span) in the background, so the Trace view's first draw does not wait for it."""
    import argparse

    from tensorboard.plugins import base_plugin

    from torch_tb_profiler.plugin import TorchProfilerPlugin

    busy_trace(tmp_path / "run" / "w0.pt.trace.json", steps=5)
    busy_trace(tmp_path / "run" / "w1.pt.trace.json", steps=5)
    for f in tmp_path.rglob("*.json"):
        os.utime(f, (time.time() - 60, time.time() - 60))
    flags = argparse.Namespace(profiler_index_dir="off", profiler_scan_interval=60.0)
    plugin = TorchProfilerPlugin(base_plugin.TBContext(logdir=str(tmp_path), flags=flags))
    try:
        assert plugin.store.wait_first_scan(30)
        time.sleep(0.1)
        assert plugin.store.wait_idle(60)
        assert plugin._warmer.wait(60)
        assert "timeline.index" in _profile(plugin.store, "run", "w0").cache
        assert "timeline.index" not in _profile(plugin.store, "run", "w1").cache  # not the first worker
        assert "operators.table.name" not in _profile(plugin.store, "run", "w0").cache  # only the timeline
    finally:
        plugin.store.close()

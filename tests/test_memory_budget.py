"""The memory budget for full profiles (ingest/budget.py, RunStore): sizes, the estimate, the LRU's
accounting, and a store that drops and reads profiles again, from the index or by parsing."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.fixtures.trace_builder import TraceBuilder
from tests.test_index import assert_profiles_equal
from torch_tb_profiler.ingest import budget, persist
from torch_tb_profiler.ingest.budget import Resident, frame_nbytes, parse_budget
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.ingest.parse import load_profile


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2GiB", 2 * 2**30),
        ("500MB", 500_000_000),
        ("512M", 512 * 2**20),
        ("1.5 GB", 1_500_000_000),
        ("64kib", 65_536),
        ("1e9", 1_000_000_000),
        ("123", 123),
        ("off", None),
        ("None", None),
    ],
)
def test_sizes(text: str, expected: int | None) -> None:
    assert parse_budget(text) == expected


def test_percentage_is_of_total_memory() -> None:
    assert parse_budget("25%") == budget.total_memory() // 4
    assert budget.default_budget() == budget.total_memory() // 2


@pytest.mark.parametrize("text", ["", "lots", "2 GiBs", "-1GB", "0", "0%", "150%", "1.2.3M"])
def test_bad_sizes_say_what_is_accepted(text: str) -> None:
    with pytest.raises(ValueError, match=r"memory size|positive|percentage"):
        parse_budget(text)


def test_env_var_when_no_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(budget.BUDGET_ENV, "300MB")
    assert budget.configured_budget(None) == 300_000_000
    assert budget.configured_budget("1GiB") == 2**30  # the flag wins
    monkeypatch.delenv(budget.BUDGET_ENV)
    assert budget.configured_budget(None) == budget.default_budget()


def test_frame_estimate_counts_buffers_and_each_distinct_string_once() -> None:
    a, b = "aten::mm" + "x" * 50, "aten::add"
    frame = pd.DataFrame(
        {
            "ts": np.arange(1000, dtype=np.int64),  # 8000 bytes
            "dur": np.ones(1000, dtype=np.float32),  # 4000 bytes
            "name": np.array([a, b] * 500, dtype=object),  # 8000 bytes of pointers + the two strings
        }
    )
    assert frame_nbytes(frame) == 8000 + 4000 + 8000 + sys.getsizeof(a) + sys.getsizeof(b)


def test_lru_accounting() -> None:
    lru = Resident(budget=250)
    lru.touch("a", 100)
    lru.touch("b", 100)
    assert lru.over_budget() == [] and lru.total == 200
    lru.touch("c", 100)  # 300 > 250: the least recently used goes
    assert lru.over_budget() == ["a"]
    assert lru.keys() == ["b", "c"] and lru.total == 200
    lru.touch("b", 100)  # b used again: c is now the oldest
    lru.touch("d", 120)  # 320 > 250
    assert lru.over_budget() == ["c"]
    assert lru.keys() == ["b", "d"] and lru.total == 220
    lru.touch("b", 200)  # b grew (its cache): 320 > 250, d goes although b is the one that grew
    assert lru.over_budget() == ["d"]
    assert lru.keys() == ["b"]
    lru.discard("b")
    assert lru.total == 0


def test_the_profile_in_use_stays_when_it_alone_exceeds_the_budget() -> None:
    lru = Resident(budget=50)
    lru.touch("big", 100)
    assert lru.over_budget() == []
    lru.touch("other", 80)
    assert lru.over_budget() == ["big"]
    assert lru.keys() == ["other"]


def test_a_loaded_profile_never_evicts_one_in_use() -> None:
    lru = Resident(budget=250)
    lru.touch("opened", 100)  # asked for by a request
    lru.touch("loaded1", 100, recent=False)  # loaded by the scan meanwhile: ranks least recent
    assert lru.over_budget() == [] and lru.keys() == ["loaded1", "opened"]
    lru.touch("loaded2", 100, recent=False)  # 300 > 250: the newest load goes, not the one in use
    assert lru.over_budget() == ["loaded2"]
    assert lru.keys() == ["loaded1", "opened"]
    lru.touch("opened", 120, recent=False)  # an existing key keeps its rank
    assert lru.keys() == ["loaded1", "opened"]


def test_no_budget_drops_nothing() -> None:
    lru = Resident(budget=None)
    for key in "abc":
        lru.touch(key, 10**12)
    assert lru.over_budget() == []


def _trace(path: Path, kernels: int) -> Path:
    b = TraceBuilder()
    b.step(1, 0, 10_000)
    for i in range(kernels):
        ext = b.op(f"aten::op_{i % 7}", 10 + i * 5, 4)
        b.launch(f"kernel_{i % 5}", 11 + i * 5, 1, 5000 + i * 3, 2, ext_id=ext)
    b.write(path)
    old = time.time() - 60
    os.utime(path, (old, old))
    return path


@pytest.mark.parametrize("with_index", [True, False], ids=["index", "parse"])
def test_store_drops_least_recently_used_and_reads_it_again(tmp_path: Path, with_index: bool) -> None:
    logdir = tmp_path / "logdir"
    files = {w: _trace(logdir / "job" / f"{w}.pt.trace.json", 300) for w in ("w0", "w1", "w2")}
    index = persist.open_store(str(tmp_path / "index")) if with_index else None
    one = budget.profile_nbytes(load_profile(str(files["w0"])))
    store = RunStore(str(logdir), processes=0, settle_seconds=0, index=index, memory_budget=int(one * 1.5))
    try:
        store.scan_once()
        assert store.wait_idle(60)
        memory = {f["worker"]: f["memory"] for f in store.runs()[0]["files"]}
        assert sorted(memory.values()).count("resident") == 1  # three loaded, room for one
        first = store.get_profile("job", "w0", None)
        assert_profiles_equal(first, load_profile(str(files["w0"]), "job", "w0", first.span))
        store.get_profile("job", "w1", None)
        files_state = {f["worker"]: f for f in store.runs()[0]["files"]}
        assert files_state["w1"]["memory"] == "resident"
        assert files_state["w0"]["memory"] == "evicted" and files_state["w0"]["evictions"] >= 1
        assert files_state["w0"]["status"] == "ready"
        # the dropped one is read again, equal to a fresh parse; a request still holding it is unaffected
        again = store.get_profile("job", "w0", None)
        assert again is not first
        assert_profiles_equal(again, first)
        assert len(first.ops) == len(again.ops) == 301  # the step and its 300 ops
        m = store.memory()
        assert m["budget_bytes"] == int(one * 1.5)
        assert m["resident_files"] == 1 and m["evicted_files"] == 2
        assert one * 0.9 <= m["resident_bytes"] <= one * 1.5
        # job-level answers do not need the full profiles
        facts = store.facts_of_run("job")
        assert [f.worker for f in facts] == ["w0", "w1", "w2"] and all(f.kernels for f in facts)
        # a job-level route that needs every profile reads the evicted ones without keeping them: the
        # worker in use stays resident
        assert [p.worker for p in store.get_run_profiles("job", None)] == ["w0", "w1", "w2"]
        assert store.memory()["resident_files"] == 1
        assert {f["worker"]: f["memory"] for f in store.runs()[0]["files"]}["w0"] == "resident"
    finally:
        store.close()


def test_job_level_reads_wait_for_room_and_share_what_they_hold(tmp_path: Path) -> None:
    """A job-level read (keep=False: the Distributed view's pass over every worker) is admitted under the
    budget like any other: while request A holds w0, request B's pass must read w1 and w2 again and
    there is no room, so it waits until A has answered; what B then holds is counted and shared — a
    request C for w1 meanwhile gets B's copy, not a second read."""
    import threading

    logdir = tmp_path / "logdir"
    for w in ("w0", "w1", "w2"):
        _trace(logdir / "job" / f"{w}.pt.trace.json", 300)
    one = budget.profile_nbytes(load_profile(str(logdir / "job" / "w0.pt.trace.json")))
    store = RunStore(str(logdir), processes=0, settle_seconds=0, memory_budget=int(one * 1.5))
    order: list[str] = []
    a_holds, a_may_go, b_holds, c_done = (threading.Event() for _ in range(4))
    got: dict[str, object] = {}

    def request_a() -> None:
        with store.serving():
            store.get_profile("job", "w0", None)
            a_holds.set()
            a_may_go.wait(20)
            order.append("A answered")

    def request_b() -> None:
        a_holds.wait(20)
        with store.serving():
            got["b"] = store.get_run_profiles("job", None)
            order.append("B read the job")
            b_holds.set()
            c_done.wait(20)

    def request_c() -> None:
        b_holds.wait(20)
        with store.serving():
            got["c"] = store.get_profile("job", "w1", None)
        c_done.set()

    try:
        store.scan_once()
        assert store.wait_idle(60)
        store.get_profile("job", "w1", None)  # w1 resident, so w0 and w2 are evicted
        threads = [threading.Thread(target=f) for f in (request_a, request_b, request_c)]
        for t in threads:
            t.start()
        assert a_holds.wait(20)
        time.sleep(1.5)
        assert order == []  # B waits for room while A holds w0
        a_may_go.set()
        for t in threads:
            t.join(30)
        assert order == ["A answered", "B read the job"]
        b_profiles = got["b"]
        assert [p.worker for p in b_profiles] == ["w0", "w1", "w2"]  # type: ignore[attr-defined]
        assert got["c"] is b_profiles[1]  # type: ignore[index]
        assert store._held == {}  # every hold released with its request
    finally:
        store.close()


@pytest.mark.parametrize(
    ("args", "env", "named"),
    [
        (["--profiler_memory_budget", "lots"], {}, "--profiler_memory_budget"),
        ([], {budget.BUDGET_ENV: "2 GiBs"}, budget.BUDGET_ENV),
    ],
)
def test_tensorboard_refuses_a_malformed_budget_at_start(
    tmp_path: Path, args: list[str], env: dict[str, str], named: str
) -> None:
    exe = Path(sys.executable).with_name("tensorboard")
    done = subprocess.run(
        [str(exe), "--logdir", str(tmp_path), "--port", "0", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert named in done.stderr and "is not a memory size" in done.stderr, done.stderr[-2000:]

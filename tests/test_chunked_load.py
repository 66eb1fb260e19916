"""Reading a file in chunks, and by two processes, gives exactly the Profile of reading it whole."""

from __future__ import annotations

import concurrent.futures as cf
import gzip
import json
import multiprocessing
import os
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from tests.fixtures.paths import shared_trace
from tests.fixtures.trace_builder import TraceBuilder, busy_trace
from torch_tb_profiler.ingest import parse_split
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.ingest.parse import load_profile, load_whole, read_chunks
from torch_tb_profiler.model import Profile
from torch_tb_profiler.trace import chunks
from torch_tb_profiler.trace.chunks import NotChunkable, decoded_chunks, text_size

FRAMES = (
    "ops",
    "runtimes",
    "device",
    "gpu_annotations",
    "python",
    "comms",
    "memory",
    "syncs",
    "flows",
    "steps",
    "others",
    "counters",
)


def assert_same(a: Profile, b: Profile) -> None:
    for name in FRAMES:
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name), obj=name)
    assert vars(a.meta) == vars(b.meta)


@pytest.fixture(params=["modern", "legacy"])
def busy(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    return busy_trace(tmp_path / "w.pt.trace.json.gz", style=request.param)


def test_chunk_rule_cuts_between_events_only(busy: Path) -> None:
    chunks = list(decoded_chunks(str(busy), chunk_bytes=2048))
    assert len(chunks) > 10
    assert [c.last for c in chunks] == [False] * (len(chunks) - 1) + [True]
    whole = load_whole(str(busy))
    assert sum(len(c.decoded.events) for c in chunks) == whole.meta.event_count
    # metadata before the events comes with the first chunk, the profiler span at the end with the last
    assert chunks[0].decoded.top["deviceProperties"][1]["name"] == "GPU B"
    assert chunks[-1].decoded.events[-1].name == "PyTorch Profiler (0)"


@pytest.mark.parametrize("chunk_bytes", [1500, 4096, 50_000])
def test_chunked_profile_equals_whole(busy: Path, chunk_bytes: int) -> None:
    assert_same(load_profile(str(busy), chunk_bytes=chunk_bytes), load_whole(str(busy)))


def test_ranges_of_chunks_join_up(busy: Path) -> None:
    """Two readers that split the chunks between them see every event once (the two-process rule)."""
    total = len(list(decoded_chunks(str(busy), chunk_bytes=3000)))
    for first_tail in (1, total // 2, total - 1):
        head = read_chunks(str(busy), 3000, stop=first_tail)
        tail = read_chunks(str(busy), 3000, first=first_tail)
        assert not head.reached_end and tail.reached_end
        head.extend(tail)
        assert_same(head.profile("", "", "", str(busy)), load_whole(str(busy)))


@pytest.mark.parametrize(
    "relative",
    [
        "kineto_samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
        "hta_samples/nccl_parser_config/nccl_data.pt.trace.json.gz",
        "hta_samples/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.pt.trace.json.gz",
        "hta_samples/triton_example/triton_example.pt.trace.json.gz",
    ],
)
def test_real_traces_chunked_equal_whole(relative: str) -> None:
    path = str(shared_trace(relative))
    size = text_size(path)
    assert size is not None
    assert_same(load_profile(path, chunk_bytes=max(4096, size // 7)), load_whole(path))


def _write_text(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _nested_args_trace(events: int, nested_from: int) -> TraceBuilder:
    """Ops whose args (from op ``nested_from`` on) hold a list of objects: '}, {' inside an event."""
    b = TraceBuilder()
    for i in range(events):
        args: dict[str, Any] = {"Nested": [{"a": j} for j in range(40)]} if i >= nested_from else {}
        b.raw(
            {
                "ph": "X",
                "cat": "cpu_op",
                "name": f"op{i}",
                "pid": 1,
                "tid": 1,
                "ts": i * 10,
                "dur": 5,
                "args": args,
            }
        )
    return b


def test_boundary_inside_nested_objects_falls_back(tmp_path: Path) -> None:
    """An args list of objects has '}, {' inside an event: a chunk cut there does not decode."""
    b = _nested_args_trace(events=30, nested_from=0)
    path = b.write(tmp_path / "nested.pt.trace.json")
    with pytest.raises(NotChunkable):
        list(decoded_chunks(str(path), chunk_bytes=700))
    assert_same(load_profile(str(path), chunk_bytes=700), load_whole(str(path)))


@pytest.mark.parametrize(
    "damage",
    ["truncated_gzip", "array", "bare_na", "cut_text"],
)
def test_files_needing_repair_fall_back_with_their_warnings(tmp_path: Path, damage: str) -> None:
    path = busy_trace(tmp_path / "w.pt.trace.json")
    text = path.read_text()
    if damage == "truncated_gzip":
        data = gzip.compress(text.encode())
        path = tmp_path / "w2.pt.trace.json.gz"
        path.write_bytes(data[: len(data) * 2 // 3])
    elif damage == "array":
        _write_text(path, json.dumps(json.loads(text)["traceEvents"]))
    elif damage == "bare_na":
        _write_text(path, text.replace('"Op count": 0', '"Op count": N/A'))
    else:
        _write_text(path, text[: len(text) * 3 // 4])
    whole = load_whole(str(path))
    assert whole.meta.warnings, "the damage needs a repair"
    chunked = load_profile(str(path), chunk_bytes=2048)
    assert_same(chunked, whole)


def test_several_gzip_members_read_as_one_text(tmp_path: Path) -> None:
    path = busy_trace(tmp_path / "w.pt.trace.json")
    data = path.read_bytes()
    cut = len(data) // 2
    multi = tmp_path / "multi.pt.trace.json.gz"
    multi.write_bytes(gzip.compress(data[:cut]) + gzip.compress(data[cut:]))
    assert_same(load_profile(str(multi), chunk_bytes=2048), load_whole(str(path)))


# ---- two processes --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def helper_pool():
    pool = cf.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
    yield pool
    pool.shutdown(cancel_futures=True)


def test_tail_in_another_process(busy: Path, helper_pool: cf.ProcessPoolExecutor) -> None:
    claims: list[str] = []

    def submit(fn: Any, path: str, jobdir: str, *rest: Any) -> cf.Future[Any]:
        future = helper_pool.submit(fn, path, jobdir, *rest)
        claim = Path(jobdir) / "claim"
        deadline = time.monotonic() + 60
        while not claim.exists() and time.monotonic() < deadline:  # let the tail process claim first
            time.sleep(0.01)
        claims.append(claim.read_text())
        return future

    size = text_size(str(busy))
    assert size is not None
    chunk = size // 8
    assert parse_split.tail_start(str(busy), chunk) is not None
    got = parse_split.load_split(str(busy), submit, run="r", worker="w", span="1", chunk_bytes=chunk)
    assert claims == ["tail"], "the tail's tables came from the other process"
    assert (got.run, got.worker, got.span) == ("r", "w", "1")
    assert_same(got, load_whole(str(busy), "r", "w", "1"))


def test_head_reads_the_tail_itself_when_the_tail_never_starts(busy: Path) -> None:
    never: list[tuple[Any, ...]] = []

    def submit(*args: Any) -> cf.Future[Any]:
        never.append(args)  # queued behind other work: never runs before the head is done
        return cf.Future()

    size = text_size(str(busy))
    assert size is not None
    got = parse_split.load_split(str(busy), submit, chunk_bytes=size // 8)
    assert never, "the tail was offered to the helper"
    assert_same(got, load_whole(str(busy)))


def test_tail_that_fails_is_read_by_the_head(tmp_path: Path) -> None:
    """The tail's chunks do not decode (nested objects there): it says so and the head reads the file whole."""
    b = _nested_args_trace(events=200, nested_from=151)
    path = str(b.write(tmp_path / "w.pt.trace.json"))
    size = text_size(path)
    assert size is not None
    chunk = size // 6
    first_tail = parse_split.tail_start(path, chunk)
    assert first_tail is not None
    jobdir = parse_split.new_jobdir()
    parse_split.tail_job(path, jobdir, first_tail, chunk)  # as the tail process would, first
    assert os.path.exists(os.path.join(jobdir, "tail.failed"))
    got = parse_split.head_job(path, jobdir, first_tail, chunk)
    assert isinstance(got, Profile)
    assert_same(got, load_whole(path))


def test_runstore_splits_a_big_file_between_two_processes(tmp_path: Path, monkeypatch) -> None:
    """Through the server's pool: small chunks force the split."""
    path = busy_trace(tmp_path / "logdir" / "run" / "w.pt.trace.json.gz", steps=60)
    old = time.time() - 60
    os.utime(path, (old, old))
    size = text_size(str(path))
    assert size is not None
    monkeypatch.setattr(chunks, "CHUNK_BYTES", size // 10)
    store = RunStore(str(tmp_path / "logdir"), processes=2, settle_seconds=0.5).start()
    try:
        store.scan_once()
        assert store.wait_idle(120)
        got = store.get_profile("run", "w", None)
    finally:
        store.close()
    assert_same(got, load_whole(str(path), "run", "w", got.span))
    assert store.runs()[0]["state"] == "ready"


def test_job_folders_left_by_a_killed_server_are_swept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(parse_split.tempfile, "tempdir", str(tmp_path))
    stale = tmp_path / "torch-tb-profiler-split-old"
    fresh = tmp_path / "torch-tb-profiler-split-busy"
    other = tmp_path / "someone-else"
    for d in (stale, fresh, other):
        d.mkdir()
        (d / "tail.pickle").write_bytes(b"x")
    old = time.time() - parse_split.STALE_S - 60
    os.utime(stale, (old, old))
    os.utime(other, (old, old))
    made = Path(parse_split.new_jobdir())
    assert made.parent == tmp_path and made.exists()
    assert not stale.exists(), "a day-old job folder is removed"
    assert fresh.exists() and other.exists(), "a running job's folder and foreign folders stay"

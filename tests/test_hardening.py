"""Issue 12: hostile files and file systems end as a loaded profile with a warning or a clear per-file
error; nothing blocks, loops, exhausts memory or shows a bare exception class."""

from __future__ import annotations

import functools
import gzip
import json
import os
import shutil
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.trace_builder import V100, TraceBuilder
from torch_tb_profiler.ingest.discovery import Scanner
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.ingest.parse import load_job, load_profile, read_chunks
from torch_tb_profiler.ingest.storage import resolve
from torch_tb_profiler.model import Profile


def _doc(**top: Any) -> dict[str, Any]:
    b = TraceBuilder(device_properties=[V100])
    b.step(1, 0, 1000)
    ext = b.op("aten::mm", 10, 500)
    b.launch("gemm", 20, 5, 600, 50, ext_id=ext)
    b.memory(30, 1, 1024, 1024, 2048)
    doc = b.to_dict()
    doc.update(top)
    return doc


def _old(path: Path) -> Path:
    old = time.time() - 60
    os.utime(path, (old, old), follow_symlinks=False)
    return path


def _write(path: Path, doc: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return _old(path)


def _loaded(path: Path) -> Profile:
    outcome = load_job(str(path))
    assert not isinstance(outcome, str), outcome
    return outcome


def _store(logdir: Path) -> RunStore:
    store = RunStore(str(logdir), processes=0, settle_seconds=1)
    store.scan_once()
    assert store.wait_idle(30)
    return store


@pytest.fixture
def stores():
    made: list[RunStore] = []
    yield made
    for s in made:
        s.close()


def _run(store: RunStore, name: str) -> dict[str, Any]:
    return next(r for r in store.runs() if r["name"] == name)


# ---- item 2: gzip bombs and huge strings ---------------------------------------------------------------
def _bomb(path: Path, mib: int) -> Path:
    """A valid trace whose event name is ``mib`` MiB of zeros, gzipped (~1000:1)."""
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    with open(path, "wb") as f:
        f.write(c.compress(b'{"traceEvents": [{"ph": "X", "ts": 1, "dur": 1, "name": "'))
        zeros = b"0" * (1 << 20)
        for _ in range(mib):
            f.write(c.compress(zeros))
        f.write(c.compress(b'"}]}') + c.flush())
    return path


def test_gzip_bomb_is_rejected_while_inflating(tmp_path: Path) -> None:
    path = _bomb(tmp_path / "bomb.pt.trace.json.gz", 256)
    started = time.monotonic()
    outcome = load_job(str(path))
    assert isinstance(outcome, str)
    assert "inflates more than 200x" in outcome and "TORCH_PROFILER_MAX_GZIP_RATIO" in outcome
    assert time.monotonic() - started < 10


def test_text_size_cap_names_the_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain = _write(tmp_path / "w.pt.trace.json", _doc())
    packed = tmp_path / "z.pt.trace.json.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    monkeypatch.setenv("TORCH_PROFILER_MAX_TRACE_BYTES", "1k")
    for path in (plain, packed):
        outcome = load_job(str(path))
        assert isinstance(outcome, str) and "inflates beyond 1.0 kB" in outcome, outcome
        assert "TORCH_PROFILER_MAX_TRACE_BYTES" in outcome
    chunked = load_job(str(plain), lambda p: load_profile(p, chunk_bytes=256))  # the streaming reader
    assert isinstance(chunked, str) and "inflates beyond" in chunked


def test_overlong_strings_are_cut_with_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = _doc()
    doc["traceEvents"][1]["name"] = "x" * 5000
    monkeypatch.setenv("TORCH_PROFILER_MAX_STRING_BYTES", "1000")
    profile = _loaded(_write(tmp_path / "w.pt.trace.json", doc))
    assert profile.ops["name"].str.len().max() < 1100
    assert any("string cut to" in w and "'name'" in w for w in profile.meta.warnings), profile.meta.warnings


# ---- item 3: FIFOs and devices ------------------------------------------------------------------------
def test_fifo_and_device_are_listed_as_errors_never_opened(tmp_path: Path, stores: list[RunStore]) -> None:
    run = tmp_path / "run"
    _write(run / "good.pt.trace.json", _doc())
    os.mkfifo(run / "fifo.pt.trace.json")
    os.mkfifo(run / "fifo2.pt.trace.json")
    os.symlink("/dev/zero", run / "zero.pt.trace.json")
    started = time.monotonic()
    stores.append(store := _store(tmp_path))
    assert time.monotonic() - started < 10
    summary = _run(store, "run")
    assert summary["state"] == "ready"
    errors = {e["worker"]: e["message"] for e in summary["errors"]}
    assert "a FIFO, not a regular file" in errors["fifo"] and "a FIFO" in errors["fifo2"]
    assert "a character device" in errors["zero"]
    assert store.get_profile("run", "good", None).worker == "good"


def test_reading_a_fifo_directly_does_not_block(tmp_path: Path) -> None:
    fifo = tmp_path / "f.pt.trace.json"
    os.mkfifo(fifo)
    started = time.monotonic()
    outcome = load_job(str(fifo))
    assert isinstance(outcome, str) and "not a regular file (a FIFO)" in outcome
    assert time.monotonic() - started < 5


# ---- item 4 and 11: symlink loops, dangling links, odd names, unreadable directories --------------------
def test_symlink_loops_are_visited_once(tmp_path: Path, stores: list[RunStore]) -> None:
    run = tmp_path / "loop"
    _write(run / "w.pt.trace.json", _doc())
    os.symlink(".", run / "a")
    os.symlink(".", run / "b")
    os.symlink(".", run / "self")
    started = time.monotonic()
    stores.append(store := _store(tmp_path))
    assert time.monotonic() - started < 10
    assert store.run_names() == ["loop"]
    skipped = "\n".join(store.scan_warnings)
    for name in ("a", "b", "self"):
        assert f"skipped loop/{name}: the same directory as loop" in skipped


def test_linked_run_elsewhere_still_loads(tmp_path: Path, stores: list[RunStore]) -> None:
    _write(tmp_path / "elsewhere" / "w.pt.trace.json", _doc())
    (tmp_path / "logdir").mkdir()
    os.symlink(tmp_path / "elsewhere", tmp_path / "logdir" / "linked")
    stores.append(store := _store(tmp_path / "logdir"))
    assert store.run_names() == ["linked"] and store.scan_warnings == []


def test_directory_depth_is_bounded(
    tmp_path: Path, stores: list[RunStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TORCH_PROFILER_MAX_DIR_DEPTH", "2")
    _write(tmp_path / "a" / "b" / "w.pt.trace.json", _doc())
    _write(tmp_path / "a" / "b" / "c" / "w.pt.trace.json", _doc())
    stores.append(store := _store(tmp_path))
    assert store.run_names() == ["a/b"]
    assert any("skipped a/b/c: deeper than 2 levels" in w for w in store.scan_warnings), store.scan_warnings


def test_broken_links_and_odd_names_are_reported(tmp_path: Path, stores: list[RunStore]) -> None:
    run = tmp_path / "run"
    _write(run / "good.pt.trace.json", _doc())
    os.symlink("nowhere.json", run / "dangling.pt.trace.json")
    os.symlink("loopy.pt.trace.json", run / "loopy.pt.trace.json")
    _write(run / "new\nline.pt.trace.json", _doc())
    undecodable = os.fsdecode(os.fsencode(str(run)) + b"/caf\xe9.pt.trace.json")
    _write(Path(undecodable), _doc())
    stores.append(store := _store(tmp_path))
    summary = _run(store, "run")
    json.dumps(summary)  # every name is JSON-safe (a lone surrogate would raise here)
    errors = {e["worker"]: e["message"] for e in summary["errors"]}
    assert errors["dangling"] == "a dangling symlink (to nowhere.json): not read"
    assert errors["loopy"] == "a symlink loop: not read"
    assert store.get_profile("run", "new\\nline", None).ops.shape[0] > 0  # shown escaped, loaded
    assert store.get_profile("run", "caf\\xe9", None).ops.shape[0] > 0
    assert {f["file"] for f in summary["files"]} >= {
        "run/new\\nline.pt.trace.json",
        "run/caf\\xe9.pt.trace.json",
    }


_SCAN = (
    "import json, sys\n"
    "from torch_tb_profiler.ingest.discovery import Scanner\n"
    "from torch_tb_profiler.ingest.storage import resolve\n"
    "result = Scanner(resolve(sys.argv[1]), settle_seconds=1).scan()\n"
    "print(json.dumps({'runs': sorted({f.run for f in result.files}), 'warnings': result.warnings}))\n"
)


def _scan_without_root_powers(logdir: Path) -> dict[str, Any]:
    """A scan in a process that cannot bypass file permissions (root drops CAP_DAC_* via setpriv)."""
    prefix: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("root reads any directory and setpriv is not there to drop that")
        prefix = [
            setpriv,
            "--bounding-set=-dac_override,-dac_read_search",
            "--inh-caps=-dac_override,-dac_read_search",
        ]
    done = subprocess.run(
        [*prefix, sys.executable, "-c", _SCAN, str(logdir)], capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr.decode()
    return json.loads(done.stdout)


def test_unreadable_directory_is_a_scan_warning(tmp_path: Path) -> None:
    _write(tmp_path / "ok" / "w.pt.trace.json", _doc())
    _write(tmp_path / "locked" / "w.pt.trace.json", _doc())
    os.chmod(tmp_path / "locked", 0)
    try:
        result = _scan_without_root_powers(tmp_path)
    finally:
        os.chmod(tmp_path / "locked", 0o755)
    assert result["runs"] == ["ok"]
    assert any(w.startswith("cannot list locked: Permission denied") for w in result["warnings"]), result


# ---- item 13: a file still being written waits ------------------------------------------------------
def test_file_changed_since_last_scan_waits_even_when_its_mtime_is_old(tmp_path: Path) -> None:
    path = _write(tmp_path / "run" / "w.pt.trace.json", '{"traceEvents": [')
    scanner = Scanner(resolve(str(tmp_path)), settle_seconds=2)
    assert len(scanner.scan().settled) == 1  # first sight, old: settled
    with open(path, "a") as f:
        f.write('{"ph": "X", "ts": 1, "dur": 1, "name": "a"},')
    _old(path)  # the writer paused longer than settle_seconds
    assert scanner.scan().settled == []  # changed since the last scan: still being written
    assert len(scanner.scan().settled) == 1  # unchanged since: settled


# ---- item 8: out-of-range numbers and deep nesting keep the file -------------------------------------
@pytest.mark.parametrize(
    ("key", "event"),
    [("External id", "aten::mm"), ("correlation", "cudaLaunchKernel"), ("Bytes", "[memory]")],
)
def test_numbers_past_int64_are_dropped_with_a_warning(tmp_path: Path, key: str, event: str) -> None:
    doc = _doc()
    target = next(e for e in doc["traceEvents"] if e["name"] == event)
    target["args"][key] = 2**63 + 7
    profile = _loaded(_write(tmp_path / "w.pt.trace.json", doc))
    (warning,) = [w for w in profile.meta.warnings if "does not fit 64 bits" in w]
    assert f"in '{key}'" in warning and f"first: event '{event}' at ts" in warning
    assert len(profile.ops) >= 2 and len(profile.device) == 1


def test_step_number_past_int64_is_not_a_step(tmp_path: Path) -> None:
    doc = _doc()
    doc["traceEvents"][0]["name"] = f"ProfilerStep#{2**64}"
    profile = _loaded(_write(tmp_path / "w.pt.trace.json", doc))
    assert len(profile.steps) == 0
    assert any("step number does not fit 64 bits" in w for w in profile.meta.warnings)


@pytest.mark.parametrize("key", ["deep", "Input Dims"])
def test_deeply_nested_args_are_dropped_with_a_warning(tmp_path: Path, key: str) -> None:
    doc = _doc()
    doc["traceEvents"][1]["args"][key] = "PLACEHOLDER"
    text = json.dumps(doc).replace('"PLACEHOLDER"', "[" * 100_000 + "]" * 100_000)
    profile = _loaded(_write(tmp_path / "w.pt.trace.json", text))
    assert profile.meta.event_count == len(doc["traceEvents"])
    joined = "\n".join(profile.meta.warnings)
    assert f"'{key}' at byte" in joined and "event #1 'aten::mm'" in joined


# ---- item 10: odd values in a complete file are not a "truncated" file --------------------------------
def _with_odd(tmp_path: Path, raw_value: str, key: str = "ts") -> Profile:
    doc = _doc()
    doc["traceEvents"][1][key] = "PLACEHOLDER"
    return _loaded(_write(tmp_path / "w.pt.trace.json", json.dumps(doc).replace('"PLACEHOLDER"', raw_value)))


@pytest.mark.parametrize("raw", ["-Infinity", "1e400", "NaN"])
def test_non_finite_ts_drops_that_event_only(tmp_path: Path, raw: str) -> None:
    profile = _with_odd(tmp_path, raw)
    n = len(_doc()["traceEvents"])
    assert profile.meta.event_count == n - 1
    joined = "\n".join(profile.meta.warnings)
    assert "'ts' is" in joined and "event dropped (first: event #1 'aten::mm'" in joined
    assert "truncated" not in joined


@pytest.mark.parametrize(("raw", "expected"), [("1.5", "kept as text"), ('{"a": 1}', "dropped")])
def test_odd_flow_ids_keep_every_event(tmp_path: Path, raw: str, expected: str) -> None:
    doc = _doc()
    doc["traceEvents"].append(
        {"ph": "s", "cat": "fwdbwd", "name": "fb", "id": "X", "pid": 1, "tid": 1, "ts": 5}
    )
    text = json.dumps(doc).replace('"id": "X"', f'"id": {raw}')
    profile = _loaded(_write(tmp_path / "w.pt.trace.json", text))
    assert profile.meta.event_count == len(doc["traceEvents"])
    joined = "\n".join(profile.meta.warnings)
    assert "'id' is" in joined and expected in joined and "truncated" not in joined


def test_duplicate_trace_events_keys_are_joined(tmp_path: Path) -> None:
    doc = _doc()
    extra = json.dumps(
        [{"ph": "X", "cat": "cpu_op", "name": "late", "ts": 2e15, "dur": 1, "pid": 1, "tid": 1}]
    )
    text = json.dumps(doc)[:-1] + f', "traceEvents": {extra}}}'
    for chunk_bytes in (None, 200):  # the whole-file and the streaming readers
        path = _write(tmp_path / "w.pt.trace.json", text)
        reader = functools.partial(load_profile, chunk_bytes=chunk_bytes) if chunk_bytes else load_profile
        profile = load_job(str(path), reader)
        assert not isinstance(profile, str), profile
        assert profile.meta.event_count == len(doc["traceEvents"]) + 1
        assert "late" in set(profile.ops["name"])
        assert any("2 'traceEvents' arrays" in w for w in profile.meta.warnings)


def test_streaming_reader_keeps_a_chunk_with_an_odd_value(tmp_path: Path) -> None:
    """A big file with one bad value is still read chunk by chunk (memory of one chunk), not handed
    whole to the lenient reader."""
    doc = _doc()
    for i in range(200):
        doc["traceEvents"].append(
            {"ph": "X", "cat": "cpu_op", "name": f"op{i}", "ts": 2e15 + i, "dur": 1, "pid": 1, "tid": 1}
        )
    doc["traceEvents"][150]["ts"] = "PLACEHOLDER"
    path = _write(tmp_path / "w.pt.trace.json", json.dumps(doc).replace('"PLACEHOLDER"', "NaN"))
    part = read_chunks(str(path), chunk_bytes=1024)
    assert part.reached_end and part.event_count == len(doc["traceEvents"]) - 1
    assert any(
        "'ts' is nan, not a finite number: event dropped (first: event 'op" in r for r in part.repairs
    ), part.repairs
    whole = _loaded(path)
    assert whole.meta.event_count == part.event_count
    chunked = load_profile(str(path), chunk_bytes=1024)
    assert chunked.meta.event_count == part.event_count and any(
        "'ts' is nan" in w for w in chunked.meta.warnings
    )


def test_close_with_terminate_ends_a_parse_in_progress(tmp_path: Path) -> None:
    """What SIGTERM runs first (plugin._stop_on_signals): a long job does not hold up the exit."""
    store = RunStore(str(tmp_path), processes=1)
    job = store.pool.submit(time.sleep, 120)  # stands for the parse of a huge file
    deadline = time.monotonic() + 60
    while not job.running() and time.monotonic() < deadline:
        time.sleep(0.05)
    workers = list(store.pool.executor._processes.values())  # type: ignore[attr-defined]
    assert workers and all(p.is_alive() for p in workers)
    pids = [p.pid for p in workers]
    started = time.monotonic()
    store.close(terminate=True)
    # asked of the OS: the executor's own thread may reap a worker first, and Process.is_alive() then
    # says True for a process that is gone (its returncode never set in this thread)
    while any(_running(pid) for pid in pids) and time.monotonic() - started < 10:
        time.sleep(0.05)
    assert not any(_running(pid) for pid in pids)
    assert time.monotonic() - started < 10


def _running(pid: int) -> bool:
    """The process exists and is not a zombie waiting to be reaped."""
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_cli_names_a_fifo_given_as_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from torch_tb_profiler.cli.main import main

    fifo = tmp_path / "w.pt.trace.json"
    os.mkfifo(fifo)
    assert main(["summary", str(fifo)]) == 2
    assert "is not a regular file or a directory" in capsys.readouterr().err

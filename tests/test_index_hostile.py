"""Issue 28: the persisted index is untrusted input like a trace. Hostile index files (a FIFO, files planted
by another user, well-formed files that disagree with the model, dtype bombs) are ignored with a warning
and the trace parsed again; nothing blocks, 5xxs or allocates what the file asks for."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import signal
import stat
import struct
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from tests.fixtures.paths import SAMPLES
from torch_tb_profiler.ingest import persist, storage
from torch_tb_profiler.ingest.fingerprint import VERSION_ENV
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.ingest.storage import resolve

ROOT = Path(__file__).resolve().parents[1]


def _old(path: Path) -> Path:
    os.utime(path, (time.time() - 60,) * 2)
    return path


@pytest.fixture
def logdir(tmp_path: Path) -> Path:
    """Two runs: the two-rank DDP sample and one resnet-like worker."""
    root = tmp_path / "logs"
    shutil.copytree(SAMPLES / "ddp_gloo_2ranks", root / "ddp")
    (root / "cpu").mkdir()
    first = sorted((SAMPLES / "resnet_like_cpu").glob("*.pt.trace.json.gz"))[0]
    shutil.copy(first, root / "cpu" / "worker0.pt.trace.json.gz")
    for p in root.rglob("*.gz"):
        _old(p)
    return root


def _index_path(store: persist.IndexStore, trace: Path) -> Path:
    """Where the index of a trace file lives (named after its URL, not its version)."""
    loc = resolve(str(trace.parent))
    return Path(store.path_for({"namespace": loc.namespace, "url": str(trace)}))


@pytest.fixture
def built(tmp_path: Path, logdir: Path) -> Iterator[tuple[Path, persist.IndexStore]]:
    """The logdir with its index written (by a RunStore, as the plugin does)."""
    index = persist.open_store(str(tmp_path / "index"))
    assert index is not None
    store = RunStore(str(logdir), processes=0, settle_seconds=1, index=index)
    try:
        store.scan_once()
        assert store.wait_idle(60)
    finally:
        store.close()
    yield logdir, index


def _files(runs: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each file of the runs answer by run/worker, with its warnings."""
    out = {f"{r['name']}/{f['worker']}": dict(f, warnings=[]) for r in runs["runs"] for f in r["files"]}
    for r in runs["runs"]:
        for w in r["warnings"]:
            out[f"{r['name']}/{w['worker']}"]["warnings"].append(w["message"])
    return out


# ---- item 1: a FIFO at an index file's path ---------------------------------------------------------
def test_fifo_at_an_index_path_blocks_nothing(tmp_path: Path, built: tuple[Path, persist.IndexStore]) -> None:
    from tests.fixtures.tensorboard_server import tensorboard

    logdir, index = built
    fifos = []
    for trace in sorted(logdir.rglob("*.pt.trace.json.gz")):
        target = _index_path(index, trace)
        assert target.is_file()
        target.unlink()
        os.mkfifo(target)
        fifos.append(target)
    env = {persist.INDEX_DIR_ENV: index.url, "PYTHONPATH": str(ROOT)}
    with tensorboard(logdir, env=env, tmp=tmp_path) as tb:
        files = _files(tb.wait_loaded(60))
        assert len(files) == 3 and all(f["status"] == "ready" for f in files.values()), files
        assert all(not f["from_index"] for f in files.values())
        assert all(any("regular file" in w for w in f["warnings"]) for f in files.values()), files
        started = time.monotonic()
        os.killpg(tb.proc.pid, signal.SIGTERM)
        tb.proc.wait(timeout=15)
        assert time.monotonic() - started < 15
    # the CLI's summary and index read the same files: neither hangs
    cli = [sys.executable, "-m", "torch_tb_profiler.cli"]
    for args in (["summary", str(logdir / "cpu"), "--json"], ["index", str(logdir), "--local-workers", "1"]):
        done = subprocess.run(
            [*cli, *args], capture_output=True, text=True, timeout=120, env={**os.environ, **env}
        )
        assert done.returncode == 0, done.stderr[-2000:]
    assert any(not stat.S_ISFIFO(p.lstat().st_mode) for p in fifos)  # index replaced them with files


# ---- item 2: the default index folder is per user and private ------------------------------------------
needs_root = pytest.mark.skipif(
    not hasattr(os, "chown") or os.geteuid() != 0, reason="needs root to act as another user"
)


def _default_env(tmp_path: Path) -> dict[str, str]:
    return {"TORCH_PROFILER_CACHE_DIR": str(tmp_path / "cache"), persist.INDEX_DIR_ENV: ""}


@needs_root
def test_default_index_folder_of_another_user_is_not_used(
    tmp_path: Path, logdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.fixtures.tensorboard_server import tensorboard

    # another user made the default folder, open to all, and planted a GPU profile for the CPU trace
    cpu_trace = logdir / "cpu" / "worker0.pt.trace.json.gz"
    planted_src = sorted(logdir.rglob("rank0*.gz"))[0]
    for key, value in _default_env(tmp_path).items():
        monkeypatch.setenv(key, value)
    theirs = persist.default_dir()
    theirs.mkdir(parents=True)
    index = persist.IndexStore(resolve(str(theirs)))
    _plant(index, planted_src, cpu_trace)
    for folder in [theirs, *theirs.rglob("*")]:
        os.chown(folder, 65534, 65534)
        folder.chmod(0o777 if folder.is_dir() else 0o666)
    with tensorboard(logdir, env={**_default_env(tmp_path), "PYTHONPATH": str(ROOT)}, tmp=tmp_path) as tb:
        files = _files(tb.wait_loaded(60))
        assert not files["cpu/worker0"]["from_index"]
        status, overview = tb.get("overview", run="cpu", worker="worker0")
        assert status == 200 and overview["device_type"] == "CPU" if "device_type" in overview else True
        log = tb.log_path.read_text()
    assert "cannot use" in log and "index cache" in log
    assert theirs.stat().st_uid == 65534  # left as it was, not used


@needs_root
def test_index_files_others_wrote_in_our_folder_are_not_read(
    tmp_path: Path, logdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in _default_env(tmp_path).items():
        monkeypatch.setenv(key, value)
    store = persist.open_store()
    assert store is not None and store.private
    cpu_trace = logdir / "cpu" / "worker0.pt.trace.json.gz"
    planted = _plant(store, sorted(logdir.rglob("rank0*.gz"))[0], cpu_trace)
    loc = resolve(str(logdir))
    file_info = storage.file_info(loc, str(cpu_trace))
    assert store.load(loc, file_info).profile is not None  # ours: served
    os.chown(planted, 65534, 65534)
    lookup = store.load(loc, file_info)
    assert lookup.profile is None and "not written by this user" in (lookup.problem or "")


def _plant(index: persist.IndexStore, source: Path, victim: Path) -> Path:
    """Write the profile of ``source`` as the index of ``victim`` (with the victim's identity)."""
    from torch_tb_profiler.ingest import index_format
    from torch_tb_profiler.ingest.parse import load_profile

    loc = resolve(str(victim.parent.parent))
    ident = persist.identity(loc, storage.file_info(loc, str(victim)))
    profile = load_profile(str(source), victim.parent.name, "worker0", "")
    target = Path(index.path_for(ident))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(index_format.dumps(profile, ident))
    return target


# ---- items 3, 4, 13: well-formed index files that disagree with the model -------------------------------
def _unpack(path: Path) -> tuple[dict[str, Any], dict[str, pa.Table]]:
    from torch_tb_profiler.ingest import index_format

    data = path.read_bytes()
    header, start = index_format.read_header(data)
    tables = {
        name: pa.ipc.open_stream(pa.py_buffer(data[start + o : start + o + n])).read_all()
        for name, (o, n, _crc) in header["tables"].items()
    }
    return header, tables


def _pack(path: Path, header: dict[str, Any], tables: dict[str, pa.Table]) -> None:
    """Write an index with valid checksums and lengths: only its contents disagree with the model."""
    from torch_tb_profiler.ingest import index_format

    bodies, offset = [], 0
    for name, table in tables.items():
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema, options=pa.ipc.IpcWriteOptions(compression="lz4")) as w:
            w.write_table(table)
        body = sink.getvalue().to_pybytes()
        header["tables"][name] = [offset, len(body), zlib.crc32(body)]
        bodies.append(body)
        offset += len(body)
    header["body_bytes"] = offset
    head = json.dumps(header, separators=(",", ":")).encode()
    path.write_bytes(b"".join([index_format.MAGIC, struct.pack("<Q", len(head)), head, *bodies]))


def _set_column(table: pa.Table, name: str, values: Any, dtype: str | None = None) -> pa.Table:
    at = table.schema.get_field_index(name)
    array = pa.array(values) if not isinstance(values, pa.Array) else values
    field = pa.field(name, array.type, metadata={b"dtype": (dtype or str(array.type)).encode()})
    return table.set_column(at, field, array)


def _drop_column(header: dict[str, Any], tables: dict[str, pa.Table]) -> None:
    tables["ops"] = tables["ops"].drop_columns(["depth"])


def _parent_out_of_range(header: dict[str, Any], tables: dict[str, pa.Table]) -> None:
    ops = tables["ops"]
    tables["ops"] = _set_column(ops, "parent", np.full(len(ops), 10**6, dtype=np.int64), "int64")


def _device_op_out_of_range(header: dict[str, Any], tables: dict[str, pa.Table]) -> None:
    ops = tables["ops"]  # a CPU trace: no runtime calls, so any replay row is out of range
    assert len(tables["runtimes"]) == 0
    tables["ops"] = _set_column(ops, "replay", np.full(len(ops), 5, dtype=np.int64), "int64")


def _meta_wrong_type(header: dict[str, Any], tables: dict[str, pa.Table]) -> None:
    header["meta"]["event_count"] = "many"
    header["meta"]["device_properties"] = {"id": 0}


def _warnings_string(header: dict[str, Any], tables: dict[str, pa.Table]) -> None:
    header["meta"]["warnings"] = "planted"  # issue item 13: was listed one warning per character


def _answer_missing_key(header: dict[str, Any], tables: dict[str, pa.Table]) -> None:
    assert "overview" in header["summary"]["answers"]
    del header["summary"]["answers"]["overview"]["environment"]


def _facts_wrong(header: dict[str, Any], tables: dict[str, pa.Table]) -> None:
    header["summary"]["facts"] = {"kernels": "yes"}


def _dtype_bomb(header: dict[str, Any], tables: dict[str, pa.Table]) -> None:
    # item 4: a dtype from the file's metadata: 2 k rows as 300 k-character strings is ~2.4 GB
    ops = tables["ops"]
    column = ops.column("ts").combine_chunks()
    tables["ops"] = _set_column(ops, "ts", column, "<U300000")


def _rank_bad_steps(header: dict[str, Any], tables: dict[str, pa.Table]) -> None:
    header["summary"]["rank_part"]["steps"] = [1, 2]  # not names


def _rank_calls_wrong(header: dict[str, Any], tables: dict[str, pa.Table]) -> None:
    calls = tables["summary.calls"]
    tables["summary.calls"] = calls.drop_columns(["latency"])


_CORRUPTIONS = {
    "cols": _drop_column,
    "parents": _parent_out_of_range,
    "refs": _device_op_out_of_range,
    "meta": _meta_wrong_type,
    "warnings": _warnings_string,
    "answer": _answer_missing_key,
    "facts": _facts_wrong,
    "dtype": _dtype_bomb,
}
_ROUTES = (
    "overview",
    "operators",
    "kernels",
    "memory/devices",
    "memory/stats",
    "distributed",
    "modules",
    "timeline/tracks",
    "timeline",
    "trace",
    "views",
    "spans",
)


def test_index_files_that_disagree_with_the_model_are_parsed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.fixtures.builders_distributed import write_job
    from tests.fixtures.peak_rss import PeakRss
    from tests.fixtures.tensorboard_server import tensorboard
    from torch_tb_profiler.ingest import index_format

    logdir = tmp_path / "logs"
    cpu = sorted((SAMPLES / "resnet_like_cpu").glob("*.pt.trace.json.gz"))[0]
    for name in _CORRUPTIONS:
        (logdir / name).mkdir(parents=True)
        _old(Path(shutil.copy(cpu, logdir / name / "worker0.pt.trace.json.gz")))
    ranks = write_job(logdir / "job", 16, {})
    index = persist.open_store(str(tmp_path / "index"))
    assert index is not None
    monkeypatch.setattr(index_format, "STORED_OVERVIEW_MIN_EVENTS", 0)  # store the overview answers
    store = RunStore(str(logdir), processes=0, settle_seconds=1, index=index)
    try:
        store.scan_once()
        assert store.wait_idle(120)
    finally:
        store.close()
    for name, corrupt in _CORRUPTIONS.items():
        path = _index_path(index, logdir / name / "worker0.pt.trace.json.gz")
        header, tables = _unpack(path)
        corrupt(header, tables)
        _pack(path, header, tables)
    # one planted rank summary of a 16-rank job, in two ways
    for rank, corrupt in ((3, _rank_bad_steps), (9, _rank_calls_wrong)):
        path = _index_path(index, ranks[rank])
        header, tables = _unpack(path)
        corrupt(header, tables)
        _pack(path, header, tables)

    env = {persist.INDEX_DIR_ENV: index.url, "PYTHONPATH": str(ROOT)}
    with tensorboard(logdir, env=env, tmp=tmp_path) as tb:
        peak = PeakRss(tb.proc.pid)
        tb.wait_loaded(120)
        for name in _CORRUPTIONS:
            for route in _ROUTES:
                status, body = tb.get(route, run=name, worker="worker0")
                assert status < 500, (name, route, status, body)
        status, job = tb.get("distributed", run="job")
        files = _files(tb.get("runs")[1])  # after the routes: the whole reads are done
        for name in _CORRUPTIONS:
            f = files[f"{name}/worker0"]
            assert f["status"] == "ready", (name, f)
            if name != "dtype":  # the bomb's dtype is not read (the schema's is): the index is used as is
                assert not f["from_index"], (name, f)
                assert any("could not be read" in w for w in f["warnings"]), (name, f["warnings"])
            assert "planted" not in f["warnings"] and not any(len(w) == 1 for w in f["warnings"])
        assert status == 200, job
        assert sorted(w["worker"] for w in job["workers"]) == sorted(f"rank{r}" for r in range(16))
        bad = [files[f"job/rank{r}"] for r in (3, 9)]
        assert all(any("could not be read" in w for w in f["warnings"]) for f in bad), bad
        rss = peak.stop()
    assert rss < 1.5 * 1024**3, f"peak RSS {rss / 2**20:.0f} MiB"


@pytest.mark.parametrize(
    "trace", sorted(SAMPLES.rglob("*.pt.trace.json*")), ids=lambda p: p.parent.name + "/" + p.name[:20]
)
def test_schema_is_what_a_parse_makes(trace: Path) -> None:
    from torch_tb_profiler.analysis.distributed.job import rank_part
    from torch_tb_profiler.analysis.timeline.index import build_index
    from torch_tb_profiler.ingest import index_format, index_schema, index_timeline
    from torch_tb_profiler.ingest.parse import load_profile

    profile = load_profile(str(trace), "r", "w", "1")
    profile.cache["timeline.index"] = build_index(profile)
    tables = {name: getattr(profile, name) for name in index_format._TABLES}
    tables["summary.calls"] = rank_part(profile).calls
    parts = index_timeline.to_parts(profile)
    assert parts is not None
    tables.update(parts[1])
    for name, frame in tables.items():
        if not len(frame):
            continue
        want = index_schema.TABLES[name]
        assert sorted(frame.columns) == sorted(want), name
        for column, dtype in frame.dtypes.items():
            kind = "text" if str(dtype) in ("str", "object") else str(dtype)
            assert kind == want[column], (name, column, dtype)


# ---- item 5: a rewrite that keeps size and mtime ---------------------------------------------------------
def _rewrite_keeping_size_and_mtime(path: Path, op: str) -> None:
    """What ``cp -p`` / ``rsync -t`` / ``touch -d`` leave: other bytes, same size, the old mtime."""
    from tests.fixtures.trace_builder import TraceBuilder

    st = path.stat() if path.exists() else None
    b = TraceBuilder()
    b.step(1, 0, 1000)
    b.op(op, 10, 500)
    b.write(path)
    if st is not None:
        assert path.stat().st_size == st.st_size
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    else:
        _old(path)


def _ops(tb: Any, run: str) -> str:
    status, body = tb.get("operators", run=run, worker="w")
    assert status == 200, body
    return json.dumps(body)


@pytest.mark.parametrize("mode", ["ctime", "content"])
def test_rewrite_keeping_size_and_mtime_is_noticed(tmp_path: Path, mode: str) -> None:
    """Both ways of telling versions apart: the ctime (POSIX default) and the content fingerprint alone
    (Windows' default, where a rewrite in place keeps the ctime; here the ctime is left out of it)."""
    from tests.fixtures.tensorboard_server import tensorboard

    trace = tmp_path / "logs" / "run" / "w.pt.trace.json"
    trace.parent.mkdir(parents=True)
    _rewrite_keeping_size_and_mtime(trace, "aten::first_op")
    env = {persist.INDEX_DIR_ENV: str(tmp_path / "index"), "PYTHONPATH": str(ROOT), VERSION_ENV: mode}
    with tensorboard(tmp_path / "logs", env=env, tmp=tmp_path) as tb:
        tb.wait_loaded()
        assert "aten::first_op" in _ops(tb, "run")
        assert tb.get("trace", run="run", worker="w")[0] == 200
        _rewrite_keeping_size_and_mtime(trace, "aten::other_op")
        # reloaded by a scan (every 0.5 s here), not "on the next scan" forever
        deadline = time.monotonic() + 60
        while "aten::other_op" not in _ops(tb, "run"):
            assert time.monotonic() < deadline, "the rewrite was never noticed"
            time.sleep(0.5)
        status, body = tb.get("trace", run="run", worker="w")
        assert status == 200, body  # the download of the new file, not 409 "reloaded on the next scan"
        assert b"aten::other_op" in (gzip.decompress(body) if body[:2] == b"\x1f\x8b" else body)
    _rewrite_keeping_size_and_mtime(trace, "aten::third_op")  # while stopped: the index must not serve it
    with tensorboard(tmp_path / "logs", env=env, tmp=tmp_path) as tb:
        runs = tb.wait_loaded()
        assert not _files(runs)["run/w"]["from_index"]
        ops = _ops(tb, "run")
        assert "aten::third_op" in ops and "aten::other_op" not in ops


def test_by_content_a_chmod_is_no_change_and_the_index_stays_in_use(tmp_path: Path) -> None:
    """With versions told apart by content, a change of only the file's status (chmod: a new ctime) is no
    change: after a restart the index is still the file's (the version is in the index's identity)."""
    from tests.fixtures.tensorboard_server import tensorboard

    trace = tmp_path / "logs" / "run" / "w.pt.trace.json"
    trace.parent.mkdir(parents=True)
    _rewrite_keeping_size_and_mtime(trace, "aten::first_op")
    env = {persist.INDEX_DIR_ENV: str(tmp_path / "index"), "PYTHONPATH": str(ROOT), VERSION_ENV: "content"}
    with tensorboard(tmp_path / "logs", env=env, tmp=tmp_path) as tb:
        first = _files(tb.wait_loaded())["run/w"]
        assert not first["from_index"]
    time.sleep(0.05)
    os.chmod(trace, 0o640)  # the ctime moves; the bytes do not
    with tensorboard(tmp_path / "logs", env=env, tmp=tmp_path) as tb:
        again = _files(tb.wait_loaded())["run/w"]
        assert again["from_index"], again
        assert "aten::first_op" in _ops(tb, "run")

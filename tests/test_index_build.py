"""``torch-tb-profiler index`` on real dask.distributed processes on 127.0.0.1: a LocalCluster of worker
processes, and a scheduler + workers started with Dask's own CLI; without dask, a local process pool."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.paths import REPO, SAMPLES
from tests.fixtures.tensorboard_server import free_port
from tests.test_index import assert_profiles_equal
from torch_tb_profiler.cli.common import find_traces
from torch_tb_profiler.cli.main import main as cli_main
from torch_tb_profiler.ingest import index_build as ib
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.ingest.persist import SUFFIX, open_store

pytest.importorskip("distributed")


def _old(path: Path) -> None:
    os.utime(path, (time.time() - 60,) * 2)


@pytest.fixture
def logdir(tmp_path: Path) -> Path:
    """Two runs: the DDP sample (2 ranks) and the CPU sample (2 spans), plus one broken file."""
    root = tmp_path / "logs"
    shutil.copytree(SAMPLES / "ddp_gloo_2ranks", root / "ddp")
    shutil.copytree(SAMPLES / "resnet_like_cpu", root / "cpu")
    (root / "broken").mkdir()
    (root / "broken" / "w0.1.pt.trace.json").write_text('{"traceEvents": [{"ph": "X", "ts": ')
    for p in root.rglob("*.json*"):
        _old(p)
    return root


def run_index(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stderr(out):
        status = cli_main(["index", *argv])
    return status, out.getvalue()


def _opened(logdir: Path, index_dir: Path) -> RunStore:
    store = RunStore(str(logdir), processes=0, settle_seconds=1, index=open_store(str(index_dir)))
    store.scan_once()
    assert store.wait_idle(60)
    return store


def _from_index(store: RunStore) -> dict[str, bool]:
    return {f["file"]: f["from_index"] for r in store.runs() for f in r["files"] if f["status"] == "ready"}


def test_local_cluster_indexes_every_file_reports_the_broken_one_and_skips_on_rerun(
    logdir: Path, tmp_path: Path
) -> None:
    index_dir = tmp_path / "index"
    status, out = run_index(str(logdir), "--index-dir", str(index_dir), "--local-workers", "2")
    assert status == 1, out
    assert "local Dask cluster of 2 worker processes" in out
    assert "[5/5 files]" in out and "ETA" in out and "/s" in out
    assert "indexed 4, already current 0, failed 1" in out
    assert "broken/w0.1.pt.trace.json:" in out
    # the plugin now opens every good file from the index, equal to a parse
    store, parsed = _opened(logdir, index_dir), _opened(logdir, tmp_path / "other")
    try:
        assert set(_from_index(store).values()) == {True} and len(_from_index(store)) == 4
        for run in ("ddp", "cpu"):
            for a, b in zip(store.profiles_of_run(run), parsed.profiles_of_run(run), strict=True):
                assert_profiles_equal(a, b)
    finally:
        store.close()
        parsed.close()
    status, out = run_index(
        str(logdir), "--index-dir", str(index_dir), "--local-workers", "1", "--run", "ddp"
    )
    assert status == 0, out
    assert "indexed 0, already current 2, failed 0" in out


def test_bad_arguments_exit_2(logdir: Path, tmp_path: Path) -> None:
    status, out = run_index(str(logdir), "--index-dir", "nosuchscheme://x/y", "--local-workers", "1")
    assert status == 2 and "index location" in out
    status, out = run_index(str(logdir), "--index-dir", str(tmp_path / "i"), "--run", "nope")
    assert status == 2 and "no run 'nope'" in out
    status, out = run_index(str(logdir), "--index-dir", "off")
    assert status == 2 and "turned off" in out


def test_without_dask_a_local_pool_does_the_work_and_says_so(
    logdir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ib, "dask_available", lambda: False)
    status, out = run_index(
        str(logdir), "--index-dir", str(tmp_path / "index"), "--local-workers", "1", "--run", "cpu"
    )
    assert status == 0, out
    assert "dask is not installed" in out and "local pool of 1 process" in out
    assert "indexed 2, already current 0, failed 0" in out


# ---- a scheduler and workers started with Dask's CLI -------------------------------------------------
@contextlib.contextmanager
def dask_cli_cluster(tmp: Path, workers: int) -> Iterator[tuple[str, list[subprocess.Popen[bytes]]]]:
    """``dask scheduler`` and ``dask worker`` processes on 127.0.0.1 (stopped by their process groups)."""
    exe = str(Path(sys.executable).with_name("dask"))
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONPATH": str(REPO)}  # workers import the tests' task wrappers too
    procs: list[subprocess.Popen[bytes]] = []

    def start(name: str, *argv: str) -> subprocess.Popen[bytes]:
        log = open(tmp / f"{name}.log", "wb")  # noqa: SIM115 - closed with the process
        proc = subprocess.Popen(
            [exe, *argv], stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
        procs.append(proc)
        return proc

    try:
        start("scheduler", "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard")
        for i in range(workers):
            start(
                f"worker{i}", "worker", address, "--host", "127.0.0.1", "--nthreads", "1", "--nworkers", "1",
                "--no-dashboard", "--name", f"w{i}",
            )  # fmt: skip
        from distributed import Client

        with Client(address, timeout="60s") as client:
            client.wait_for_workers(workers, timeout=60)
        yield address, procs
    finally:
        for proc in reversed(procs):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def test_scheduler_and_worker_started_with_dask_cli(logdir: Path, tmp_path: Path) -> None:
    index_dir = tmp_path / "index"
    with dask_cli_cluster(tmp_path, workers=1) as (address, _procs):
        status, out = run_index(str(logdir), "--index-dir", str(index_dir), "--scheduler", address)
    assert status == 1, out
    assert f"Dask scheduler at {address} (1 workers now)" in out
    assert "indexed 4, already current 0, failed 1" in out
    store = _opened(logdir, index_dir)
    try:
        assert len(_from_index(store)) == 4 and all(_from_index(store).values())
    finally:
        store.close()


MARKER_ENV = "TTB_TEST_KILL_MARKER"


def index_or_hang_once(task: ib.Task) -> ib.Result:
    """The first call anywhere writes its pid to the marker file and hangs (the test kills that worker);
    every later call indexes normally."""
    marker = Path(os.environ[MARKER_ENV])
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return ib.index_file(task)
    os.write(fd, str(os.getpid()).encode())
    os.close(fd)
    time.sleep(600)
    raise AssertionError("never reached: the worker is killed")


def test_a_killed_worker_s_file_is_retried_on_another(
    logdir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "hung.pid"
    monkeypatch.setenv(MARKER_ENV, str(marker))
    index_dir = tmp_path / "index"
    files = find_traces(str(logdir))[1]
    tasks = ib.tasks_for(str(logdir), [f for f in files if f.run != "broken"], str(index_dir), None)
    with dask_cli_cluster(tmp_path, workers=2) as (address, _procs):
        engine = ib.DaskEngine(address, None)
        try:
            results = engine.map_unordered(index_or_hang_once, tasks)
            deadline = time.monotonic() + 60
            while not marker.exists() or not marker.read_text():
                assert time.monotonic() < deadline, "no task started"
                time.sleep(0.1)
            os.kill(int(marker.read_text()), signal.SIGKILL)  # the worker process running the hung task
            done = list(results)
        finally:
            engine.close()
    assert sorted(r.status for r in done) == [ib.INDEXED] * 4, [(r.status, r.message) for r in done]
    store = _opened(logdir, index_dir)
    try:
        assert len(_from_index(store)) == 4 and all(_from_index(store).values())
    finally:
        store.close()


def test_ctrl_c_stops_and_leaves_only_whole_index_files(tmp_path: Path) -> None:
    from torch_tb_profiler.ingest import index_format

    logdir = tmp_path / "logs" / "job"
    logdir.mkdir(parents=True)
    source = sorted((SAMPLES / "ddp_gloo_2ranks").iterdir())[0]
    for i in range(40):  # enough work that the interrupt lands mid-run
        target = logdir / f"rank{i:02d}.1.pt.trace.json.gz"
        shutil.copyfile(source, target)
        _old(target)
    index_dir = tmp_path / "index"
    argv = [sys.executable, "-m", "torch_tb_profiler.cli", "index", str(logdir.parent)]
    argv += ["--index-dir", str(index_dir), "--local-workers", "1"]
    proc = subprocess.Popen(
        argv,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while len(list(index_dir.rglob(f"*{SUFFIX}"))) < 3:
            assert proc.poll() is None and time.monotonic() < deadline, "indexing did not start"
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    written = list(index_dir.rglob(f"*{SUFFIX}"))
    assert 3 <= len(written) < 40
    for path in written:  # every visible index file is whole
        index_format.loads(path.read_bytes())


HANG_ENV = "TTB_TEST_HANG_MARKER"


def hang_forever(task: ib.Task) -> ib.Result:
    """Writes this worker's pid to the marker and never finishes (the test kills every worker)."""
    Path(os.environ[HANG_ENV]).write_text(str(os.getpid()))
    time.sleep(600)
    raise AssertionError("never reached: the worker is killed")


def test_a_cluster_that_loses_every_worker_ends_with_exit_3(
    logdir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    marker = tmp_path / "hung.pid"
    monkeypatch.setenv(HANG_ENV, str(marker))
    monkeypatch.setenv(ib.NO_WORKERS_ENV, "3")
    monkeypatch.setattr(ib, "index_file", hang_forever)  # pickled by name: the workers import this module
    index_dir = tmp_path / "index"
    outcome: list[tuple[int, str]] = []
    with dask_cli_cluster(tmp_path, workers=1) as (address, procs):
        indexing = threading.Thread(
            target=lambda: outcome.append(
                run_index(str(logdir), "--index-dir", str(index_dir), "--scheduler", address)
            ),
            daemon=True,
        )
        indexing.start()
        deadline = time.monotonic() + 60
        while not marker.exists() or not marker.read_text():
            assert time.monotonic() < deadline, "no task started"
            time.sleep(0.1)
        os.killpg(procs[1].pid, signal.SIGKILL)  # the worker and its nanny: the cluster has none left
        indexing.join(90)  # bound: 3 s without workers, polled every 5 s
        assert not indexing.is_alive(), "index hung on a cluster without workers"
    status, out = outcome[0]
    assert status == 3, out
    assert "the Dask cluster has had no workers" in out and "not indexed; what was indexed is kept" in out
    assert not [p for p in index_dir.rglob("*") if p.is_file() and not p.name.endswith(SUFFIX)]

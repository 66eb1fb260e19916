"""Issue 28 item 10: a hung S3 endpoint (the emulator process stopped with SIGSTOP: connections are still
accepted by the kernel, nothing answers) is reported on the run list within 60 s by a real TensorBoard,
and the remote calls are bounded (they end with an error instead of waiting forever)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from tests.cloud import emulators
from tests.cloud.tree import logdir_tree
from tests.fixtures.tensorboard_server import tensorboard
from torch_tb_profiler.ingest import cloud_fs, storage

pytestmark = pytest.mark.cloud
ROOT = Path(__file__).resolve().parents[2]


def test_a_stopped_s3_endpoint_is_reported_within_60_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("tensorboard")
    try:
        emu = emulators.start_moto()  # its own: stopping the session's would stall the other tests
    except emulators.Unavailable as exc:
        pytest.skip(str(exc))
    options = {
        "key": "testing",
        "secret": "testing",
        "endpoint_url": emu.endpoint,
    }
    try:
        storage.resolve("s3://stalls", options).fs.mkdir("stalls")
        loc = storage.resolve("s3://stalls/logs", options)
        loc.fs.pipe({f"{loc.root}/{rel}": data for rel, data in logdir_tree().items()})
        env = {
            **emu.env,
            "TORCH_PROFILER_CACHE_DIR": str(tmp_path / "cache"),
            "TORCH_PROFILER_PROCESSES": "1",
            "PYTHONPATH": str(ROOT),
        }
        with tensorboard("s3://stalls/logs", env=env, tmp=tmp_path) as tb:
            runs = tb.wait_loaded(timeout=90)
            assert runs["scan_error"] is None
            os.kill(emu.proc.pid, signal.SIGSTOP)
            try:
                stopped = time.monotonic()
                while True:
                    status, runs = tb.get("runs")  # answers from memory: never waits on the endpoint
                    assert status == 200
                    if runs["scan_error"]:
                        break
                    assert time.monotonic() - stopped < 60, "a stalled endpoint was not reported in 60 s"
                    time.sleep(1)
                assert "has not answered" in runs["scan_error"] or "timed out" in runs["scan_error"].lower()
                assert [r["state"] for r in runs["runs"]] == ["ready", "ready"]  # what was loaded stays
                # the calls themselves are bounded: a fresh listing ends with an error, not a hang (here
                # under short configured bounds; the server above ran with the defaults)
                monkeypatch.setenv(cloud_fs.CONNECT_TIMEOUT_ENV, "1")
                monkeypatch.setenv(cloud_fs.READ_TIMEOUT_ENV, "2")
                monkeypatch.setenv(cloud_fs.RETRIES_ENV, "1")
                connect, read, attempts = cloud_fs.remote_timeouts()
                assert (connect, read, attempts) == (1.0, 2.0, 1)
                started = time.monotonic()
                with pytest.raises(storage.StorageError):
                    storage.walk(storage.resolve("s3://stalls/logs", options))
                assert time.monotonic() - started < 4 * attempts * (connect + read)
            finally:
                os.kill(emu.proc.pid, signal.SIGCONT)
    finally:
        emu.stop()

"""TensorBoard served under --path_prefix (as behind a proxy): every URL of the app is relative, so
the tab and the standalone page work there too."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.e2e.test_app_samples import app_frame
from tests.fixtures.paths import SAMPLES
from tests.fixtures.tensorboard_server import PREFIX, free_port


def test_tab_and_standalone_under_path_prefix(tmp_path, page, rec):
    port = free_port()
    base = f"http://127.0.0.1:{port}/proxied/tb"
    exe = Path(sys.executable).with_name("tensorboard")
    log = open(tmp_path / "tb.log", "wb")  # noqa: SIM115 - closed in finally
    proc = subprocess.Popen(
        [
            str(exe),
            "--logdir",
            str(SAMPLES),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--path_prefix",
            "/proxied/tb",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "TORCH_PROFILER_SCAN_INTERVAL": "0.5"},
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{base}{PREFIX}/runs", timeout=5):
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "tb.log").read_text()
                time.sleep(0.3)
        page.goto(f"{base}/#pytorch_profiler")
        frame = app_frame(page)
        frame.wait_for_selector('[data-testid="view"][data-view="overview"] .section', timeout=60_000)
        assert frame.url.startswith(f"{base}{PREFIX}/index.html")
        page.goto(f"{base}{PREFIX}/index.html?view=Operator")
        page.wait_for_selector('[data-testid="op-table"] [role="cell"]', timeout=60_000)
        assert all(u.startswith(base) for u in rec.requests if "pytorch_profiler" in u)
        assert rec.errors == []
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()

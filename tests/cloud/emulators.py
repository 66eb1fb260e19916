"""Start and stop the cloud-storage emulators on 127.0.0.1 (free ports, stopped by pid).

Each `start_*` returns an Emulator or raises Unavailable (the emulator or its client library is not
installed: the tests skip with that reason). An installed emulator that fails to start raises
RuntimeError with the tail of its log.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

AZURITE_DIR = Path(__file__).resolve().parent / "azurite"
AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
AZURITE_ACCOUNT = "devstoreaccount1"

_live: dict[int, subprocess.Popen] = {}


class Unavailable(Exception):
    """The emulator or a client library is not installed (a skip reason, with the install hint)."""


@dataclass
class Emulator:
    name: str
    proc: subprocess.Popen
    port: int
    workdir: str
    start_seconds: float
    env: dict[str, str] = field(default_factory=dict)  # what a plain-URL client needs in its environment

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        stop_process(self.proc)
        shutil.rmtree(self.workdir, ignore_errors=True)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stop_process(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
    _live.pop(proc.pid, None)


@atexit.register
def _stop_leftovers() -> None:  # safety net: only the processes started here, by pid
    for proc in list(_live.values()):
        stop_process(proc)


def _require(module: str, hint: str) -> None:
    if importlib.util.find_spec(module) is None:
        raise Unavailable(f"{module} not installed ({hint})")


def launch(
    name: str,
    argv: list[str],
    port: int,
    ready_path: str,
    timeout: float = 30.0,
    env: dict[str, str] | None = None,
) -> Emulator:
    """Start argv, wait until http://127.0.0.1:port/ready_path answers (any HTTP status counts).

    env: variables added to this process's environment for the server.
    """
    workdir = tempfile.mkdtemp(prefix=f"tbp-{name}-")
    log_path = os.path.join(workdir, "server.log")
    t0 = time.perf_counter()
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            argv,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=workdir,
            env={**os.environ, **(env or {})},
        )
    _live[proc.pid] = proc
    url = f"http://127.0.0.1:{port}/{ready_path.lstrip('/')}"
    while True:
        if proc.poll() is not None:
            tail = Path(log_path).read_text(errors="replace")[-2000:]
            _live.pop(proc.pid, None)
            raise RuntimeError(f"{name} exited with {proc.returncode} before it was ready:\n{tail}")
        try:
            urllib.request.urlopen(url, timeout=1).close()
            break
        except urllib.error.HTTPError:
            break  # it answered
        except OSError:
            pass
        if time.perf_counter() - t0 > timeout:
            stop_process(proc)
            tail = Path(log_path).read_text(errors="replace")[-2000:]
            raise RuntimeError(f"{name} not ready on port {port} after {timeout} s:\n{tail}")
        time.sleep(0.05)
    return Emulator(name, proc, port, workdir, time.perf_counter() - t0)


def start_moto() -> Emulator:
    """moto's S3 server (python -m moto.server)."""
    _require("s3fs", "pip install 'torch-tb-profiler[s3]'")
    _require("moto", "pip install 'moto[s3]' flask flask-cors")
    port = free_port()
    argv = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]
    emu = launch("moto", argv, port, "moto-api/")
    emu.env = {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_ENDPOINT_URL_S3": emu.endpoint,
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    return emu


def azurite_bin() -> str:
    configured = os.environ.get("AZURITE_BLOB_BIN")
    path = Path(configured) if configured else AZURITE_DIR / "node_modules" / ".bin" / "azurite-blob"
    if not path.exists():
        raise Unavailable(
            f"azurite-blob not found at {path} (run scripts/setup_cloud.sh or set AZURITE_BLOB_BIN)"
        )
    if shutil.which("node") is None:
        raise Unavailable("node not found (Azurite needs Node.js >= 18)")
    return str(path)


def azurite_connection_string(port: int, key: str = AZURITE_KEY) -> str:
    return (
        f"DefaultEndpointsProtocol=http;AccountName={AZURITE_ACCOUNT};AccountKey={key};"
        f"BlobEndpoint=http://127.0.0.1:{port}/{AZURITE_ACCOUNT};"
    )


def start_azurite() -> Emulator:
    """Azurite's blob service (the pinned npm package in tests/cloud/azurite)."""
    _require("adlfs", "pip install 'torch-tb-profiler[blob]'")
    binary = azurite_bin()
    port = free_port()
    location = tempfile.mkdtemp(prefix="tbp-azurite-data-")
    argv = [binary, "--blobHost", "127.0.0.1", "--blobPort", str(port), "--location", location]
    # --skipApiVersionCheck: azure-storage-blob sends newer API versions than Azurite 3.35 knows.
    # --disableTelemetry: otherwise it posts to Azure and stalls on exit.
    argv += ["--silent", "--skipApiVersionCheck", "--disableTelemetry"]
    emu = launch("azurite", argv, port, f"{AZURITE_ACCOUNT}?comp=list")
    emu.env = {"AZURE_STORAGE_CONNECTION_STRING": azurite_connection_string(port)}
    original_stop = emu.stop

    def stop() -> None:
        original_stop()
        shutil.rmtree(location, ignore_errors=True)

    emu.stop = stop  # type: ignore[method-assign]
    return emu


# gcp-storage-emulator serves with http.server.HTTPServer, whose listen backlog of 5 overflows under
# gcsfs's concurrent requests (dropped SYNs retried after 1, 3, 7 s); raise it before the server starts.
_GCS_LAUNCHER = (
    "import http.server, sys; http.server.HTTPServer.request_queue_size = 1024; "
    "from gcp_storage_emulator.__main__ import main; main(sys.argv[1:])"
)


def start_gcs() -> Emulator:
    """gcp-storage-emulator (pure Python, in memory)."""
    _require("gcsfs", "pip install 'torch-tb-profiler[gs]'")
    _require("gcp_storage_emulator", "pip install gcp-storage-emulator")
    port = free_port()
    argv = [sys.executable, "-c", _GCS_LAUNCHER, "start", "--host", "127.0.0.1", "--port", str(port)]
    argv += ["--in-memory", "-q"]
    emu = launch("gcp-storage-emulator", argv, port, "storage/v1/b")
    emu.env = {"STORAGE_EMULATOR_HOST": emu.endpoint}
    return emu

"""``torch_tb_profiler.show`` in a real Jupyter kernel (jupyter_client + ipykernel): the cell's output is
an IFrame whose address answers the page, a second call reuses the server, the selection is in the
address, and the server (with its parser processes) stops with the kernel."""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.fixtures.paths import SAMPLES
from tests.fixtures.serve_server import serve_env
from tests.fixtures.tensorboard_server import PREFIX

jupyter_client = pytest.importorskip("jupyter_client.manager")
pytest.importorskip("ipykernel")


@pytest.fixture
def kernel(tmp_path: Path) -> Iterator[Any]:
    env = serve_env({"TORCH_PROFILER_INDEX_DIR": "off", "TORCH_PROFILER_PROCESSES": "1"})
    km, kc = jupyter_client.start_new_kernel(kernel_name="python3", env=env, cwd=str(tmp_path))
    try:
        yield km, kc
    finally:
        kc.stop_channels()
        if km.is_alive():
            km.shutdown_kernel(now=True)


def run_cell(kc: Any, code: str, timeout: float = 120) -> list[dict[str, Any]]:
    """Execute ``code``; the iopub messages it produced (display data, streams, errors)."""
    msg_id = kc.execute(code)
    out: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg = kc.get_iopub_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return out
        if msg["msg_type"] in ("display_data", "execute_result", "stream", "error"):
            out.append(msg)
    raise TimeoutError(code)


def iframe_src(messages: list[dict[str, Any]]) -> tuple[str, str]:
    errors = [m["content"] for m in messages if m["msg_type"] == "error"]
    assert not errors, errors
    html = [m["content"]["data"]["text/html"] for m in messages if m["msg_type"] == "display_data"]
    assert len(html) == 1, messages
    m = re.search(r'<iframe[^>]*src="([^"]+)"', html[0])
    assert m, html[0]
    return m.group(1).replace("&amp;", "&"), html[0]


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.loads(r.read())


def test_show_displays_the_page_and_stops_with_the_kernel(kernel: Any) -> None:
    km, kc = kernel
    cell = (
        "import torch_tb_profiler\n"
        f"torch_tb_profiler.show({str(SAMPLES)!r}, view='Trace', run='resnet_like_cpu', height=500)"
    )
    src, html = iframe_src(run_cell(kc, cell))
    assert 'height="500"' in html
    assert re.fullmatch(
        rf"http://127\.0\.0\.1:\d+{PREFIX}/index\.html\?view=Trace&run=resnet_like_cpu", src
    ), src
    with urllib.request.urlopen(src, timeout=30) as r:
        assert r.status == 200 and b'<div id="root">' in r.read()
    base = src.split(PREFIX)[0]
    deadline = time.monotonic() + 120
    while (runs := get_json(f"{base}{PREFIX}/runs"))["loading"] and time.monotonic() < deadline:
        time.sleep(0.3)
    assert "resnet_like_cpu" in [r["name"] for r in runs["runs"]]
    assert get_json(f"{base}/server")["tensorboard_imported"] is False

    # a second call reuses the server (same port), with its own selection
    src2, _ = iframe_src(run_cell(kc, f"torch_tb_profiler.show({str(SAMPLES)!r}, view='Operator')"))
    assert src2 == f"{base}{PREFIX}/index.html?view=Operator"
    # behind jupyter-server-proxy: the IFrame goes through Jupyter's own address, same server
    port = base.rsplit(":", 1)[1]
    src3, _ = iframe_src(
        run_cell(kc, f"torch_tb_profiler.show({str(SAMPLES)!r}, proxy_url='/proxy/{{port}}/')")
    )
    assert src3 == f"/proxy/{port}{PREFIX}/index.html"
    # one server in the kernel, with its parser process
    pid_out = run_cell(
        kc, "import os, torch_tb_profiler.serve.notebook as nb; print(os.getpid(), len(nb._servers))"
    )
    pid, count = pid_out[0]["content"]["text"].split()
    assert count == "1"
    kernel_process = psutil.Process(int(pid))
    children = kernel_process.children(recursive=True)
    assert children, "the server's parser process"

    km.shutdown_kernel(now=False)  # the kernel exits as it does when its notebook is closed
    _gone, alive = psutil.wait_procs([kernel_process, *children], timeout=15)
    assert alive == [], alive
    with pytest.raises((urllib.error.URLError, ConnectionError)):
        urllib.request.urlopen(f"{base}{PREFIX}/runs", timeout=5)


def test_bad_arguments_are_errors_in_the_cell(kernel: Any) -> None:
    _, kc = kernel
    out = run_cell(kc, f"import torch_tb_profiler\ntorch_tb_profiler.show({str(SAMPLES)!r}, height='tall')")
    errors = [m["content"] for m in out if m["msg_type"] == "error"]
    assert errors and errors[0]["ename"] == "ValueError" and "height" in errors[0]["evalue"]
    out = run_cell(kc, "import torch_tb_profiler.serve.notebook as nb; print(len(nb._servers))")
    assert out[0]["content"]["text"].strip() == "0"  # nothing was started for a refused call

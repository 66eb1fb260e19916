"""Jump to source: inside VS Code (plugin frame → TensorBoard page → webview page) a click on a stack
frame posts {filename, line − 1} to the webview page; elsewhere it shows and copies ``file:line``.

The harness page plays the VS Code webview: it is served from another origin (a second 127.0.0.1
port) and frames TensorBoard, which frames the plugin, exactly as the Tensorboard extension does."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.e2e.conftest import app_url
from tests.e2e.test_app_samples import app_frame

HARNESS = """<!doctype html><meta charset="utf-8"><title>webview harness</title>
<script>
window.__msgs = [];
window.addEventListener("message", (e) => window.__msgs.push({origin: e.origin, data: e.data}));
</script>
<iframe id="tb" src="{tb}/#pytorch_profiler" style="width:1240px;height:860px;border:0"></iframe>
"""


@pytest.fixture
def harness(tb_samples) -> Iterator[str]:
    body = HARNESS.replace("{tb}", tb_samples.url).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def stack_run(tb) -> tuple[str, str, str, dict]:
    """A sample run/worker/span and an operator whose call stack has a frame with file and line."""
    for run in tb.get("runs")[1]["runs"]:
        for worker in tb.get("workers", run=run["name"])[1]:
            span = tb.get("spans", run=run["name"], worker=worker)[1][0]
            _, ops = tb.get("operators", run=run["name"], worker=worker, span=span)
            for row in ops["rows"]:
                if not row["has_call_stack"]:
                    continue
                _, st = tb.get("operators/stack", run=run["name"], worker=worker, span=span, name=row["name"])
                frames = [f for f in st["stacks"][0]["frames"] if f["file"] and f["line"]]
                if frames:
                    return run["name"], worker, span, {"op": row["name"], "frame": frames[0]}
    pytest.skip("no sample operator with a call stack")


def open_stack(target, op: str) -> None:
    """In the Operator view: search the operator, expand its row, wait for the frame links."""
    target.wait_for_selector('[data-testid="op-table"] [role="cell"]')
    target.fill('[data-testid="op-table"] input[type="search"]', op)
    row = target.locator(
        '[data-testid="op-table"] .dt-item',
        has=target.locator(f'[data-col="name"] .tl-cell-name:text-is("{op}")'),
    )
    row.locator(".dt-toggle").click()
    target.wait_for_selector('[data-testid="stack"] a.frame-link')


def test_vscode_two_frames_deep_posts_message(tb_samples, harness, page, rec):
    run, worker, span, want = stack_run(tb_samples)
    page.goto(harness)
    frame = app_frame(page)
    frame.wait_for_selector('[data-testid="select-run"]')
    frame.select_option('[data-testid="select-run"]', run)
    frame.select_option('[data-testid="select-view"]', "Operator")
    frame.wait_for_selector('[data-testid="select-worker"]')
    frame.select_option('[data-testid="select-worker"]', worker)
    if frame.locator('[data-testid="select-span"]').count():
        frame.select_option('[data-testid="select-span"]', span)
    open_stack(frame, want["op"])
    f = want["frame"]
    link = frame.locator(f'a.frame-link[data-file="{f["file"]}"][data-line="{f["line"]}"]').first
    link.click()
    page.wait_for_function("() => window.__msgs.length > 0")
    msgs = page.evaluate("window.__msgs")
    assert msgs == [{"origin": tb_samples.url, "data": {"filename": f["file"], "line": f["line"] - 1}}]
    assert "in VS Code" in frame.inner_text('[data-testid="stack-note"]')
    # a path prefix rule maps the recorded path to a local one before it is sent
    prefix = f["file"].rsplit("/", 1)[0] + "/" if "/" in f["file"] else f["file"]
    frame.click('[data-testid="path-rules"] summary')
    frame.fill('[data-testid="path-rules"] textarea', f"{prefix}=/home/me/checkout/")
    link.click()
    page.wait_for_function("() => window.__msgs.length > 1")
    mapped = "/home/me/checkout/" + f["file"][len(prefix) :]
    assert page.evaluate("window.__msgs[1].data") == {"filename": mapped, "line": f["line"] - 1}
    assert rec.errors == []


def test_plain_tensorboard_tab_copies_instead(tb_samples, page, rec):
    run, worker, span, want = stack_run(tb_samples)
    page.goto(app_url(tb_samples, run=run, worker=worker, span=span, view="Operator"))
    page.evaluate("window.__msgs = []; window.addEventListener('message', e => window.__msgs.push(e.data))")
    open_stack(page, want["op"])
    f = want["frame"]
    page.locator(f'a.frame-link[data-file="{f["file"]}"][data-line="{f["line"]}"]').first.click()
    page.wait_for_selector('[data-testid="stack-note"]')
    assert f"{f['file']}:{f['line']}" in page.inner_text('[data-testid="stack-note"]')
    assert page.evaluate("window.__msgs") == []
    assert rec.errors == []

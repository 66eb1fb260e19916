"""Tables and call stacks in chromium on samples/ (issue 24, items 16–19 and 22): the Module tree sorts
(siblings within their parent) and exports CSV; column headers explain themselves on hover; grouping by
input shape on a trace without shapes says how to record them, and regrouping with a stack open sends
no bad request; library frames hide with one remembered toggle and a frame links to vscode://; tables
fill the window's height and follow its resizes."""

from __future__ import annotations

import csv
import io
import itertools
from pathlib import Path

import pytest

from tests.e2e.conftest import app_url
from tests.e2e.test_jump_to_source import open_stack

RESNET = {"run": "resnet_like_cpu", "worker": "worker0", "span": "1"}
LIGHTNING = {"run": "lightning_cpu/lightning_logs/version_0", "worker": "perf.fit.training_step"}
BACKWARD_OP = "autograd::engine::evaluate_function: ConvolutionBackward0"


def _until(page, check, what: str) -> None:
    """Poll a Python check (the page's CSP forbids evaluating strings, so no wait_for_function)."""
    for _ in range(100):
        if check():
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"timed out waiting for {what}")


def _module_rows(page) -> list[dict]:
    return page.locator('[data-testid="module-row"]').evaluate_all(
        """rs => rs.map(r => ({name: r.dataset.name, depth: Number(r.dataset.depth),
             host: Number(r.querySelector('td[data-col="host_total"]').dataset.value)}))"""
    )


def _siblings(rows: list[dict]) -> list[list[float]]:
    """The host totals of each parent's children (and of the roots), in the order shown."""
    groups: dict[int, list[float]] = {}
    stack: list[int] = []  # index of the last row at each depth
    for i, r in enumerate(rows):
        del stack[r["depth"] :]
        parent = stack[-1] if stack else -1
        groups.setdefault(parent, []).append(r["host"])
        stack.append(i)
    return list(groups.values())


def test_module_tree_sorts_within_parents_and_exports_csv(tb_samples, page, rec):
    page.goto(app_url(tb_samples, view="Module", **RESNET))
    page.wait_for_selector('[data-testid="module-table"]')
    page.click('[data-testid="expand-all"]')
    tree_order = [r["name"] for r in _module_rows(page)]
    head = page.locator('[data-testid="module-table"] th[data-col="host_total"]')
    head.click()
    assert head.get_attribute("aria-sort") == "descending"
    rows = _module_rows(page)
    assert len(rows) == len(tree_order) and [r["name"] for r in rows] != tree_order
    for sib in _siblings(rows):
        assert sib == sorted(sib, reverse=True)
    # a child never leaves its parent: each row's depth is at most one more than the row above it
    assert all(b["depth"] <= a["depth"] + 1 for a, b in itertools.pairwise(rows))
    head.click()
    assert head.get_attribute("aria-sort") == "ascending"
    for sib in _siblings(_module_rows(page)):
        assert sib == sorted(sib)
    # by name (text sorts A→Z first)
    page.click('[data-testid="module-table"] th[data-col="name"]')
    for names in _sibling_names(_module_rows(page)):
        assert names == sorted(names, key=str.lower)

    page.click('[data-testid="module-table"] th[data-col="host_total"]')
    with page.expect_download() as dl:
        page.locator('[data-testid="module-table"] button', has_text="Export CSV").click()
    assert dl.value.suggested_filename.startswith("modules-resnet_like_cpu")
    text = Path(dl.value.path()).read_text(encoding="utf-8")
    table = list(csv.reader(io.StringIO(text)))
    assert table[0][:3] == ["Module", "Path", "Class"] and "Host total (µs)" in table[0]
    shown = _module_rows(page)
    assert [r[0] for r in table[1:]] == [r["name"] for r in shown]
    col = table[0].index("Host total (µs)")
    assert [float(r[col]) for r in table[1:]] == pytest.approx([r["host"] for r in shown])
    assert table[2][1] == f"{shown[0]['name']} › {shown[1]['name']}"
    assert rec.errors == []


def _sibling_names(rows: list[dict]) -> list[list[str]]:
    groups: dict[int, list[str]] = {}
    stack: list[int] = []
    for i, r in enumerate(rows):
        del stack[r["depth"] :]
        groups.setdefault(stack[-1] if stack else -1, []).append(r["name"])
        stack.append(i)
    return list(groups.values())


def test_headers_explain_themselves(tb_samples, page, rec):
    page.goto(app_url(tb_samples, view="Operator", **RESNET))
    page.wait_for_selector('[data-testid="op-table"] [role="cell"]')
    title = page.locator(
        '[data-testid="op-table"] [data-col="host_self"][role="columnheader"]'
    ).get_attribute("title")
    assert "children" in title and "click to sort" in title.lower()
    page.goto(app_url(tb_samples, view="Module", **RESNET))
    share = page.locator('[data-testid="module-table"] th[data-col="step_share"]')
    assert "steps" in share.get_attribute("title")
    assert rec.errors == []


def test_shape_grouping_without_shapes_says_how_to_record(tb_samples, page, rec):
    page.goto(app_url(tb_samples, view="Operator", group="name_input_shape", **LIGHTNING))
    hint = page.locator('[data-testid="no-shapes"]')
    hint.wait_for()
    assert "record_shapes=True" in hint.inner_text()
    # a trace with shapes shows no hint
    page.goto(app_url(tb_samples, view="Operator", group="name_input_shape", **RESNET))
    page.wait_for_selector('[data-testid="op-table"] [data-col="input_shape"][role="cell"]')
    assert page.locator('[data-testid="no-shapes"]').count() == 0
    assert rec.errors == []


def test_regrouping_with_a_stack_open_sends_no_bad_request(tb_samples, page, rec):
    bad: list[str] = []
    page.on("response", lambda r: bad.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.goto(app_url(tb_samples, view="Operator", **RESNET))
    open_stack(page, BACKWARD_OP)
    page.select_option('[data-testid="select-group"]', "name_input_shape")
    page.wait_for_selector('[data-testid="op-table"] [data-col="input_shape"][role="cell"]')
    page.wait_for_timeout(500)
    # a row grouped by shape whose calls had no shapes ("") opens its stacks too
    page.fill('[data-testid="op-table"] input[type="search"]', BACKWARD_OP)
    page.wait_for_timeout(500)
    page.locator('[data-testid="op-table"] .dt-toggle').first.click()
    page.wait_for_selector('[data-testid="stack-groups"]')
    page.select_option('[data-testid="select-group"]', "name")
    page.wait_for_timeout(800)
    assert bad == []
    assert page.locator('[data-testid="error"]').count() == 0
    assert rec.errors == []


def test_library_frames_hide_and_vscode_link(tb_samples, page, rec):
    page.goto(app_url(tb_samples, view="Operator", **RESNET))
    page.evaluate(
        "localStorage.setItem('torch-tb-profiler.path-rules', 'make_samples.py=/home/me/proj/make_samples.py')"
    )
    page.reload()
    open_stack(page, BACKWARD_OP)
    stack = page.locator('[data-testid="stack"]').first
    files = stack.locator("a.frame-link").evaluate_all("as => as.map(a => a.dataset.file)")
    assert "torch/autograd/graph.py" in files and "make_samples.py" in files
    # a user frame links to vscode:// at its mapped absolute path; a copy button copies file:line
    vs = stack.locator('a.frame-vscode[data-file="make_samples.py"]').first
    assert vs.get_attribute("href") == "vscode://file/home/me/proj/make_samples.py:98"
    stack.locator("a.frame-copy").first.click()
    page.wait_for_selector('[data-testid="stack-note"]')
    assert ":" in page.inner_text('[data-testid="stack-note"]')

    page.locator('[data-testid="hide-library"]').first.check()
    _until(page, lambda: "torch/autograd/graph.py" not in _files(page), "library frames to hide")
    assert "make_samples.py" in _files(page)
    assert "library frame" in page.locator('[data-testid="library-hidden"]').first.inner_text()
    # the frames left keep their numbers in the whole stack (make_samples.py is the 5th frame)
    first = page.locator('[data-testid="stack"] a.frame-link').first
    assert first.evaluate("a => a.parentElement.value") == files.index(first.get_attribute("data-file")) + 2
    # remembered across a reload
    page.reload()
    open_stack(page, BACKWARD_OP)
    assert page.locator('[data-testid="hide-library"]').first.is_checked()
    assert "torch/autograd/graph.py" not in _files(page)
    page.locator('[data-testid="hide-library"]').first.uncheck()
    _until(page, lambda: "torch/autograd/graph.py" in _files(page), "library frames to show again")
    assert rec.errors == []


def _files(page) -> list[str]:
    return page.locator('[data-testid="stack"] a.frame-link').evaluate_all(
        "as => as.map(a => a.dataset.file)"
    )


def _height(page, selector: str) -> float:
    return page.locator(selector).first.bounding_box()["height"]


def test_tables_fill_the_window_height(tb_samples, page, rec):
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(app_url(tb_samples, view="Operator", **RESNET))
    page.wait_for_selector('[data-testid="op-table"] [role="cell"]')
    top = page.locator(".topbar").bounding_box()["height"]
    h = _height(page, '[data-testid="op-table"] .dt-scroll')
    assert 900 - top - 140 < h <= 900 - top
    rows = page.locator('[data-testid="op-table"] .dt-item').count()
    page.set_viewport_size({"width": 1280, "height": 1400})
    _until(page, lambda: _height(page, '[data-testid="op-table"] .dt-scroll') > h + 400, "the table to grow")
    assert _height(page, '[data-testid="op-table"] .dt-scroll') <= 1400 - top
    assert page.locator('[data-testid="op-table"] .dt-item').count() > rows  # more rows drawn
    # the module tree too: all its rows fit in a tall window
    page.goto(app_url(tb_samples, view="Module", **RESNET))
    page.wait_for_selector('[data-testid="module-table"]')
    page.click('[data-testid="expand-all"]')
    box = page.locator(".mt-scroll")
    _until(
        page,
        lambda: box.evaluate("e => e.scrollHeight <= e.clientHeight + 1"),
        "the module tree to fit in the window",
    )
    page.set_viewport_size({"width": 1280, "height": 600})
    _until(page, lambda: _height(page, ".mt-scroll") <= 600, "the module tree to shrink")
    assert rec.errors == []

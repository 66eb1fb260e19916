"""Inside TensorBoard (issue 24, items 1-3): Back and Forward walk the selector changes with the frame and
TensorBoard's address agreeing, a pasted `#pytorch_profiler&…` link is followed without TensorBoard's page
reloading, and "Open in new tab" opens the view shown, before any change as after."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

from tests.e2e.test_app_samples import app_frame
from tests.fixtures.tensorboard_server import PREFIX

RUN = "resnet_like_cpu"
OP_TABLE = '[data-testid="view"][data-view="operator"] [data-testid="op-table"]'


def _tab_state(page) -> dict[str, str]:
    """TensorBoard's address as the plugin's key=value pairs."""
    parts = page.evaluate("location.hash").lstrip("#").split("&")
    assert parts[0] == "pytorch_profiler"
    return dict(p.split("=", 1) for p in parts[1:])


def _spans(frame) -> list[str]:
    return frame.locator('[data-testid="select-span"] option').evaluate_all("os => os.map(o => o.value)")


def _wait_hash(page, **kv: str) -> None:
    cond = " && ".join(f"location.hash.includes('{k}={v}')" for k, v in kv.items())
    page.wait_for_function(f"() => {cond}", timeout=20_000)


def test_back_walks_selector_changes_and_the_addresses_agree(tb_samples, page, rec):
    page.goto(f"{tb_samples.url}/#pytorch_profiler&run={RUN}&view=Operator")
    frame = app_frame(page)
    frame.wait_for_selector(OP_TABLE)
    first, second = _spans(frame)[:2]
    assert frame.input_value('[data-testid="select-span"]') == first
    page.evaluate("window.__sameTensorBoard = true")

    frame.select_option('[data-testid="select-span"]', second)
    _wait_hash(page, span=second)
    frame.wait_for_selector(OP_TABLE)
    frame.select_option('[data-testid="select-group"]', "name_input_shape")
    _wait_hash(page, group="name_input_shape")
    frame.select_option('[data-testid="select-view"]', "Overview")
    _wait_hash(page, view="Overview")
    frame.wait_for_selector('[data-testid="view"][data-view="overview"]')

    page.evaluate("history.back()")  # undo the view change: Operator, grouped by shape, second span
    frame.wait_for_selector(OP_TABLE)
    _wait_hash(page, view="Operator")
    assert frame.input_value('[data-testid="select-span"]') == second
    assert frame.input_value('[data-testid="select-group"]') == "name_input_shape"
    assert _tab_state(page)["span"] == second and _tab_state(page)["group"] == "name_input_shape"

    page.evaluate("history.back()")  # undo the grouping
    page.wait_for_function("() => !location.hash.includes('group=')", timeout=20_000)
    frame.wait_for_function(
        "() => document.querySelector('[data-testid=\"select-group\"]')?.value === 'name'"
    )
    assert frame.input_value('[data-testid="select-span"]') == second

    page.evaluate(
        "history.back()"
    )  # undo the span change: the first span's Operator view, not the first run's Overview
    _wait_hash(page, span=first)
    frame.wait_for_function(
        f"() => document.querySelector('[data-testid=\"select-span\"]')?.value === '{first}'", timeout=20_000
    )
    frame.wait_for_selector(OP_TABLE)
    assert frame.input_value('[data-testid="select-run"]') == RUN
    assert _tab_state(page)["view"] == "Operator" and _tab_state(page)["run"] == RUN

    page.evaluate("history.forward()")
    _wait_hash(page, span=second)
    frame.wait_for_function(
        f"() => document.querySelector('[data-testid=\"select-span\"]')?.value === '{second}'", timeout=20_000
    )
    assert page.evaluate("window.__sameTensorBoard") is True  # TensorBoard's page never reloaded
    assert app_frame(page) is frame
    assert rec.errors == []


def test_a_pasted_link_is_followed_without_reloading_tensorboard(tb_samples, page, rec):
    page.goto(f"{tb_samples.url}/#pytorch_profiler&run={RUN}&view=Overview")
    frame = app_frame(page)
    frame.wait_for_selector('[data-testid="view"][data-view="overview"]')
    page.evaluate("window.__sameTensorBoard = true")
    second = _spans(frame)[1]
    page.evaluate(
        f"location.hash = '#pytorch_profiler&run={RUN}&view=Operator&worker=worker0&span={second}&group=name_input_shape'"
    )
    frame.wait_for_selector(OP_TABLE, timeout=20_000)
    assert frame.input_value('[data-testid="select-span"]') == second
    assert frame.input_value('[data-testid="select-group"]') == "name_input_shape"
    assert page.evaluate("window.__sameTensorBoard") is True
    assert rec.errors == []


def test_open_in_new_tab_before_any_change_keeps_the_deep_link(tb_samples, page, rec):
    # a link that names everything: the frame has nothing to write back, so its own address stays bare
    spans = page.request.get(f"{tb_samples.url}{PREFIX}/spans?run={RUN}&worker=worker0").json()
    span = spans[-1]
    page.goto(
        f"{tb_samples.url}/#pytorch_profiler&run={RUN}&view=Operator&worker=worker0&span={span}&group=name_input_shape"
    )
    frame = app_frame(page)
    frame.wait_for_selector(OP_TABLE)
    assert frame.input_value('[data-testid="select-span"]') == span
    href = frame.get_attribute("a:has-text('Open in new tab')", "href")
    q = {k: v[0] for k, v in parse_qs(urlparse(href).query).items()}
    assert q == {
        "run": RUN,
        "view": "Operator",
        "worker": "worker0",
        "span": span,
        "group": "name_input_shape",
    }
    with page.context.expect_page() as info:
        frame.click("a:has-text('Open in new tab')")
    tab = info.value
    tab.wait_for_selector(OP_TABLE)
    assert tab.input_value('[data-testid="select-group"]') == "name_input_shape"
    assert tab.input_value('[data-testid="select-span"]') == span
    assert rec.errors == []

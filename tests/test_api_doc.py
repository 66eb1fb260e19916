"""docs/api.md is the one definition of every answer's fields: the server must send what its examples
show, under those names, and nothing it does not document.

For each route with a JSON example, a real TensorBoard (on samples/ and a built GPU trace) is asked the
route, and the answer's structure is compared with the example's, recursively: every key of an example
object is in the answer (a renamed or dropped field fails), and every key of the answer is in the
example or named in backquotes in that route's section (an undocumented field fails). Objects keyed by
data (workers, steps, metrics, devices) are compared through their first value; lists through their
first item. The frontend's readers are checked against the same examples (frontend/test/apiDoc.test.ts).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.paths import SAMPLES
from tests.fixtures.tensorboard_server import TensorBoard, tensorboard
from tests.fixtures.trace_builder import TraceBuilder

DOCS = Path(__file__).resolve().parents[1] / "docs"
API_MD = DOCS / "api.md"
CLI_MD = DOCS / "cli.md"  # the diff route's example: `compare --json`, which adds `verdict`
ELIDED = "…"
# keys whose objects are keyed by data, with how many levels of such keys follow (0: not compared)
DATA_KEYED = {
    "overlap": 1,
    "wait": 1,
    "comm_ops": 1,
    "p2p": 1,
    "gpu_info": 3,
    "cells": 1,
    "distribution": 1,
    "counters": 1,
    "average": 1,
    "evidence": 0,
    "args": 0,
    "versions": 0,
    "threads": 0,
    "labels": 0,
    "parts": 0,
    "breakdown_us": 1,
    "peaks": 1,
    "ridge": 1,
}
# documented keys a trace may not give (each named in its route's prose)
OPTIONAL = {"overview.environment.distributed", "diff.kernels[0].baseline_name"}


def sections() -> dict[str, tuple[Any, str]]:
    """route -> (its JSON example, its section's text), for the routes whose section has an example."""
    text = API_MD.read_text(encoding="utf-8")
    out: dict[str, tuple[Any, str]] = {}
    heads = list(re.finditer(r"^### `([a-z_/]+)[^`]*`", text, re.MULTILINE))
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        body = text[head.end() : end]
        body = body[: m.start()] if (m := re.search(r"^## ", body, re.MULTILINE)) else body
        block = re.search(r"```json\n(.*?)```", body, re.DOTALL)
        if block is None:
            continue
        raw = re.sub(r"\[…\]", "[]", block.group(1))
        raw = re.sub(r",\s*…\s*\]", "]", raw)
        out[head.group(1)] = (json.loads(raw), body)
    cli = CLI_MD.read_text(encoding="utf-8")
    block = re.search(r"```json\n(\{\n  \"baseline\".*?)```", cli, re.DOTALL)
    assert block is not None, "docs/cli.md has the compare --json example"
    compare = json.loads(block.group(1))
    del compare["verdict"]
    after = cli[block.end() :]
    out["diff"] = (compare, after[: after.find("\n## ")] if "\n## " in after else after)
    return out


def differences(
    example: Any, answer: Any, prose: set[str], path: str = "", data_levels: int = -1
) -> list[str]:
    """Where the answer's structure departs from the example's (empty when it conforms); ``path`` names
    the place in messages (the route at the top)."""
    if example == ELIDED or answer is None or example is None:
        return []
    if isinstance(example, list):
        if not isinstance(answer, list):
            return [f"{path}: documented as a list, sent {type(answer).__name__}"]
        if not example or not answer:
            return []
        return differences(example[0], answer[0], prose, f"{path}[0]", data_levels)
    if not isinstance(example, dict):
        return []
    if not isinstance(answer, dict):
        return [f"{path}: documented as an object, sent {type(answer).__name__}"]
    if not example:  # `{}`: "shaped like its neighbours"
        return []
    if data_levels > 0:  # keyed by data: compare the first values
        if not example or not answer:
            return []
        first_ex, first_ans = next(iter(example.values())), next(iter(answer.values()))
        return differences(first_ex, first_ans, prose, f"{path}.<key>", data_levels - 1)
    out: list[str] = []
    documented = set(example) - {ELIDED}
    missing = [k for k in sorted(documented - set(answer)) if f"{path}.{k}" not in OPTIONAL]
    out += [f"{path}.{k}: documented, not sent" for k in missing]
    if ELIDED not in example:
        out += [f"{path}.{k}: sent, not documented" for k in sorted(set(answer) - documented - prose)]
    for key in sorted(documented & set(answer)):
        levels = DATA_KEYED.get(key, -1)
        if key == "steps" and isinstance(example[key], dict):
            levels = 1  # per-step figures keyed by step number
        if levels == 0:
            continue
        out += differences(example[key], answer[key], prose, f"{path}.{key}", levels)
    return out


def backquoted(text: str) -> set[str]:
    return set(re.findall(r"`([a-z_][a-z0-9_]*)`", text))


def test_differences_catches_renamed_missing_and_undocumented_fields() -> None:
    example = {"rows": [{"name": "a", "total_us": 1.0}], "steps": {"2": {"x": 1}}}
    assert (
        differences(example, {"rows": [{"name": "b", "total_us": 2.0}], "steps": {"7": {"x": 3}}}, set())
        == []
    )
    renamed = {"rows": [{"name": "b", "total": 2.0}], "steps": {}}
    assert differences(example, renamed, set()) == [
        ".rows[0].total_us: documented, not sent",
        ".rows[0].total: sent, not documented",
    ]
    assert differences(example, renamed, {"total"}) == [".rows[0].total_us: documented, not sent"]
    assert differences(example, {"rows": {}, "steps": {}}, set()) == [
        ".rows: documented as a list, sent dict"
    ]


# ---- against a real TensorBoard -------------------------------------------------------------------


@pytest.fixture(scope="module")
def tb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoard]:
    root = tmp_path_factory.mktemp("logdir")
    for name in ("ddp_gloo_2ranks", "resnet_like_cpu", "lightning_cpu"):
        shutil.copytree(SAMPLES / name, root / name)
    b = TraceBuilder(style="legacy")  # the GPU fields: kernels, memory records, device properties
    b.step(1, 0, 1000)
    ext = b.op("aten::mm", 10, 500, input_dims=[[64, 128], [128, 32]], input_types=["float", "float"])
    b.launch("volta_sgemm_128x64_nn", 20, 5, 600, 50, ext_id=ext)
    b.memory(30, 256, addr=1, total_allocated=256, total_reserved=1024, device_type=1, device_id=0)
    b.memory(400, -256, addr=1, total_allocated=0, total_reserved=1024, device_type=1, device_id=0)
    b.write(root / "gpu_run" / "worker0.pt.trace.json.gz")
    for path in root.rglob("*.json*"):
        os.utime(path, (time.time() - 60,) * 2)
    env = {"TORCH_PROFILER_INDEX_DIR": "off"}
    with tensorboard(root, env=env, tmp=tmp_path_factory.mktemp("tblog")) as server:
        server.wait_loaded(120)
        yield server


def first_ok(tb: TensorBoard, route: str, candidates: list[dict[str, Any]]) -> Any:
    for params in candidates:
        status, body = tb.get(route, **params)
        if status == 200:
            return body
    raise AssertionError(f"{route}: no candidate profile answered 200 ({candidates})")


def profiles(tb: TensorBoard) -> list[dict[str, str]]:
    out = []
    for run in ("gpu_run", "resnet_like_cpu", "lightning_cpu", "ddp_gloo_2ranks"):
        _, workers = tb.get("workers", run=run)
        for worker in workers or []:
            out.append({"run": run, "worker": worker})
    return out


def answers(tb: TensorBoard) -> dict[str, Any]:
    """One answer per documented route, from a profile that has what the route shows."""
    every = profiles(tb)
    gpu = [p for p in every if p["run"] == "gpu_run"]
    out: dict[str, Any] = {"runs": tb.get("runs")[1]}
    out["overview"] = first_ok(tb, "overview", gpu)
    out["operators"] = first_ok(tb, "operators", [{**p, "group_by": "name_input_shape"} for p in every])
    stacked = []
    for p in every:
        _, ops = tb.get("operators", **p)
        stacked += [{**p, "name": r["name"]} for r in (ops or {}).get("rows", []) if r.get("has_call_stack")][
            :1
        ]
    out["operators/stack"] = first_ok(tb, "operators/stack", stacked)
    out["kernels"] = first_ok(tb, "kernels", [{**p, "group_by": "name_op_launch"} for p in gpu])
    out["roofline"] = first_ok(tb, "roofline", gpu)
    for route in ("memory/devices", "memory/curve", "memory/events", "memory/stats"):
        out[route] = first_ok(tb, route, gpu + every)
    out["distributed"] = first_ok(tb, "distributed", [{"run": "ddp_gloo_2ranks"}])
    out["modules"] = first_ok(tb, "modules", every)
    node = {**out_params(tb, "modules", every), "node": 1}
    out["modules/operators"] = first_ok(tb, "modules/operators", [node])
    out["timeline/tracks"] = tracks = first_ok(tb, "timeline/tracks", gpu)
    window = {**gpu[0], "start_us": tracks["start_us"], "end_us": tracks["end_us"], "format": "json"}
    out["timeline"] = first_ok(tb, "timeline", [window])
    ids = [i["id"] for i in out["timeline"]["items"] if i["id"] and i["id"].startswith("dev:")]
    out["timeline/event"] = first_ok(tb, "timeline/event", [{**gpu[0], "id": ids[0]}])
    out["timeline/critical_path"] = first_ok(tb, "timeline/critical_path", [{**gpu[0], "step": 1}])
    base_worker = tb.get("workers", run="resnet_like_cpu")[1][0]
    base_span = tb.get("spans", run="resnet_like_cpu", worker=base_worker)[1][0]
    base = {"base_run": "resnet_like_cpu", "base_worker": base_worker, "base_span": base_span}
    out["diff"] = first_ok(tb, "diff", [{**gpu[0], **base}])
    return out


def out_params(tb: TensorBoard, route: str, candidates: list[dict[str, Any]]) -> dict[str, Any]:
    for params in candidates:
        if tb.get(route, **params)[0] == 200:
            return params
    raise AssertionError(f"{route}: no profile answers")


def test_every_documented_example_matches_the_answer_the_server_sends(tb: TensorBoard) -> None:
    docs = sections()
    got = answers(tb)
    assert set(docs) <= set(got), f"documented routes this test does not ask: {set(docs) - set(got)}"
    problems = []
    for route, (example, body) in sorted(docs.items()):
        problems += [d for d in differences(example, got[route], backquoted(body), route)]
    assert not problems, "docs/api.md and the answers disagree:\n" + "\n".join(problems)

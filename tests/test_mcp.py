"""``torch-tb-profiler mcp LOGDIR`` through the MCP SDK's own stdio client: the tools listed, each called
on samples/ plus a GPU trace (built, and the shared V100 trace when ../shared/traces is there), their
figures equal to ``summary --json`` / ``compare --json`` on the same logdir, bad arguments answered as
tool errors (``isError``) while the server keeps serving, nothing outside the logdir, and the metric
definitions as resources (the package links to docs/metrics.md; a wheel holds its text)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.paths import SAMPLES, SHARED_TRACES
from tests.fixtures.serve_server import serve_env
from tests.fixtures.trace_builder import TraceBuilder

mcp_client = pytest.importorskip("mcp.client.stdio", reason="the [mcp] extra is not installed")
from mcp import ClientSession  # noqa: E402

KINETO_GPU = (
    SHARED_TRACES / "kineto_samples" / "resnet50_num_workers_0" / "worker0.1623143089861.pt.trace.json.gz"
)
ENV = {"TORCH_PROFILER_INDEX_DIR": "off", "TORCH_PROFILER_PROCESSES": "1"}
TOOLS = {
    "list_runs",
    "overview",
    "operators",
    "kernels",
    "memory",
    "distributed",
    "modules",
    "roofline",
    "analyses",
    "compare",
    "timeline_search",
    "event",
}


@pytest.fixture(scope="module")
def logdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("logdir")
    for name in ("ddp_gloo_2ranks", "resnet_like_cpu"):
        shutil.copytree(SAMPLES / name, root / name)
    b = TraceBuilder(style="legacy")
    b.step(1, 0, 1000)
    ext = b.op("aten::mm", 10, 500)
    b.launch("volta_sgemm_128x64_nn", 20, 5, 600, 50, ext_id=ext)
    b.memory(30, 256, addr=1, total_allocated=256, total_reserved=1024, device_type=1, device_id=0)
    b.memory(400, -256, addr=1, total_allocated=0, total_reserved=1024, device_type=1, device_id=0)
    b.write(root / "gpu_run" / "worker0.pt.trace.json.gz")
    if KINETO_GPU.exists():
        (root / "kineto_gpu").mkdir()
        shutil.copy(KINETO_GPU, root / "kineto_gpu" / KINETO_GPU.name)
    for path in root.rglob("*.json*"):
        os.utime(path, (time.time() - 60,) * 2)
    return root


def cli_json(*args: str) -> Any:
    cmd = [sys.executable, "-m", "torch_tb_profiler", *args, "--json"]
    done = subprocess.run(cmd, env=serve_env(ENV), capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


async def _session_calls(logdir: Path, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    params = mcp_client.StdioServerParameters(
        command=sys.executable, args=["-m", "torch_tb_profiler", "mcp", str(logdir)], env=serve_env(ENV)
    )
    out: dict[str, Any] = {}
    async with mcp_client.stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        out["tools"] = (await session.list_tools()).tools
        out["resources"] = (await session.list_resources()).resources
        out["metrics-steps"] = await session.read_resource("metrics://steps")
        for i, (name, arguments) in enumerate(calls):
            out[f"{i}:{name}"] = await session.call_tool(name, arguments)
    return out


def call_all(logdir: Path, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """The calls' answers, from a loop of their own on a thread of their own: in the full suite the
    browser tests' Playwright keeps an event loop running on the main thread."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, _session_calls(logdir, calls)).result()


def text(result: Any) -> str:
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def ok(result: Any) -> Any:
    assert not result.is_error, text(result)
    return json.loads(text(result))


@pytest.fixture(scope="module")
def expected(logdir: Path) -> dict[str, Any]:
    return cli_json("summary", str(logdir), "--top", "10")


def _profiles(expected: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in expected["profiles"] if p["device_type"] is not None]


def test_every_tool_answers_the_summary_figures(logdir: Path, expected: dict[str, Any]) -> None:
    profiles = _profiles(expected)
    assert {p["run"] for p in profiles} >= {"gpu_run", "resnet_like_cpu", "ddp_gloo_2ranks"}
    calls: list[tuple[str, dict[str, Any]]] = [("list_runs", {})]
    for p in profiles:
        who = {"run": p["run"], "worker": p["worker"], "span": p["span"]}
        calls += [("overview", who), ("operators", who), ("kernels", who), ("memory", who), ("modules", who)]
        calls += [("roofline", who), ("analyses", who)]
    gpu = {"run": "gpu_run", "worker": "worker0"}
    base = {"base_run": "resnet_like_cpu", "base_worker": "worker0", "base_span": "1"}
    calls += [
        ("distributed", {"run": "ddp_gloo_2ranks"}),
        ("compare", {**gpu, **base, "fail_on": ["step_time>+5%"]}),
        ("timeline_search", {**gpu, "q": "sgemm"}),
        ("operators", {**gpu, "q": "MM", "sort": "calls", "top": 1}),
    ]
    got = call_all(logdir, calls)
    assert {t.name for t in got["tools"]} == TOOLS
    assert all(t.annotations and t.annotations.read_only_hint for t in got["tools"])
    answers = {k: v for k, v in got.items() if ":" in k}
    runs = ok(answers["0:list_runs"])["runs"]
    listed = {(r["run"], w, s) for r in runs for w, spans in r["workers"].items() for s in spans}
    assert listed == {(p["run"], p["worker"], p["span"]) for p in profiles}
    i = 1
    for p in profiles:
        names = ("overview", "operators", "kernels", "memory", "modules", "roofline", "analyses")
        overview, operators, kernels, memory, modules, roofline, analyses = (
            ok(answers[f"{i + k}:{n}"]) for k, n in enumerate(names)
        )
        i += len(names)
        where = f"{p['run']}/{p['worker']}/{p['span']}"
        for key in ("steps", "step_time_us", "breakdown_us", "gpus", "memory", "device_type"):
            assert overview[key] == p[key], (where, key)
        assert [(r["id"], r["text"]) for r in overview["recommendations"]] == [
            (r["id"], r["text"]) for r in p["recommendations"]
        ], where
        assert all(isinstance(r["evidence"], dict) for r in overview["recommendations"]), where
        assert operators["operators"] == p["operators"], where
        assert (
            [{k: r[k] for k in p["kernels"][0]} for r in kernels["kernels"]] == p["kernels"]
            if p["kernels"]
            else kernels["kernels"] == []
        ), where
        assert [
            {k: d[k] for k in ("device", "peak_allocated_bytes", "peak_reserved_bytes")}
            for d in memory["devices"]
        ] == p["memory"], where
        assert modules["modules"] == p["modules"], where
        assert roofline["roofline"] == p["roofline"], where
        assert analyses["analyses"] == p["analyses"], where
    gpu_kernels = next(
        ok(answers[f"{k}:kernels"])
        for k in range(1, i)
        if f"{k}:kernels" in answers and ok(answers[f"{k}:kernels"])["kernels"]
    )
    assert gpu_kernels["kernels"][0]["total_us"] > 0
    dist = ok(answers[f"{i}:distributed"])
    assert dist["workers"] == [w for w in expected["distributed"]["workers"] if w["run"] == "ddp_gloo_2ranks"]
    compare = ok(answers[f"{i + 1}:compare"])
    cli = cli_json(
        "compare",
        str(logdir),
        str(logdir),
        "--base-run",
        "resnet_like_cpu",
        "--base-worker",
        "worker0",
        "--base-span",
        "1",
        "--exp-run",
        "gpu_run",
        "--fail-on",
        "step_time>+5%",
    )
    assert compare["verdict"] == cli["verdict"]
    assert compare["steps"] == cli["steps"] and compare["breakdown_us"] == cli["breakdown_us"]
    assert compare["operators"] == cli["operators"]
    search = ok(answers[f"{i + 2}:timeline_search"])
    assert search["total"] >= 1 and all("sgemm" in m["name"] for m in search["matches"])
    one = ok(answers[f"{i + 3}:operators"])
    assert [r["name"] for r in one["operators"]] == ["aten::mm"] and one["sort"] == "calls"
    # resources: one per section of docs/metrics.md, read back whole
    uris = {str(r.uri) for r in got["resources"]}
    assert "metrics://steps" in uris and "metrics://distributed" in uris and len(uris) >= 15
    steps_text = got["metrics-steps"].contents[0].text
    assert steps_text.startswith("## Steps") and "## Step-time breakdown" not in steps_text


def test_event_details_from_a_search_hit(logdir: Path) -> None:
    gpu = {"run": "gpu_run", "worker": "worker0"}
    first = call_all(logdir, [("timeline_search", {**gpu, "q": "sgemm", "limit": 1})])
    hit = ok(first["0:timeline_search"])["matches"][0]
    got = call_all(logdir, [("event", {**gpu, "id": hit["id"]})])
    event = ok(got["0:event"])
    assert event["id"] == hit["id"] and event["name"] == hit["name"] and event["dur_us"] == hit["dur_us"]


BAD = [
    ("overview", {"run": "nope", "worker": "w"}, "no run named 'nope'"),
    ("overview", {"run": "../../etc", "worker": "passwd"}, "no run named"),
    ("overview", {"run": "gpu_run"}, "worker"),  # a required argument missing
    ("operators", {"run": "gpu_run", "worker": "worker0", "top": -1}, "top must be"),
    ("operators", {"run": "gpu_run", "worker": "worker0", "sort": "bogus"}, "sort must be one of"),
    ("operators", {"run": "gpu_run", "worker": "worker0", "top": "ten"}, "top"),
    ("kernels", {"run": "gpu_run", "worker": "worker0", "sort": "name"}, "sort must be one of"),
    ("memory", {"run": "gpu_run", "worker": "worker0", "span": "9"}, "span"),
    ("timeline_search", {"run": "gpu_run", "worker": "worker0", "q": ""}, "q"),
    ("timeline_search", {"run": "gpu_run", "worker": "worker0", "q": "mm", "start_us": 5}, "start_us"),
    ("event", {"run": "gpu_run", "worker": "worker0", "id": "zzz"}, ""),
    ("event", {"run": "gpu_run", "worker": "worker0", "id": "dev:999999"}, "no event"),
    (
        "compare",
        {
            "run": "gpu_run",
            "worker": "worker0",
            "base_run": "gpu_run",
            "base_worker": "worker0",
            "fail_on": ["nonsense"],
        },
        "fail_on",
    ),
    ("distributed", {"run": "nope"}, "nope"),
    ("no_such_tool", {}, "no_such_tool"),
]


def test_bad_arguments_are_tool_errors(logdir: Path) -> None:
    """One session: each bad call is an error result, and a good call right after it still answers."""
    calls: list[tuple[str, dict[str, Any]]] = []
    for name, arguments, _ in BAD:
        calls += [(name, arguments), ("list_runs", {})]
    got = call_all(logdir, calls)
    for i, (name, arguments, fragment) in enumerate(BAD):
        bad, after = got[f"{2 * i}:{name}"], got[f"{2 * i + 1}:list_runs"]
        assert bad.is_error, (name, arguments, text(bad))
        assert fragment in text(bad), (name, arguments, text(bad))
        assert ok(after)["runs"], (name, arguments)  # the server kept serving

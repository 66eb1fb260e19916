"""``torch-tb-profiler mcp LOGDIR``: a read-only MCP server over stdio (the official ``mcp`` SDK, 2.x).

Tools are thin: each calls ``queries.Queries`` and answers its result as one line of compact JSON; a
``QueryError`` (or a bad argument type, which the SDK checks against the signature) is a tool error
result (``isError``) with the message, never a crash. Resources: each section of docs/metrics.md (the
definition of every figure), from the copy shipped in this package."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

from torch_tb_profiler.agents.queries import Queries, QueryError
from torch_tb_profiler.app.profiler import ProfilerApp
from torch_tb_profiler.app.settings import Settings
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.trace.version import VERSION

METRICS_MD = Path(__file__).with_name("metrics.md")  # a link to docs/metrics.md; wheels hold its text
READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
INSTRUCTIONS = (
    "Read-only analysis of PyTorch profiler traces in one logdir. Start with list_runs; every other tool "
    "takes run and worker (and span, default the first) as list_runs names them. Answers are compact JSON; "
    "keys carry their units (_us microseconds, _pct percent 0-100, _bytes). Definitions of every figure: "
    "the metrics://… resources."
)


@cache
def metric_sections() -> dict[str, tuple[str, str]]:
    """slug -> (title, text) for each ``## `` section of docs/metrics.md (its ``###`` stay inside)."""
    text = METRICS_MD.read_text(encoding="utf-8")
    heads = list(re.finditer(r"^## (.+)$", text, re.MULTILINE))
    out: dict[str, tuple[str, str]] = {}
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        title = head.group(1).strip()
        slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
        out[slug] = (title, text[head.start() : end].strip() + "\n")
    return out


def _answer(compute: Any, *args: Any, **kwargs: Any) -> str:
    try:
        result = compute(*args, **kwargs)
    except QueryError as e:
        raise ToolError(str(e)) from None
    return json.dumps(result, separators=(",", ":"), allow_nan=False, ensure_ascii=False)


def build_server(store: RunStore) -> MCPServer:
    queries = Queries(store)
    mcp = MCPServer("torch-tb-profiler", version=VERSION, instructions=INSTRUCTIONS)
    tool = mcp.tool(annotations=READ_ONLY, structured_output=False)

    @tool
    def list_runs() -> str:
        """The runs of the logdir, their state and errors, and each run's workers with their spans."""
        return _answer(queries.list_runs)

    @tool
    def overview(run: str, worker: str, span: str | None = None) -> str:
        """Steps, mean step time and its breakdown (kernel, memcpy, communication, cpu_exec, … in µs), GPU
        utilization / SM efficiency / occupancy / tensor-core share (%), recommendations with their
        evidence, memory peaks: the figures of `summary --json`."""
        return _answer(queries.overview, run, worker, span)

    @tool
    def operators(
        run: str, worker: str, span: str | None = None, sort: str = "", top: int = 10, q: str = ""
    ) -> str:
        """Top operators by one figure (sort: host_total_us, host_self_us, device_total_us, device_self_us,
        calls, replayed_device_us; empty: device time when there is an accelerator, else host time, as
        summary); q keeps the names containing it (case-insensitive)."""
        return _answer(queries.operators, run, worker, span, sort, top, q)

    @tool
    def kernels(
        run: str, worker: str, span: str | None = None, sort: str = "total_us", top: int = 10, q: str = ""
    ) -> str:
        """Top GPU kernels by total_us, calls or replayed_device_us, with mean blocks per SM and achieved
        occupancy (%); q keeps the names containing it."""
        return _answer(queries.kernels, run, worker, span, sort, top, q)

    @tool
    def memory(run: str, worker: str, span: str | None = None, top: int = 10) -> str:
        """Per device: peak allocated and reserved bytes, and the operators that allocated most themselves."""
        return _answer(queries.memory, run, worker, span, top)

    @tool
    def distributed(run: str, span: str | None = None, top: int = 5) -> str:
        """The run's workers as one job: per-rank computation / overlap / communication / waits (µs per
        step, as summary), the stragglers (who arrived last at collectives, wait caused), collectives."""
        return _answer(queries.distributed, run, span, top)

    @tool
    def roofline(run: str, worker: str, span: str | None = None, top: int = 10) -> str:
        """How far from the hardware (docs/metrics.md, "Roofline"): the device and its matched peaks
        (TFLOP/s per dtype, TB/s), the top operator and kernel rows by time lost (FLOPs, bytes, achieved
        TFLOP/s and TB/s, % of roofline, bound, time_lost_us, source), and MFU per step (fractions 0-1)."""
        return _answer(queries.roofline, run, worker, span, top)

    @tool
    def analyses(run: str, worker: str, span: str | None = None) -> str:
        """Why the device waits (docs/metrics.md, "Why the device waits"): idle time per stream and step by
        category (host wait, kernel wait, other), the temporal breakdown per step, launch statistics per
        kernel name, queue length per stream, frequent kernel sequences and each step's critical path."""
        return _answer(queries.analyses, run, worker, span)

    @tool
    def modules(run: str, worker: str, span: str | None = None) -> str:
        """The module tree's top levels (nn.Module forward/backward), host and device µs, share of step."""
        return _answer(queries.modules, run, worker, span)

    @tool
    def compare(
        run: str,
        worker: str,
        base_run: str,
        base_worker: str,
        span: str | None = None,
        base_span: str | None = None,
        fail_on: list[str] | None = None,
        top: int = 10,
    ) -> str:
        """Two profiles of this logdir side by side (baseline = base_*), as `compare --json`; fail_on takes
        `--fail-on` rules such as "step_time>+5%" and the verdict says which failed."""
        return _answer(queries.compare, run, worker, base_run, base_worker, span, base_span, fail_on, top)

    @tool
    def timeline_search(
        run: str,
        worker: str,
        q: str,
        span: str | None = None,
        start_us: float | None = None,
        end_us: float | None = None,
        limit: int = 50,
    ) -> str:
        """Timeline events whose name contains q, in time order (optionally only those overlapping
        [start_us, end_us]); each with the id `event` takes."""
        return _answer(queries.timeline_search, run, worker, q, span, start_us, end_us, limit)

    @tool
    def event(run: str, worker: str, id: str, span: str | None = None) -> str:
        """One timeline event (id from timeline_search): times, args, call stack, linked events."""
        return _answer(queries.event, run, worker, id, span)

    for slug, (title, text) in metric_sections().items():
        _add_metric_resource(mcp, slug, title, text)
    return mcp


def _add_metric_resource(mcp: MCPServer, slug: str, title: str, text: str) -> None:
    def read() -> str:
        return text

    mcp.resource(
        f"metrics://{slug}", name=slug, title=f"Metric definitions: {title}", mime_type="text/markdown"
    )(read)


def open_logdir(settings: Settings) -> ProfilerApp:
    """The app whose store the tools read, configured as ``serve`` is (flags, environment); signals stay
    the SDK's (end of stdin ends the server)."""
    return ProfilerApp(settings, handle_signals=False)


def run_stdio(settings: Settings) -> None:
    app = open_logdir(settings)
    try:
        build_server(app.store).run("stdio")
    finally:
        app.close(terminate=True)

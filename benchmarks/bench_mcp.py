"""The MCP server's answer time: ``torch-tb-profiler mcp LOGDIR`` through the SDK's stdio client.

For the first profile of the first run (or ``--run/--worker``): the first ``overview`` call (waits for
the load and computes the analyses), then ``--calls`` more (the profile loaded: the figure docs/agents.md
gives, which should stay under 100 ms), and the same for ``operators`` and ``kernels``. Times are the
client's round trips (JSON-RPC over pipes included).

Usage:
    python benchmarks/bench_mcp.py LOGDIR [--run R --worker W] [--calls 20] [--json-out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

REPO = Path(__file__).resolve().parent.parent


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def measure(logdir: str, run: str | None, worker: str | None, calls: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "torch_tb_profiler", "mcp", logdir], env=env
    )
    out: dict[str, Any] = {"logdir": logdir, "calls": calls}
    t0 = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        runs = json.loads((await session.call_tool("list_runs", {})).content[0].text)["runs"]
        out["list_runs_s"] = time.perf_counter() - t0  # start-up, scan and load included
        first = next(r for r in runs if r["workers"] and (run is None or r["run"] == run))
        who = {"run": first["run"], "worker": worker or next(iter(first["workers"]))}
        out["profile"] = who
        for tool in ("overview", "operators", "kernels"):
            times = []
            for _ in range(calls + 1):
                t = time.perf_counter()
                result = await session.call_tool(tool, who)
                times.append(time.perf_counter() - t)
                if result.is_error:
                    raise SystemExit(f"{tool}: {result.content[0].text}")
            rest = times[1:]
            out[tool] = {
                "first_ms": times[0] * 1e3,
                "p50_ms": percentile(rest, 0.5) * 1e3,
                "p95_ms": percentile(rest, 0.95) * 1e3,
            }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("logdir")
    ap.add_argument("--run")
    ap.add_argument("--worker")
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--json-out", type=Path)
    a = ap.parse_args(argv)
    res = asyncio.run(measure(a.logdir, a.run, a.worker, a.calls))
    print(f"{a.logdir}: start-up to list_runs {res['list_runs_s']:.2f} s ({res['profile']})")
    for tool in ("overview", "operators", "kernels"):
        r = res[tool]
        print(
            f"  {tool:10s} first {r['first_ms']:8.1f} ms   then p50 {r['p50_ms']:6.1f} ms  p95 {r['p95_ms']:6.1f} ms"
        )
    if a.json_out:
        a.json_out.write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

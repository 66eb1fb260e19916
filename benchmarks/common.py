"""Summaries and formatting shared by the benchmark scripts."""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def summary(values: list[float]) -> dict[str, Any]:
    """Median, min and max of ``values`` (all kept, in run order); empty when nothing was measured."""
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "values": values,
    }


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100) by linear interpolation between closest ranks."""
    xs = sorted(values)
    if not xs:
        return float("nan")
    pos = (len(xs) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def fmt(s: dict[str, Any], scale: float = 1.0, digits: int = 2, unit: str = "") -> str:
    """``median (min-max)`` of a summary, values multiplied by ``scale``."""
    if not s.get("n"):
        return "-"
    med, lo, hi = (s[k] * scale for k in ("median", "min", "max"))
    if s["n"] == 1:
        return f"{med:.{digits}f}{unit}"
    return f"{med:.{digits}f}{unit} ({lo:.{digits}f}-{hi:.{digits}f})"


def ratio(a: dict[str, Any], b: dict[str, Any]) -> str:
    """Ratio of medians a/b, formatted; '-' when either is missing."""
    if not a.get("n") or not b.get("n") or not b["median"]:
        return "-"
    return f"{a['median'] / b['median']:.2f}"


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    mem_kb = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_kb = int(line.split()[1])
    except OSError:
        pass
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        load = Path("/proc/loadavg").read_text().split()[:3]
    except OSError:
        load = []
    import os

    return {
        "cpus": os.cpu_count(),
        "cpu_model": cpu,
        "mem_gb": round(mem_kb / 2**20, 1),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "loadavg_at_start": load,
    }


def write_json(path: Path, data: Any) -> None:
    """Write ``data``; paths inside the repository are written relative to it, so results name no machine."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=1, default=str)
    path.write_text(
        text.replace(str(REPO) + "/", "").replace(str(REPO.parent / "shared") + "/", "../shared/")
    )


def print_table(headers: list[str], rows: list[list[str]]) -> None:
    """A Markdown table, so it pastes straight into docs/performance.md."""
    print("| " + " | ".join(headers) + " |")
    print("|" + "|".join("---" for _ in headers) + "|")
    for r in rows:
        print("| " + " | ".join(r) + " |")


def timed(fn: Callable[..., Any], *args: Any) -> float:
    """Seconds one call of ``fn(*args)`` takes."""
    t = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t


def trace_bench_args(doc: str | None) -> argparse.Namespace:
    """The arguments of a benchmark over trace files: the traces, ``--runs`` (3) and ``--json-out``."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json-out", type=Path)
    return ap.parse_args()


def loaded_traces(paths: list[str]) -> Iterator[tuple[str, Any, float]]:
    """Each trace file loaded into a Profile: (path, profile, seconds the load took)."""
    from torch_tb_profiler.ingest.parse import load_profile

    for path in paths:
        t = time.perf_counter()
        profile = load_profile(path)
        yield path, profile, time.perf_counter() - t

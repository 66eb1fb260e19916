"""Where our load time and memory go: the stages of ``load_profile``, timed, with RSS after each.

Stages: read the file, gunzip (``trace.decode.read_bytes`` does both), typed decode
(``trace.decode.decode``), building the Profile (``model.build.build_profile``). After each stage it
prints the wall time, the process RSS now and its high-water mark so far (``VmHWM``), so a jump in the
peak is pinned to the stage that caused it. ``--cprofile N`` also prints the N costliest functions
(cumulative) of the build stage.

Usage:
    python benchmarks/profile_load.py TRACE [--cprofile 30]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path


def status_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace")
    ap.add_argument("--cprofile", type=int, default=0, help="print the N costliest functions of the build")
    a = ap.parse_args(argv)

    from torch_tb_profiler.model.build import build_profile
    from torch_tb_profiler.trace.decode import decode, read_bytes

    def report(stage: str, t0: float) -> float:
        now = time.perf_counter()
        rss, hwm = status_mb("VmRSS"), status_mb("VmHWM")
        print(f"{stage:<14} {now - t0:7.2f} s   RSS {rss:7.0f} MB   peak so far {hwm:7.0f} MB")
        return now

    print(f"{'imports':<14} {'':>9}   RSS {status_mb('VmRSS'):7.0f} MB")
    t = time.perf_counter()
    start = t
    data = read_bytes(a.trace)
    t = report("read+gunzip", t)
    decoded = decode(data)
    t = report("decode", t)
    prof = cProfile.Profile() if a.cprofile else None
    if prof:
        prof.enable()
    profile = build_profile(decoded, run="", worker="", span="", source=a.trace)
    if prof:
        prof.disable()
    t = report("build_profile", t)
    print(f"{'total':<14} {t - start:7.2f} s" + ("   (build under cProfile: slower)" if prof else ""))
    print(
        "rows: "
        + ", ".join(f"{k}={len(getattr(profile, k))}" for k in ("ops", "runtimes", "device", "memory"))
    )
    if prof:
        pstats.Stats(prof, stream=sys.stdout).sort_stats("cumulative").print_stats(a.cprofile)
    return 0


if __name__ == "__main__":
    sys.exit(main())

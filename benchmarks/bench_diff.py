"""Diff figures on a big trace: ``compare()`` of two loaded profiles, and the ``compare`` CLI against
one ``summary``.

"Already loaded" means what the plugin has after a user opened each profile's overview: the profile
parsed and its Overview, Operator and Kernel answers computed (the warm-up, views/warmup.py). The
diff is then timed on a pair it has not seen (its memo is cleared before each run).

Usage: python benchmarks/bench_diff.py [TRACE] [--repeat 3] [--loaded-only] [--out benchmarks/results/diff-322mb.json]
TRACE defaults to the 322 MB trace of benchmarks/make_traces.py (.bench/traces/322mb/322mb/).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.common import summary  # noqa: E402

DEFAULT = REPO / ".bench" / "traces" / "322mb" / "322mb"


def _trace(path: Path) -> Path:
    if path.is_dir():
        found = sorted(path.glob("*.pt.trace.json*"))
        if not found:
            sys.exit(f"no trace under {path}: run benchmarks/make_traces.py --only 322mb")
        return found[0]
    return path


def _warm(profile) -> None:
    from torch_tb_profiler.analysis.ops import kernels, operators
    from torch_tb_profiler.analysis.overview import page as overview

    overview.overview(profile)
    operators.operator_table(profile, "name")
    kernels.kernel_table(profile, "name")


def bench_loaded(trace: Path, repeat: int) -> dict:
    from torch_tb_profiler.analysis.diff import compare as diff
    from torch_tb_profiler.ingest.loading import load_profile

    base = load_profile(str(trace), run="a", worker="w", span="1")
    exp = load_profile(str(trace), run="b", worker="w", span="1")  # a second, separate profile
    for p in (base, exp):
        _warm(p)
    times = []
    for _ in range(repeat):
        diff._recent.clear()
        for p in (base, exp):  # the diff's own per-profile figures (side, op/kernel noise)
            for key in [k for k in p.cache if isinstance(k, str) and k.startswith("diff.")]:
                p.cache.pop(key)
        t = time.perf_counter()
        diff.compare(base, exp)
        times.append(time.perf_counter() - t)
    t = time.perf_counter()
    diff.compare(base, exp)
    return {"compare_s": summary(times), "memoized_s": time.perf_counter() - t}


def _cli(*args: str) -> float:
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "torch_tb_profiler", *args], capture_output=True, cwd=REPO)
    if r.returncode not in (0, 1):
        sys.exit(r.stderr.decode())
    return time.perf_counter() - t


def bench_cli(trace: Path, repeat: int) -> dict:
    s = [_cli("summary", str(trace), "--json") for _ in range(repeat)]
    c = [_cli("compare", str(trace), str(trace), "--json") for _ in range(repeat)]
    out = {"summary_s": summary(s), "compare_s": summary(c)}
    out["compare_over_summary"] = out["compare_s"]["median"] / out["summary_s"]["median"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("trace", nargs="?", default=str(DEFAULT))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=None)
    ap.add_argument("--loaded-only", action="store_true", help="skip the CLI runs (minutes)")
    args = ap.parse_args()
    trace = _trace(Path(args.trace))
    result = {
        "trace": trace.name,
        "text_bytes_gz": trace.stat().st_size,
        "loaded": bench_loaded(trace, args.repeat),
    }
    if not args.loaded_only:
        result["cli"] = bench_cli(trace, args.repeat)
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()

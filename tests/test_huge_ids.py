"""Issue 27 item 12: integers past 64 bits (pid/tid 2^70, ids, ts/dur, negative ones) keep the file, on
every decode road; the value is kept as text or dropped with a warning naming the field (the UI's
per-file warnings, the CLI's stderr, ``summary --json``'s ``warnings``)."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.hostile.make_corpus import trace_doc
from torch_tb_profiler.analysis.device import breakdown
from torch_tb_profiler.ingest.parse import load_profile, load_whole
from torch_tb_profiler.model import Profile

BIG = 2**70


def _set(doc: dict[str, Any], match: str, key: str, value: Any, in_args: bool = False) -> None:
    event = next(e for e in doc["traceEvents"] if match in (e.get("name"), e.get("cat")))
    (event.setdefault("args", {}) if in_args else event)[key] = value


# (case, event matched by name or cat, key, value, in args, text the warning holds; None: no warning)
CASES = [
    ("host_pid", "aten::mm", "pid", BIG, False, "kept as text in 'pid'"),
    ("host_tid", "aten::mm", "tid", BIG, False, "kept as text in 'tid'"),
    ("device_pid", "kernel", "pid", BIG, False, "no device taken from it in 'pid'"),
    ("device_pid_negative", "kernel", "pid", -BIG, False, "no device taken from it in 'pid'"),
    ("correlation", "kernel", "correlation", BIG, True, "dropped in 'correlation'"),
    ("device", "kernel", "device", BIG, True, "dropped in 'device'"),
    ("stream", "kernel", "stream", -BIG, True, "dropped in 'stream'"),
    ("external_id", "aten::mm", "External id", BIG, True, "dropped in 'External id'"),
    ("memory_pid", "[memory]", "pid", BIG, False, "kept as text in 'pid'"),
    ("ts_huge_int", "aten::add", "ts", BIG, False, None),
    ("dur_huge_int", "aten::add", "dur", BIG, False, None),
    ("ts_huge_negative", "aten::add", "ts", -BIG, False, None),
]


def _doc(match: str, key: str, value: Any, in_args: bool) -> dict[str, Any]:
    doc = trace_doc()
    # an op outside every step, so a huge ts or dur on it changes no step figure
    doc["traceEvents"].append(
        {
            "ph": "X",
            "cat": "cpu_op",
            "name": "aten::add",
            "pid": 100,
            "tid": 200,
            "ts": 1.7e15 + 5000,
            "dur": 3,
        }
    )
    _set(doc, match, key, value, in_args)
    return doc


def _load(tmp_path: Path, text: str, road: str) -> Profile:
    if road == "lenient":  # a NaN elsewhere makes the strict decoders refuse the file
        text = text.replace('"schemaVersion": 1', '"schemaVersion": 1, "x": NaN', 1)
    path = tmp_path / ("t.pt.trace.json.gz" if road == "gz" else "t.pt.trace.json")
    path.write_bytes(gzip.compress(text.encode()) if road == "gz" else text.encode())
    return load_profile(str(path), chunk_bytes=500) if road == "chunked" else load_whole(str(path))


@pytest.mark.parametrize("road", ["whole", "gz", "chunked", "lenient"])
@pytest.mark.parametrize(
    ("case", "match", "key", "value", "in_args", "warning"), CASES, ids=[c[0] for c in CASES]
)
def test_a_value_past_64_bits_keeps_the_file(
    tmp_path: Path, road: str, case: str, match: str, key: str, value: Any, in_args: bool, warning: str | None
) -> None:
    p = _load(tmp_path, json.dumps(_doc(match, key, value, in_args)), road)
    # trace_doc: 3 steps of 900 µs, each with one 50 µs kernel: unchanged whatever field is huge
    avg = breakdown.average(p)
    assert avg["kernel"] == pytest.approx(50.0)
    assert len(p.ops[p.ops["name"] == "aten::mm"]) == 3
    if warning is not None:
        assert any(warning in w for w in p.meta.warnings), p.meta.warnings
    if key in ("pid", "tid"):
        table = {"[memory]": p.memory, "kernel": p.device}.get(match, p.ops)
        assert str(value) in set(table[key].tolist())  # kept, as text
    if match == "kernel" and key == "pid":
        assert p.device["device"].tolist() == [0, 0, 0]  # its args.device still says which


def test_cli_summary_reports_the_warning_and_keeps_the_figures(tmp_path: Path) -> None:
    path = tmp_path / "run" / "w0.pt.trace.json"
    path.parent.mkdir()
    path.write_text(json.dumps(_doc("kernel", "pid", BIG, False)))
    done = subprocess.run(
        [sys.executable, "-m", "torch_tb_profiler", "summary", str(path.parent), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "OverflowError" not in done.stderr and "Traceback" not in done.stderr
    assert "warning:" in done.stderr and "in 'pid'" in done.stderr
    (profile,) = json.loads(done.stdout)["profiles"]
    assert profile["breakdown_us"]["kernel"] == pytest.approx(50.0)
    assert any("no device taken from it in 'pid'" in w for w in profile["warnings"])

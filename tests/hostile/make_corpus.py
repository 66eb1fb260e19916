"""Writes a logdir of hostile inputs (issue 12) beside good runs, with what each file must end as.

Nothing is stored in the repository: the corpus is generated at test time (a few MB on disk; the gzip
bombs inflate to hundreds of MB). Run it by hand to look at one:

    python -m tests.hostile.make_corpus /tmp/corpus

Each case is one worker of run ``hostile`` (file system cases: run ``fs``); ``expect`` says whether it
must load with a warning containing ``text`` or fail with a per-file error containing ``text``.
"""

from __future__ import annotations

import json
import os
import sys
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.fixtures.trace_builder import V100, TraceBuilder

MIB = 1 << 20


@dataclass(frozen=True)
class Case:
    run: str
    worker: str  # as listed (escaped where the name is not printable UTF-8)
    expect: str  # "warning" (ready, with a warning containing text) | "error" | "ready"
    text: str


def trace_doc(device: int = 0, **top: Any) -> dict[str, Any]:
    b = TraceBuilder(device_properties=[V100, {**V100, "id": 1}])
    for step in range(3):
        b.step(step + 1, step * 1000, 900)
        ext = b.op("aten::mm", step * 1000 + 10, 500)
        b.launch("gemm", step * 1000 + 20, 5, step * 1000 + 600, 50, ext_id=ext, device=device)
    b.memory(30, 1024, 1, 1024, 2048)
    doc = b.to_dict()
    doc.update(top)
    return doc


def _gz_stream(path: Path, head: bytes, filler: bytes, mib: int, tail: bytes) -> None:
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = filler * (MIB // len(filler))
    with open(path, "wb") as f:
        f.write(c.compress(head))
        for _ in range(mib):
            f.write(c.compress(block))
        f.write(c.compress(tail) + c.flush())


def _with_raw(doc: dict[str, Any], event: int, key: str, raw: str, in_args: bool = False) -> str:
    target = doc["traceEvents"][event]
    (target["args"] if in_args else target)[key] = "PLACEHOLDER-VALUE"
    return json.dumps(doc).replace('"PLACEHOLDER-VALUE"', raw, 1)


def _event_index(doc: dict[str, Any], name: str) -> int:
    return next(i for i, e in enumerate(doc["traceEvents"]) if e.get("name") == name)


def _file_cases(hostile: Path) -> list[Case]:
    cases: list[Case] = []

    def add(
        worker: str, expect: str, text: str, write: Callable[[Path], None], suffix: str = ".pt.trace.json"
    ) -> None:
        write(hostile / f"{worker}{suffix}")
        cases.append(Case("hostile", worker, expect, text))

    def text_file(content: str) -> Callable[[Path], None]:
        return lambda p: p.write_text(content)

    add(
        "gzip_bomb",
        "error",
        "inflates more than",
        lambda p: _gz_stream(p, b'{"traceEvents": [{"ph": "X", "name": "', b"0", 256, b'"}]}'),
        ".pt.trace.json.gz",
    )
    add(
        "spaces_bomb",
        "error",
        "inflates more than",
        lambda p: _gz_stream(p, b'{"traceEvents": [', b" ", 256, b"]}"),
        ".pt.trace.json.gz",
    )
    big_name = trace_doc()
    big_name["traceEvents"][1]["name"] = "n" * (3 * MIB)
    add("huge_string", "warning", "string cut to", text_file(json.dumps(big_name)))
    add(
        "device_props_zero",
        "warning",
        "deviceProperties[0].id = 'zero'",
        text_file(json.dumps(trace_doc(deviceProperties=[{"id": "zero"}]))),
    )
    for worker, name, key in (
        ("ext_id_2_63", "aten::mm", "External id"),
        ("corr_2_64", "cudaLaunchKernel", "correlation"),
        ("bytes_2_63", "[memory]", "Bytes"),
    ):
        doc = trace_doc()
        doc["traceEvents"][_event_index(doc, name)]["args"][key] = 2**64 + 3
        add(worker, "warning", f"in '{key}'", text_file(json.dumps(doc)))
    step = trace_doc()
    step["traceEvents"][0]["name"] = f"ProfilerStep#{2**64}"
    add("step_2_64", "warning", "step number does not fit 64 bits", text_file(json.dumps(step)))
    doc = trace_doc()
    add(
        "deep_args",
        "warning",
        "nested deeper than",
        text_file(_with_raw(doc, 1, "deep", "[" * 100_000 + "]" * 100_000, True)),
    )
    doc = trace_doc()
    add(
        "deep_dims",
        "warning",
        "'Input Dims'",
        text_file(_with_raw(doc, 1, "Input Dims", "[" * 10_000 + "]" * 10_000, True)),
    )
    add("ts_minus_inf", "warning", "'ts' is -inf", text_file(_with_raw(trace_doc(), 1, "ts", "-Infinity")))
    add("ts_1e400", "warning", "'ts' is inf", text_file(_with_raw(trace_doc(), 1, "ts", "1e400")))
    for worker, raw, text in (
        ("flow_float_id", "1.5", "kept as text"),
        ("flow_object_id", '{"a": 1}', "dropped"),
    ):
        doc = trace_doc()
        doc["traceEvents"].append(
            {"ph": "s", "cat": "fwdbwd", "name": "fb", "id": 0, "pid": 100, "tid": 100, "ts": 5}
        )
        add(worker, "warning", text, text_file(_with_raw(doc, len(doc["traceEvents"]) - 1, "id", raw)))
    doc = trace_doc()
    extra = json.dumps(
        [{"ph": "X", "cat": "cpu_op", "name": "late", "ts": 2e15, "dur": 1, "pid": 1, "tid": 1}]
    )
    add(
        "dup_trace_events",
        "warning",
        "'traceEvents' arrays",
        text_file(json.dumps(doc)[:-1] + f', "traceEvents": {extra}}}'),
    )
    # issue 27: ids past 64 bits rejected the whole file (OverflowError), a lone surrogate made routes 500
    for worker, name, key, text in (
        ("pid_2_70", "aten::mm", "pid", "kept as text in 'pid'"),
        ("tid_2_70", "aten::mm", "tid", "kept as text in 'tid'"),
        ("device_pid_2_70", "gemm", "pid", "no device taken from it in 'pid'"),
    ):
        doc = trace_doc()
        event = doc["traceEvents"][_event_index(doc, name)]
        event[key] = 2**70
        event["args"].pop("device", None)  # so that the pid is what would give the device
        add(worker, "warning", text, text_file(json.dumps(doc)))
    doc = trace_doc()
    doc["traceEvents"][_event_index(doc, "aten::mm")]["name"] = "aten::mm@S@"
    add("surrogate_name", "ready", "", text_file(json.dumps(doc).replace("@S@", "\\ud800")))
    meta_only = {"traceEvents": [e for e in trace_doc()["traceEvents"] if e.get("ph") == "M"]}
    add("metadata_only", "ready", "", text_file(json.dumps(meta_only)))
    whole = json.dumps(trace_doc())
    add("truncated", "warning", "file truncated", text_file(whole[: len(whole) * 2 // 3]))
    add("garbage", "error", "not a valid trace", text_file("\x00\xff garbage {"))
    add("not_an_object", "error", "not a valid trace", text_file('"just a string"'))
    return cases


def _fs_cases(fs: Path) -> list[Case]:
    """File system oddities (POSIX only): special files, broken links, odd names."""
    cases: list[Case] = []
    (fs / "good.pt.trace.json").write_text(json.dumps(trace_doc()))
    cases.append(Case("fs", "good", "ready", ""))
    os.mkfifo(fs / "fifo.pt.trace.json")
    os.mkfifo(fs / "fifo2.pt.trace.json")
    cases += [Case("fs", "fifo", "error", "a FIFO"), Case("fs", "fifo2", "error", "a FIFO")]
    for worker, target in (("dev_zero", "/dev/zero"), ("dev_urandom", "/dev/urandom")):
        if os.path.exists(target):
            os.symlink(target, fs / f"{worker}.pt.trace.json")
            cases.append(Case("fs", worker, "error", "a character device"))
    os.symlink("nowhere.json", fs / "dangling.pt.trace.json")
    os.symlink("selflink.pt.trace.json", fs / "selflink.pt.trace.json")
    cases += [
        Case("fs", "dangling", "error", "a dangling symlink"),
        Case("fs", "selflink", "error", "a symlink loop"),
    ]
    (fs / "new\nline.pt.trace.json").write_text(json.dumps(trace_doc()))
    cases.append(Case("fs", "new\\nline", "ready", ""))
    undecodable = os.fsdecode(os.fsencode(str(fs)) + b"/caf\xe9.pt.trace.json")
    Path(undecodable).write_text(json.dumps(trace_doc()))
    cases.append(Case("fs", "caf\\xe9", "ready", ""))
    for name in ("a", "b", "self"):  # loops: scan warnings, no phantom runs
        os.symlink(".", fs / name)
    return cases


LOOP_WARNINGS = ("skipped fs/a:", "skipped fs/b:", "skipped fs/self:")
GOOD_RUNS = ("good1", "good2")


def make_corpus(root: Path) -> list[Case]:
    """Write the corpus under ``root`` (a fresh folder); the cases, good runs included."""
    cases: list[Case] = []
    for run in GOOD_RUNS:
        (root / run).mkdir(parents=True)
        for worker in ("w0", "w1"):
            (root / run / f"{worker}.pt.trace.json").write_text(json.dumps(trace_doc()))
            cases.append(Case(run, worker, "ready", ""))
    (root / "hostile").mkdir()
    cases += _file_cases(root / "hostile")
    if os.name == "posix":
        (root / "fs").mkdir()
        cases += _fs_cases(root / "fs")
    old = time.time() - 60  # settled at once
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(dirpath, name)
            if os.path.isfile(path) and not os.path.islink(path):
                os.utime(path, (old, old))
    return cases


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "hostile-corpus")
    made = make_corpus(target)
    print(f"{len(made)} cases under {target}")

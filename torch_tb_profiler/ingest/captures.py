"""A run's capture folder (discovery.py) -> the capture traces to merge, fetched to local paths.

``execution_details.json`` is a list of ``{"file", "batch_size", "mode"}`` objects, one per capture trace
(vLLM, SGLang and xDiT write it; SGLang's and xDiT's capture files are not named ``*.pt.trace.json``).
Every file it names is a capture, with its batch size and mode; every ``*.pt.trace.json[.gz]`` of the
folder it does not name is a capture too, without them. A named file that is missing, or an unreadable
``execution_details.json``, is a note for the run; the captures that could be found are still used.
"""

from __future__ import annotations

import json
import posixpath
from typing import Any

from torch_tb_profiler.ingest.discovery import EXECUTION_DETAILS, parse_name
from torch_tb_profiler.ingest.parse import CaptureSource
from torch_tb_profiler.ingest.storage import FileInfo, Location, local_copy
from torch_tb_profiler.trace.decode import open_regular

MAX_DETAILS_BYTES = 1 << 20  # an execution_details.json is a few hundred bytes


def capture_sources(loc: Location, files: tuple[FileInfo, ...]) -> tuple[list[CaptureSource], list[str]]:
    """The capture traces among a capture folder's files, as local copies, and notes on what is wrong."""
    by_name = {posixpath.basename(f.path): f for f in files if not f.problem}
    notes: list[str] = []
    details: list[dict[str, Any]] = []
    if EXECUTION_DETAILS in by_name:
        details, problem = _read_details(loc, by_name[EXECUTION_DETAILS])
        if problem:
            notes.append(problem)
    chosen: list[tuple[FileInfo, str, int | None, str | None]] = []
    named = set()
    for entry in details:
        name = posixpath.basename(str(entry.get("file", "")))
        named.add(name)
        if name not in by_name:
            notes.append(f"{EXECUTION_DETAILS} names the capture {name!r}, which is not in the folder")
            continue
        chosen.append((by_name[name], name, _int(entry.get("batch_size")), _str(entry.get("mode"))))
    for name, info in sorted(by_name.items()):
        if name not in named and parse_name(name) is not None:
            chosen.append((info, name, None, None))
    sources = []
    for info, name, batch, mode in chosen:
        try:
            sources.append(CaptureSource(local_copy(loc, info), name, batch, mode))
        except Exception as e:  # a capture that cannot be fetched costs its attribution only
            notes.append(f"capture {name} could not be fetched: {e}")
    return sources, notes


def _read_details(loc: Location, info: FileInfo) -> tuple[list[dict[str, Any]], str | None]:
    if info.size > MAX_DETAILS_BYTES:
        return [], f"{EXECUTION_DETAILS} is {info.size} bytes: not read (at most {MAX_DETAILS_BYTES})"
    try:
        with open_regular(local_copy(loc, info)) as f:  # never blocks on a FIFO planted there
            data = json.loads(f.read(MAX_DETAILS_BYTES + 1))
    except Exception as e:
        return [], f"{EXECUTION_DETAILS} could not be read: {type(e).__name__}: {e}"
    if not isinstance(data, list) or not all(isinstance(x, dict) for x in data):
        return [], f"{EXECUTION_DETAILS} is not a list of objects: not used"
    return data, None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None

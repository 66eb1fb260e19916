"""A local file's content fingerprint: what tells two versions of a file apart when size and mtime agree.

The fingerprint is a hash of the file's size, its first and its last ``EDGE_BYTES`` bytes. A gzip
file ends with the CRC-32 and the length of everything it holds, so for ``.json.gz`` traces any
rewrite changes it; for plain JSON a rewrite of only the middle of a file larger than 2 × EDGE_BYTES,
keeping its size and mtime, is not seen (docs/security.md, "Which rewrites are noticed").

Where it is used: in the version of every local file (``local_walk.local_version``, the ``etag`` of
its FileInfo) when ``TORCH_PROFILER_FILE_VERSION=content``, the default on Windows, where ``st_ctime``
is the creation time and a rewrite in place keeps it. Elsewhere the version is the inode and the
status-change time, which every write changes, so a scan reads no file. The version is part of what
the scan compares, of the persisted index's identity and of the download cache's key, so a rewrite it
notices reloads the run, makes the index stale and is downloaded afresh.
"""

from __future__ import annotations

import hashlib
import os

from torch_tb_profiler.trace.decode import TraceDecodeError, open_regular

VERSION_ENV = "TORCH_PROFILER_FILE_VERSION"
EDGE_BYTES = 4096
_MODES = ("ctime", "content")


def version_mode() -> str:
    """``content`` or ``ctime``: how a local file's version is told apart in a scan."""
    value = os.environ.get(VERSION_ENV, "").strip().lower()
    if value in _MODES:
        return value
    return "content" if os.name == "nt" else "ctime"


def content_fingerprint(path: str) -> str:
    """16 hex digits from the size and both ends of the file; "" when it cannot be read (the caller's
    own read reports why). Never blocks: only a regular file is opened, without waiting for a writer."""
    try:
        with open_regular(path) as f:
            size = os.fstat(f.fileno()).st_size
            digest = hashlib.sha256(str(size).encode())
            digest.update(f.read(EDGE_BYTES))
            if size > EDGE_BYTES:
                f.seek(max(EDGE_BYTES, size - EDGE_BYTES))
                digest.update(f.read(EDGE_BYTES))
    except (OSError, TraceDecodeError):
        return ""
    return digest.hexdigest()[:16]

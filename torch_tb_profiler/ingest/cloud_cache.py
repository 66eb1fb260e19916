"""Local download cache for remote trace files.

Layout: `<cache dir>/v1/<key of the object>/<key of the version>-<file name>`.
- object key  = sha256(service namespace, full URL): one directory per remote object;
- version key = sha256(size, etag, mtime): a changed object gets a new file, and the old version is
  deleted when the new one is stored.
The file keeps its original name (so `.gz` stays `.gz`). Files are written to a temporary name and
renamed, so a reader (or another process) never sees half a file. Recency for LRU eviction is the file's
access time, set explicitly on every hit (so `noatime` mounts do not matter); eviction runs after each
download when the total size exceeds the limit, oldest first. It never removes the file just stored, nor
files used in the last EVICTION_GRACE_S seconds: a path local_copy returned may still wait for a parser
(here or in another process), so the limit is soft by that much.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import fsspec

from .cloud_errors import StorageError

CACHE_DIR_ENV = "TORCH_PROFILER_CACHE_DIR"
CACHE_MAX_ENV = "TORCH_PROFILER_CACHE_MAX_BYTES"
DEFAULT_MAX_BYTES = 10 * 1024**3
EVICTION_GRACE_S = 120.0
_LAYOUT = "v1"
_TMP_PREFIX = ".part-"
_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}


@dataclass
class CacheStats:
    """Counters of this process (tests and logs read them)."""

    hits: int = 0
    downloads: int = 0
    downloaded_bytes: int = 0
    evicted: int = 0


stats = CacheStats()
_lock = threading.Lock()


def cache_dir() -> Path:
    """TORCH_PROFILER_CACHE_DIR, else the platform's user cache directory + torch-tb-profiler/remote."""
    configured = os.environ.get(CACHE_DIR_ENV, "").strip()
    if configured:
        return Path(configured).expanduser()
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "torch-tb-profiler" / "remote"


def max_bytes() -> int:
    """TORCH_PROFILER_CACHE_MAX_BYTES: an integer, optionally with a K/M/G/T suffix (powers of 1024)."""
    text = os.environ.get(CACHE_MAX_ENV, "").strip().upper().removesuffix("B").removesuffix("I")
    if not text:
        return DEFAULT_MAX_BYTES
    unit = text[-1] if text[-1] in _UNITS else ""
    number = text[: len(text) - len(unit)].strip()
    try:
        value = int(float(number) * _UNITS[unit])
    except ValueError:
        raise StorageError(
            f"{CACHE_MAX_ENV}={os.environ[CACHE_MAX_ENV]!r} is not a size (examples: 5000000000, 500M, 10G)"
        ) from None
    if value < 0:
        raise StorageError(f"{CACHE_MAX_ENV} must not be negative")
    return value


def entry_path(root: Path, namespace: str, url: str, size: int, etag: str, mtime: float) -> Path:
    """Where the cached copy of one version of one remote object lives."""
    obj = hashlib.sha256(f"{namespace}\0{url}".encode()).hexdigest()[:32]
    version = hashlib.sha256(f"{size}\0{etag}\0{mtime!r}".encode()).hexdigest()[:16]
    name = url.rstrip("/").rsplit("/", 1)[-1] or "file"
    if len(name) > 120:  # keep the suffixes (.pt.trace.json.gz) that tell the parser the format
        name = name[-120:]
    return root / _LAYOUT / obj / f"{version}-{name}"


def fetch(fs: fsspec.AbstractFileSystem, path: str, target: Path, size: int) -> str:
    """Return target, downloading `path` from fs into it unless an intact copy is there already."""
    try:
        st = target.stat()
    except FileNotFoundError:
        st = None
    if st is not None and st.st_size == size:
        _touch(target, st)
        with _lock:
            stats.hits += 1
        return str(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=_TMP_PREFIX, dir=target.parent)
    os.close(fd)
    try:
        fs.get_file(path, tmp)  # one streamed request on the cloud backends
        written = os.path.getsize(tmp)
        if written != size:
            raise StorageError(
                f"{path} changed while it was downloaded ({written} bytes, listed as {size}); "
                "it is fetched again on the next scan"
            )
        os.replace(tmp, target)
    except BaseException:
        _remove(Path(tmp))
        raise
    with _lock:
        stats.downloads += 1
        stats.downloaded_bytes += size
    _touch(target, target.stat())
    _drop_other_versions(target)
    evict(target.parents[2], max_bytes(), keep=target)
    return str(target)


def _touch(path: Path, st: os.stat_result) -> None:
    """Mark as recently used: set the access time, keep the modification time."""
    with contextlib.suppress(OSError):
        os.utime(path, ns=(time.time_ns(), st.st_mtime_ns))


def _drop_other_versions(target: Path) -> None:
    for other in target.parent.iterdir():
        if other != target and not other.name.startswith(_TMP_PREFIX):
            _remove(other)


def evict(root: Path, limit: int, keep: Path | None = None) -> int:
    """Delete least-recently-used files under root until their total size is at most limit.

    `keep` (the file just stored) and files used within EVICTION_GRACE_S are never deleted, even when
    they alone exceed the limit. Returns the number of files deleted.
    """
    entries: list[tuple[int, int, Path]] = []  # (atime ns, size, path)
    total = 0
    base = root / _LAYOUT
    if not base.is_dir():
        return 0
    for obj in os.scandir(base):
        if not obj.is_dir():
            continue
        for item in os.scandir(obj.path):
            if item.name.startswith(_TMP_PREFIX):
                continue
            try:
                st = item.stat()
            except FileNotFoundError:
                continue
            total += st.st_size
            entries.append((st.st_atime_ns, st.st_size, Path(item.path)))
    removed = 0
    if total <= limit:
        return 0
    recent = time.time_ns() - int(EVICTION_GRACE_S * 1e9)
    for atime, size, path in sorted(entries, key=lambda e: e[0]):
        if total <= limit or atime > recent:
            break  # sorted by atime: every later file is in use too
        if keep is not None and path == keep:
            continue
        if _remove(path):
            total -= size
            removed += 1
            with contextlib.suppress(OSError):
                path.parent.rmdir()  # only succeeds when empty
    with _lock:
        stats.evicted += removed
    return removed


def _remove(path: Path) -> bool:
    try:
        path.unlink()
        return True
    except OSError:  # already gone (another process) or in use (Windows)
        return False

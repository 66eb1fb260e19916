"""Storage: a logdir string -> an fsspec filesystem; list, stat and fetch trace files.

All file access of the project goes through this module (local paths included). Cloud URLs (S3, Azure
Blob, GCS) are resolved by `cloud_fs`, their files downloaded into the local cache of `cloud_cache`, and
every failure of a cloud client surfaces as `StorageError` with a message for the user (docs/cloud.md).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import Any

import fsspec

from . import cloud_cache, cloud_fs
from .cloud_errors import MissingExtraError, StorageError, translate
from .local_walk import local_version, walk_local
from .names import display

__all__ = [
    "FileInfo",
    "Location",
    "MissingExtraError",
    "StorageError",
    "file_info",
    "local_copy",
    "resolve",
    "walk",
    "walk_files",
]


@dataclass(frozen=True)
class FileInfo:
    path: str  # full path inside the filesystem (as fsspec names it)
    size: int
    mtime: float  # seconds since epoch, 0.0 when unknown
    etag: str = ""
    problem: str = ""  # why the file cannot be read (not a regular file, a dangling symlink...): its error


@dataclass
class Location:
    """A logdir resolved to a filesystem and a root path inside it."""

    url: str  # what the user gave
    fs: fsspec.AbstractFileSystem
    root: str  # root path as the filesystem names it (no trailing slash)
    namespace: str = ""  # the service (endpoint/account) behind a remote fs; part of the cache key

    @property
    def is_local(self) -> bool:
        return "file" in _protocols(self.fs)

    def relpath(self, path: str) -> str:
        rel = path[len(self.root) :].lstrip("/")
        return rel or "."


def _protocols(fs: fsspec.AbstractFileSystem) -> tuple[str, ...]:
    proto = fs.protocol
    return (proto,) if isinstance(proto, str) else tuple(proto)


def resolve(url: str, storage_options: dict[str, Any] | str | None = None) -> Location:
    """Turn a logdir string into a Location.

    storage_options: fsspec options for the backend (a dict, or a JSON string as given to the
    `--profiler_storage_options` flag); when None, TORCH_PROFILER_STORAGE_OPTIONS is read. Either form may
    be keyed by protocol (`{"s3": {...}, "gs": {...}}`).
    Raises StorageError for an unsupported URL or bad options, MissingExtraError (a StorageError) when the
    backend package is not installed. No network request is made here.
    """
    url = url.strip()
    target, implied = cloud_fs.rewrite_url(os.path.expanduser(url))
    protocol, _rest = cloud_fs.split_scheme(target)
    if protocol in ("", "file", "local"):
        fs, root = fsspec.core.url_to_fs(target)
        return Location(url=url, fs=fs, root=root.rstrip("/") or "/")
    if storage_options is None:
        options = cloud_fs.options_from_env(protocol)
    elif isinstance(storage_options, str):
        options = cloud_fs.parse_options(storage_options, protocol) if storage_options.strip() else {}
    else:
        options = cloud_fs.select_options(storage_options, protocol)
    options = cloud_fs.backend_options(protocol, {**implied, **options})
    fs, root = cloud_fs.make_filesystem(target, options)
    return Location(url=url, fs=fs, root=root.rstrip("/"), namespace=cloud_fs.namespace(fs))


def walk_files(loc: Location) -> list[FileInfo]:
    """Every file under the root (any depth, symlinks followed), with size and mtime (``walk``)."""
    return walk(loc)[0]


def walk(loc: Location) -> tuple[list[FileInfo], list[str]]:
    """Every file under the root, and warnings about what the listing skipped.

    Local: see ``local_walk.py`` (each real directory once, bounded depth, special files and broken
    symlinks listed with a ``problem``, never opened). Remote listings are always fresh (fsspec's
    listing cache is dropped first). A missing root prefix gives an empty list; a missing bucket, bad
    credentials or a network failure raise StorageError.
    """
    if loc.is_local:
        listing = walk_local(loc.root)
        # a local file's etag is its version (inode and ctime, or content): a rewrite keeping size and
        # mtime changes it
        files = [FileInfo(f.path, f.size, f.mtime, f.version, problem=f.problem) for f in listing.files]
        return files, listing.warnings
    out: list[FileInfo] = []
    try:
        loc.fs.invalidate_cache()
        found = loc.fs.find(loc.root, detail=True)
        if not found:
            _check_bucket(loc)
    except Exception as exc:
        raise translate(exc, "list", loc.url, _protocol(loc)) from exc
    for path, info in found.items():
        if info.get("type", "file") != "file":
            continue
        out.append(FileInfo(path, int(info.get("size") or 0), _mtime(info), _etag(info)))
    return out, []


def file_info(loc: Location, path: str) -> FileInfo:
    """FileInfo of one file (fresh, not from a listing cache); StorageError when it cannot be read."""
    if loc.is_local:
        try:
            st = os.stat(path)
        except OSError as exc:
            raise StorageError(f"cannot read {display(path)}: {exc.strerror or exc}") from exc
        if not stat.S_ISREG(st.st_mode):
            raise StorageError(f"{display(path)} is not a regular file")
        return FileInfo(path, st.st_size, st.st_mtime, local_version(st, path))
    try:
        loc.fs.invalidate_cache()
        info = loc.fs.info(path)
    except Exception as exc:
        raise translate(exc, "read", loc.fs.unstrip_protocol(path), _protocol(loc)) from exc
    if info.get("type", "file") != "file":
        raise StorageError(f"{loc.fs.unstrip_protocol(path)} is not a file")
    return FileInfo(info.get("name", path), int(info.get("size") or 0), _mtime(info), _etag(info))


def _check_bucket(loc: Location) -> None:
    """An empty listing is fine for a missing prefix, not for a missing bucket: tell them apart."""
    bucket = loc.root.split("/", 1)[0]
    if not bucket:
        return
    # ls raises on a missing bucket (and on bad credentials) on all three backends; exists() would not.
    loc.fs.ls(bucket, detail=False)


def _protocol(loc: Location) -> str:
    protos = _protocols(loc.fs)
    return protos[0] if protos else ""


def _etag(info: dict) -> str:
    """The backend's change token: GCS generation, S3 ETag, Azure etag."""
    for key in ("generation", "ETag", "etag", "md5Hash"):
        value = info.get(key)
        if value not in (None, ""):
            return str(value).strip('"')
    return ""


def _mtime(info: dict) -> float:
    for key in ("mtime", "LastModified", "last_modified", "updated", "created"):
        value = info.get(key)
        if value is None:
            continue
        if isinstance(value, (int, float)):
            return float(value)
        if hasattr(value, "timestamp"):
            return float(value.timestamp())
    return 0.0


def local_copy(loc: Location, info: FileInfo) -> str:
    """A local path holding the file's bytes (the file itself when local, else a cached download).

    The bytes are as stored (a .gz file stays gzip). A remote file is downloaded once per
    (URL, size, etag, mtime) into the cache (TORCH_PROFILER_CACHE_DIR) and reused across scans and restarts.
    """
    if loc.is_local:
        return info.path
    url = loc.fs.unstrip_protocol(info.path)
    target = cloud_cache.entry_path(
        cloud_cache.cache_dir(), loc.namespace, url, info.size, info.etag, info.mtime
    )
    try:
        return cloud_cache.fetch(loc.fs, info.path, target, info.size)
    except StorageError:
        raise
    except Exception as exc:
        raise translate(exc, "download", url, _protocol(loc)) from exc

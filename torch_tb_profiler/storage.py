"""Storage: a logdir string -> an fsspec filesystem; list, stat and fetch trace files.

All file access of the project goes through this module (local paths included).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import fsspec


@dataclass(frozen=True)
class FileInfo:
    path: str  # full path inside the filesystem (as fsspec names it)
    size: int
    mtime: float  # seconds since epoch, 0.0 when unknown
    etag: str = ""


@dataclass
class Location:
    """A logdir resolved to a filesystem and a root path inside it."""

    url: str  # what the user gave
    fs: fsspec.AbstractFileSystem
    root: str  # root path as the filesystem names it (no trailing slash)

    @property
    def is_local(self) -> bool:
        return "file" in _protocols(self.fs)

    def relpath(self, path: str) -> str:
        rel = path[len(self.root) :].lstrip("/")
        return rel or "."


def _protocols(fs: fsspec.AbstractFileSystem) -> tuple[str, ...]:
    proto = fs.protocol
    return (proto,) if isinstance(proto, str) else tuple(proto)


def resolve(url: str) -> Location:
    """Turn a logdir string into a Location."""
    fs, root = fsspec.core.url_to_fs(os.path.expanduser(url))
    return Location(url=url, fs=fs, root=root.rstrip("/") or "/")


def walk_files(loc: Location) -> list[FileInfo]:
    """Every file under the root (any depth, symlinks followed), with size and mtime."""
    out: list[FileInfo] = []
    if loc.is_local:
        for dirpath, _dirs, files in os.walk(loc.root, followlinks=True):
            for name in files:
                full = os.path.join(dirpath, name)
                try:
                    st = os.stat(full)
                except OSError:
                    continue
                out.append(FileInfo(full, st.st_size, st.st_mtime))
        return out
    for path, info in loc.fs.find(loc.root, detail=True).items():
        out.append(FileInfo(path, int(info.get("size") or 0), _mtime(info), str(info.get("ETag", ""))))
    return out


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
    """A local path holding the file's bytes (the file itself when local, else a cached download)."""
    if loc.is_local:
        return info.path
    raise NotImplementedError("remote logdirs: see the cloud issue")

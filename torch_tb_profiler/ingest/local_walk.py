"""Listing a local logdir without ever blocking, looping or silently skipping.

Symlinks are followed (users link runs in from elsewhere) but each real directory is visited once, so
``ln -s . a`` cannot make the walk endless or multiply runs; the depth below the logdir is bounded
(``max_dir_depth`` in ``limits.py``). Nothing here opens a file: a FIFO, device or socket named like a
trace, a dangling symlink or a symlink loop is listed with a ``problem`` (shown as that file's error),
and a directory that cannot be listed or was skipped becomes a scan warning.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field

from torch_tb_profiler.ingest.fingerprint import content_fingerprint, version_mode
from torch_tb_profiler.ingest.names import display
from torch_tb_profiler.trace import limits


@dataclass(frozen=True)
class LocalFile:
    path: str
    size: int
    mtime: float
    problem: str = ""  # why it is not read ("" for a regular file)
    version: str = ""  # local_version: changes with every write, even one that keeps size and mtime


def local_version(st: os.stat_result, path: str) -> str:
    """A local file's version beyond size and mtime. By default its inode and status-change time: any
    write (or replacement) sets the ctime to now and no tool can set it back (``cp -p``, ``rsync -t``
    and ``touch -d`` keep the mtime, not the ctime), so a rewrite that keeps size and mtime still changes
    it. Where the ctime is not that (Windows: the creation time) or with ``TORCH_PROFILER_FILE_VERSION=
    content``: the inode and the content fingerprint instead (fingerprint.py; a chmod is then no
    change)."""
    if version_mode() == "content":
        return f"{st.st_ino:x}-c{content_fingerprint(path)}"
    return f"{st.st_ino:x}-{st.st_ctime_ns:x}"


@dataclass
class Listing:
    files: list[LocalFile] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def walk_local(root: str) -> Listing:
    out = Listing()
    max_depth = limits.get("max_dir_depth")
    try:
        st = os.stat(root)
    except OSError:
        return out  # a missing logdir lists nothing (it may appear later)
    seen: dict[tuple[int, int], str] = {(st.st_dev, st.st_ino): "."}
    pending = [(root, 0)]
    while pending:
        directory, depth = pending.pop()
        shown = _rel(root, directory)
        try:
            with os.scandir(directory) as it:
                entries = list(it)
        except OSError as e:
            out.warnings.append(f"cannot list {shown}: {e.strerror or e}")
            continue
        # real directories before symlinks to them, so a link is the one reported as a repeat
        entries.sort(key=lambda e: (e.is_symlink(), e.name))
        subdirs = []
        for entry in entries:
            try:
                st = entry.stat()  # follows symlinks
            except OSError as e:
                out.files.append(LocalFile(entry.path, 0, 0.0, _stat_problem(entry.path, e)))
                continue
            if stat.S_ISDIR(st.st_mode):
                key = (st.st_dev, st.st_ino)
                if key in seen:
                    out.warnings.append(
                        f"skipped {_rel(root, entry.path)}: the same directory as {seen[key]}, already scanned"
                    )
                elif depth + 1 > max_depth:
                    out.warnings.append(
                        f"skipped {_rel(root, entry.path)}: deeper than {max_depth} levels below the logdir; "
                        f"{limits.how_to_raise('max_dir_depth')}"
                    )
                else:
                    seen[key] = _rel(root, entry.path)
                    subdirs.append((entry.path, depth + 1))
            elif stat.S_ISREG(st.st_mode):
                out.files.append(
                    LocalFile(entry.path, st.st_size, st.st_mtime, version=local_version(st, entry.path))
                )
            else:
                kind = _kind(st.st_mode)
                out.files.append(LocalFile(entry.path, 0, 0.0, f"{kind}, not a regular file: not read"))
        pending.extend(reversed(subdirs))
    return out


def _stat_problem(path: str, error: OSError) -> str:
    if os.path.islink(path):
        if error.errno == errno.ELOOP:
            return "a symlink loop: not read"
        if error.errno == errno.ENOENT:
            return f"a dangling symlink (to {display(os.readlink(path))}): not read"
    return f"cannot read: {error.strerror or error}"


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def _rel(root: str, path: str) -> str:
    rel = os.path.relpath(path, root)
    return display(rel.replace(os.sep, "/"))

"""Private cache folders and file identities.

A cache folder holds answers built from traces; if another user could write into it they could plant a
file under a predictable name and have it served. So a folder is only used when it is ours and mode
0700 (created so, or tightened when we own it); anything else falls back to a fresh private temporary
folder for this process. Files inside are served only when they are regular files we own.
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat
import sys
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)

_SAMPLE = 1 << 20  # bytes hashed at each end of a file for its fingerprint


def user_cache_root() -> Path:
    """The platform's per-user cache folder + torch-tb-profiler."""
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "torch-tb-profiler"


_fallback: dict[str, Path] = {}


def private_dir(folder: Path, purpose: str) -> Path:
    """``folder`` created (with parents) mode 0700 and checked to be ours and private; else a private
    temporary folder for this process (one per ``purpose``), with a warning in the log."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        if is_private(folder):
            return folder
        st = folder.lstat()
        if _owned(st) and stat.S_ISDIR(st.st_mode):  # ours but too open (an old version made it 0755)
            folder.chmod(0o700)
            if is_private(folder):
                return folder
        reason = "not owned by this user or not private"
    except OSError as e:
        reason = e.strerror or str(e)
    if purpose not in _fallback:
        _fallback[purpose] = Path(tempfile.mkdtemp(prefix=f"torch-tb-profiler-{purpose}-"))
        log.warning(
            "cannot use %s for the %s cache (%s); using %s", folder, purpose, reason, _fallback[purpose]
        )
    return _fallback[purpose]


def is_private(folder: Path) -> bool:
    st = folder.lstat()  # a symlink is not accepted: its target could change
    return stat.S_ISDIR(st.st_mode) and _owned(st) and (os.name == "nt" or not st.st_mode & 0o077)


def is_ours(path: Path) -> bool:
    """A regular file (not a symlink) owned by this user: safe to serve from a cache."""
    try:
        st = path.lstat()
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and _owned(st)


def owned_fd(fd: int) -> bool:
    """An open file is a regular file owned by this user (checked on the descriptor: no race)."""
    st = os.fstat(fd)
    return stat.S_ISREG(st.st_mode) and _owned(st)


def _owned(st: os.stat_result) -> bool:
    return not hasattr(os, "getuid") or st.st_uid == os.getuid()


def fingerprint(path: str) -> str:
    """Identity and content of a file: device, inode, size, mtime and a hash of its first and last MiB.
    A replaced or rewritten file gets a new fingerprint even when its path, size and mtime are kept."""
    digest = hashlib.sha256()
    from torch_tb_profiler.trace.decode import open_regular  # numpy/msgspec: only when needed

    with open_regular(path) as f:
        st = os.fstat(f.fileno())
        digest.update(f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}".encode())
        digest.update(f.read(_SAMPLE))
        if st.st_size > 2 * _SAMPLE:
            f.seek(-_SAMPLE, os.SEEK_END)
        digest.update(f.read(_SAMPLE))
    return digest.hexdigest()

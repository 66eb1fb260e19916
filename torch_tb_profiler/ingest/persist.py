"""The persisted index: where index files live, which one belongs to a trace file, and whether it is current.

Each trace file has one index file, named after the source (sha256 of its service and URL). Its header
records the source's identity (URL, size, mtime, etag) and the model version (index_format.py); an index
whose identity or version differs from the trace's present one is stale and is never served: the trace
is parsed and the index rewritten. An unreadable index is reported (a warning) and rebuilt.

Location: ``TORCH_PROFILER_INDEX_DIR`` (or ``--profiler_index_dir`` / ``--index-dir``): any URL storage.py
resolves (a local folder, ``s3://bucket/prefix``...), ``off`` to disable; by default a per-user cache
folder (``<user cache>/torch-tb-profiler/index``). Local folders are size-bounded
(``TORCH_PROFILER_INDEX_MAX_BYTES``, default 20 GiB): least recently used files go first. Writes go to a
temporary name and are renamed (locally) or are one PUT (object stores), so a reader never sees half a
file and an interrupted write leaves nothing behind that could be served.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from torch_tb_profiler.ingest import cloud_cache, private_dir
from torch_tb_profiler.ingest.storage import FileInfo, Location, StorageError, resolve
from torch_tb_profiler.model import Profile
from torch_tb_profiler.trace.decode import TraceDecodeError, open_regular

log = logging.getLogger(__name__)

INDEX_DIR_ENV = "TORCH_PROFILER_INDEX_DIR"
INDEX_MAX_ENV = "TORCH_PROFILER_INDEX_MAX_BYTES"
DEFAULT_MAX_BYTES = 20 * 1024**3
OFF = ("off", "none", "no", "0", "false")
SUFFIX = ".ttbidx"
_LAYOUT = "v1"
_TMP_PREFIX = ".part-"
EVICTION_GRACE_S = 60.0
ORPHAN_TMP_S = 3600.0  # a temporary file this old was left by a killed writer


class IndexUnavailable(Exception):
    """The index location cannot be used (bad URL, missing extra)."""


def default_dir() -> Path:
    """The per-user cache folder: beside the remote-file cache of cloud_cache."""
    configured = os.environ.get(cloud_cache.CACHE_DIR_ENV, "").strip()
    if configured:
        return Path(configured).expanduser() / "index"
    return cloud_cache.cache_dir().parent / "index"


def identity(loc: Location, info: FileInfo, captures: tuple[FileInfo, ...] = ()) -> dict[str, Any]:
    """What names one version of one trace file; with its run's capture folder (a trace merged with its
    graph captures), the version of every file there too, so a changed capture makes the index stale."""
    url = info.path if loc.is_local else loc.fs.unstrip_protocol(info.path)
    ident = {
        "namespace": loc.namespace,
        "url": url,
        "size": info.size,
        "mtime": info.mtime,
        "etag": info.etag,
    }
    if captures:
        ident["captures"] = sorted(
            [c.path if loc.is_local else loc.fs.unstrip_protocol(c.path), c.size, c.mtime, c.etag]
            for c in captures
        )
    return ident


@dataclass
class Lookup:
    profile: Profile | None  # the indexed profile, when current
    problem: str | None = None  # why an existing index was not used (a warning), None when absent or current


@dataclass
class SummaryLookup:
    summary: Any  # index_format.IndexedSummary, when the index is current
    problem: str | None = None  # as in Lookup


class IndexStore:
    """Index files under one location."""

    def __init__(self, loc: Location, max_bytes: int | None = None, private: bool = False) -> None:
        self.loc = loc
        self.max_bytes = max_bytes if loc.is_local else None
        # the per-user default folder: only index files this user wrote are read (docs/security.md); a
        # folder named by the user (shared on purpose) is trusted as much as the traces beside it
        self.private = private and loc.is_local

    @property
    def url(self) -> str:
        return self.loc.url

    def path_for(self, ident: dict[str, Any]) -> str:
        key = hashlib.sha256(f"{ident['namespace']}\0{ident['url']}".encode()).hexdigest()
        return f"{self.loc.root}/{_LAYOUT}/{key[:2]}/{key[2:34]}{SUFFIX}"

    # ---- reading ---------------------------------------------------------------------------------
    def load(self, loc: Location, info: FileInfo, captures: tuple[FileInfo, ...] = ()) -> Lookup:
        """The current index of a trace file, or why there is none usable."""
        from torch_tb_profiler.ingest import index_format as fmt

        ident = identity(loc, info, captures)
        path = self.path_for(ident)
        try:
            data = self._read_if_current(path, ident, fmt)
        except FileNotFoundError:
            return Lookup(None)
        except _Stale as e:
            log.info("index of %s is stale (%s): rebuilding", ident["url"], e)
            return Lookup(None)
        except (fmt.IndexFormatError, OSError, StorageError) as e:
            return self._unusable(ident, path, str(e))
        except Exception as e:  # an object store's client error: treat like an unreadable file
            return self._unusable(ident, path, f"{type(e).__name__}: {e}")
        try:
            profile = fmt.loads(data)
        except fmt.IndexFormatError as e:
            return self._unusable(ident, path, str(e))
        return Lookup(profile)

    def load_summary(
        self, loc: Location, info: FileInfo, captures: tuple[FileInfo, ...] = ()
    ) -> SummaryLookup:
        """The summary of a trace file's current index (index_format.loads_summary): reads the header and
        the summary only, not the event tables, which ``load`` reads (and checks) when a view needs them."""
        from torch_tb_profiler.ingest import index_format as fmt

        ident = identity(loc, info, captures)
        path = self.path_for(ident)
        try:
            data = self._read_if_current(path, ident, fmt, summary_only=True)
            return SummaryLookup(fmt.loads_summary(data))
        except FileNotFoundError:
            return SummaryLookup(None)
        except _Stale as e:
            log.info("index of %s is stale (%s): rebuilding", ident["url"], e)
            return SummaryLookup(None)
        except Exception as e:  # unreadable, or an object store's client error
            why = (
                str(e)
                if isinstance(e, (fmt.IndexFormatError, OSError, StorageError))
                else f"{type(e).__name__}: {e}"
            )
            return SummaryLookup(None, self._unusable(ident, path, why).problem)

    def is_current(self, loc: Location, info: FileInfo, captures: tuple[FileInfo, ...] = ()) -> bool:
        """Whether a current index exists (reads only the header)."""
        from torch_tb_profiler.ingest import index_format as fmt

        ident = identity(loc, info, captures)
        try:
            self._read_if_current(self.path_for(ident), ident, fmt, header_only=True)
        except Exception:
            return False
        return True

    def _read_if_current(
        self,
        path: str,
        ident: dict[str, Any],
        fmt: Any,
        header_only: bool = False,
        summary_only: bool = False,
    ) -> bytes:
        fs = self.loc.fs
        if self.loc.is_local:
            with self._open_local(path) as f:
                prefix = f.read(16)
                need = fmt.header_size(prefix)
                head = prefix + f.read(need - len(prefix))
                header, body_start = fmt.read_header(head)
                self._check(header, ident, fmt)
                if header_only:
                    return head
                if summary_only:
                    size = os.fstat(f.fileno()).st_size  # a short file is found without reading it
                    if size != body_start + int(header.get("body_bytes", -1)):
                        raise fmt.IndexFormatError(f"index is {size} bytes, its header says otherwise")
                    data = head + f.read(fmt.summary_size(header, body_start) - len(head))
                else:
                    data = head + f.read()
            with contextlib.suppress(OSError):
                st = os.stat(path)
                os.utime(path, ns=(time.time_ns(), st.st_mtime_ns))  # recency for the LRU
            return data
        try:
            prefix = fs.cat_file(path, start=0, end=16)
        except FileNotFoundError:
            raise
        except Exception as e:
            if _is_missing(e):
                raise FileNotFoundError(path) from None
            raise
        need = fmt.header_size(prefix)
        head = fs.cat_file(path, start=0, end=need)
        header, body_start = fmt.read_header(head)
        self._check(header, ident, fmt)
        if header_only:
            return head
        if summary_only:
            return head + fs.cat_file(path, start=need, end=fmt.summary_size(header, body_start))
        return fs.cat_file(path)

    def _open_local(self, path: str) -> BinaryIO:
        """An index file opened like a trace: non-blocking, regular files only (a FIFO never blocks a
        reader); in the private default folder, only files owned by this user."""
        try:
            f = open_regular(path)
        except TraceDecodeError as e:
            raise fmt_error()(str(e)) from None
        if self.private and not private_dir.owned_fd(f.fileno()):
            f.close()
            raise fmt_error()("not written by this user; index files of others are not read")
        return f

    @staticmethod
    def _check(header: dict[str, Any], ident: dict[str, Any], fmt: Any) -> None:
        if header.get("model_version") != fmt.MODEL_VERSION:
            raise _Stale(f"made by {header.get('model_version')}, this is {fmt.MODEL_VERSION}")
        if header.get("identity") != ident:
            raise _Stale("the trace file changed since")

    def _unusable(self, ident: dict[str, Any], path: str, why: str) -> Lookup:
        message = f"index {path} could not be read ({why}); the trace was parsed again and the index rebuilt"
        log.warning("%s", message)
        return Lookup(None, message)

    # ---- writing ---------------------------------------------------------------------------------
    def save(
        self, loc: Location, info: FileInfo, profile: Profile, captures: tuple[FileInfo, ...] = ()
    ) -> str:
        """Write the index of a freshly parsed profile; returns its path (raises on failure)."""
        from torch_tb_profiler.ingest import index_format as fmt

        ident = identity(loc, info, captures)
        data = fmt.dumps(profile, ident)
        path = self.path_for(ident)
        if self.loc.is_local:
            _write_local(Path(path), data)
            if self.max_bytes is not None:
                evict(Path(self.loc.root), self.max_bytes, keep=Path(path))
        else:
            self.loc.fs.pipe_file(path, data)  # one PUT: the object appears whole or not at all
        return path


class _Stale(Exception):
    pass


def fmt_error() -> type[Exception]:
    from torch_tb_profiler.ingest.index_format import IndexFormatError  # pyarrow: only with an index

    return IndexFormatError


def _is_missing(exc: Exception) -> bool:
    text = f"{type(exc).__name__} {exc}".lower()
    return any(word in text for word in ("notfound", "not found", "nosuchkey", "404", "does not exist"))


def _write_local(target: Path, data: bytes) -> None:
    target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # like the other caches: private
    fd, tmp = tempfile.mkstemp(prefix=_TMP_PREFIX, dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def evict(root: Path, limit: int, keep: Path | None = None) -> int:
    """Delete least recently used index files under root until they total at most ``limit`` bytes.

    ``keep`` and files used in the last EVICTION_GRACE_S seconds stay; temporary files of writers killed
    mid-write (older than ORPHAN_TMP_S) go too. Returns how many index files were deleted."""
    base = root / _LAYOUT
    entries: list[tuple[int, int, Path]] = []
    total = 0
    if not base.is_dir():
        return 0
    for folder in os.scandir(base):
        if not folder.is_dir():
            continue
        for item in os.scandir(folder.path):
            if item.name.startswith(_TMP_PREFIX):
                with contextlib.suppress(OSError):
                    if time.time() - item.stat().st_mtime > ORPHAN_TMP_S:
                        os.unlink(item.path)
                continue
            if not item.name.endswith(SUFFIX):
                continue
            with contextlib.suppress(FileNotFoundError):
                st = item.stat()
                total += st.st_size
                entries.append((st.st_atime_ns, st.st_size, Path(item.path)))
    removed = 0
    recent = time.time_ns() - int(EVICTION_GRACE_S * 1e9)
    for atime, size, path in sorted(entries, key=lambda e: e[0]):
        if total <= limit or atime > recent:
            break
        if path == keep:
            continue
        with contextlib.suppress(OSError):
            path.unlink()
            total -= size
            removed += 1
    return removed


def max_bytes() -> int:
    text = os.environ.get(INDEX_MAX_ENV, "").strip()
    if not text:
        return DEFAULT_MAX_BYTES
    try:
        return int(float(text))
    except ValueError:
        raise IndexUnavailable(f"{INDEX_MAX_ENV}={text!r} is not a number of bytes") from None


def open_store(url: str | None = None) -> IndexStore | None:
    """The index store for a URL (None: the env var, else the default folder); None when turned off.

    Raises IndexUnavailable when the location cannot be used or pyarrow is missing."""
    if url is None:
        url = os.environ.get(INDEX_DIR_ENV, "").strip() or None
    if url is not None and url.strip().lower() in OFF:
        return None
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise IndexUnavailable("the persisted index needs pyarrow (pip install pyarrow)") from None
    if url is None:
        # per user, 0700, owned by us, like the trace cache: a folder someone else made (or left open) is
        # not used, a private temporary one is (private_dir.py, docs/security.md)
        target = str(private_dir.private_dir(default_dir(), "index"))
    else:
        target = url
    try:
        loc = resolve(target)
    except StorageError as e:
        raise IndexUnavailable(f"index location {target}: {e}") from None
    return IndexStore(loc, max_bytes() if loc.is_local else None, private=url is None)


def read_current(loc: Location, info: FileInfo, captures: tuple[FileInfo, ...] = ()) -> Profile | None:
    """The profile from the default index location (env or per-user folder) when a current index is
    there; None otherwise (turned off, absent, stale, unreadable: the caller parses)."""
    try:
        store = open_store()
    except IndexUnavailable:
        return None
    if store is None:
        return None
    try:
        return store.load(loc, info, captures).profile
    except Exception as e:
        log.warning("reading the index of %s failed: %s", info.path, e)
        return None

"""The run store's answers to the routes: runs, workers, spans, a profile by (run, worker, span), the
members of a job, kept answers. All answer from a consistent snapshot, without waiting on loads.
``RunQueries`` is a part of ``RunStore`` (loading.py), on its state and lock."""

from __future__ import annotations

import bisect
import contextlib
import dataclasses
import posixpath
from typing import TYPE_CHECKING, Any

import msgspec

from torch_tb_profiler.ingest.errors import Ambiguous, NotFound
from torch_tb_profiler.ingest.names import display
from torch_tb_profiler.ingest.run_state import (
    Facts,
    FileState,
    StoreState,
    file_entry,
    file_notes,
    run_head,
    run_summary,
)
from torch_tb_profiler.model import Profile

if TYPE_CHECKING:
    from torch_tb_profiler.ingest.index_format import IndexedSummary


_encode = msgspec.json.Encoder(enc_hook=str).encode  # writes (and so sizes) the runs answer's pages


def _run_page(
    head: bytes, first: int, files: list[bytes], errors: list[bytes], warnings: list[bytes]
) -> msgspec.Raw:
    """One run's entry of a runs page: its head's fields, then ``files_offset``, ``files``, ``errors``,
    ``warnings`` (the page's), as JSON."""
    return msgspec.Raw(
        b"".join(
            (
                head[:-1],
                b',"files_offset":%d,"files":[' % first,
                b",".join(files),
                b'],"errors":[',
                b",".join(errors),
                b'],"warnings":[',
                b",".join(warnings),
                b"]}",
            )
        )
    )


class RunQueries(StoreState):
    """The routes' questions of RunStore; they use Residency's _resident_profile(path, keep): a ready
    file's full profile, read again when evicted."""

    def runs(self) -> list[dict[str, Any]]:
        """Every run with every file (for tests and the CLI; the route pages it: ``runs_page``)."""
        with self._lock:
            if self.location is None:  # the logdir could not be resolved: no run (scan_error says why)
                return []
            sizes = self.resident.sizes()
            return [
                run_summary(name, self._states(name), self.location, self._memory_state, sizes, self._facts)
                for name in self._tree.runs
            ]

    def runs_page(self, offset: int, max_bytes: int) -> tuple[list[msgspec.Raw], int | None, int]:
        """The runs answer's page of files from the ``offset``-th (runs by name, files by worker and span):
        as many as fit in ``max_bytes`` of JSON (at least one). Each run with a file in the page is listed
        with its own fields (``run_head``) and the page's files, errors and warnings (``files_offset``:
        the first one's place in the run). Costs the page's files, not the logdir's: each run's head is
        kept (encoded) until a file's state changes, and every run of the page is written as JSON as it
        is measured (a page of thousands of small dicts kept alive would cost the garbage collector
        passes over the whole heap). Returns (the runs as JSON, next offset or None, files in the logdir)."""
        with self._lock:
            if self.location is None:
                return [], None, 0
            tree, sizes = self._tree, self.resident.sizes()
            out: list[msgspec.Raw] = []
            used = 0
            at = max(0, bisect.bisect_right(tree.starts, offset) - 1)
            while at < len(tree.names):  # from the page's first run, by index: nothing skipped over
                name = tree.names[at]
                paths = tree.flat.get(name, [])
                first = max(0, offset - tree.starts[at])
                head = self._run_head(name)
                used += len(head) + 64
                files: list[bytes] = []
                errors: list[bytes] = []
                warnings: list[bytes] = []
                for i in range(first, len(paths)):
                    s = self._files.get(paths[i])
                    if s is None:
                        continue
                    entry = _encode(file_entry(s, self.location, self._memory_state, sizes))
                    errs, warns = ([_encode(n) for n in notes] for notes in file_notes(s, self.location))
                    cost = len(entry) + sum(len(n) + 1 for n in (*errs, *warns)) + 1
                    if used + cost > max_bytes and (out or files):
                        break
                    used += cost
                    files.append(entry)
                    errors += errs
                    warnings += warns
                if files:
                    out.append(_run_page(head, first, files, errors, warnings))
                if first + len(files) < len(paths):
                    return out, tree.starts[at] + first + len(files), tree.count
                at += 1
            return out, None, tree.count

    def _run_head(self, name: str) -> bytes:
        """``run_head`` of the run as JSON, kept while no file's state has changed (with the lock held)."""
        key = (id(self._tree), self._counts.version)
        if self._run_heads_key != key:  # a file's state changed (or a new scan): every head may have
            self._run_heads, self._run_heads_key = {}, key
        head = self._run_heads.get(name)
        if head is None:  # kept as bytes: 50,000 of them are no work for the garbage collector
            head = self._run_heads[name] = _encode(run_head(name, self._states(name), self._facts))
        return head

    def _states(self, run: str) -> list[FileState]:
        """The run's files by worker and span."""
        return [self._files[path] for path in self._tree.flat.get(run, ()) if path in self._files]

    def _memory_state(self, state: FileState) -> str | None:
        """'resident', 'summary' (only its index summary was read: the full profile is read when a view of
        that worker asks), 'evicted' (dropped for the memory budget; read again on use) or None (not ready)."""
        path = state.file.info.path
        if state.status != "ready":
            return None
        if path in self._profiles:
            return "resident"
        return "summary" if path in self._summaries and not state.evictions else "evicted"

    def memory(self) -> dict[str, Any]:
        """The budget and the estimated bytes of the resident full profiles (budget.py)."""
        with self._lock:
            resident = len(self._profiles)
            evicted = self._counts.ready - resident
        return {
            "budget_bytes": self.resident.budget,
            "resident_bytes": self.resident.total,
            "resident_files": resident,
            "evicted_files": evicted,
        }

    @property
    def scan_error(self) -> str | None:
        return self._scan_error

    @property
    def scan_warnings(self) -> list[str]:
        """What the last listing skipped (a directory it could not list, a symlink loop...)."""
        return list(self._scan_warnings)

    def run_names(self) -> list[str]:
        with self._lock:
            return sorted({s.file.run for s in self._files.values()})

    def loading(self) -> bool:
        """Some file of the logdir is not finished (waiting or loading)."""
        with self._lock:
            return self._counts.unfinished > 0

    def profile_count(self) -> int:
        """How many (run, worker, span) profiles the logdir holds."""
        with self._lock:
            return self._tree.count

    def profiles_of_run(self, run: str) -> list[Profile]:
        """Every loaded profile of the run (evicted ones read again: for tests and the CLI, not routes)."""
        with self._lock:
            self._require_run(run)
            paths = [path for _w, _s, path in self._tree.paths(run) if path in self._facts]
        out = []
        for path in paths:
            with contextlib.suppress(NotFound):
                out.append(self._resident_profile(path, keep=False))
        return out

    def facts_of_run(self, run: str) -> list[Facts]:
        """What the run-level routes need of each loaded profile of the run (resident or evicted)."""
        with self._lock:
            self._require_run(run)
            return [
                dataclasses.replace(fact, worker=w) if fact.worker != w else fact
                for w, _s, path in self._tree.paths(run)
                if (fact := self._facts.get(path))
            ]

    def workers(self, run: str) -> list[str]:
        with self._lock:
            self._require_run(run)
            return list(self._tree.runs[run])

    def spans(self, run: str, worker: str) -> list[str]:
        with self._lock:
            self._require_run(run)
            spans = [s for s, _p in self._tree.runs[run].get(worker, ())]
            if not spans:
                raise NotFound(f"run '{run}' has no worker '{worker}'")
            return spans

    def get_profile(self, run: str, worker: str, span: str | None) -> Profile:
        return self._resident_profile(self._ready_path(run, worker, span))

    def capture_profile(self, run: str, worker: str, span: str | None, file: str) -> Profile:
        """The graph capture trace ``file`` of the profile's run, as a profile of its own (capture_profiles.py)."""
        path = self._ready_path(run, worker, span)
        owner = self._resident_profile(path)
        with self._lock:
            captures = self._files[path].file.captures
        assert self.location is not None
        return self._captures.get(self.location, captures, file, owner)

    def kept_answer(self, run: str, worker: str, span: str | None, name: str) -> Any:
        """A small answer kept for a ready file (``keep_answer``) or stored in its index summary; None
        when there is none (the caller computes it from the profile)."""
        path = self._ready_path(run, worker, span)
        with self._lock:
            kept = self._answers.get(path, {}).get(name)
            if kept is None and (summary := self._summaries.get(path)) is not None:
                kept = getattr(summary, "answers", {}).get(name)
            return kept

    def keep_answer(self, profile: Profile, name: str, data: Any) -> None:
        """Keep a small answer computed from a resident profile, for later requests (evicted or not)."""
        with self._lock:
            if self._profiles.get(profile.source) is profile:
                self._answers.setdefault(profile.source, {})[name] = data

    def _ready_path(self, run: str, worker: str, span: str | None) -> str:
        """The path of the file named by run, worker and span, when it is loaded (else NotFound)."""
        with self._lock:
            spans = self.spans(run, worker)
            if span is None or span == "default":
                if len(spans) != 1:
                    raise Ambiguous(f"worker '{worker}' has {len(spans)} spans; choose one with 'span'")
                span = spans[0]
            path = self._index.get((run, worker, span))
            if path is None:
                raise NotFound(
                    f"worker '{worker}' of run '{run}' has no span '{span}' (spans: {', '.join(spans)})"
                )
            state = self._files[path]
            if path not in self._profiles and state.status != "ready":
                if state.status == "error":
                    raise NotFound(f"{display(posixpath.basename(path))} could not be loaded: {state.error}")
                raise NotFound(f"{display(posixpath.basename(path))} is still loading")
        return path

    def job_members(self, run: str, span: str | None) -> list[Profile | IndexedSummary]:
        """One entry per worker of the run for the span (None: each worker's first span) for job-level
        views: its index summary when that holds the distributed figures (no full profile is read), else
        its full profile (read again when evicted)."""
        with self._lock:
            picks: list[Profile | IndexedSummary | str] = []
            for worker in self.workers(run):
                spans = self.spans(run, worker)
                path = self._index.get((run, worker, span if span is not None else spans[0]))
                state = self._files.get(path) if path is not None else None
                if path is None or state is None or state.status != "ready":
                    continue
                summary = self._summaries.get(path)
                picks.append(summary if summary is not None and summary.part is not None else path)
        out: list[Profile | IndexedSummary] = []
        for pick in picks:
            if isinstance(pick, str):
                with contextlib.suppress(NotFound):
                    out.append(self._resident_profile(pick, keep=False))
            else:
                out.append(pick)
        summaries = [p for p in out if not isinstance(p, Profile)]
        if summaries:  # their calls tables, decoded in one pass
            from torch_tb_profiler.ingest.index_format import decode_calls

            decode_calls(summaries)
        return out

    def get_run_profiles(self, run: str, span: str | None) -> list[Profile]:
        """One profile per worker of the run for the given span (span None: each worker's only/first span)."""
        with self._lock:
            paths = []
            for worker in self.workers(run):
                spans = self.spans(run, worker)
                chosen = span if span is not None else spans[0]
                path = self._index.get((run, worker, chosen))
                state = self._files.get(path) if path is not None else None
                if path is not None and (path in self._profiles or (state and state.status == "ready")):
                    paths.append(path)
        out = []
        for path in paths:  # evicted ones are read again (one at a time; each may evict the one before)
            with contextlib.suppress(NotFound):
                out.append(self._resident_profile(path, keep=False))
        return out

    def _require_run(self, run: str) -> None:
        if run not in self._tree.runs:
            raise NotFound(f"no run named '{run}'")

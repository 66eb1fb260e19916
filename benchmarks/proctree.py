"""Peak resident memory of a process and all its descendants, sampled from /proc.

``TreeSampler(pid)`` runs a thread that every ``interval`` seconds finds the descendants of ``pid``
(through ``/proc/*/stat`` parent ids) and sums their RSS (``/proc/<pid>/statm`` resident pages).
The peak of that sum is what a user sees the whole program cost at its worst moment. Sampling can
miss a spike shorter than the interval, so it is a lower bound; the sampler also keeps each process's
kernel-tracked high-water mark (``VmHWM`` in /proc/<pid>/status, last value read before it exited) and
sums those: an upper bound, since the processes' peaks need not coincide.
"""

from __future__ import annotations

import os
import threading
import time

PAGE = os.sysconf("SC_PAGE_SIZE")


def _parents() -> dict[int, int]:
    """pid -> parent pid of every process visible in /proc."""
    out: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:  # exited meanwhile
            continue
        # the command name (field 2) may hold spaces or parentheses; fields after the last ')' are safe
        rest = stat[stat.rfind(b")") + 2 :].split()
        out[int(name)] = int(rest[1])
    return out


def descendants(root: int) -> list[int]:
    """``root`` and every process below it."""
    children: dict[int, list[int]] = {}
    for pid, ppid in _parents().items():
        children.setdefault(ppid, []).append(pid)
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return 0


def hwm_bytes(pid: int) -> int:
    """The process's peak RSS so far (VmHWM), 0 when it is gone."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, IndexError, ValueError):
        pass
    return 0


def label(pid: int) -> str:
    """A short name for a process: its command line's script or module, else its comm."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return "?"
    words = [a.decode(errors="replace") for a in argv if a]
    for w in words[1:]:
        if w.endswith("tensorboard") or "spawn_main" in w or "resource_tracker" in w:
            return "tensorboard" if w.endswith("tensorboard") else w.split("import ")[-1].split(";")[0]
    return os.path.basename(words[0]) if words else "?"


def tree_rss(root: int) -> tuple[int, int]:
    """(summed RSS in bytes, number of processes) of ``root`` and its descendants now."""
    pids = descendants(root)
    return sum(rss_bytes(p) for p in pids), len(pids)


class TreeSampler:
    """Samples the tree of ``pid`` in a background thread.

    ``peak``: the largest summed RSS seen; ``at_peak``: (process label, RSS bytes) of each process at
    that moment; ``max_procs``: the most processes at once; ``hwm_sum``: the sum over every process
    seen of its last-read VmHWM.
    """

    def __init__(self, pid: int, interval: float = 0.05) -> None:
        self.pid = pid
        self.interval = interval
        self.peak = 0
        self.max_procs = 0
        self.samples = 0
        self.at_peak: list[tuple[str, int]] = []
        self._hwm: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            pids = descendants(self.pid)
            rss = {p: rss_bytes(p) for p in pids}
            total = sum(rss.values())
            if total > self.peak:
                self.peak = total
                self.at_peak = [(label(p), r) for p, r in rss.items()]
            self.max_procs = max(self.max_procs, len(pids))
            for p in pids:
                # keyed by pid and start time would survive pid reuse; over one benchmark run it is moot
                self._hwm[p] = max(self._hwm.get(p, 0), hwm_bytes(p))
            self.samples += 1
            time.sleep(self.interval)

    @property
    def hwm_sum(self) -> int:
        return sum(self._hwm.values())

    def __enter__(self) -> TreeSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

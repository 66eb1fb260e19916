"""Every limit on what one trace file may cost, in one place (documented in docs/security.md).

Each limit has a default and an environment variable to change it; TensorBoard's
``--profiler_limit NAME=VALUE`` flag and the CLI's ``--limit NAME=VALUE`` set the same variables.
Limits are read at call time, so pool processes (which inherit the environment) apply the same ones.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

_GIB = 1 << 30
_MIB = 1 << 20


@dataclass(frozen=True)
class Limit:
    name: str  # as given to the flags
    env: str
    default: int
    help: str


LIMITS: dict[str, Limit] = {
    limit.name: limit
    for limit in (
        Limit(
            "max_trace_bytes",
            "TORCH_PROFILER_MAX_TRACE_BYTES",
            4 * _GIB,
            "largest JSON text one trace file may hold (after gunzip)",
        ),
        Limit(
            "max_gzip_ratio",
            "TORCH_PROFILER_MAX_GZIP_RATIO",
            200,
            "largest inflation ratio of a .gz trace (checked while inflating, past the first 64 MiB)",
        ),
        Limit(
            "max_string_bytes",
            "TORCH_PROFILER_MAX_STRING_BYTES",
            1 * _MIB,
            "longest string kept from a trace (event names, args); longer ones are cut",
        ),
        Limit(
            "max_nesting",
            "TORCH_PROFILER_MAX_NESTING",
            64,
            "deepest JSON nesting kept inside one event; deeper values are dropped",
        ),
        Limit(
            "max_dir_depth",
            "TORCH_PROFILER_MAX_DIR_DEPTH",
            32,
            "deepest directory level below the logdir that is scanned",
        ),
    )
}

RATIO_GRACE_BYTES = 64 * _MIB  # a small file may inflate a lot: the ratio is checked past this much text


class LimitError(Exception):
    """A file exceeds a limit; the message names the limit and how to raise it."""


def get(name: str) -> int:
    """The current value of a limit (its environment variable, else the default)."""
    limit = LIMITS[name]
    raw = os.environ.get(limit.env, "").strip()
    if not raw:
        return limit.default
    try:
        value = parse_value(raw)
    except ValueError:
        return limit.default
    return value


def parse_value(text: str) -> int:
    """'4294967296', '4G', '512M', '64k' -> a positive int; ValueError otherwise."""
    text = text.strip().upper().removesuffix("B").removesuffix("I")
    scale = {"K": 1 << 10, "M": _MIB, "G": _GIB, "T": 1 << 40}.get(text[-1:], 1)
    number = text[:-1] if scale != 1 else text
    value = int(float(number) * scale)
    if value <= 0:
        raise ValueError(f"must be positive: {text!r}")
    return value


def set_from_flag(assignment: str) -> None:
    """Apply one ``NAME=VALUE`` flag by setting the limit's environment variable (ValueError if bad)."""
    name, sep, value = assignment.partition("=")
    name = name.strip().replace("-", "_")
    if not sep or name not in LIMITS:
        raise ValueError(f"expected NAME=VALUE with NAME one of {', '.join(LIMITS)}; got {assignment!r}")
    os.environ[LIMITS[name].env] = str(parse_value(value))


def how_to_raise(name: str) -> str:
    limit = LIMITS[name]
    return f"raise with {limit.env}=<value> or the flag --profiler_limit (CLI: --limit) {name}=<value>"


def human(n: float) -> str:
    for unit, size in (("GB", _GIB), ("MB", _MIB), ("kB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} bytes"


def too_big(what: str, size: int) -> LimitError:
    cap = get("max_trace_bytes")
    return LimitError(
        f"{what} inflates beyond {human(cap)} ({human(size)} so far); {how_to_raise('max_trace_bytes')}"
    )


class InflateGuard:
    """Counts text as it is inflated and raises LimitError the moment the text passes the size cap
    or, past the first ``RATIO_GRACE_BYTES``, the gzip ratio cap (text / compressed bytes consumed)."""

    def __init__(self, gzip: bool) -> None:
        self.cap = get("max_trace_bytes")
        self.ratio = get("max_gzip_ratio") if gzip else 0
        self.text = 0

    def add(self, n: int, consumed: int) -> None:
        """``n`` more bytes of text, ``consumed`` compressed bytes read so far in all."""
        self.text += n
        if self.text > self.cap:
            raise too_big("the trace", self.text)
        if self.ratio and self.text > RATIO_GRACE_BYTES and self.text > self.ratio * max(consumed, 1):
            raise LimitError(
                f"the .gz file inflates more than {self.ratio}x ({human(consumed)} -> "
                f"{human(self.text)} so far): a gzip bomb or a degenerate trace; {how_to_raise('max_gzip_ratio')}"
            )

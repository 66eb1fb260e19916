"""``--fail-on`` rules of ``torch-tb-profiler compare`` (grammar in docs/cli.md, "compare").

A rule is ``FIGURE CMP VALUE``:

- FIGURE: ``step_time``; ``mfu`` (the profile's MFU, a fraction: analysis/roofline/mfu.py);
  ``temporal:idle|compute|non_compute`` and ``critical_path:KIND`` (mean µs per step:
  analysis/diff/waits_change.py); a breakdown category (``kernel``, ``memcpy``, ``memset``, ``communication``,
  ``runtime``, ``dataloader``, ``cpu_exec``, ``other``); ``op:NAME.FIELD`` with FIELD one of
  ``calls``, ``host_self``, ``host_total``, ``device_self``, ``device_total``; ``kernel:NAME.FIELD``
  with FIELD one of ``calls``, ``total``, ``mean``; ``memory:DEVICE.FIELD`` with FIELD
  ``peak_allocated`` or ``peak_reserved``. NAME is everything up to the last ``.``.
- CMP: ``>``, ``>=``, ``<``, ``<=``.
- VALUE: a signed number and a unit. ``%`` compares the relative change (100 × delta / baseline);
  ``us``, ``ms``, ``s`` (time figures) and ``B``, ``KB``, ``MB``, ``GB``, ``KiB``, ``MiB``, ``GiB``
  (memory figures) compare the absolute change; no unit compares the absolute change in the
  figure's own unit (µs, calls, bytes).

A rule fails when the change compares true *and* is significant: |delta| must exceed the figure's
noise (diff.py: the larger half-range of its per-step values on either side) for ``step_time``, the
categories, operators and kernels; memory peaks have no per-step spread and are always significant. A figure missing from both sides is an error (exit 2), one that a side
lacks counts as 0 there (an added operator has a relative change of +inf).
"""

from __future__ import annotations

import math
import operator
import re
from dataclasses import dataclass
from typing import Any

from torch_tb_profiler.analysis.device.breakdown import CATEGORIES
from torch_tb_profiler.analysis.diff import waits_change

_CMP = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}
_TIME_UNITS = {"us": 1.0, "µs": 1.0, "ms": 1e3, "s": 1e6}
_BYTE_UNITS = {"B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3}
_FIELDS = {
    "op": {
        f: f if f == "calls" else f"{f}_us"
        for f in ("calls", "host_self", "host_total", "device_self", "device_total")
    },
    "kernel": {"calls": "calls", "total": "total_us", "mean": "mean_us"},
    "memory": {"peak_allocated": "peak_allocated_bytes", "peak_reserved": "peak_reserved_bytes"},
}
_NUMBER = re.compile(r"[+-]?[0-9]+(?:\.[0-9]+)?")
_UNIT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZµ")
_MAX_RULE_CHARS = 1_000_000  # a figure names one operator or kernel: far longer than any name


class RuleError(ValueError):
    """A rule that cannot be parsed or evaluated; the message says why."""


@dataclass(frozen=True)
class Rule:
    text: str
    kind: str  # step_time, mfu, category, waits, op, kernel, memory
    name: str  # category / operator / kernel / device
    field: str  # the diff's field name
    cmp: str
    threshold: float  # percent when relative, else in the figure's unit
    relative: bool


def parse(text: str) -> Rule:
    """A rule from its text, or RuleError with what is wrong."""
    figure, cmp, num, unit = _split(text)
    kind, name, field = _figure(text, figure)
    number = float(num)
    if unit == "%":
        return Rule(text, kind, name, field, cmp, _finite(text, number), True)
    is_time = field.endswith("_us") or kind in ("step_time", "category", "waits")
    units = _TIME_UNITS if is_time else _BYTE_UNITS if kind == "memory" else {}
    if unit and unit not in units:
        allowed = ", ".join(["%", *units]) if units else "% or none"
        raise RuleError(f"bad rule {text!r}: unit {unit!r} does not fit {figure!r} (use {allowed})")
    return Rule(text, kind, name, field, cmp, _finite(text, number * units.get(unit, 1.0)), False)


def _split(text: str) -> tuple[str, str, str, str]:
    """FIGURE, CMP, number and unit of a rule, read from its end in one pass (linear in its length:
    kernel names hold < and >, so the comparator is the one just before the trailing VALUE)."""
    bad = RuleError(f"bad rule {_short(text)!r}: expected FIGURE CMP VALUE, e.g. 'step_time>+5%'")
    if len(text) > _MAX_RULE_CHARS:
        raise RuleError(f"bad rule {_short(text)!r}: longer than {_MAX_RULE_CHARS} characters")
    rest = text.strip()
    if rest.endswith("%"):
        unit, rest = "%", rest[:-1]
    else:
        end = len(rest)
        while end > 0 and rest[end - 1] in _UNIT_CHARS:
            end -= 1
        unit, rest = rest[end:], rest[:end]
    rest = rest.rstrip()
    start = len(rest)
    while start > 0 and rest[start - 1] in "0123456789.+-":
        start -= 1
    # only spaces may stand between CMP and the number, neither is one of these: the tail is the number
    num, rest = rest[start:], rest[:start].rstrip()
    if not _NUMBER.fullmatch(num):
        raise bad
    cmp = next((c for c in (">=", "<=", ">", "<") if rest.endswith(c)), "")
    figure = rest[: len(rest) - len(cmp)].rstrip()
    if not cmp or not figure:
        raise bad
    return figure, cmp, num, unit


def _finite(text: str, threshold: float) -> float:
    if not math.isfinite(threshold):
        raise RuleError(f"bad rule {_short(text)!r}: the threshold is not a finite number")
    return threshold


def _short(text: str) -> str:
    return text if len(text) <= 200 else f"{text[:100]}…{text[-60:]}"


def _figure(text: str, figure: str) -> tuple[str, str, str]:
    if figure == "step_time":
        return "step_time", "", "duration"
    if figure == "mfu":
        return "mfu", "", "mean"
    if figure in CATEGORIES:
        return "category", figure, figure
    if waits_change.is_figure(figure):
        return "waits", figure, "mean"
    prefix, sep, rest = figure.partition(":")
    if not sep or prefix not in _FIELDS:
        known = ", ".join(
            [
                *(
                    "step_time",
                    "mfu",
                    *CATEGORIES,
                    "op:NAME.FIELD",
                    "kernel:NAME.FIELD",
                    "memory:DEVICE.FIELD",
                ),
                *("temporal:idle|compute|non_compute", "critical_path:KIND"),
            ]
        )
        raise RuleError(f"bad rule {text!r}: unknown figure {figure!r} (known: {known})")
    name, dot, field = rest.rpartition(".")
    fields = _FIELDS[prefix]
    if not dot or not name or field.removesuffix("_us").removesuffix("_bytes") not in fields:
        raise RuleError(
            f"bad rule {text!r}: {prefix} figures are {prefix}:NAME.FIELD, FIELD one of {', '.join(fields)}"
        )
    return prefix, name, fields[field.removesuffix("_us").removesuffix("_bytes")]


def evaluate(rule: Rule, diff: dict[str, Any]) -> dict[str, Any]:
    """The rule's outcome on a diff: figures, the change compared, and ``failed``."""
    figures = _lookup(rule, diff)
    base, exp = figures["baseline"], figures["experiment"]
    if base is None and exp is None:
        raise RuleError(f"rule {rule.text!r}: the figure is in neither profile")
    base, exp = base or 0.0, exp or 0.0
    delta = exp - base
    if rule.relative:
        value = 100.0 * delta / base if base else (0.0 if delta == 0 else math.copysign(math.inf, delta))
    else:
        value = delta
    significant = figures.get("significant", True)
    failed = bool(_CMP[rule.cmp](value, rule.threshold)) and significant
    return {
        "rule": rule.text,
        "baseline": base,
        "experiment": exp,
        "delta": delta,
        "rel": delta / base if base else None,
        "noise": figures.get("noise"),
        "significant": significant,
        "failed": failed,
    }


def _lookup(rule: Rule, diff: dict[str, Any]) -> dict[str, Any]:
    if rule.kind == "step_time":
        return diff["steps"]
    if rule.kind == "mfu":
        entry = diff.get("mfu") or {}
        if entry.get("delta") is None:
            why = entry.get("note") or "a side has no MFU"
            raise RuleError(f"rule {rule.text!r} cannot be checked: {why}")
        return entry
    if rule.kind == "waits":
        entry = (diff.get("waits") or {}).get(rule.name)
        if entry is None:
            raise RuleError(f"rule {rule.text!r} cannot be checked: neither profile has {rule.name!r}")
        return entry
    if rule.kind == "category":
        entry = diff["breakdown_us"].get(rule.name)
        if entry is None or entry["delta"] is None:
            why = (entry or {}).get("note") or "neither profile has this time"
            raise RuleError(f"rule {rule.text!r} cannot be checked: {why}")
        return entry
    if rule.kind == "memory":
        for row in diff["memory"]:
            if rule.name in (row["device"], row.get("experiment_device")):
                figures = row[rule.field]
                if figures["baseline"] is None or figures["experiment"] is None:
                    # an unrecorded peak is unknown, not 0
                    lacking = "baseline" if figures["baseline"] is None else "experiment"
                    raise RuleError(
                        f"rule {rule.text!r} cannot be checked: the {lacking} has no memory totals for {rule.name!r}"
                    )
                return figures
        raise RuleError(f"rule {rule.text!r}: no memory records for device {rule.name!r}")
    rows = diff["operators"] if rule.kind == "op" else diff["kernels"]
    for row in rows:
        if row["name"] == rule.name or row.get("baseline_name") == rule.name:
            base = (row["baseline"] or {}).get(rule.field)
            exp = (row["experiment"] or {}).get(rule.field)
            noise = row["noise"].get(rule.field)
            delta = (exp or 0.0) - (base or 0.0)  # as evaluate() counts a missing side
            return {
                "baseline": base,
                "experiment": exp,
                "noise": noise,
                "significant": noise is None or abs(delta) > noise,
            }
    return {"baseline": None, "experiment": None}


def verdict(rules: list[Rule], diff: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    outcomes = [evaluate(r, diff) for r in rules]
    return {
        "failed": [o for o in outcomes if o["failed"]],
        "passed": [o for o in outcomes if not o["failed"]],
    }

"""Kernel families: the part of a kernel's name that survives a recompile (docs/metrics.md, "Diff").

Two kernels are "the same kernel, renamed" when their names differ only in template arguments or
launch details (tile sizes, unroll factors, architecture tags). ``family(name)`` is that common part:

1. An Itanium-mangled name (``_Z…``) becomes its qualified function name: the length-prefixed source
   names of the nested name up to the template arguments (``_ZN2at6native6kernelILi4EEvT_`` →
   ``at::native::kernel``).
2. A leading ``void `` and every balanced ``<…>`` template argument list are removed; a parameter
   list ``(…)`` is removed.
3. Every run of digits becomes ``#`` (``volta_sgemm_128x64_nn`` → ``volta_sgemm_#x#_nn``), and
   whitespace is collapsed.
"""

from __future__ import annotations

import re

_DIGITS = re.compile(r"\d+")
_SPACE = re.compile(r"\s+")


def demangled_prefix(name: str) -> str | None:
    """``_ZN2at6native6kernelI…`` → ``at::native::kernel``; None when ``name`` is not mangled."""
    if not name.startswith("_Z"):
        return None
    i = 2
    nested = i < len(name) and name[i] == "N"
    if nested:
        i += 1
        while i < len(name) and name[i] in "rVKRO":  # cv/ref qualifiers of a nested member
            i += 1
    parts: list[str] = []
    while i < len(name) and name[i].isdigit():
        j = i
        while j < len(name) and name[j].isdigit():
            j += 1
        length = int(name[i:j])
        parts.append(name[j : j + length])
        i = j + length
        if not nested:
            break
    return "::".join(parts) if parts else None


def _strip_brackets(text: str, open_ch: str, close_ch: str) -> str:
    out: list[str] = []
    depth = 0
    for ch in text:
        if ch == open_ch:
            depth += 1
        elif ch == close_ch and depth:
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def family(name: str) -> str:
    """The family key of a kernel name (rules in the module docstring)."""
    text = demangled_prefix(name) or name
    text = text.strip()
    if text.startswith("void "):
        text = text[5:]
    text = _strip_brackets(text, "<", ">")
    text = _strip_brackets(text, "(", ")")
    text = _DIGITS.sub("#", text)
    return _SPACE.sub(" ", text).strip()

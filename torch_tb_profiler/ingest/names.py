"""File names as shown to users and in JSON answers.

A POSIX file name is bytes; Python carries undecodable bytes as lone surrogates, which no JSON encoder
accepts. Shown names escape those bytes as ``\\xNN`` and control characters (a newline in a name) as
``\\n``/``\\xNN``, so every name can be listed and still names its file unambiguously enough to load it.
"""

from __future__ import annotations

import os
import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def display(text: str) -> str:
    if text.isascii() and not _CONTROL.search(text):
        return text
    try:
        shown = os.fsencode(text).decode("utf-8", "backslashreplace")
    except UnicodeError:  # not a str from the filesystem: escape what cannot be encoded
        shown = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return _CONTROL.sub(lambda m: _ESCAPES.get(m.group(), f"\\x{ord(m.group()):02x}"), shown)

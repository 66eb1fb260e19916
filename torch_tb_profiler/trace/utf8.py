"""Text made valid UTF-8: JSON may spell a lone surrogate (``"\\ud800"``), which no UTF-8 encoder (the
answers' JSON, the CLI's output) can write."""

from __future__ import annotations

from typing import Any


def utf8_text(text: str) -> str:
    """``text`` as valid UTF-8: a lone surrogate (JSON allows ``"\\ud800"``; no UTF-8 encoder does) is
    shown as its escape, ``\\ud800``, so every answer holding the name can still be written."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def utf8_data(value: Any) -> Any:
    """Decoded JSON data (metadata, args) with every string made valid UTF-8 (``utf8_text``)."""
    if isinstance(value, str):
        return value if value.isascii() else utf8_text(value)
    if isinstance(value, dict):
        return {utf8_data(k): utf8_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [utf8_data(v) for v in value]
    return value

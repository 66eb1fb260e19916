"""Plain JSON data from analysis results: what every answer passes through before it is served."""

from __future__ import annotations

import math
from typing import Any


def clean(value: Any) -> Any:
    """Plain JSON data: numpy scalars to Python, NaN/inf to None, tuples to lists."""
    if isinstance(value, dict):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        try:
            value = value.item()
        except (ValueError, TypeError):
            return value
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value

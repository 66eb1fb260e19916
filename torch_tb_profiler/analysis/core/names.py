"""Name tests done once per distinct name.

Traces repeat a few hundred names over hundreds of thousands of rows; pandas string methods run
per row in Python. Here a table's name column is factorised once per profile (cached) and a
predicate runs over the distinct names only, then is broadcast back to the rows.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from torch_tb_profiler.analysis.core.cache import memoized


def factorized(profile, table: str, column: str = "name") -> tuple[np.ndarray, np.ndarray]:
    """(codes per row, distinct values as str) of ``profile.<table>[column]``, cached."""

    def compute() -> tuple[np.ndarray, np.ndarray]:
        frame: pd.DataFrame = getattr(profile, table)
        if not len(frame):
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=object)
        codes, uniques = pd.factorize(frame[column], use_na_sentinel=False)
        return codes.astype(np.int64), np.asarray([str(u) for u in uniques], dtype=object)

    return memoized(profile, f"names.{table}.{column}", compute)


def once_per_distinct(
    names: pd.Series | np.ndarray | list[str], predicate: Callable[[str], bool]
) -> np.ndarray:
    """predicate(name) for every element of ``names``, evaluated once per distinct name."""
    series = pd.Series(names, dtype=object)
    if series.empty:
        return np.zeros(0, dtype=bool)
    codes, uniques = pd.factorize(series)
    verdict = np.fromiter((bool(predicate(str(u))) for u in uniques), dtype=bool, count=len(uniques))
    return verdict[codes]


def mask(profile, table: str, predicate: Callable[[str], bool], column: str = "name") -> np.ndarray:
    """predicate(name) for every row of the table (evaluated once per distinct name)."""
    codes, uniques = factorized(profile, table, column)
    if codes.size == 0:
        return np.zeros(0, dtype=bool)
    verdict = np.fromiter((bool(predicate(u)) for u in uniques), dtype=bool, count=len(uniques))
    return verdict[codes]


def values(profile, table: str, column: str = "name") -> np.ndarray:
    """The column as an object array of str (built from the distinct values)."""
    codes, uniques = factorized(profile, table, column)
    return uniques[codes] if codes.size else np.zeros(0, dtype=object)

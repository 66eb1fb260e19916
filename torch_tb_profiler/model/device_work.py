"""Host calls that submit device work, and the note when none of their device records is in the trace.

A launch or copy call (``cudaLaunchKernel``, ``cuLaunchKernel``, ``hipLaunchKernel``,
``cudaGraphLaunch``, ``cudaMemcpyAsync``, ``zeCommandListAppendLaunchKernel`` ...: a name holding
"launch", "memcpy" or "memset") makes device work; query calls (``cudaGetDeviceCount``,
``cudaGetDeviceProperties``, ``cudaSetDevice``, ``cudaStreamIsCapturing`` ...) do not. A trace with
work calls but no device activity at all lost its device records (e.g. CUPTI dropped its activity
buffers): docs/metrics.md, "Device kind".
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

_WORK = re.compile(r"launch|memcpy|memset", re.IGNORECASE)


def work_call_mask(runtimes: pd.DataFrame) -> np.ndarray:
    """Per row of ``runtimes``: the call submits device work (evaluated once per distinct name)."""
    if not len(runtimes):
        return np.zeros(0, dtype=bool)
    codes, uniques = pd.factorize(runtimes["name"], use_na_sentinel=False)
    verdict = np.fromiter((bool(_WORK.search(str(u))) for u in uniques), dtype=bool, count=len(uniques))
    return verdict[codes]


def lost_launches(runtimes: pd.DataFrame, device: pd.DataFrame) -> int:
    """How many work calls the trace holds when it has no device activity at all (else 0)."""
    if len(device):
        return 0
    return int(work_call_mask(runtimes).sum())


def lost_launches_note(count: int) -> str:
    return (
        f"{count} launches have no device activity in this trace: the profiler lost the device records "
        "(e.g. CUPTI activity dropped), so no device figure or advice is given"
    )

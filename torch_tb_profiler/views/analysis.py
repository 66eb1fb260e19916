"""``/analysis``: why the device waits — idle time, the temporal breakdown, launches, queues, frequent
kernel sequences and the critical path of each step of one profile (analysis/waits, docs/metrics.md
"Why the device waits"), with the details the Analysis view links to the timeline from."""

from __future__ import annotations

from typing import Any

from werkzeug.wrappers import Request

from torch_tb_profiler.analysis.core.plain import clean
from torch_tb_profiler.analysis.timeline import index as tl
from torch_tb_profiler.analysis.waits import summary as waits
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.views.common import int_param, profile_param

DEFAULT_SEQUENCE_LENGTH = 5


def analysis(request: Request, store: RunStore) -> dict[str, Any]:
    """``analyses`` as in ``summary --json``, ``device`` (whether the profile has device activity),
    and the details: the longest idle intervals and the sequences of ``n`` kernels (2–16)."""
    n = int_param(request, "n", DEFAULT_SEQUENCE_LENGTH, lo=2, hi=16)
    profile = profile_param(request, store)
    return clean(
        {
            "device": len(profile.device) > 0,
            # the timeline's time origin: the view shows times from it, as every view does
            "origin_us": tl.index(profile).start_us if len(profile.device) else None,
            "analyses": waits.summary(profile),
            **waits.details(profile, sequence_length=n),
        }
    )


ROUTES = {"/analysis": analysis}

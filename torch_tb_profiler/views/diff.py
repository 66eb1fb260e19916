"""``/diff``: a baseline profile against an experiment (docs/api.md, "Diff").

``run``/``worker``/``span`` name the experiment and ``base_run``/``base_worker``/``base_span`` the
baseline (span optional where the worker has one); ``group_by`` joins operators by name or name +
input shape; ``waterfall_top`` is the number of waterfall parts. The figures come from
``analysis/diff/compare.py``, shared with ``torch-tb-profiler compare`` and memoized per pair.
"""

from __future__ import annotations

from typing import Any

from werkzeug.wrappers import Request

from torch_tb_profiler.analysis.diff import compare as D
from torch_tb_profiler.analysis.ops.operators import GROUP_BY
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.views.common import choice_param, int_param, param


def diff(request: Request, store: RunStore) -> dict[str, Any]:
    group_by = choice_param(request, "group_by", GROUP_BY, "name")
    top = int_param(request, "waterfall_top", D.DEFAULT_WATERFALL, lo=1, hi=100)
    exp = store.get_profile(param(request, "run"), param(request, "worker"), request.args.get("span") or None)
    base = store.get_profile(
        param(request, "base_run"), param(request, "base_worker"), request.args.get("base_span") or None
    )
    return D.compare(base, exp, group_by, top)


ROUTES = {"/diff": diff}

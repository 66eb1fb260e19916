"""``/overview``: environment, step-time breakdown, GPU summary and recommendations of one profile."""

from __future__ import annotations

from typing import Any

from werkzeug.wrappers import Request

from torch_tb_profiler.analysis.modules import has_module_view
from torch_tb_profiler.analysis.overview import overview as build_overview
from torch_tb_profiler.analysis.summary import clean
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.views.common import profile_param


def overview(request: Request, store: RunStore) -> dict[str, Any]:
    profile = profile_param(request, store)
    data = build_overview(profile)
    data["environment"]["workers"] = len(store.workers(profile.run))
    data["environment"]["module_info"] = has_module_view(profile)
    return clean(data)


ROUTES = {"/overview": overview}

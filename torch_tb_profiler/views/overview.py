"""``/overview``: environment, step-time breakdown, GPU summary and recommendations of one profile."""

from __future__ import annotations

import copy
from typing import Any

from werkzeug.wrappers import Request

from torch_tb_profiler.analysis.overview.page import page
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.views.common import param


def overview(request: Request, store: RunStore) -> dict[str, Any]:
    run, worker, span = param(request, "run"), param(request, "worker"), request.args.get("span") or None
    # the answer stored in the file's index, or kept from an earlier request (also while the profile is
    # evicted): a re-opened logdir answers without reading the full profile
    data = store.kept_answer(run, worker, span, "overview")
    if data is None:
        profile = store.get_profile(run, worker, span)
        data = page(profile)
        store.keep_answer(profile, "overview", data)
    data = copy.deepcopy(data)
    data["environment"]["workers"] = len(store.workers(run))
    return data


ROUTES = {"/overview": overview}

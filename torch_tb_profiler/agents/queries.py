"""What each MCP tool answers, as plain data, from one ``RunStore`` (no MCP here: ``server`` wraps these).

Every figure comes from the function ``summary --json`` or the HTTP route uses for it, so an agent
reads the numbers a person sees. Bad arguments raise ``QueryError`` with a message for the agent; runs,
workers and spans are names the store lists, never paths, so nothing outside the logdir is read."""

from __future__ import annotations

from typing import Any

from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Request

from torch_tb_profiler.analysis.core.cache import memoized
from torch_tb_profiler.analysis.core.plain import clean
from torch_tb_profiler.analysis.diff import compare as diff
from torch_tb_profiler.analysis.diff import rules as diff_rules
from torch_tb_profiler.analysis.distributed import job as distributed
from torch_tb_profiler.analysis.memory import usage as memory_usage
from torch_tb_profiler.analysis.modules import tree as modules_tree
from torch_tb_profiler.analysis.ops import kernels as kernel_tables
from torch_tb_profiler.analysis.ops import operators as operator_tables
from torch_tb_profiler.analysis.overview.recommendations import recommendations
from torch_tb_profiler.analysis.overview.summary import operator_sort, profile_summary
from torch_tb_profiler.analysis.roofline import summary as roofline_summary
from torch_tb_profiler.analysis.waits import summary as waits_summary
from torch_tb_profiler.ingest.errors import LookupFailed
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.model import Profile
from torch_tb_profiler.views import distributed as distributed_view
from torch_tb_profiler.views import memory as memory_view
from torch_tb_profiler.views import timeline as timeline_view
from torch_tb_profiler.views.common import HttpError

LOAD_WAIT_S = 120.0  # the first tool call waits this long at most for the first loads
MAX_TOP = 1000
OPERATOR_KEYS = [
    "name",
    "kind",
    "calls",
    "host_self_us",
    "host_total_us",
    "device_self_us",
    "device_total_us",
    "replayed_calls",
    "replayed_device_us",
]
OPERATOR_SORTS = tuple(k for k in OPERATOR_KEYS if k.endswith("_us") or k == "calls")
KERNEL_KEYS = [
    "name",
    "calls",
    "total_us",
    "mean_blocks_per_sm",
    "mean_achieved_occupancy_pct",
    "replayed_calls",
    "replayed_device_us",
]
KERNEL_SORTS = ("total_us", "calls", "replayed_device_us")


class QueryError(ValueError):
    """A tool's arguments cannot be answered: the message says why (and what would be)."""


class Queries:
    def __init__(self, store: RunStore) -> None:
        self.store = store
        self._settled_once = False

    # ---- finding a profile ---------------------------------------------------------------------------

    def _settled(self) -> None:
        """The first call waits for the logdir's first scan and loads; later ones never wait (a logdir
        still being written would keep the store busy): a profile still loading is an error saying so."""
        if self._settled_once:
            return
        self.store.wait_first_scan(LOAD_WAIT_S)
        self.store.wait_idle(LOAD_WAIT_S)
        self._settled_once = True

    def profile(self, run: str, worker: str, span: str | None) -> Profile:
        self._settled()
        try:
            if not span:
                spans = self.store.spans(run, worker)
                span = spans[0] if spans else None
            return self.store.get_profile(run, worker, span)
        except LookupFailed as e:
            raise QueryError(f"{e} (list_runs names the runs, workers and spans)") from None

    def _route(self, handler: Any, **params: Any) -> Any:
        """A route's answer, for the tools that answer what a view shows (same validation, 400 -> error)."""
        self._settled()
        query = {k: str(v) for k, v in params.items() if v is not None and v != ""}
        request = Request(EnvironBuilder(query_string=query).get_environ())
        try:
            return handler(request, self.store)
        except HttpError as e:
            raise QueryError(e.message) from None
        except LookupFailed as e:
            raise QueryError(f"{e} (list_runs names the runs, workers and spans)") from None

    # ---- the tools -----------------------------------------------------------------------------------

    def list_runs(self) -> dict[str, Any]:
        self._settled()
        out = []
        for r in self.store.runs():
            workers: dict[str, list[str]] = {}
            for f in r["files"]:
                if f["status"] == "ready":
                    workers.setdefault(f["worker"], []).append(f["span"])
            out.append(
                {
                    "run": r["name"],
                    "state": r["state"],
                    "workers": {w: sorted(s, key=_span_order) for w, s in sorted(workers.items())},
                    "errors": [e["message"] for e in r["errors"]][:10],
                }
            )
        return {"runs": out}

    def overview(self, run: str, worker: str, span: str | None = None) -> dict[str, Any]:
        profile = self.profile(run, worker, span)
        # kept on the profile, as the routes' answers are (a reloaded file is a new Profile)
        return memoized(profile, "agents.overview", lambda: _overview(profile))

    def operators(
        self, run: str, worker: str, span: str | None = None, sort: str = "", top: int = 10, q: str = ""
    ) -> dict[str, Any]:
        if sort and sort not in OPERATOR_SORTS:
            raise QueryError(f"sort must be one of {', '.join(OPERATOR_SORTS)} (empty: as summary)")
        _check_top(top)
        profile = self.profile(run, worker, span)
        table = operator_tables.operator_table(profile, "name")
        if q:
            table = table[table["name"].str.contains(q, case=False, regex=False)]
        by = sort or operator_sort(profile)
        rows = operator_tables.records(operator_tables.top(table, by, top)[OPERATOR_KEYS])
        return {"sort": by, "matched": len(table), "operators": clean(rows)}

    def kernels(
        self,
        run: str,
        worker: str,
        span: str | None = None,
        sort: str = "total_us",
        top: int = 10,
        q: str = "",
    ) -> dict[str, Any]:
        if sort not in KERNEL_SORTS:
            raise QueryError(f"sort must be one of {', '.join(KERNEL_SORTS)}")
        _check_top(top)
        profile = self.profile(run, worker, span)
        table = kernel_tables.kernel_table(profile, "name")
        if q:
            table = table[table["name"].str.contains(q, case=False, regex=False)]
        table = table.sort_values(sort, ascending=False, kind="stable").head(top)
        return {"sort": sort, "kernels": clean(operator_tables.records(table[KERNEL_KEYS]))}

    def memory(self, run: str, worker: str, span: str | None = None, top: int = 10) -> dict[str, Any]:
        _check_top(top)
        profile = self.profile(run, worker, span)
        peaks = clean(memory_usage.summary(profile))
        devices = []
        for peak in peaks:
            stats = self._route(
                memory_view.stats, run=run, worker=profile.worker, span=profile.span, device=peak["device"]
            )
            rows = sorted(stats["rows"], key=lambda r: -(r["self_alloc_size"] or 0))[:top]
            devices.append(
                {
                    **peak,
                    "top_allocators": [
                        {
                            "name": r["name"],
                            "calls": r["calls"],
                            "self_alloc_bytes": r["self_alloc_size"],
                            "self_alloc_count": r["self_alloc_count"],
                            "alloc_bytes": r["alloc_size"],
                            "self_increase_bytes": r["self_size_increase"],
                        }
                        for r in rows
                    ],
                }
            )
        return {"run": run, "worker": profile.worker, "span": profile.span, "devices": devices}

    def distributed(self, run: str, span: str | None = None, top: int = 5) -> dict[str, Any]:
        _check_top(top)
        self._settled()
        try:
            workers = self.store.workers(run)
        except LookupFailed as e:
            raise QueryError(str(e)) from None
        entries = []
        for w in workers:
            try:
                profile = self.profile(run, w, span)
            except QueryError:
                continue  # a worker without that span, or not loaded
            entries.append((run, profile.span, distributed.summarize_worker(w, profile)))
        section = clean(distributed.cli_section(entries)) if len(entries) > 1 else None
        answer = self._route(distributed_view.job, run=run, span=span, top=top, max_rounds=50)
        stragglers = answer.get("stragglers") or {}
        return {
            "run": run,
            "world_size": answer.get("world_size"),
            "workers": (section or {}).get("workers", []),
            "warnings": (section or {}).get("warnings", []),
            "stragglers": stragglers.get("ranks", [])[:top],
            "collectives": answer.get("comm_ops"),
        }

    def modules(self, run: str, worker: str, span: str | None = None) -> dict[str, Any]:
        profile = self.profile(run, worker, span)
        return _of_profile(run, profile, "modules", modules_tree.summary(profile))

    def roofline(self, run: str, worker: str, span: str | None = None, top: int = 10) -> dict[str, Any]:
        _check_top(top)
        profile = self.profile(run, worker, span)
        return _of_profile(run, profile, "roofline", roofline_summary.summary(profile, top))

    def analyses(self, run: str, worker: str, span: str | None = None) -> dict[str, Any]:
        profile = self.profile(run, worker, span)
        return _of_profile(run, profile, "analyses", waits_summary.summary(profile))

    def compare(
        self,
        run: str,
        worker: str,
        base_run: str,
        base_worker: str,
        span: str | None = None,
        base_span: str | None = None,
        fail_on: list[str] | None = None,
        top: int = 10,
    ) -> dict[str, Any]:
        _check_top(top)
        try:
            rules = [diff_rules.parse(text) for text in fail_on or []]
        except diff_rules.RuleError as e:
            raise QueryError(f"fail_on: {e}") from None
        exp = self.profile(run, worker, span)
        base = self.profile(base_run, base_worker, base_span)
        result = dict(diff.compare(base, exp, "name"))
        result["verdict"] = diff_rules.verdict(rules, result)
        result["operators"] = result["operators"][:top]
        result["kernels"] = result["kernels"][:top]
        return clean(result)

    def timeline_search(
        self,
        run: str,
        worker: str,
        q: str,
        span: str | None = None,
        start_us: float | None = None,
        end_us: float | None = None,
        limit: int = 50,
    ) -> dict[str, Any]:
        profile = self.profile(run, worker, span)
        return self._route(
            timeline_view.search,
            run=run,
            worker=profile.worker,
            span=profile.span,
            q=q,
            start_us=start_us,
            end_us=end_us,
            limit=limit,
        )

    def event(self, run: str, worker: str, id: str, span: str | None = None) -> dict[str, Any]:
        profile = self.profile(run, worker, span)
        return clean(
            self._route(timeline_view.event, run=run, worker=profile.worker, span=profile.span, id=id)
        )


def _overview(profile: Profile) -> dict[str, Any]:
    s = profile_summary(profile, top=0)
    evidence = {r["id"]: r for r in clean(recommendations(profile))}
    recs = [{**r, "evidence": evidence.get(r["id"], {}).get("evidence")} for r in s["recommendations"]]
    keys = (
        "run",
        "worker",
        "span",
        "device_type",
        "matrix_units",
        "steps",
        "step_time_us",
        "breakdown_us",
    )
    return {
        **{k: s[k] for k in keys},
        "steps_us": [{"name": x["name"], "kind": x["kind"], "us": x["us"]} for x in s["step_list"]],
        "gpus": s["gpus"],
        "recommendations": recs,
        "memory": s["memory"],
        "graphs": s["graphs"],
        "errors": s["errors"],
    }


def _check_top(top: int) -> None:
    if isinstance(top, bool) or not isinstance(top, int) or not 0 <= top <= MAX_TOP:
        raise QueryError(f"top must be a whole number 0..{MAX_TOP}, got {top!r}")


def _span_order(span: str) -> tuple[int, str]:
    return (int(span), span) if span.isdigit() else (1 << 62, span)


def _of_profile(run: str, profile: Any, key: str, value: Any) -> dict[str, Any]:
    """One profile's answer: who it is and ``key``'s plain-JSON value."""
    return {"run": run, "worker": profile.worker, "span": profile.span, key: clean(value)}

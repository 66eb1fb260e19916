"""The persisted index (ingest/persist.py, ingest/index_format.py): a profile read back from its index
equals a fresh parse, table by table and route by route; a stale index is rebuilt, a corrupt one is
ignored with a warning and rebuilt, an index location is size-bounded."""

from __future__ import annotations

import dataclasses
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from werkzeug.wrappers import Request, Response

from tests.fixtures.paths import SAMPLES
from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.analysis.core.steps import steps as step_table
from torch_tb_profiler.ingest import index_format, persist
from torch_tb_profiler.ingest.errors import Ambiguous, LookupFailed
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.ingest.parse import load_profile
from torch_tb_profiler.model import Profile
from torch_tb_profiler.plugin import collect_routes
from torch_tb_profiler.views.common import HttpError, json_response

SAMPLE_FILES = sorted(p for p in SAMPLES.rglob("*.pt.trace.json*"))


def assert_profiles_equal(a: Profile, b: Profile) -> None:
    for f in dataclasses.fields(Profile):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, pd.DataFrame):
            pd.testing.assert_frame_equal(x, y, check_exact=True, obj=f.name)
            assert [str(t) for t in x.dtypes] == [str(t) for t in y.dtypes], f.name
        elif f.name != "cache":
            assert x == y, f.name


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: p.name)
def test_index_file_round_trips_every_table_and_meta(path: Path) -> None:
    profile = load_profile(str(path), "run", "w", "1")
    data = index_format.dumps(profile, {"url": str(path)})
    again = index_format.loads(data)
    assert_profiles_equal(profile, again)
    # strings are shared as a fresh parse shares them (one object per distinct name)
    names = again.ops["name"].to_numpy()
    if len(names) > 1:
        assert len({id(x) for x in names}) == len(set(names))


def _old(path: Path) -> Path:
    os.utime(path, (time.time() - 60,) * 2)
    return path


@pytest.fixture
def job(tmp_path: Path) -> Path:
    """A copy of the two-rank DDP sample (a distributed run, so every view applies)."""
    logdir = tmp_path / "logs"
    shutil.copytree(SAMPLES / "ddp_gloo_2ranks", logdir / "ddp")
    for p in logdir.rglob("*.gz"):
        _old(p)
    return logdir


@pytest.fixture
def stores() -> Iterator[Any]:
    made: list[RunStore] = []

    def make(logdir: Path, index: persist.IndexStore | None) -> RunStore:
        store = RunStore(str(logdir), processes=0, settle_seconds=1, index=index)
        made.append(store)
        store.scan_once()
        assert store.wait_idle(60)
        return store

    yield make
    for s in made:
        s.close()


def _index(tmp_path: Path) -> persist.IndexStore:
    store = persist.open_store(str(tmp_path / "index"))
    assert store is not None
    return store


def _files(store: RunStore) -> list[dict[str, Any]]:
    return [f for run in store.runs() for f in run["files"]]


def _answer(handler: Any, store: RunStore, route: str, params: dict[str, str]) -> tuple[int, Any]:
    request = Request.from_values(path=route, query_string=params)
    try:
        data = handler(request, store)
    except HttpError as e:
        return e.status, e.message
    except LookupFailed as e:
        return (400 if isinstance(e, Ambiguous) else 404), str(e)
    if isinstance(data, Response):
        data.direct_passthrough = False  # the trace download streams the file
        return data.status_code, data.get_data()
    return 200, json_response(data).get_data()  # the bytes TensorBoard would send


def _params(store: RunStore, route: str) -> dict[str, str]:
    profile = store.get_profile("ddp", "rank0", None)
    start, end = float(profile.ops["ts"].min()), float(profile.ops["end"].max())
    window = {"start_us": f"{start:.0f}", "end_us": f"{end:.0f}"}
    busiest = str(profile.ops["name"].value_counts().index[0])
    numbers = step_table(profile)["number"]
    first_step = str(int(numbers.iloc[0])) if len(numbers) else "0"
    extra = {
        "/diff": {"base_run": "ddp", "base_worker": "rank1"},
        "/operators/stack": {"name": busiest},
        "/timeline": window,
        "/timeline/aggregate": window,
        "/timeline/critical_path": {"step": first_step},
        "/timeline/event": {"id": "op:0"},
        "/timeline/longest": {"name": busiest},
        "/timeline/search": {"q": busiest[:4]},
    }
    return {"run": "ddp", "worker": "rank0", **extra.get(route, {})}


def test_every_route_answers_the_same_from_the_index(tmp_path: Path, job: Path, stores: Any) -> None:
    index = _index(tmp_path)
    first = stores(job, index)  # parses and writes the index
    assert [f["from_index"] for f in _files(first)] == [False, False]
    reopened = stores(job, index)
    assert [f["from_index"] for f in _files(reopened)] == [True, True]
    parsed = stores(job, None)
    for a, b in zip(
        parsed.get_run_profiles("ddp", None), reopened.get_run_profiles("ddp", None), strict=True
    ):
        assert_profiles_equal(a, b)
    routes = collect_routes()
    ok = 0
    for route, handler in sorted(routes.items()):
        if route == "/runs":  # says from_index: checked above
            continue
        params = _params(parsed, route)
        expected = _answer(handler, parsed, route, params)
        assert _answer(handler, reopened, route, params) == expected, route
        ok += expected[0] == 200
    print(f"{ok} of {len(routes)} routes answered 200")
    # /runs is skipped; /modules/operators needs a node and /timeline/critical_path device activity
    assert ok >= len(routes) - 3, "most routes must answer 200 on the DDP sample for the check to mean much"


def test_changed_trace_rebuilds_its_stale_index(tmp_path: Path, stores: Any) -> None:
    logdir = tmp_path / "logs"
    trace = logdir / "run" / "w0.1.pt.trace.json"

    def write(kernel: str) -> None:
        b = TraceBuilder()
        b.step(1, 0, 1000)
        ext = b.op("aten::mm", 10, 500)
        b.launch(kernel, 20, 1, 600, 5, ext_id=ext)
        b.write(trace)

    write("first_kernel")
    _old(trace)
    index = _index(tmp_path)
    stores(logdir, index)
    write("second_kernel_with_a_longer_name")  # another size and mtime
    os.utime(trace, (time.time() - 30,) * 2)
    store = stores(logdir, index)
    assert [f["from_index"] for f in _files(store)] == [False]
    assert "second_kernel_with_a_longer_name" in set(store.get_profile("run", "w0", None).device["name"])
    again = stores(logdir, index)  # the rebuilt index is current and says the new thing
    assert [f["from_index"] for f in _files(again)] == [True]
    assert "second_kernel_with_a_longer_name" in set(again.get_profile("run", "w0", None).device["name"])


def _index_files(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "index").rglob(f"*{persist.SUFFIX}"))


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage"])
def test_corrupt_index_is_ignored_with_a_warning_and_rebuilt(
    tmp_path: Path, job: Path, stores: Any, damage: str
) -> None:
    index = _index(tmp_path)
    stores(job, index)
    victim = _index_files(tmp_path)[0]
    data = bytearray(victim.read_bytes())
    if damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "flip":
        data[-100] ^= 0xFF
    else:
        data = bytearray(b"not an index at all")
    victim.write_bytes(bytes(data))
    store = stores(job, index)
    # a file other than the one its run opens on is loaded from its index's summary alone, so damage to
    # its tables is found when a view of that worker reads them: open every worker, as a user would
    for worker in ("rank0", "rank1"):
        store.get_profile("ddp", worker, None)
    files = _files(store)
    assert sorted(f["from_index"] for f in files) == [False, True]
    warnings = [w["message"] for run in store.runs() for w in run["warnings"]]
    assert any("could not be read" in w and "rebuilt" in w for w in warnings), warnings
    healed = stores(job, index)
    assert [f["from_index"] for f in _files(healed)] == [True, True]
    assert not [w for run in healed.runs() for w in run["warnings"] if "index" in w["message"]]


def test_index_of_another_model_version_is_not_served(
    tmp_path: Path, job: Path, stores: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = _index(tmp_path)
    stores(job, index)
    monkeypatch.setattr(index_format, "MODEL_VERSION", "999-another-release")
    assert [f["from_index"] for f in _files(stores(job, index))] == [False, False]


def test_no_half_written_file_is_left_when_a_write_fails(
    tmp_path: Path, job: Path, stores: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = _index(tmp_path)

    def broken_write(self: Any, data: bytes) -> int:
        raise OSError("disk full")

    real_fdopen = os.fdopen

    def fdopen(fd: int, mode: str = "r", *a: Any, **k: Any) -> Any:
        f = real_fdopen(fd, mode, *a, **k)
        if "w" in mode:
            f.close()
            raise OSError("disk full")
        return f

    monkeypatch.setattr(persist.os, "fdopen", fdopen)
    store = stores(job, index)
    assert all(r["state"] == "ready" for r in store.runs())  # the trace is served anyway
    assert not [p for p in (tmp_path / "index").rglob("*") if p.is_file()]


def test_local_index_folder_is_bounded_least_recently_used_first(tmp_path: Path) -> None:
    root = tmp_path / "index"
    folder = root / "v1" / "ab"
    folder.mkdir(parents=True)
    now = time.time()
    for i, age in enumerate([500, 300, 100]):
        p = folder / f"{i}{persist.SUFFIX}"
        p.write_bytes(b"x" * 1000)
        os.utime(p, (now - age, now - age))
    (folder / ".part-unfinished").write_bytes(b"x" * 5000)  # being written: not counted, not removed
    orphan = folder / ".part-killed-writer"
    orphan.write_bytes(b"x")
    os.utime(orphan, (now - 2 * persist.ORPHAN_TMP_S,) * 2)
    assert persist.evict(root, 2000) == 1
    assert sorted(p.name for p in folder.iterdir()) == [
        ".part-unfinished",
        f"1{persist.SUFFIX}",
        f"2{persist.SUFFIX}",
    ]


def test_off_disables_and_bad_locations_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    assert persist.open_store("off") is None
    monkeypatch.setenv(persist.INDEX_DIR_ENV, "OFF")
    assert persist.open_store() is None
    with pytest.raises(persist.IndexUnavailable, match="index location"):
        persist.open_store("nosuchscheme://bucket/prefix")


def test_tensorboard_reopens_a_logdir_from_its_index(tmp_path: Path, job: Path) -> None:
    from tests.fixtures.tensorboard_server import tensorboard

    index_dir = tmp_path / "index"
    answers = []
    flags: list[list[bool]] = []
    for extra, env in (
        ((), {persist.INDEX_DIR_ENV: str(index_dir)}),  # the env var: parses, writes the index
        (("--profiler_index_dir", str(index_dir)), {}),  # the flag (env off, from tests/conftest.py)
    ):
        with tensorboard(job, *extra, env=env, tmp=tmp_path) as tb:
            runs = tb.wait_loaded()
            flags.append([f["from_index"] for r in runs["runs"] for f in r["files"]])
            answers.append([tb.get("overview", run="ddp", worker=w) for w in ("rank0", "rank1")])
    assert flags == [[False, False], [True, True]]
    assert answers[0] == answers[1] and answers[0][0][0] == 200


def test_tensorboard_refuses_an_unusable_index_dir(tmp_path: Path, job: Path) -> None:
    import subprocess
    import sys

    exe = Path(sys.executable).with_name("tensorboard")
    done = subprocess.run(
        [str(exe), "--logdir", str(job), "--profiler_index_dir", "nosuchscheme://x", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "--profiler_index_dir" in done.stderr


def test_summary_reads_a_current_index_instead_of_parsing(
    tmp_path: Path,
    job: Path,
    stores: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import json

    from torch_tb_profiler.cli.main import main as cli_main
    from torch_tb_profiler.ingest import parse_split

    assert cli_main(["summary", str(job), "--json"]) == 0
    parsed = json.loads(capsys.readouterr().out)
    stores(job, _index(tmp_path))  # writes the index
    monkeypatch.setenv(persist.INDEX_DIR_ENV, str(tmp_path / "index"))

    def no_parsing(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("parsed although the index is current")

    monkeypatch.setattr(parse_split, "load_split", no_parsing)
    assert cli_main(["summary", str(job), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == parsed


def test_reopened_plugin_answers_the_overview_from_the_index_summary(
    tmp_path: Path, job: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import argparse

    from tensorboard.plugins import base_plugin

    from torch_tb_profiler.plugin import TorchProfilerPlugin

    # stored from 100 k events (a big trace); the samples have a few thousand
    monkeypatch.setattr(index_format, "STORED_OVERVIEW_MIN_EVENTS", 0)
    flags = argparse.Namespace(profiler_index_dir=str(tmp_path / "index"), profiler_scan_interval=60.0)
    plugins = []
    for _ in range(2):  # the first writes the index, the second reads it
        plugin = TorchProfilerPlugin(base_plugin.TBContext(logdir=str(job), flags=flags))
        plugins.append(plugin)
        assert plugin.store.wait_first_scan(30)
        time.sleep(0.1)
        assert plugin.store.wait_idle(60)
        plugin.store.close()
    first, second = plugins
    overview_route = collect_routes()["/overview"]
    for worker in ("rank0", "rank1"):
        # the overview is stored in the index (computed when it was written): the re-opened store has it
        # for every worker without computing anything, and it equals the answer computed from a parse
        stored = second.store.kept_answer("ddp", worker, None, "overview")
        assert stored is not None
        computed = _answer(overview_route, first.store, "/overview", {"run": "ddp", "worker": worker})
        served = _answer(overview_route, second.store, "/overview", {"run": "ddp", "worker": worker})
        assert computed[0] == served[0] == 200
        assert served == computed
    # the worker the run opens on was read whole, but nothing was computed for its overview
    assert "breakdown.per_step" not in second.store.get_profile("ddp", "rank0", None).cache


def test_only_big_traces_store_their_overview(job: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from torch_tb_profiler.analysis.overview.page import page

    path = sorted(job.rglob("*.pt.trace.json*"))[0]
    profile = load_profile(str(path), "ddp", "w", "1")
    assert profile.meta.event_count < index_format.STORED_OVERVIEW_MIN_EVENTS  # a few thousand events
    assert index_format.loads_summary(index_format.dumps(profile, {"url": str(path)})).answers == {}
    monkeypatch.setattr(index_format, "STORED_OVERVIEW_MIN_EVENTS", profile.meta.event_count)
    stored = index_format.loads_summary(index_format.dumps(profile, {"url": str(path)})).answers
    assert stored == {"overview": page(profile)}


def test_default_location_is_a_private_folder_in_the_user_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(persist.INDEX_DIR_ENV)
    monkeypatch.setenv("TORCH_PROFILER_CACHE_DIR", str(tmp_path / "cache"))
    store = persist.open_store()
    assert store is not None and store.max_bytes == persist.DEFAULT_MAX_BYTES
    root = tmp_path / "cache" / "index"
    assert Path(store.loc.root) == root
    assert root.stat().st_mode & 0o777 == 0o700

"""Job views from the index summaries (ingest/index_format.py "summary", RunStore.job_members): a re-opened
job loads only the summary of every file but the one its run opens on, and the Distributed view, the
run's views and workers answer exactly as after a full parse, without reading any full profile; a view
of one worker reads that worker's full profile then."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from werkzeug.wrappers import Request

from tests.fixtures.builders_distributed import write_job
from tests.fixtures.paths import shared_trace
from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.ingest import index_format, persist
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.plugin import collect_routes
from torch_tb_profiler.views.common import json_response

ROUTES = collect_routes()
PLANTED = {0: (11, 100.0), 1: (3, 40.0)}  # step index -> (late rank, µs late), as test_distributed_scale.py


@pytest.fixture
def stores() -> Iterator[Any]:
    made: list[RunStore] = []

    def make(logdir: Path, index: persist.IndexStore | None) -> RunStore:
        store = RunStore(str(logdir), processes=0, settle_seconds=0, index=index)
        made.append(store)
        store.scan_once()
        assert store.wait_idle(120)
        return store

    yield make
    for s in made:
        s.close()


def _answer(store: RunStore, route: str, **params: str) -> tuple[int, Any]:
    data = ROUTES[route](Request.from_values(path=route, query_string=params), store)
    return 200, json.loads(json_response(data).get_data())  # the bytes TensorBoard would send, decoded


def _memory(store: RunStore, run: str) -> dict[str, str]:
    (entry,) = [r for r in store.runs() if r["name"] == run]
    return {f["worker"]: f["memory"] for f in entry["files"]}


def _old(path: Path) -> None:
    import os
    import time

    t = time.time() - 60
    os.utime(path, (t, t))


@pytest.fixture
def nccl_logdir(tmp_path: Path) -> Path:
    """The shared 2.x NCCL ranks (trace_filter: ranks 0 and 1 of 2) as run 'pair', the lone NCCL rank 0 of
    nccl_parser_config as run 'lone', and 16 built ranks with planted stragglers as run 'job'."""
    logdir = tmp_path / "logs"
    for r in (0, 1):
        src = shared_trace(f"hta_samples/trace_filter/sampled_rank-{r}.pt.trace.json.gz")
        (logdir / "pair").mkdir(parents=True, exist_ok=True)
        shutil.copy(src, logdir / "pair" / f"rank{r}.1.pt.trace.json.gz")
    (logdir / "lone").mkdir()
    shutil.copy(
        shared_trace("hta_samples/nccl_parser_config/nccl_data.pt.trace.json.gz"),
        logdir / "lone" / "rank0.1.pt.trace.json.gz",
    )
    write_job(logdir / "job", 16, PLANTED)
    for p in logdir.rglob("*.gz"):
        _old(p)
    return logdir


def test_job_views_from_summaries_equal_a_full_parse(tmp_path: Path, nccl_logdir: Path, stores: Any) -> None:
    index = persist.open_store(str(tmp_path / "index"))
    assert index is not None
    parsed = stores(nccl_logdir, None)
    stores(nccl_logdir, index)  # parses and writes the index
    reopened = stores(nccl_logdir, index)
    for run, workers in (("pair", 2), ("lone", 1), ("job", 16)):
        memory = _memory(reopened, run)
        first = min(memory)
        # the file the run opens on is read whole (for its overview); the others only as summaries
        assert memory == {w: "resident" if w == first else "summary" for w in memory}
        assert len(memory) == workers
        assert all(f["from_index"] for r in reopened.runs() for f in r["files"])
        for route, params in (
            ("/distributed", {"run": run}),
            ("/distributed", {"run": run, "top": "2", "max_rounds": "3"}),
            ("/views", {"run": run}),
            ("/workers", {"run": run, "view": "Kernel"}),
            ("/workers", {"run": run, "view": "Memory"}),
            ("/workers", {"run": run, "view": "Module"}),
        ):
            assert _answer(reopened, route, **params) == _answer(parsed, route, **params), (run, route)
        # answering those read no full profile
        assert _memory(reopened, run) == memory
    job = _answer(reopened, "/distributed", run="job")[1]
    assert job["stragglers"]["rounds"][0]["last_rank"] == 11  # planted: 100 µs late in step 1
    assert job["world_size"] == 16 and len(job["heatmap"]["cells"]["computation"]) == 16
    # a view of one worker reads its full profile (from the index), and answers as after a parse
    assert _answer(reopened, "/overview", run="job", worker="rank7") == _answer(
        parsed, "/overview", run="job", worker="rank7"
    )
    assert _memory(reopened, "job")["rank7"] == "resident"


def test_workers_without_distributed_figures_are_read_whole_for_the_job(tmp_path: Path, stores: Any) -> None:
    """Profiles without collectives or distributedInfo store no rank part (computing it for any big
    single-GPU trace would cost every index write): the job view reads them whole, with the same answer."""
    logdir = tmp_path / "logs"
    for w in range(3):
        b = TraceBuilder()
        b.step(1, 0, 1000)
        ext = b.op("aten::mm", 10, 500 + 100 * w)
        b.launch("gemm_kernel", 20, 1, 600, 200 + 50 * w, ext_id=ext)
        _old(b.write(logdir / "run" / f"w{w}.1.pt.trace.json"))
    index = persist.open_store(str(tmp_path / "index"))
    assert index is not None
    parsed = stores(logdir, None)
    stores(logdir, index)
    reopened = stores(logdir, index)
    assert _memory(reopened, "run") == {"w0": "resident", "w1": "summary", "w2": "summary"}
    assert _answer(reopened, "/distributed", run="run") == _answer(parsed, "/distributed", run="run")
    assert _memory(reopened, "run") == {"w0": "resident", "w1": "resident", "w2": "resident"}


def test_tensorboard_serves_an_indexed_job_without_loading_full_profiles(tmp_path: Path, stores: Any) -> None:
    """Through a real TensorBoard: the runs route says, per file, that only its summary is in memory,
    before and after the Distributed view is served."""
    from tests.fixtures.tensorboard_server import tensorboard

    logdir = tmp_path / "logs"
    write_job(logdir / "job", 16, PLANTED)
    index_dir = tmp_path / "index"
    index = persist.open_store(str(index_dir))
    assert index is not None
    stores(logdir, index)  # builds the index (as `torch-tb-profiler index` would)
    expected = _answer(stores(logdir, None), "/distributed", run="job")[1]
    with tensorboard(logdir, "--profiler_index_dir", str(index_dir), tmp=tmp_path) as tb:
        runs = tb.wait_loaded(120)
        files = runs["runs"][0]["files"]
        assert len(files) == 16 and all(f["from_index"] for f in files)
        summary_only = {f["worker"] for f in files if f["memory"] == "summary"}
        assert summary_only == {f"rank{r}" for r in range(1, 16)}  # rank0: the file the run opens on
        status, job = tb.get("distributed", run="job")
        assert status == 200 and job == expected
        status, runs = tb.get("runs")
        assert {f["worker"] for f in runs["runs"][0]["files"] if f["memory"] == "summary"} == summary_only
        assert tb.get("overview", run="job", worker="rank9")[0] == 200
        status, runs = tb.get("runs")
        memory = {f["worker"]: f["memory"] for f in runs["runs"][0]["files"]}
        assert memory["rank9"] == "resident" and memory["rank8"] == "summary"


def _rank1_index(tmp_path: Path, index: persist.IndexStore, logdir: Path) -> Path:
    """The index file of run 'job' worker rank1 (the store names files by their source's URL)."""
    from torch_tb_profiler.ingest.storage import file_info, resolve

    loc = resolve(str(logdir))
    info = file_info(loc, str(logdir / "job" / "rank1.1.pt.trace.json.gz"))
    return Path(index.path_for(persist.identity(loc, info)))


def test_damaged_summary_or_changed_trace_is_parsed_again(tmp_path: Path, stores: Any) -> None:
    logdir = tmp_path / "logs"
    paths = write_job(logdir / "job", 4, {0: (2, 50.0)})
    index = persist.open_store(str(tmp_path / "index"))
    assert index is not None
    stores(logdir, index)
    victim = _rank1_index(tmp_path, index, logdir)
    data = bytearray(victim.read_bytes())
    header, start = index_format.read_header(bytes(data))
    data[index_format.summary_size(header, start) - 10] ^= 0xFF  # inside the summary's calls table
    victim.write_bytes(bytes(data))
    store = stores(logdir, index)
    files = {f["worker"]: f for r in store.runs() for f in r["files"]}
    assert (files["rank1"]["from_index"], files["rank1"]["memory"]) == (False, "resident")
    assert (files["rank2"]["from_index"], files["rank2"]["memory"]) == (True, "summary")
    warnings = [w for r in store.runs() for w in r["warnings"]]
    assert [w["worker"] for w in warnings] == ["rank1"] and "checksum" in warnings[0]["message"]
    # rewritten: the next open reads its summary again
    assert _memory(stores(logdir, index), "job")["rank1"] == "summary"
    # a trace changed since its index was written is parsed, and the job answers with the new figures
    write_job(logdir / "new", 4, {0: (3, 50.0)})
    shutil.copy(logdir / "new" / "rank1.1.pt.trace.json.gz", paths[1])
    shutil.rmtree(logdir / "new")
    import os

    os.utime(paths[1], (paths[1].stat().st_atime, paths[1].stat().st_mtime + 5))
    changed = stores(logdir, index)
    files = {f["worker"]: f for r in changed.runs() for f in r["files"]}
    assert (files["rank1"]["from_index"], files["rank1"]["memory"]) == (False, "resident")
    assert _answer(changed, "/distributed", run="job") == _answer(
        stores(logdir, None), "/distributed", run="job"
    )

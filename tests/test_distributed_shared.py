"""Distributed view on real NCCL traces (../shared/traces/hta_samples)."""

from __future__ import annotations

import pytest

from tests.fixtures.paths import shared_trace
from torch_tb_profiler.analysis.distributed import job as D
from torch_tb_profiler.analysis.distributed.collectives import collective_calls
from torch_tb_profiler.ingest.loading import load_profile

pytestmark = pytest.mark.shared


def test_record_param_comms_trace():
    """A100, NCCL 2.17, rank 0 of 2, 3 steps: 15 all_reduce and 6 broadcast calls (record_param_comms
    args; the 'wait' records are not collectives), each with its one NCCL kernel."""
    profile = load_profile(str(shared_trace("hta_samples/nccl_parser_config/nccl_data.pt.trace.json.gz")))
    calls, kernels, _ = collective_calls(profile)
    assert calls["collective"].value_counts().to_dict() == {"all_reduce": 15, "broadcast": 6}
    assert (calls["kernels"] == 1).all() and len(kernels) == 21
    assert set(calls["pg"]) == {"0"} and set(calls["group_size"]) == {2}
    # first all_reduce: In msg nelems 2049000 floats
    assert calls[calls["collective"] == "all_reduce"]["bytes"].iloc[0] == 2049000 * 4
    job = D.analyze_job([D.summarize_worker("rank0", profile)])
    assert job["workers"][0]["rank"] == 0 and job["world_size"] == 2
    assert any("1 of 2 ranks" in w for w in job["warnings"])
    assert job["process_groups"] == [
        {"name": "0", "description": "default_pg", "backend": "cuda:nccl", "size": 2, "ranks": [0, 1]}
    ]
    (gpus,) = job["gpu_info"].values()
    assert gpus["Process 2910249"]["GPU0"]["name"] == "NVIDIA A100-PG509-200"
    for bars in job["overlap"]["rank0"]["steps"].values():
        assert min(bars.values()) >= 0


def test_two_ranks_of_a_128_rank_job():
    """sampled_rank-0/1: steps 551-552; per rank 4 all_to_all, 4 all_reduce, 2 all_gather; no
    collective args (2023): kernels link to calls through their launch position, sizes come from
    input shapes (all_gather: the c10d op's gathered output, 64 x 16 MiB int8)."""
    workers = [
        D.summarize_worker(
            f"rank{r}",
            load_profile(str(shared_trace(f"hta_samples/trace_filter/sampled_rank-{r}.pt.trace.json.gz"))),
        )
        for r in (0, 1)
    ]
    job = D.analyze_job(workers)
    assert [w["rank"] for w in job["workers"]] == [0, 1] and job["world_size"] == 128
    assert any("2 of 128 ranks" in w for w in job["warnings"])
    for w in ("rank0", "rank1"):
        rows = {r["collective"]: r for r in job["comm_ops"][w]}
        assert {k: r["calls"] for k, r in rows.items()} == {"all_to_all": 4, "all_reduce": 4, "all_gather": 2}
        assert rows["all_gather"]["total_bytes"] == 2 * 1073741824
        assert list(job["overlap"][w]["steps"]) == ["551", "552"]
    # nccl:all_reduce Input Dims [[19618307]] float on rank 0 (first call)
    assert 19618307 * 4 in workers[0].calls["bytes"].tolist()
    # all 10 rounds have both ranks; every straggler round is counted once
    assert job["stragglers"]["round_count"] == 10
    assert sum(r["times_last"] for r in job["stragglers"]["ranks"]) <= 10

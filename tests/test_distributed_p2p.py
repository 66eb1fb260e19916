"""Point-to-point calls get their own table (not collective matching); a barrier has no bandwidth.

Hand-made 2-rank gloo job, one step [0, 1000) per rank, all on the main thread:
- rank 0 sends 1000 floats to rank 1: c10d::send [100, 160) > gloo:send [105, 150), Concrete Inputs
  name dst = 1 → 4000 bytes, latency 60 µs (the host range of the call), bandwidth 4000 / 60 / 1e3 GB/s;
- rank 1 receives them: c10d::recv_ [100, 300) > gloo:recv [110, 290), src = 0 → 4000 bytes in 200 µs;
- both: an all_reduce of 10 floats (c10d::allreduce_ [400, 420) > gloo:all_reduce [401, 419)) and a
  barrier (c10d::barrier [500, 550) > gloo:barrier [501, 549)).
Before the fix the send and the recv were matched as collectives and warned about ("workers have
different numbers of calls").
"""

from __future__ import annotations

import pytest

from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.analysis.distributed import job as D
from torch_tb_profiler.analysis.distributed import p2p
from torch_tb_profiler.ingest.loading import load_profile

GLOO_INFO = {
    "backend": "gloo",
    "world_size": 2,
    "pg_count": 1,
    "pg_config": [
        {"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cpu:gloo", "pg_size": 2, "ranks": [0, 1]}
    ],
}


def gloo_p2p_rank(rank: int) -> TraceBuilder:
    b = TraceBuilder(pid=3000 + rank, tid=1, distributed_info={**GLOO_INFO, "rank": rank})
    b.step(1, 0, 1000)
    if rank == 0:
        b.op(
            "c10d::send",
            100,
            60,
            input_dims=[[[1000]], [], [], []],
            args={"Concrete Inputs": ["", "", "1", "0"]},
        )
        b.annotation("gloo:send", 105, 45, input_dims=[[1000]], input_types=["float"])
    else:
        b.op(
            "c10d::recv_",
            100,
            200,
            input_dims=[[[1000]], [], [], []],
            args={"Concrete Inputs": ["", "", "0", "0"]},
        )
        b.annotation("gloo:recv", 110, 180, input_dims=[[1000]], input_types=["float"])
    b.op("c10d::allreduce_", 400, 20, input_dims=[[[10]]], input_types=["TensorList"])
    b.annotation("gloo:all_reduce", 401, 18, input_dims=[[10]], input_types=["float"])
    b.op("c10d::barrier", 500, 50)
    b.annotation("gloo:barrier", 501, 48)
    return b


def _job(tmp_path, builders) -> dict:
    workers = []
    for r, b in enumerate(builders):
        path = b.write(tmp_path / f"rank{r}.pt.trace.json")
        workers.append(D.summarize_worker(f"rank{r}", load_profile(str(path))))
    return D.analyze_job(workers)


def test_send_recv_in_their_own_table_without_warnings(tmp_path):
    job = _job(tmp_path, [gloo_p2p_rank(0), gloo_p2p_rank(1)])
    assert job["warnings"] == []
    assert job["p2p"]["rank0"] == [
        {
            "op": "send",
            "peer": 1,
            "calls": 1,
            "total_bytes": 4000.0,
            "avg_bytes": 4000.0,
            "total_time_us": 60.0,
            "avg_time_us": 60.0,
            "bandwidth_gbps": pytest.approx(4000 / 60 / 1e3),
        }
    ]
    (recv,) = job["p2p"]["rank1"]
    assert (recv["op"], recv["peer"], recv["total_bytes"], recv["total_time_us"]) == (
        "recv",
        0,
        4000.0,
        200.0,
    )
    assert recv["bandwidth_gbps"] == pytest.approx(4000 / 200 / 1e3)
    # the collectives table holds only collectives, matched on both ranks
    for w in ("rank0", "rank1"):
        rows = {r["collective"]: r for r in job["comm_ops"][w]}
        assert sorted(rows) == ["all_reduce", "barrier"]
        assert rows["all_reduce"]["total_bytes"] == 40
        assert rows["all_reduce"]["algbw_gbps"] == pytest.approx(40 / 20 / 1e3)
        # a barrier moves no data: no bandwidth (null), not 0 or bytes of nothing / time
        assert rows["barrier"]["algbw_gbps"] is None and rows["barrier"]["busbw_gbps"] is None
    # two matched rounds (all_reduce, barrier), none from the p2p pair
    assert job["stragglers"]["round_count"] == 2


def test_peer_from_record_param_comms_rank_and_group_ranks(tmp_path):
    """NCCL style: record_param_comms "send" with "Rank" = the peer's rank in group "5" whose ranks are
    [1, 3] (the "Process Group Ranks" arg): group rank 1 -> global rank 3. The second send has no
    group ranks arg: distributedInfo's pg_config gives them."""
    info = {
        "backend": "nccl",
        "rank": 1,
        "world_size": 4,
        "pg_config": [
            {"pg_name": "5", "pg_desc": "pp", "backend_config": "cuda:nccl", "pg_size": 2, "ranks": [1, 3]}
        ],
    }
    b = TraceBuilder(distributed_info=info)
    b.step(1, 0, 1000)
    comm = {
        "Collective name": "send",
        "In msg nelems": 256,
        "Out msg nelems": 256,
        "dtype": "BFloat16",
        "Group size": 2,
        "Process Group Name": "5",
        "Rank": 1,
    }
    e1 = b.op("record_param_comms", 10, 20, args={**comm, "Process Group Ranks": "[1, 3]", "Seq": 1})
    b.launch("ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)", 12, 2, 100, 50, ext_id=e1)
    e2 = b.op("record_param_comms", 300, 20, args={**comm, "Seq": 2})
    b.launch("ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)", 302, 2, 400, 150, ext_id=e2)
    job = _job(tmp_path, [b])
    assert job["comm_ops"]["rank0"] == []
    (row,) = job["p2p"]["rank0"]
    # 2 × 256 bf16 = 1024 bytes in 50 + 150 µs on the device
    assert (row["op"], row["peer"], row["calls"], row["total_bytes"], row["total_time_us"]) == (
        "send",
        3,
        2,
        1024.0,
        200.0,
    )
    assert row["avg_time_us"] == 100.0 and row["bandwidth_gbps"] == pytest.approx(1024 / 200 / 1e3)


def test_global_rank_rules():
    assert p2p.global_rank(1, "5", "[4, 6]", None) == 6
    assert p2p.global_rank(1, "5", "", {"pg_config": [{"pg_name": "5", "ranks": [4, 6]}]}) == 6
    assert p2p.global_rank(1, "0", "", None) == 1  # default group: group rank = global rank
    assert p2p.global_rank(1, "9", "", None) == -1  # a group whose ranks the trace does not list
    assert p2p.global_rank(5, "5", "[4, 6]", None) == -1
    assert p2p.peer_from_concrete_inputs("c10d::recv_", '["", "", "3", "0"]') == 3
    assert p2p.peer_from_concrete_inputs("c10d::allreduce_", '["", "", "3", "0"]') == -1
    assert (
        p2p.is_p2p("nccl:send") and p2p.is_p2p("c10d::recv_any_source_") and p2p.is_p2p("batch_isend_irecv")
    )
    assert not p2p.is_p2p("c10d::barrier")


@pytest.mark.parametrize(("world", "listed"), [(1, False), (2, True)])
def test_distributed_view_not_offered_for_a_world_of_one(tmp_path, world, listed):
    """One worker whose distributedInfo says world_size 1 (single-GPU vLLM/SGLang serving) has no job:
    no Distributed view. Rank 0 of a world of 2 (the other rank's file absent) still gets one."""
    from torch_tb_profiler.ingest.loading import RunStore
    from torch_tb_profiler.views.core import available_views

    b = TraceBuilder(distributed_info={"backend": "nccl", "rank": 0, "world_size": world})
    b.step(1, 0, 1000)
    b.op(
        "record_param_comms",
        10,
        20,
        args={"Collective name": "allreduce", "In msg nelems": 4, "Out msg nelems": 4, "dtype": "Float"},
    )
    (tmp_path / "serve").mkdir()
    b.write(tmp_path / "serve" / "rank0.pt.trace.json")
    store = RunStore(str(tmp_path), processes=0, settle_seconds=0)
    try:
        store.scan_once()
        assert store.wait_idle(60)
        assert ("Distributed" in available_views(store, "serve")) is listed
    finally:
        store.close()

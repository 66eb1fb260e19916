"""Distributed view on synthetic jobs of 2 and 64 ranks, every collective generation, by hand.

Every rank runs 2 steps of 1000 µs (step k starts at o = 1000·k). In each step:
- compute: aten::mm on the host [o+10, o+60) launching kernel ``gemm`` on the GPU [o+100, o+400);
- one all_reduce of 1e6 floats (4e6 bytes) issued on the host (c10d::allreduce_ [o+58, o+82) >
  record_param_comms [o+60, o+80)) whose NCCL kernel ends at o+700 on every rank and starts at
  o+300, except on the step's straggler, which arrives ``delay`` µs late (starts at o+300+delay).
Ranks live on 8 nodes (host_name ``node<rank // 8>``).

Hand-computed figures for a rank that is not the straggler of a step (delay d of the straggler):
computation K = [o+100, o+400) = 300; communication M = kernel [o+300, o+700) ∪ host call
[o+58, o+82) = 424; overlap = [o+300, o+400) = 100 → bars (300−100, 100, 424−100,
1000−300−424+100) = (200, 100, 324, 376). Round: min duration = 400 − d → transfer = 400 − d,
synchronizing = d. The straggler: kernel [o+300+d, o+700): M = 400 − d + 24, overlap =
max(0, 100 − d), transfer 400 − d, synchronizing 0. Legacy traces (an nccl:all_reduce annotation
[o+60, o+80) only) have M = 420: (200, 100, 320, 380).
"""

from __future__ import annotations

import pytest

from tests.fixtures.builders_distributed import BYTES, H100, rank_trace
from tests.fixtures.trace_builder import TraceBuilder
from torch_tb_profiler.analysis.distributed import job as D
from torch_tb_profiler.analysis.distributed.collectives import collective_calls
from torch_tb_profiler.ingest.loading import load_profile


def load_job(tmp_path, world, stragglers, **kw) -> list[D.WorkerComm]:
    out = []
    for r in range(world):
        path = rank_trace(r, world, stragglers, **kw).write(tmp_path / f"rank{r}.pt.trace.json")
        # one profile at a time: only the compact WorkerComm is kept (bounded memory for many ranks)
        out.append(D.summarize_worker(f"rank{r}", load_profile(str(path))))
    return out


def test_two_ranks_overlap_wait_and_stragglers(tmp_path):
    workers = load_job(tmp_path, 2, {0: (1, 100.0), 1: (0, 50.0)})
    job = D.analyze_job(workers)
    assert [w["rank"] for w in job["workers"]] == [0, 1]
    assert job["warnings"] == []
    o0 = job["overlap"]["rank0"]["steps"]
    # step 1: rank 0 waits for rank 1 (d=100); step 2: rank 0 is the straggler (d=50)
    assert o0["1"] == pytest.approx({"computation": 200, "overlap": 100, "communication": 324, "other": 376})
    assert o0["2"] == pytest.approx({"computation": 250, "overlap": 50, "communication": 324, "other": 376})
    assert job["overlap"]["rank0"]["mean"] == pytest.approx(
        {"computation": 225, "overlap": 75, "communication": 324, "other": 376}
    )
    w0 = job["wait"]["rank0"]["steps"]
    w1 = job["wait"]["rank1"]["steps"]
    assert w0["1"] == pytest.approx({"synchronizing": 100, "transferring": 300})
    assert w0["2"] == pytest.approx({"synchronizing": 0, "transferring": 350})
    assert w1["1"] == pytest.approx({"synchronizing": 0, "transferring": 300})
    assert w1["2"] == pytest.approx({"synchronizing": 50, "transferring": 350})
    ranks = job["stragglers"]["ranks"]
    assert [(r["rank"], r["times_last"], r["total_wait_caused_us"]) for r in ranks] == [
        (1, 1, 100.0),
        (0, 1, 50.0),
    ]
    assert job["stragglers"]["round_count"] == 2


def test_two_ranks_comm_table_bandwidths(tmp_path):
    job = D.analyze_job(load_job(tmp_path, 2, {0: (1, 100.0), 1: (0, 50.0)}))
    (row,) = job["comm_ops"]["rank0"]
    # rank 0 calls: 400 µs (waited for rank 1) and 350 µs (it was late): 8e6 bytes in 750 µs
    assert row["collective"] == "all_reduce" and row["calls"] == 2
    assert row["total_bytes"] == 2 * BYTES and row["avg_bytes"] == BYTES
    assert row["total_latency_us"] == pytest.approx(750)
    assert row["avg_latency_us"] == pytest.approx(375)
    assert row["total_transfer_us"] == pytest.approx(300 + 350)
    assert row["algbw_gbps"] == pytest.approx(8e6 / 750 / 1e3)  # 10.667 GB/s
    assert row["busbw_gbps"] == pytest.approx(8e6 / 750 / 1e3 * 2 * 1 / 2)  # 2(n-1)/n = 1 for n = 2


def test_64_ranks(tmp_path):
    workers = load_job(tmp_path, 64, {0: (5, 100.0), 1: (7, 50.0)})
    job = D.analyze_job(workers)
    assert len(job["workers"]) == 64 and job["world_size"] == 64
    assert job["warnings"] == []
    # a bystander rank in both steps
    assert job["overlap"]["rank0"]["mean"] == pytest.approx(
        {"computation": 200, "overlap": 100, "communication": 324, "other": 376}
    )
    assert job["wait"]["rank0"]["mean"] == pytest.approx({"synchronizing": 75, "transferring": 325})
    # the straggler of step 1: kernel [400, 700): no overlap with gemm [100, 400)
    assert job["overlap"]["rank5"]["steps"]["1"] == pytest.approx(
        {"computation": 300, "overlap": 0, "communication": 324, "other": 376}
    )
    assert job["wait"]["rank5"]["steps"]["1"] == pytest.approx({"synchronizing": 0, "transferring": 300})
    ranks = job["stragglers"]["ranks"]
    assert [(r["rank"], r["times_last"], r["total_wait_caused_us"]) for r in ranks] == [
        (5, 1, 100.0),
        (7, 1, 50.0),
    ]
    row = job["comm_ops"]["rank0"][0]
    assert row["algbw_gbps"] == pytest.approx(8e6 / 800 / 1e3)  # 10 GB/s
    assert row["busbw_gbps"] == pytest.approx(10 * 2 * 63 / 64)  # 19.6875 GB/s
    info = D.gpu_info(workers)
    assert sorted(info) == [f"node{i}" for i in range(8)]
    assert len(info["node0"]) == 8 and info["node0"]["Process 1005"]["GPU0"]["name"] == "NVIDIA H100"


def test_legacy_annotations_with_shapes(tmp_path):
    job = D.analyze_job(load_job(tmp_path, 2, {0: (1, 100.0)}, style="legacy"))
    (row,) = job["comm_ops"]["rank0"]
    assert row["collective"] == "all_reduce" and row["total_bytes"] == 2 * BYTES
    # no process group: matched by order; same figures as the 2.x trace
    assert job["wait"]["rank0"]["steps"]["1"] == pytest.approx({"synchronizing": 100, "transferring": 300})
    assert job["overlap"]["rank0"]["steps"]["1"] == pytest.approx(
        {"computation": 200, "overlap": 100, "communication": 320, "other": 380}
    )


def test_unequal_collective_counts_give_a_partial_answer_with_a_warning(tmp_path):
    workers = []
    for r, steps in ((0, 2), (1, 1)):
        path = rank_trace(r, 2, {0: (1, 100.0)}, with_seq=False, steps=steps).write(
            tmp_path / f"rank{r}.json"
        )
        workers.append(D.summarize_worker(f"rank{r}", load_profile(str(path))))
    job = D.analyze_job(workers)
    assert any("different numbers of calls" in w for w in job["warnings"])
    # the first call of each rank is matched; rank 0's second has no partner: it is its own round
    assert job["wait"]["rank0"]["steps"]["1"] == pytest.approx({"synchronizing": 100, "transferring": 300})
    assert job["stragglers"]["round_count"] == 1
    (row,) = job["comm_ops"]["rank0"]
    assert row["calls"] == 2 and row["total_transfer_us"] == pytest.approx(300)  # unmatched: no transfer


def test_gpu_info_per_node_and_process(tmp_path):
    workers = load_job(tmp_path, 2, {})
    info = D.gpu_info(workers)
    assert list(info) == ["node0"]
    node = info["node0"]
    assert set(node) == {"Process 1000", "Process 1001"}
    gpu = node["Process 1000"]["GPU0"]
    assert gpu["name"] == "NVIDIA H100" and gpu["memory_gb"] == 80.0 and gpu["compute_capability"] == "9.0"


def test_summary_shape(tmp_path):
    out = D.summary(load_job(tmp_path, 2, {0: (1, 100.0), 1: (0, 50.0)}))
    row = out["workers"][0]
    assert set(row) == {
        "worker",
        "rank",
        "computation_us",
        "overlap_us",
        "communication_us",
        "other_us",
        "synchronizing_us",
        "transferring_us",
    }
    assert row["synchronizing_us"] == pytest.approx(50) and row["transferring_us"] == pytest.approx(325)


def test_rank_from_worker_name_when_no_distributed_info():
    assert D.worker_rank("job_rank-12", None) == (12, None)
    assert D.worker_rank("worker3", {}) == (3, None)
    assert D.worker_rank("anything", {"rank": 5, "world_size": 8}) == (5, 8)
    assert D.worker_rank("host_1234", None) == (None, None)


def gloo_rank_trace(rank: int, delay: float) -> TraceBuilder:
    """CPU-only gloo rank, one step [0, 1000): aten::mm [100, 400) and a short c10d::allreduce_
    enqueue [60, 62) on the main thread inside a user annotation [50, 800) (a label: not computation);
    the transfer gloo:all_reduce [300 + delay, 700) on the library's own thread.
    Expected (delay 0): computation 300, communication 400, overlap [300, 400) = 100 →
    (200, 100, 300, 400); delay 100: (300, 0, 300, 400)."""
    info = {
        "backend": "gloo",
        "rank": rank,
        "world_size": 2,
        "pg_count": 1,
        "pg_config": [
            {
                "pg_name": "0",
                "pg_desc": "default_pg",
                "backend_config": "cpu:gloo",
                "pg_size": 2,
                "ranks": [0, 1],
            }
        ],
    }
    b = TraceBuilder(pid=2000 + rank, tid=1, distributed_info=info)
    b.step(1, 0, 1000)
    b.annotation("explicit_collectives", 50, 750)
    b.op("c10d::allreduce_", 60, 2, input_dims=[[[1000]]], input_types=["TensorList"])
    b.op("aten::mm", 100, 300)
    b.annotation(
        "gloo:all_reduce", 300 + delay, 400 - delay, tid=2, input_dims=[[1000]], input_types=["float"]
    )
    return b


def test_cpu_only_gloo_job(tmp_path):
    workers = []
    for r, delay in ((0, 0.0), (1, 100.0)):
        path = gloo_rank_trace(r, delay).write(tmp_path / f"rank{r}.json")
        workers.append(D.summarize_worker(f"rank{r}", load_profile(str(path))))
    job = D.analyze_job(workers)
    assert job["overlap"]["rank0"]["steps"]["1"] == pytest.approx(
        {"computation": 200, "overlap": 100, "communication": 300, "other": 400}
    )
    assert job["overlap"]["rank1"]["steps"]["1"] == pytest.approx(
        {"computation": 300, "overlap": 0, "communication": 300, "other": 400}
    )
    assert job["wait"]["rank0"]["steps"]["1"] == pytest.approx({"synchronizing": 100, "transferring": 300})
    (row,) = job["comm_ops"]["rank0"]
    # the enqueue on the main thread and the gloo range are one call, not two
    assert row["calls"] == 1 and row["total_bytes"] == 4000 and row["total_latency_us"] == pytest.approx(400)
    assert job["stragglers"]["ranks"][0]["rank"] == 1


def test_real_gloo_ddp_sample():
    """samples/ddp_gloo_2ranks: 3 steps; per rank 12 all_reduce (3 DDP buckets of 682 + 592 + 232
    floats and 1 explicit float per step) and 9 broadcast (48 floats + 3 longs from DDP, 1 explicit
    long per step), matched across the two ranks without a warning."""
    from tests.fixtures.paths import SAMPLES

    files = sorted((SAMPLES / "ddp_gloo_2ranks").glob("*.pt.trace.json.gz"))
    workers = [D.summarize_worker(f.name.split(".")[0], load_profile(str(f))) for f in files]
    job = D.analyze_job(workers)
    assert job["warnings"] == []
    assert [w["rank"] for w in job["workers"]] == [0, 1]
    for w in ("rank0", "rank1"):
        rows = {r["collective"]: r for r in job["comm_ops"][w]}
        assert rows["all_reduce"]["calls"] == 12
        assert rows["all_reduce"]["total_bytes"] == 3 * 4 * (682 + 592 + 232 + 1)
        assert rows["broadcast"]["calls"] == 9
        assert rows["broadcast"]["total_bytes"] == 3 * (4 * 48 + 8 * 3 + 8)
        steps = job["overlap"][w]["steps"]
        assert list(steps) == ["2", "3", "4"]
        for bars in steps.values():
            assert all(v >= -1e-6 for v in bars.values())
    assert job["stragglers"]["round_count"] == 21


def test_args_only_on_the_kernel_and_c10d_only_host_op(tmp_path):
    """A c10d::all_gather_into_tensor op (no record_param_comms, no nccl: annotation) whose kernel
    carries the collective args: in 1000 / out 4000 bf16 elements over 4 ranks -> S = 8000 bytes."""
    b = TraceBuilder(distributed_info={"rank": 0, "world_size": 4})
    b.step(1, 0, 1000)
    ext = b.op("c10d::_allgather_base_", 10, 20)
    args = {
        "Collective name": "_allgather_base",
        "In msg nelems": 1000,
        "Out msg nelems": 4000,
        "dtype": "BFloat16",
        "Group size": 4,
        "Process Group Name": "3",
        "Seq": 7,
    }
    b.launch("ncclDevKernel_AllGather_RING_LL", 12, 2, 100, 80, ext_id=ext, extra_args=args)
    calls, kernels, _ = collective_calls(load_profile(str(b.write(tmp_path / "r0.json"))))
    (call,) = calls.to_dict("records")
    assert (call["collective"], call["bytes"], call["group_size"], call["pg"], call["seq"]) == (
        "all_gather",
        8000,
        4,
        "3",
        7,
    )
    assert call["latency"] == 80 and len(kernels) == 1
    # busbw for all_gather over 4 ranks: (n-1)/n
    w = D.summarize_worker("r0", load_profile(str(tmp_path / "r0.json")))
    (row,) = D.analyze_job([w])["comm_ops"]["r0"]
    assert row["algbw_gbps"] == pytest.approx(8000 / 80 / 1e3)
    assert row["busbw_gbps"] == pytest.approx(8000 / 80 / 1e3 * 3 / 4)


def test_node_and_process_come_from_the_trace_not_the_file_name(tmp_path):
    # a DLRM job names its files worker0_step_12...: neither "worker0_step" nor "12" is a host or a pid
    b = TraceBuilder(pid=77, device_properties=[H100])
    b.step(1, 0, 100)
    b.launch("gemm", 10, 2, 20, 30, ext_id=b.op("aten::mm", 5, 10))
    w = D.summarize_worker(
        "worker0_step_12", load_profile(str(b.write(tmp_path / "worker0_step_12.pt.trace.json")))
    )
    assert (w.node, w.process, w.process_name) == ("", "77", "python")  # no host_name: no node
    gpus = {
        "GPU0": {
            "name": "NVIDIA H100",
            "memory_bytes": 85899345920,
            "memory_gb": 80.0,
            "compute_capability": "9.0",
            "sms": 132,
        }
    }
    assert D.gpu_info([w]) == {"": {"Process 77": gpus}}
    # with the trace's own host_name (MTIA traces write one): that is the node
    b.top["host_name"] = "twshared0001.example"
    w = D.summarize_worker("worker0_step_12", load_profile(str(b.write(tmp_path / "h.pt.trace.json"))))
    assert (w.node, w.process) == ("twshared0001.example", "77")

"""Every real trace in ../shared/traces loads into a consistent model (skipped when absent)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.fixtures.paths import SHARED_TRACES, shared_trace
from torch_tb_profiler.ingest.loading import load_profile

TRACES = {
    "kineto_samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz": "legacy",
    "kineto_samples/resnet50_num_workers_4/worker0.1623212756351.pt.trace.json.gz": "legacy",
    "hta_samples/nccl_parser_config/nccl_data.pt.trace.json.gz": "modern",
    "hta_samples/trace_filter/sampled_rank-0.pt.trace.json.gz": "modern",
    "hta_samples/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz": "modern",
    "hta_samples/triton_example/triton_example.pt.trace.json.gz": "modern",
    "hta_samples/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.pt.trace.json.gz": "modern",
}


@pytest.mark.parametrize("relative", sorted(TRACES))
def test_loads_with_links(relative: str) -> None:
    p = load_profile(str(shared_trace(relative)))
    assert len(p.ops) > 0 and len(p.device) > 0
    assert p.meta.unknown_categories == {}
    # every device event found its launching call or its op
    linked = (p.device["runtime"] >= 0) | (p.device["op"] >= 0)
    assert linked.mean() > 0.99, relative
    # parents always enclose their children (within rounding)
    child = p.ops[p.ops["parent"] >= 0]
    parent = p.ops.loc[child["parent"].to_numpy()]
    assert np.all(parent["ts"].to_numpy() <= child["ts"].to_numpy() + 1e-3)
    assert np.all(parent["pid"].to_numpy() == child["pid"].to_numpy())


def test_legacy_sample_counts_match_the_file() -> None:
    p = load_profile(
        str(shared_trace("kineto_samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"))
    )
    assert p.meta.counts["X:Operator"] == len(p.ops) == 23646
    assert p.meta.counts["X:Runtime"] == len(p.runtimes) == 11923
    assert (
        len(p.kernels) == 8772
        and (p.device["kind"] == "memcpy").sum() == 12
        and (p.device["kind"] == "memset").sum() == 312
    )
    assert p.steps["number"].tolist() == [5, 6, 7, 8, 9, 10]
    assert p.meta.device_property(0)["name"].startswith("Tesla V100")


def test_triton_kernel_reaches_its_op_through_cuda_driver() -> None:
    p = load_profile(str(shared_trace("hta_samples/triton_example/triton_example.pt.trace.json.gz")))
    kernel = p.kernels.iloc[0]
    assert kernel["name"] == "triton_poi_fused_add_cos_sin_0"
    assert p.runtimes.loc[kernel["runtime"], "cat"] == "cuda_driver"
    assert kernel["op"] >= 0


def test_collective_metadata_of_record_param_comms() -> None:
    p = load_profile(str(shared_trace("hta_samples/nccl_parser_config/nccl_data.pt.trace.json.gz")))
    assert len(p.comms) > 0
    assert set(p.ops.loc[p.comms["op"], "name"]) <= {"record_param_comms"} | set(p.ops["name"])
    assert (p.comms["collective"] != "").all()
    assert p.meta.distributed_info["world_size"] == 2


def test_shared_folder_listed() -> None:
    if not SHARED_TRACES.is_dir():
        pytest.skip("../shared/traces absent")
    assert all((SHARED_TRACES / r).exists() for r in TRACES), [
        r for r in TRACES if not (SHARED_TRACES / r).exists()
    ]

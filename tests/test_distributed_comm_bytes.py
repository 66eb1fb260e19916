"""Collective names, message sizes and NCCL-tests bandwidth conventions."""

from __future__ import annotations

import math

import pytest

from torch_tb_profiler.analysis.distributed import comm_bytes as cb


@pytest.mark.parametrize(
    ("raw", "name"),
    [
        ("nccl:all_reduce", "all_reduce"),
        ("allreduce", "all_reduce"),
        ("c10d::allreduce_", "all_reduce"),
        ("nccl:_all_gather_base", "all_gather"),
        ("all_gather_into_tensor", "all_gather"),
        ("c10d::_reduce_scatter_base_", "reduce_scatter"),
        ("reduce_scatter_tensor", "reduce_scatter"),
        ("nccl:all_to_all", "all_to_all"),
        ("c10d::alltoall_base_", "all_to_all"),
        ("gloo:broadcast", "broadcast"),
        ("send", "send"),
        ("c10d::barrier", "barrier"),
        ("my_custom_thing", "my_custom_thing"),
    ],
)
def test_collective_names(raw, name):
    assert cb.collective_name(raw) == name


def test_wait_is_not_a_collective():
    assert not cb.is_collective("wait")
    assert not cb.is_collective("_c10d_functional::wait_tensor")
    assert cb.is_collective("allreduce")
    assert cb.collective_name("_c10d_functional::all_gather_into_tensor") == "all_gather"
    assert cb.collective_name("_c10d_functional::all_reduce_") == "all_reduce"


def test_dtype_sizes_from_both_spellings():
    assert cb.dtype_size("Float") == 4 and cb.dtype_size("float") == 4
    assert cb.dtype_size("long int") == 8 and cb.dtype_size("Long") == 8
    assert cb.dtype_size("c10::Half") == 2 and cb.dtype_size("BFloat16") == 2
    assert cb.dtype_size("unsigned char") == 1 and cb.dtype_size("Byte") == 1
    assert cb.dtype_size("signed char") == 1
    assert cb.dtype_size("c10::complex<float>") == 8
    assert cb.dtype_size("Scalar") == 0


def test_message_bytes_is_the_larger_buffer():
    # all_gather over 4 ranks: in 1000 floats, out 4000 floats -> S = 16000 bytes
    assert cb.message_bytes(1000, 4000, "Float") == 16000
    # reduce_scatter: in 4000, out 1000
    assert cb.message_bytes(4000, 1000, "Float") == 16000
    assert cb.message_bytes(6637568, 6637568, "Float") == 26550272
    assert cb.tensor_bytes([2, 3], "long int") == 48
    assert cb.tensor_bytes([], "float") == 0


@pytest.mark.parametrize(
    ("coll", "n", "factor"),
    [
        ("all_reduce", 8, 2 * 7 / 8),
        ("allreduce", 2, 1.0),
        ("all_gather", 4, 3 / 4),
        ("reduce_scatter", 64, 63 / 64),
        ("all_to_all", 128, 127 / 128),
        ("broadcast", 8, 1.0),
        ("reduce", 8, 1.0),
        ("send", 2, 1.0),
        ("barrier", 8, 0.0),
        ("all_reduce", 0, 1.0),  # unknown group size: busbw = algbw
    ],
)
def test_bus_factors(coll, n, factor):
    assert cb.bus_factor(coll, n) == pytest.approx(factor)


def test_gbps():
    # 1 GB in 1 s
    assert cb.gbps(1e9, 1e6) == pytest.approx(1.0)
    assert math.isnan(cb.gbps(5, 0))

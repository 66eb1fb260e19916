"""Collective names, message sizes and bandwidths (NCCL-tests conventions).

Definitions (docs/metrics.md, "Distributed"):

- *size* S of one collective call, in bytes, is the NCCL-tests "size": the whole buffer for
  all_reduce/broadcast/reduce, the gathered output for all_gather/gather, the scattered input for
  reduce_scatter/scatter, the send buffer for all_to_all, the message for send/recv.
  With element counts (PyTorch 2.x ``record_param_comms``) that is max(in, out) × element size.
- algbw = S / t (bytes per µs = MB/s; reported in GB/s = 1e9 bytes/s), t = the call's latency.
- busbw = algbw × factor(collective, n), n = ranks in the group:
  all_reduce 2(n−1)/n; all_gather, reduce_scatter, all_to_all, gather, scatter (n−1)/n;
  broadcast, reduce, send, recv 1; barrier 0 (a barrier moves no data: no bandwidth is reported).
"""

from __future__ import annotations

import math
import re

# element size by dtype, keyed by a normalised spelling (lower case, no "c10::", no spaces).
# Both c10 ScalarType names ('Float', 'BFloat16') and C++ type names ('float', 'long int') occur.
_DTYPE_SIZES = {
    "double": 8,
    "float64": 8,
    "float": 4,
    "float32": 4,
    "half": 2,
    "float16": 2,
    "bfloat16": 2,
    "long": 8,
    "longint": 8,
    "int64": 8,
    "int64_t": 8,
    "int": 4,
    "int32": 4,
    "int32_t": 4,
    "short": 2,
    "shortint": 2,
    "int16": 2,
    "char": 1,
    "signedchar": 1,
    "int8": 1,
    "byte": 1,
    "unsignedchar": 1,
    "uint8": 1,
    "bool": 1,
    "complexfloat": 8,
    "complex<float>": 8,
    "complexdouble": 16,
    "complex<double>": 16,
    "complexhalf": 4,
    "complex<c10::half>": 4,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
    "float8_e4m3fnuz": 1,
    "float8_e5m2fnuz": 1,
    "uint16": 2,
    "uint32": 4,
    "uint64": 8,
    "unsignedint": 4,
    "unsignedlong": 8,
    "unsignedshort": 2,
}


def dtype_size(dtype: str) -> int:
    """Bytes per element of a dtype as spelled in traces; 0 when unknown."""
    key = dtype.strip().lower().replace("c10::", "").replace(" ", "")
    if key in _DTYPE_SIZES:
        return _DTYPE_SIZES[key]
    key = key.replace("complex<half>", "complex<c10::half>")
    return _DTYPE_SIZES.get(key, 0)


# canonical collective (lower case, no underscores) -> display name
_CANONICAL = {
    "allreduce": "all_reduce",
    "allreducecoalesced": "all_reduce",
    "allgather": "all_gather",
    "allgatherbase": "all_gather",
    "allgatherintotensor": "all_gather",
    "allgatherintotensorcoalesced": "all_gather",
    "allgathercoalesced": "all_gather",
    "reducescatter": "reduce_scatter",
    "reducescatterbase": "reduce_scatter",
    "reducescattertensor": "reduce_scatter",
    "reducescattertensorcoalesced": "reduce_scatter",
    "alltoall": "all_to_all",
    "alltoallbase": "all_to_all",
    "alltoallv": "all_to_all",
    "alltoallsingle": "all_to_all",
    "broadcast": "broadcast",
    "reduce": "reduce",
    "gather": "gather",
    "scatter": "scatter",
    "send": "send",
    "recv": "recv",
    "recvanysource": "recv",
    "isend": "send",
    "irecv": "recv",
    "sendrecv": "send_recv",
    "batchisendirecv": "batch_isend_irecv",
    "barrier": "barrier",
    "monitoredbarrier": "barrier",
}

# host-side names that are not a collective on their own
NOT_COLLECTIVES = frozenset(
    {"wait", "waittensor", "workwait", "init", "", "coalesced", "startcoalescing", "endcoalescing"}
)
# library prefixes of host-side collective names (functional collectives: _c10d_functional::)
LIBRARY_PREFIX = re.compile(r"^(_?c10d_functional|nccl|gloo|c10d|mpi|ucc|hccl|xccl|rccl)(::|:)", re.I)

_BUS_FACTOR_KIND = {
    "all_reduce": "allreduce",
    "all_gather": "n-1/n",
    "reduce_scatter": "n-1/n",
    "all_to_all": "n-1/n",
    "gather": "n-1/n",
    "scatter": "n-1/n",
    "broadcast": "one",
    "reduce": "one",
    "send": "one",
    "recv": "one",
    "barrier": "zero",
}


def canonical_key(name: str) -> str:
    """'nccl:_all_gather_base' -> 'allgatherbase' (prefix, underscores and case removed)."""
    base = LIBRARY_PREFIX.sub("", name.strip())
    return base.replace("_", "").lower()


def collective_name(name: str) -> str:
    """Display name of a collective from any spelling; unknown names are returned unchanged."""
    key = canonical_key(name)
    return _CANONICAL.get(key, name)


def is_collective(name: str) -> bool:
    """True for a host-side name that denotes a collective (or p2p) call."""
    return canonical_key(name) not in NOT_COLLECTIVES


def message_bytes(in_nelems: int, out_nelems: int, dtype: str) -> int:
    """NCCL-tests size S from record_param_comms element counts; 0 when unknown."""
    n = max(int(in_nelems), int(out_nelems), 0)
    return n * dtype_size(dtype)


def tensor_bytes(dims: list, dtype: str) -> int:
    """Bytes of one tensor argument given its shape (list of ints) and dtype; 0 if not a tensor."""
    if not isinstance(dims, list) or not dims or not all(isinstance(d, int) for d in dims):
        return 0
    return math.prod(dims) * dtype_size(dtype)


def bus_factor(collective: str, group_size: int) -> float:
    """busbw / algbw for a collective over n ranks (NCCL-tests); 1 when n is unknown (< 1)."""
    kind = _BUS_FACTOR_KIND.get(collective_name(collective), "one")
    n = group_size
    if kind == "zero":
        return 0.0
    if kind == "one" or n < 1:
        return 1.0
    if kind == "allreduce":
        return 2.0 * (n - 1) / n
    return (n - 1) / n


def gbps(nbytes: float, micros: float) -> float:
    """Bandwidth in GB/s (1e9 bytes/s) of nbytes moved in micros µs; NaN when the time is 0."""
    if micros <= 0:
        return math.nan
    return nbytes / micros / 1e3

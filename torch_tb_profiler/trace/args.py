"""Typed ``args`` per event kind, decoded in one batch per kind.

Field names follow every spelling the generations used (``External id`` / ``external id``,
``Input Dims`` / ``Input dims``). Values of an unexpected type (``"N/A"``, strings for numbers) or out of
range (an id of 2**63 or more does not fit the int64 columns) make the fast typed batch fail; the batch
is then decoded generically and coerced field by field, and each value that had to be dropped is
reported to ``dropped`` (row, field, value) so the caller can warn about it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, TypeVar

import msgspec

A = TypeVar("A", bound=msgspec.Struct)

_F = msgspec.field
NULL = msgspec.Raw(b"null")
NAN = float("nan")
# every integer arg lands in an int64 column: a bigger one is dropped (with a warning), not an OverflowError
Int = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
Dropped = list[tuple[int, str, Any]]  # (row in the batch, field name as in the trace, value)


class _ExternalId(msgspec.Struct, gc=False):
    ext_id: Int = _F(default=-1, name="External id")
    ext_id_legacy: Int = _F(default=-1, name="external id")


class _Collective(_ExternalId, gc=False):
    """Collective metadata: on record_param_comms ops, and copied onto NCCL kernels by newer Kineto."""

    collective: str | None = _F(default=None, name="Collective name")
    in_nelems: Int = _F(default=-1, name="In msg nelems")
    out_nelems: Int = _F(default=-1, name="Out msg nelems")
    dtype: str | None = _F(default=None, name="dtype")
    group_size: Int = _F(default=-1, name="Group size")
    pg_name: str | None = _F(default=None, name="Process Group Name")
    coll_seq: Int = _F(default=-1, name="Seq")


class OpArgs(_Collective, gc=False):
    seq: Int = _F(default=-1, name="Sequence number")
    fwd_tid: Int = _F(default=-1, name="Fwd thread id")
    input_dims: msgspec.Raw = _F(default=NULL, name="Input Dims")
    input_dims_legacy: msgspec.Raw = _F(default=NULL, name="Input dims")
    input_types: msgspec.Raw = _F(default=NULL, name="Input type")
    # the scalar arguments (strides, paddings, flags) as the profiler wrote them, for the roofline's models
    concrete_inputs: msgspec.Raw = _F(default=NULL, name="Concrete Inputs")
    flops: float = NAN  # the op's FLOPs where the profiler ran with with_flops=True
    call_stack: str | None = _F(default=None, name="Call stack")
    pg_desc: str | None = _F(default=None, name="Process Group Description")
    pg_ranks: str | None = _F(default=None, name="Process Group Ranks")
    rank: Int = _F(default=-1, name="Rank")


class RuntimeArgs(_ExternalId, gc=False):
    corr: Int = _F(default=-1, name="correlation")
    cid: Int = -1  # hip: correlation id
    kernel: str | None = None  # the launched kernel's name (ROCm writes it on launch calls)
    # where the kernel sits in a CUDA/HIP graph (capture-time launches, where the profiler writes them)
    graph_id: Int = _F(default=-1, name="graph id")
    graph_node_id: Int = _F(default=-1, name="graph node id")


class DeviceArgs(_Collective, gc=False):
    corr: Int = _F(default=-1, name="correlation")
    device: Int = -1
    stream: Int = -1
    grid: msgspec.Raw = NULL
    block: msgspec.Raw = NULL
    regs: float = _F(default=NAN, name="registers per thread")
    shmem: float = _F(default=NAN, name="shared memory")
    blocks_per_sm: float = _F(default=NAN, name="blocks per SM")
    warps_per_sm: float = _F(default=NAN, name="warps per SM")
    occupancy: float = _F(default=NAN, name="est. achieved occupancy %")
    bytes: float = NAN
    bandwidth: float = _F(default=NAN, name="memory bandwidth (GB/s)")
    kernel_flop: float = NAN  # Inductor's count for its Triton kernels (for the roofline)
    kernel_num_gb: float = NAN
    graph_id: Int = _F(default=-1, name="graph id")  # a replayed kernel's graph and node
    graph_node_id: Int = _F(default=-1, name="graph node id")


class AnnotationArgs(_ExternalId, gc=False):
    device: Int = -1
    stream: Int = -1


class PythonArgs(msgspec.Struct, gc=False):
    py_id: Int = _F(default=-1, name="Python id")
    py_parent_id: Int | None = _F(default=None, name="Python parent id")  # null at roots
    py_module_id: Int = _F(default=-1, name="Python module id")


class MemoryArgs(msgspec.Struct, gc=False):
    device_type: Int = _F(default=-1, name="Device Type")
    device_id: Int = _F(default=-1, name="Device Id")
    addr: Int = _F(default=-1, name="Addr")
    bytes: Int = _F(default=0, name="Bytes")
    total_allocated: float = _F(default=NAN, name="Total Allocated")
    total_reserved: float = _F(default=NAN, name="Total Reserved")


class SyncArgs(msgspec.Struct, gc=False):
    corr: Int = _F(default=-1, name="correlation")
    device: Int = -1
    stream: Int = -1
    kind: str | None = _F(default=None, name="cuda_sync_kind")


_decoders: dict[type, msgspec.json.Decoder] = {}


def decode_batch(raws: Sequence[msgspec.Raw], kind: type[A], dropped: Dropped | None = None) -> list[A]:
    """Decode many raw ``args`` objects into ``kind`` (tolerant per-field fallback for odd values;
    numbers that do not fit are appended to ``dropped``)."""
    decoder = _decoders.get(kind)
    if decoder is None:
        decoder = _decoders[kind] = msgspec.json.Decoder(kind)
    try:
        return [decoder.decode(raw) for raw in raws]
    except (msgspec.ValidationError, msgspec.DecodeError):
        pass
    out = []
    for row, raw in enumerate(raws):
        try:
            out.append(decoder.decode(raw))
        except msgspec.ValidationError:
            lost: list[tuple[str, Any]] = []
            out.append(_coerce(msgspec.json.decode(raw), kind, lost))
            if dropped is not None:
                dropped.extend((row, key, value) for key, value in lost)
        except (msgspec.DecodeError, RecursionError):
            out.append(kind())
    return out


def _coerce(item: Any, kind: type[A], lost: list[tuple[str, Any]]) -> A:
    """Build ``kind`` from a dict, dropping values of the wrong type instead of failing; numbers out of
    range are listed in ``lost``."""
    if not isinstance(item, dict):
        return kind()
    values: dict[str, Any] = {}
    for attr, key in zip(kind.__struct_fields__, kind.__struct_encode_fields__, strict=True):
        if key not in item:
            continue
        value = item[key]
        try:
            values[attr] = msgspec.convert({key: value}, kind).__getattribute__(attr)
        except msgspec.ValidationError:
            if isinstance(value, int) and not isinstance(value, bool):
                lost.append((key, value))  # an int out of the int64 range
                continue
            values[attr] = _loose_number(value)
    clean = {k: v for k, v in values.items() if v is not None}
    if "ext_id" in clean and not isinstance(clean["ext_id"], int):
        clean.pop("ext_id")
    try:
        return kind(**clean)
    except TypeError:
        return kind()


def _loose_number(value: Any) -> Any:
    """'123' -> 123, '1.5' -> 1.5, anything else (or out of the int64 range) -> None."""
    if isinstance(value, str):
        try:
            number = int(value)
            return number if -(2**63) <= number < 2**63 else None
        except ValueError:
            try:
                return float(value)
            except ValueError:
                return None
    return None

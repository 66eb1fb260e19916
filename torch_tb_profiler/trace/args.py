"""Typed ``args`` per event kind, decoded in one batch per kind.

Field names follow every spelling the generations used (``External id`` / ``external id``,
``Input Dims`` / ``Input dims``). Values of an unexpected type (``"N/A"``, strings for numbers) make the
fast typed batch fail; the batch is then decoded generically and coerced field by field.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

import msgspec

A = TypeVar("A", bound=msgspec.Struct)

_F = msgspec.field
NULL = msgspec.Raw(b"null")
NAN = float("nan")


class _ExternalId(msgspec.Struct, gc=False):
    ext_id: int = _F(default=-1, name="External id")
    ext_id_legacy: int = _F(default=-1, name="external id")


class _Collective(_ExternalId, gc=False):
    """Collective metadata: on record_param_comms ops, and copied onto NCCL kernels by newer Kineto."""

    collective: str | None = _F(default=None, name="Collective name")
    in_nelems: int = _F(default=-1, name="In msg nelems")
    out_nelems: int = _F(default=-1, name="Out msg nelems")
    dtype: str | None = _F(default=None, name="dtype")
    group_size: int = _F(default=-1, name="Group size")
    pg_name: str | None = _F(default=None, name="Process Group Name")
    coll_seq: int = _F(default=-1, name="Seq")


class OpArgs(_Collective, gc=False):
    seq: int = _F(default=-1, name="Sequence number")
    fwd_tid: int = _F(default=-1, name="Fwd thread id")
    input_dims: msgspec.Raw = _F(default=NULL, name="Input Dims")
    input_dims_legacy: msgspec.Raw = _F(default=NULL, name="Input dims")
    input_types: msgspec.Raw = _F(default=NULL, name="Input type")
    call_stack: str | None = _F(default=None, name="Call stack")
    pg_desc: str | None = _F(default=None, name="Process Group Description")
    pg_ranks: str | None = _F(default=None, name="Process Group Ranks")
    rank: int = _F(default=-1, name="Rank")


class RuntimeArgs(_ExternalId, gc=False):
    corr: int = _F(default=-1, name="correlation")
    cid: int = -1  # hip: correlation id


class DeviceArgs(_Collective, gc=False):
    corr: int = _F(default=-1, name="correlation")
    device: int = -1
    stream: int = -1
    grid: msgspec.Raw = NULL
    block: msgspec.Raw = NULL
    regs: float = _F(default=NAN, name="registers per thread")
    shmem: float = _F(default=NAN, name="shared memory")
    blocks_per_sm: float = _F(default=NAN, name="blocks per SM")
    warps_per_sm: float = _F(default=NAN, name="warps per SM")
    occupancy: float = _F(default=NAN, name="est. achieved occupancy %")
    bytes: float = NAN
    bandwidth: float = _F(default=NAN, name="memory bandwidth (GB/s)")


class AnnotationArgs(_ExternalId, gc=False):
    device: int = -1
    stream: int = -1


class PythonArgs(msgspec.Struct, gc=False):
    py_id: int = _F(default=-1, name="Python id")
    py_parent_id: int | None = _F(default=None, name="Python parent id")  # null at roots
    py_module_id: int = _F(default=-1, name="Python module id")


class MemoryArgs(msgspec.Struct, gc=False):
    device_type: int = _F(default=-1, name="Device Type")
    device_id: int = _F(default=-1, name="Device Id")
    addr: int = _F(default=-1, name="Addr")
    bytes: int = _F(default=0, name="Bytes")
    total_allocated: float = _F(default=NAN, name="Total Allocated")
    total_reserved: float = _F(default=NAN, name="Total Reserved")


class SyncArgs(msgspec.Struct, gc=False):
    corr: int = _F(default=-1, name="correlation")
    device: int = -1
    stream: int = -1
    kind: str | None = _F(default=None, name="cuda_sync_kind")


_decoders: dict[type, msgspec.json.Decoder] = {}


def decode_batch(raws: Sequence[msgspec.Raw], kind: type[A]) -> list[A]:
    """Decode many raw ``args`` objects into ``kind`` (tolerant per-field fallback for odd values)."""
    decoder = _decoders.get(kind)
    if decoder is None:
        decoder = _decoders[kind] = msgspec.json.Decoder(kind)
    try:
        return [decoder.decode(raw) for raw in raws]
    except (msgspec.ValidationError, msgspec.DecodeError):
        pass
    out = []
    for raw in raws:
        try:
            out.append(decoder.decode(raw))
        except msgspec.ValidationError:
            out.append(_coerce(msgspec.json.decode(raw), kind))
        except msgspec.DecodeError:
            out.append(kind())
    return out


def _coerce(item: Any, kind: type[A]) -> A:
    """Build ``kind`` from a dict, dropping values of the wrong type instead of failing."""
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
            values[attr] = _loose_number(value)
    clean = {k: v for k, v in values.items() if v is not None}
    if "ext_id" in clean and not isinstance(clean["ext_id"], int):
        clean.pop("ext_id")
    try:
        return kind(**clean)
    except TypeError:
        return kind()


def _loose_number(value: Any) -> Any:
    """'123' -> 123, '1.5' -> 1.5, anything else -> None."""
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            try:
                return float(value)
            except ValueError:
                return None
    return None

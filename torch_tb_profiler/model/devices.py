"""One device id per physical device: reconcile the ids a trace writes in three places.

A trace names its accelerators three ways: device activities carry ``args.device`` (else their pid),
``[memory]`` records carry the framework's ``Device Id``, and ``deviceProperties`` entries carry an
``id``. CUDA writes the same CUDA ordinal everywhere. ROCm builds that trace through roctracer write
the kernel's HSA agent index, which counts the CPU agents first (a 2-socket MI300X node: GPU 0 is
agent 2), and an app started with visible-device remapping sees its one GPU as 0 while the kernels
say 9. The rule (docs/metrics.md, "Device ids"), with K the ids of device activities, M the ids of
accelerator memory records and P the ids of deviceProperties, each sorted:

1. K within P (or no P), and K meets M (or no M): the ids are taken as written;
2. else, on a ROCm trace (HIP runtime calls, HIP memory records or a roctracer version: where kernel
   ids can be agent indices), when M is not empty, K and M have no id in common and |K| = |M| (and M
   within P, if any P): K[i] is M[i] (memory records and kernels of one process name the same devices);
3. else, when K is not within P and |K| = |P| (M within P): K[i] is P[i];
4. else the ids are kept as written and a warning says which ids could not be matched.
"""

from __future__ import annotations

from collections.abc import Iterable


def reconcile(
    activity_ids: Iterable[int],
    memory_ids: Iterable[int],
    property_ids: Iterable[int],
    agent_indices: bool = True,
) -> tuple[dict[int, int], str | None]:
    """The id map {written: reconciled} (only ids that change) and a warning when ambiguous;
    ``agent_indices``: the trace is one whose kernel ids may be HSA agent indices (ROCm)."""
    k = sorted({int(i) for i in activity_ids if int(i) >= 0})
    m = sorted({int(i) for i in memory_ids if int(i) >= 0})
    p = sorted({int(i) for i in property_ids if int(i) >= 0})
    if not k:
        return {}, None
    in_props = not p or set(k) <= set(p)
    meets_memory = not m or bool(set(k) & set(m))
    if in_props and meets_memory:
        return {}, None
    memory_in_props = not p or set(m) <= set(p)
    if agent_indices and m and not set(k) & set(m) and len(k) == len(m) and memory_in_props:
        return _changed(k, m), None
    if not in_props and len(k) == len(p) and memory_in_props:
        return _changed(k, p), None
    return {}, (
        f"device ids do not agree: device activities on {_ids(k)}, memory records on {_ids(m)}, "
        f"deviceProperties ids {_ids(p)}; kept as written (names and memory sizes may be missing)"
    )


def _changed(written: list[int], target: list[int]) -> dict[int, int]:
    return {w: t for w, t in zip(written, target, strict=True) if w != t}


def _ids(ids: list[int]) -> str:
    return ", ".join(map(str, ids)) if ids else "none"

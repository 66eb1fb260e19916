"""The host ranges that are a profile's steps (docs/metrics.md, "Steps" and "Inference steps").

In order of precedence:

1. ``ProfilerStep#N`` ranges (training loops and anything calling ``prof.step()``): kind ``train``.
2. vLLM-style iteration annotations ``execute_<T>_context_<C>(sq<a>sk<b>…)_generation_<G>(sq<x>sk<y>…)``:
   an iteration that schedules T tokens for C requests in their context (prefill) phase and G requests
   generating; ``a`` and ``x`` are the query tokens of each part. Context tokens = a, generation
   tokens = x; kind ``prefill`` when only C > 0, ``decode`` when only G > 0, ``mixed`` when both.
3. SGLang-style batch ranges ``step[<MODE> bs=<n>]``: kind from MODE (``DECODE`` → decode, ``PREFILL``
   or ``EXTEND`` → prefill, ``MIXED`` → mixed); the range states no token counts (-1).

Rules 2 and 3 apply only to a profile without ``ProfilerStep#N`` ranges, and 3 only without any range of
rule 2 (servers that write both nest one in the other). Inference steps are numbered 1, 2, … in time
order.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

STEP_NAME = re.compile(r"^ProfilerStep#(\d+)$")
VLLM_ITERATION = re.compile(
    r"^execute_(?P<total>\d+)_context_(?P<ctx>\d+)\(sq(?P<ctx_tokens>\d+)sk\d+[^)]*\)"
    r"_generation_(?P<gen>\d+)\(sq(?P<gen_tokens>\d+)sk\d+[^)]*\)"
)
SGLANG_BATCH = re.compile(r"^step\[(?P<mode>[A-Z_]+)(?: bs=(?P<bs>\d+))?\]$")
_SGLANG_KINDS = {"DECODE": "decode", "PREFILL": "prefill", "EXTEND": "prefill", "MIXED": "mixed"}
COLUMNS = ["number", "name", "ts", "end", "kind", "context_tokens", "generation_tokens"]
UNKNOWN = -1


def step_table(ops: pd.DataFrame, warnings: list[str]) -> pd.DataFrame:
    """The steps' host ranges in order (``number``, ``name``, ``ts``, ``end``, ``kind``,
    ``context_tokens``, ``generation_tokens``); a ``ProfilerStep`` number that does not fit 64 bits makes
    that range an ordinary op, with a warning."""
    names = ops["name"]
    distinct = pd.unique(names)
    numbers = {name: int(m.group(1)) for name in distinct if (m := STEP_NAME.match(name))}
    for name in [n for n, number in numbers.items() if number >= 2**63]:
        del numbers[name]
        warnings.append(f"step '{name[:60]}': the step number does not fit 64 bits; not counted as a step")
    if numbers:
        mask = names.isin(list(numbers)).to_numpy()
        steps = ops.loc[mask, ["name", "ts", "end"]]
        steps = steps.assign(number=np.array([numbers[x] for x in steps["name"]], dtype=np.int64))
        steps = steps.drop_duplicates("number").sort_values("number", kind="stable").reset_index(drop=True)
        kind = pd.array(["train"] * len(steps), dtype=ops["name"].dtype)
        return steps.assign(kind=kind, context_tokens=UNKNOWN, generation_tokens=UNKNOWN)[COLUMNS]
    return _inference_steps(ops, distinct)


def _inference_steps(ops: pd.DataFrame, distinct: np.ndarray) -> pd.DataFrame:
    facts = {name: f for name in distinct if (f := _vllm(name)) is not None}
    if not facts:
        facts = {name: f for name in distinct if (f := _sglang(name)) is not None}
    annotation = (ops["cat"] == "user_annotation").to_numpy() if len(ops) else np.zeros(0, dtype=bool)
    mask = ops["name"].isin(list(facts)).to_numpy() & annotation if facts else np.zeros(len(ops), dtype=bool)
    steps = ops.loc[mask, ["name", "ts", "end"]].sort_values("ts", kind="stable").reset_index(drop=True)
    kinds = [facts[n] for n in steps["name"]]
    return pd.DataFrame(
        {
            "number": np.arange(1, len(steps) + 1, dtype=np.int64),
            "name": steps["name"].astype(ops["name"].dtype),
            "ts": steps["ts"].to_numpy(dtype=np.float64),
            "end": steps["end"].to_numpy(dtype=np.float64),
            "kind": pd.array([k[0] for k in kinds], dtype=ops["name"].dtype),
            "context_tokens": np.array([k[1] for k in kinds], dtype=np.int64),
            "generation_tokens": np.array([k[2] for k in kinds], dtype=np.int64),
        },
        columns=COLUMNS,
    )


def _vllm(name: str) -> tuple[str, int, int] | None:
    m = VLLM_ITERATION.match(name)
    if not m:
        return None
    ctx, gen = int(m.group("ctx")), int(m.group("gen"))
    if ctx == 0 and gen == 0:
        return None  # an iteration with no request states nothing to classify
    kind = "mixed" if ctx and gen else ("prefill" if ctx else "decode")
    return kind, int(m.group("ctx_tokens")), int(m.group("gen_tokens"))


def _sglang(name: str) -> tuple[str, int, int] | None:
    m = SGLANG_BATCH.match(name)
    if not m or m.group("mode") not in _SGLANG_KINDS:
        return None
    return _SGLANG_KINDS[m.group("mode")], UNKNOWN, UNKNOWN

"""Device peaks: dense peak FLOP/s per dtype and memory bandwidth, per product, from vendor datasheets.

Figures are **dense** (no 2:4 structured sparsity: where a datasheet prints only the sparse figure,
marked ``*`` there, the dense one is half of it) in TFLOP/s; bandwidth in TB/s (10^12 bytes/s).
``fp64`` is the FP64 Tensor-Core / Matrix figure where the device has one (DGEMM runs there), ``fp32``
the CUDA-core FP32 figure on NVIDIA and the FP32 Matrix figure on AMD (rocBLAS runs FP32 GEMMs on the
matrix cores), ``tf32`` NVIDIA's TF32 Tensor Core (AMD: XF32 on MI300), ``fp16``/``bf16`` the tensor /
matrix figures with FP32 accumulate (what PyTorch uses on GeForce cards, where FP16 accumulate runs
twice as fast), ``fp8``/``fp4`` likewise; ``int8`` the INT8 tensor / matrix figure in TOPS (an
integer multiply-add counts two operations, as a FLOP does). A dtype the product lacks is absent.

Rows for AMD MI250/MI250X are per GCD (half of the module's datasheet figures): ROCm shows each GCD
as a device of its own (110 or 104 CUs, 64 GiB), so that is what a trace's device is.

Matching (docs/metrics.md, "Roofline"): the ``deviceProperties`` name against each row's pattern, the
candidates narrowed by memory size and SM/CU count; with an empty or unknown name, the architecture
(``gcnArchName``, else the gfx/sm version from ``computeMajor``/``computeMinor``) together with the
SM/CU count and memory, and only when exactly one product fits — never by compute capability alone.
A user file (``--peaks FILE``, ``TORCH_TB_PROFILER_PEAKS``) is tried first.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

PEAKS_ENV = "TORCH_TB_PROFILER_PEAKS"
DTYPES = ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "fp4", "int8")
GIB = 1024**3
MEMORY_TOLERANCE = 0.10  # a trace's totalGlobalMem is the usable memory: a few % under the label


@dataclass(frozen=True)
class Peak:
    name: str
    pattern: str  # searched (case-insensitive) in the deviceProperties name
    arch: str  # sm_90, gfx942: for matching a trace without a name
    units: int  # SMs / CUs
    memory_gib: float
    tflops: dict[str, float]
    tb_per_s: float
    source: str
    user: bool = field(default=False)

    def plain(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "peaks": dict(self.tflops),
            "tb_per_s": self.tb_per_s,
            "source": self.source,
        }


_NV_V100 = "NVIDIA Tesla V100 GPU datasheet, images.nvidia.com/content/technologies/volta/pdf/volta-v100-datasheet-update-us-1165301-r5.pdf"
_NV_A100 = "NVIDIA A100 Tensor Core GPU datasheet, nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf"
_NV_H100 = "NVIDIA H100 Tensor Core GPU datasheet (sparse figures halved), resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet"
_NV_H200 = "NVIDIA H200 Tensor Core GPU datasheet (sparse figures halved), nvidia.com/en-us/data-center/h200/"
_NV_HGX = "NVIDIA HGX B200 specifications, 8 GPUs, divided by 8 (sparse figures halved), nvidia.com/en-us/data-center/hgx/"
_NV_GB200 = "NVIDIA GB200 NVL72 specifications, 72 GPUs, divided by 72 (sparse figures halved), nvidia.com/en-us/data-center/gb200-nvl72/"
_NV_L4 = "NVIDIA L4 Tensor Core GPU datasheet (sparse figures halved), nvidia.com/en-us/data-center/l4/"
_NV_L40S = "NVIDIA L40S GPU datasheet, nvidia.com/en-us/data-center/l40s/"
_NV_TURING = (
    "NVIDIA Turing GPU Architecture whitepaper, Table 1 (reference clocks, FP16 tensor with FP32 accumulate)"
)
_NV_GA102 = "NVIDIA Ampere GA102 GPU Architecture whitepaper, Table 1 (dense, FP32 accumulate)"
_NV_ADA = "NVIDIA Ada GPU Architecture whitepaper, Table 1 (dense, FP32 accumulate)"
_AMD = "AMD Instinct {} product page / data sheet, amd.com/en/products/accelerators/instinct/{}"


def _row(
    name: str, pattern: str, arch: str, units: int, gib: float, tb: float, source: str, **tflops: float
) -> Peak:
    return Peak(
        name, pattern, arch, units, gib, {k: v for k, v in tflops.items() if v is not None}, tb, source
    )


_H16 = {
    "fp64": 67.0,
    "fp32": 67.0,
    "tf32": 494.5,
    "bf16": 989.5,
    "fp16": 989.5,
    "fp8": 1979.0,
    "int8": 1979.0,
}
_HNVL = {
    "fp64": 60.0,
    "fp32": 60.0,
    "tf32": 417.5,
    "bf16": 835.5,
    "fp16": 835.5,
    "fp8": 1670.5,
    "int8": 1670.5,
}
_MI300 = {
    "fp64": 163.4,
    "fp32": 163.4,
    "tf32": 653.7,
    "bf16": 1307.4,
    "fp16": 1307.4,
    "fp8": 2614.9,
    "int8": 2614.9,
}
_A100 = {"fp64": 19.5, "fp32": 19.5, "tf32": 156.0, "bf16": 312.0, "fp16": 312.0, "int8": 624.0}

# fmt: off
BUILTIN: tuple[Peak, ...] = (
    # V100 16 and 32 GB share their figures (memory 0: not checked); DGXS (DGX Station) is the SXM2 part
    _row("V100 SXM2", r"V100(?!S)[-\s]*(?:SXM2|DGXS)", "sm_70", 80, 0, 0.9, _NV_V100, fp64=7.8, fp32=15.7, fp16=125.0),
    _row("V100 PCIe", r"V100(?!S)[-\s]*PCIE", "sm_70", 80, 0, 0.9, _NV_V100, fp64=7.0, fp32=14.0, fp16=112.0),
    _row("V100S PCIe", r"V100S", "sm_70", 80, 32, 1.134, _NV_V100, fp64=8.2, fp32=16.4, fp16=130.0),
    # A100 40GB PCIe and SXM4 have the same peaks and bandwidth (1,555 GB/s): one row
    _row("A100 40GB (PCIe/SXM4)", r"A100", "sm_80", 108, 40, 1.555, _NV_A100, **_A100),
    _row("A100 80GB PCIe", r"A100.*PCIE", "sm_80", 108, 80, 1.935, _NV_A100, **_A100),
    _row("A100 80GB SXM4", r"A100.*SXM", "sm_80", 108, 80, 2.039, _NV_A100, **_A100),
    _row("H100 SXM", r"H100(?!.*(?:PCIE|NVL))", "sm_90", 132, 80, 3.35, _NV_H100, **_H16),
    _row("H100 PCIe", r"H100.*PCIE", "sm_90", 114, 80, 2.0, _NV_H100,
         fp64=51.0, fp32=51.0, tf32=378.0, bf16=756.5, fp16=756.5, fp8=1513.0, int8=1513.0),
    _row("H100 NVL", r"H100.*NVL", "sm_90", 132, 94, 3.9, _NV_H100, **_HNVL),
    _row("H200 SXM", r"H200(?!.*NVL)", "sm_90", 132, 141, 4.8, _NV_H200, **_H16),
    _row("H200 NVL", r"H200.*NVL", "sm_90", 132, 141, 4.8, _NV_H200, **_HNVL),
    _row("B200 (HGX)", r"(?<!G)B200", "sm_100", 148, 180, 8.0, _NV_HGX,
         fp64=37.0, fp32=75.0, tf32=1125.0, bf16=2250.0, fp16=2250.0, fp8=4500.0, fp4=9000.0, int8=4500.0),
    _row("GB200 (per GPU)", r"GB200", "sm_100", 148, 186, 8.0, _NV_GB200,
         fp64=45.0, fp32=90.0, tf32=1250.0, bf16=2500.0, fp16=2500.0, fp8=5000.0, fp4=10000.0, int8=5000.0),
    _row("L4", r"\bL4\b", "sm_89", 58, 24, 0.3, _NV_L4,
         fp32=30.3, tf32=60.0, bf16=121.0, fp16=121.0, fp8=242.5, int8=242.5),
    _row("L40S", r"L40S", "sm_89", 142, 48, 0.864, _NV_L40S,
         fp32=91.6, tf32=183.0, bf16=362.05, fp16=362.05, fp8=733.0, int8=733.0),
    _row("GeForce RTX 2080 Ti", r"2080\s*Ti", "sm_75", 68, 11, 0.616, _NV_TURING, fp32=13.4, fp16=53.8, int8=215.2),
    _row("GeForce RTX 3090", r"3090(?!\s*Ti)", "sm_86", 82, 24, 0.936, _NV_GA102,
         fp32=35.6, tf32=35.6, bf16=71.0, fp16=71.0, int8=284.0),
    _row("GeForce RTX 4090", r"4090", "sm_89", 128, 24, 1.008, _NV_ADA,
         fp32=82.6, tf32=82.6, bf16=165.2, fp16=165.2, fp8=330.3, int8=660.6),
    _row("MI210", r"MI210", "gfx90a", 104, 64, 1.6384, _AMD.format("MI210", "mi200/mi210.html"),
         fp64=45.3, fp32=45.3, bf16=181.0, fp16=181.0, int8=181.0),
    _row("MI250 (one GCD)", r"MI250(?!X)", "gfx90a", 104, 64, 1.6384, _AMD.format("MI250 (÷2 per GCD)", "mi200/mi250.html"),
         fp64=45.25, fp32=45.25, bf16=181.05, fp16=181.05, int8=181.05),
    _row("MI250X (one GCD)", r"MI250X", "gfx90a", 110, 64, 1.6384, _AMD.format("MI250X (÷2 per GCD)", "mi200/mi250x.html"),
         fp64=47.85, fp32=47.85, bf16=191.5, fp16=191.5, int8=191.5),
    _row("MI300X", r"MI300X", "gfx942", 304, 192, 5.3, _AMD.format("MI300X", "mi300/mi300x.html"), **_MI300),
    _row("MI325X", r"MI325X", "gfx942", 304, 256, 6.0, _AMD.format("MI325X", "mi300/mi325x.html"), **_MI300),
    _row("MI355X", r"MI355X", "gfx950", 256, 288, 8.0, _AMD.format("MI355X", "mi350/mi355x.html"),
         fp64=78.6, fp32=157.3, bf16=2516.6, fp16=2516.6, fp8=5033.2, fp4=10066.3, int8=5033.2),
)
# fmt: on


@dataclass(frozen=True)
class Match:
    peak: Peak | None
    how: str  # "name", "architecture", "user file"; or why nothing matched


def user_peaks(path: str | None = None) -> tuple[Peak, ...]:
    """Rows of a user peaks file (JSON: a list of {name, match, peaks: {dtype: TFLOP/s}, tb_per_s,
    source?, arch?, units?, memory_gib?}); ``path`` defaults to ``$TORCH_TB_PROFILER_PEAKS``.
    A malformed file raises ValueError with what is wrong."""
    path = path if path is not None else os.environ.get(PEAKS_ENV, "")
    if not path:
        return ()
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as exc:
        raise ValueError(f"peaks file {path!r}: {exc}") from None
    if not isinstance(doc, list):
        raise ValueError(f"peaks file {path!r}: expected a JSON list of devices")
    out = []
    for i, item in enumerate(doc):
        try:
            tflops = {str(k): float(v) for k, v in dict(item["peaks"]).items()}
            bad = set(tflops) - set(DTYPES)
            if bad:
                raise ValueError(f"unknown dtypes {sorted(bad)} (known: {', '.join(DTYPES)})")
            re.compile(str(item["match"]))
            out.append(
                Peak(
                    str(item["name"]),
                    str(item["match"]),
                    str(item.get("arch", "")),
                    int(item.get("units", 0)),
                    float(item.get("memory_gib", 0)),
                    tflops,
                    float(item["tb_per_s"]),
                    str(item.get("source", f"user file {path}")),
                    True,
                )
            )
        except (KeyError, TypeError, ValueError, re.error) as exc:
            raise ValueError(f"peaks file {path!r}, entry {i}: {exc}") from None
    return tuple(out)


def _memory_fits(peak: Peak, memory_bytes: float | None) -> bool:
    if not memory_bytes or not peak.memory_gib:
        return True
    return abs(memory_bytes / GIB - peak.memory_gib) <= MEMORY_TOLERANCE * peak.memory_gib


def _units_fit(peak: Peak, units: int | None) -> bool:
    return not units or not peak.units or units == peak.units


def trace_arch(props: dict[str, Any], platform: str | None) -> str | None:
    """The architecture a device's properties state: ``gcnArchName`` (``gfx942:sramecc+:xnack-`` →
    ``gfx942``), else the version from computeMajor/Minor (``sm_90``; on ROCm ``gfx94``, a prefix:
    ROCm writes gfx90a as 9.0)."""
    gcn = str(props.get("gcnArchName") or "").split(":", 1)[0]
    if gcn:
        return gcn
    major, minor = props.get("computeMajor"), props.get("computeMinor")
    if not isinstance(major, int) or not isinstance(minor, int) or major <= 0:
        return None
    if platform == "ROCm":
        return f"gfx{major}{minor}"
    if platform == "CUDA":
        return f"sm_{major}{minor}"
    return None


def match(props: dict[str, Any], platform: str | None, extra: tuple[Peak, ...] = ()) -> Match:
    """The peaks row for one device's ``deviceProperties`` (rules in the module docstring)."""
    name = str(props.get("name") or "").strip()
    memory = props.get("totalGlobalMem")
    memory = float(memory) if isinstance(memory, (int, float)) and memory > 0 else None
    units = props.get("numSms") or props.get("multiProcessorCount")
    units = int(units) if isinstance(units, int) and units > 0 else None
    for rows, how in ((extra, "user file"), (BUILTIN, "name")):
        if not name:
            break
        named = [p for p in rows if re.search(p.pattern, name, re.IGNORECASE)]
        fits = [p for p in named if _memory_fits(p, memory) and _units_fit(p, units)]
        if len(fits) == 1:
            return Match(fits[0], how)
        if len(fits) > 1:
            return Match(None, f"{name!r} fits several products ({', '.join(p.name for p in fits)})")
        if named:
            return Match(None, f"{name!r} names {named[0].name}, but its memory or SM count differs")
    arch = trace_arch(props, platform)
    if not arch or not units or not memory:
        what = f"device {name!r}" if name else "a device without a name"
        return Match(None, f"{what} is not in the peaks table")
    # gfx90a is written 9.0: the trace's version is a prefix of the product's architecture
    exact = bool(props.get("gcnArchName")) or platform == "CUDA"
    fits = [
        p
        for p in (*extra, *BUILTIN)
        if p.arch
        and (p.arch == arch if exact else p.arch.startswith(arch))
        and p.units == units
        and _memory_fits(p, memory)  # a row without a memory size fits any: it stays a candidate
    ]
    if len(fits) == 1:
        return Match(fits[0], "architecture")
    shown = f"{arch}, {units} units, {memory / GIB:.0f} GiB"
    if fits:
        return Match(None, f"{shown} fits several products ({', '.join(p.name for p in fits)})")
    return Match(None, f"no product in the peaks table has {shown}")

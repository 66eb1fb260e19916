"""Which accelerator a profile ran on, and what the trace can tell about it.

A Kineto trace does not name its device platform, so the evidence decides (docs/metrics.md,
"Device kind"):

- an accelerator-specific runtime category names it: ``mtia_runtime``/``mtia_ccp_events`` → MTIA,
  ``xpu_runtime``/``xpu_driver``/``xpu_sync`` → XPU, ``hpu_op`` → HPU,
  ``privateuse1_runtime``/``privateuse1_driver`` → PrivateUse1, ``hip_runtime`` → ROCm;
- otherwise HIP runtime calls (``hip*`` names, which ROCm builds record under ``cuda_runtime``) or an
  AMD device name in ``deviceProperties`` mean ROCm;
- otherwise any runtime call or device activity means CUDA.

All of this only when the trace shows device work: device activity (kernels, copies, sets; HPU's
``hpu_op``), or host calls that submit it (launches and copies whose device records were lost,
``model/device_work.py``). A trace whose only runtime calls query the device (``cudaGetDeviceCount``,
``cudaGetDeviceProperties``: a CPU run on a GPU host) is a CPU run, whatever ``deviceProperties`` lists.

CUDA and ROCm devices are shown as "GPU"; the others by their own name. CUDA-only figures (compute
capability, SM efficiency, tensor cores) are reported only where they have a meaning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from torch_tb_profiler.analysis.core.cache import memoized
from torch_tb_profiler.model import device_work
from torch_tb_profiler.model.device_work import work_call_mask

_PLATFORM_BY_CATEGORY = {
    "mtia_runtime": "MTIA",
    "mtia_ccp_events": "MTIA",
    "xpu_runtime": "XPU",
    "xpu_driver": "XPU",
    "xpu_sync": "XPU",
    "hpu_op": "HPU",
    "privateuse1_runtime": "PrivateUse1",
    "privateuse1_driver": "PrivateUse1",
    "hip_runtime": "ROCm",
}
# checked in this order: a trace with both an MTIA runtime and CUDA-style events is an MTIA trace
_PLATFORM_ORDER = ("MTIA", "XPU", "HPU", "PrivateUse1", "ROCm")
_AMD_DEVICE = re.compile(r"\b(?:AMD|Radeon|Instinct|gfx\d)", re.IGNORECASE)


@dataclass(frozen=True)
class Accelerator:
    platform: str | None  # "CUDA", "ROCm", "MTIA", "XPU", "HPU", "PrivateUse1"; None: CPU only

    @property
    def kind(self) -> str:
        """What the UI calls a device: GPU for CUDA and ROCm, else the platform's own name."""
        if self.platform is None:
            return "CPU"
        return "GPU" if self.platform in ("CUDA", "ROCm") else self.platform

    @property
    def matrix_units(self) -> str | None:
        """The name of the matrix units whose share the kernel names let us classify, else None."""
        return {"CUDA": "Tensor Cores", "ROCm": "Matrix Cores"}.get(self.platform or "")

    @property
    def graphs(self) -> str | None:
        """The vendor's name for captured launch graphs, None where none is known (MTIA, XPU, …)."""
        return {"CUDA": "CUDA graphs", "ROCm": "HIP graphs"}.get(self.platform or "")

    @property
    def sm_figures(self) -> bool:
        """SM efficiency, blocks per SM and occupancy come from CUPTI: CUDA only."""
        return self.platform == "CUDA"

    @property
    def has_compute_capability(self) -> bool:
        """computeMajor/Minor are CUDA compute capabilities only on CUDA (ROCm writes its gfx major)."""
        return self.platform == "CUDA"


def detect(profile) -> Accelerator:
    categories = _categories(profile.meta.counts or {})
    if _range_profiler_only(profile):  # CUPTI range-profiler counters (core/range_profiler.py): CUDA's
        return Accelerator("CUDA")
    if not (len(profile.device) or "hpu_op" in categories or work_call_mask(profile.runtimes).any()):
        return Accelerator(None)  # no device did any work: not the run's device
    seen = {_PLATFORM_BY_CATEGORY[c] for c in categories if c in _PLATFORM_BY_CATEGORY}
    for platform in _PLATFORM_ORDER:
        if platform in seen:
            return Accelerator(platform)
    if _rocm(profile):
        return Accelerator("ROCm")
    return Accelerator("CUDA")


def accelerator(profile) -> Accelerator:
    """The profile's accelerator (computed once per profile)."""
    return memoized(profile, "accelerator.detect", lambda: detect(profile))


def lost_launches(profile) -> int:
    """Launch/copy calls of a trace that has no device activity at all (their records were lost), else 0."""
    return memoized(
        profile, "accelerator.lost", lambda: device_work.lost_launches(profile.runtimes, profile.device)
    )


def _range_profiler_only(profile) -> bool:
    if len(profile.runtimes) or len(profile.device) or not len(profile.others):
        return False
    return "cuda_profiler_range" in set(profile.others["cat"].to_numpy(object))


def _categories(counts: dict[str, int]) -> set[str]:
    """Lower-cased categories of ``meta.counts`` keys ("X:cuda_runtime" → "cuda_runtime")."""
    return {key.split(":", 1)[1].lower() for key in counts if ":" in key}


def _rocm(profile) -> bool:
    names = profile.runtimes["name"].unique() if len(profile.runtimes) else []
    if any(str(n).startswith("hip") for n in names):
        return True
    return any(_AMD_DEVICE.search(str(p.get("name", ""))) for p in profile.meta.device_properties)

"""Which category names of each PyTorch/Kineto generation mean which kind of event.

One map for every generation: PyTorch 1.8/1.9 (``Operator``, ``Runtime``, ``Kernel``, ``Memcpy``,
``Memset``, ``async`` flows), the 2021 renames (``cpu_op``, ``user_annotation``, ``cuda_runtime``...)
and the accelerator-specific runtimes of later releases. Categories are compared lower-cased.
"""

from __future__ import annotations

from enum import IntEnum


class Kind(IntEnum):
    OP = 0  # host operator / annotation range (goes into the op tree)
    RUNTIME = 1  # host call that launches or waits on device work
    KERNEL = 2
    MEMCPY = 3
    MEMSET = 4
    GPU_ANNOTATION = 5
    PYTHON = 6  # python_function (with_stack)
    SYNC = 7  # cuda_sync
    OTHER = 8  # complete events of other categories: kept and counted
    SCAFFOLD = 9  # the profiler's own "Trace" span


# complete ("X") events, by lower-cased category
CATEGORY_KINDS: dict[str, Kind] = {
    "cpu_op": Kind.OP,
    "operator": Kind.OP,
    "user_annotation": Kind.OP,
    "python": Kind.OP,  # legacy python range (pre-2.0 with_stack)
    "runtime": Kind.RUNTIME,
    "cuda_runtime": Kind.RUNTIME,
    "cuda_driver": Kind.RUNTIME,
    "xpu_runtime": Kind.RUNTIME,
    "xpu_driver": Kind.RUNTIME,
    "mtia_runtime": Kind.RUNTIME,
    "glow_runtime": Kind.RUNTIME,
    "privateuse1_runtime": Kind.RUNTIME,
    "privateuse1_driver": Kind.RUNTIME,
    "hip_runtime": Kind.RUNTIME,
    "kernel": Kind.KERNEL,
    "mtia_ccp_events": Kind.KERNEL,
    "gpu_memcpy": Kind.MEMCPY,
    "memcpy": Kind.MEMCPY,
    "gpu_memset": Kind.MEMSET,
    "memset": Kind.MEMSET,
    "gpu_user_annotation": Kind.GPU_ANNOTATION,
    "python_function": Kind.PYTHON,
    "cuda_sync": Kind.SYNC,
    "xpu_sync": Kind.SYNC,
    "trace": Kind.SCAFFOLD,
}

# categories we know and deliberately keep in the "others" table (not unknown)
KNOWN_OTHER = frozenset(
    {
        "overhead",
        "cuda_event",
        "external_correlation",
        "collective_comm",
        "mtia_insight",
        "hpu_op",
        "xpu_scope_profiler",
        "cuda_profiler_range",
        "cpu_instant_event",
    }
)

# how the op tree's ``cat`` column names the host categories
OP_CATEGORY = {
    "operator": "cpu_op",
    "cpu_op": "cpu_op",
    "user_annotation": "user_annotation",
    "python": "python",
}

# flow categories: forward->backward links (every spelling); launch flows (ac2g, async) duplicate correlation
FWDBWD_FLOW_CATEGORIES = frozenset({"fwdbwd", "forward_backward", "fwd_bwd"})
LAUNCH_FLOW_CATEGORIES = frozenset({"ac2g", "async", "async_cpu_to_gpu", "async_gpu"})

MEMORY_EVENT_NAME = "[memory]"

# Memory "Device Type" numbers (c10::DeviceType, c10/core/DeviceType.h)
DEVICE_TYPE_NAMES = {
    0: "CPU",
    1: "CUDA",
    2: "MKLDNN",
    3: "OPENGL",
    4: "OPENCL",
    5: "IDEEP",
    6: "HIP",
    7: "FPGA",
    8: "MAIA",
    9: "XLA",
    10: "Vulkan",
    11: "Metal",
    12: "XPU",
    13: "MPS",
    14: "Meta",
    15: "HPU",
    16: "VE",
    17: "Lazy",
    18: "IPU",
    19: "MTIA",
    20: "PrivateUse1",
}

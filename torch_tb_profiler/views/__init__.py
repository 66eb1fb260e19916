"""HTTP views: each module listed here exposes ``ROUTES: dict[str, Handler]`` (see ``views/common.py``)."""

VIEW_MODULES: tuple[str, ...] = (
    "torch_tb_profiler.views.core",
    "torch_tb_profiler.views.overview",
    "torch_tb_profiler.views.operators",
    "torch_tb_profiler.views.kernels",
    "torch_tb_profiler.views.roofline",
    "torch_tb_profiler.views.analysis",
    "torch_tb_profiler.views.memory",
    "torch_tb_profiler.views.distributed",
    "torch_tb_profiler.views.trace",
    "torch_tb_profiler.views.timeline",
    "torch_tb_profiler.views.diff",
    "torch_tb_profiler.views.modules",
)

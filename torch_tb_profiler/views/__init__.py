"""HTTP views: each module listed here exposes ``ROUTES: dict[str, Handler]`` (see ``views/common.py``)."""

VIEW_MODULES: tuple[str, ...] = ("torch_tb_profiler.views.core",)

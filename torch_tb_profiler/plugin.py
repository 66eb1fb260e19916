"""The TensorBoard plugin: ``app.ProfilerApp``'s routes under ``/data/plugin/pytorch_profiler/``, and the
plugin's flags. The app itself never imports TensorBoard (``torch-tb-profiler serve`` runs without it);
this module is the only one that does."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorboard.plugins import base_plugin

from torch_tb_profiler.app.profiler import ProfilerApp
from torch_tb_profiler.app.settings import (
    ENV_INTERVAL,
    ENV_PROCESSES,
    ENV_STORAGE_OPTIONS,
    Settings,
    check,
    define_flags,
)
from torch_tb_profiler.app.wsgi import (
    CONTENT_SECURITY_POLICY,
    PLUGIN_NAME,
    STATIC_DIR,
    collect_routes,
    static_app,
    wsgi_app,
)
from torch_tb_profiler.app.wsgi import stop_on_signals as _stop_on_signals

__all__ = [
    "CONTENT_SECURITY_POLICY",
    "ENV_INTERVAL",
    "ENV_PROCESSES",
    "ENV_STORAGE_OPTIONS",
    "PLUGIN_NAME",
    "STATIC_DIR",
    "TorchProfilerLoader",
    "TorchProfilerPlugin",
    "_stop_on_signals",
    "collect_routes",
    "static_app",
    "wsgi_app",
]


def _logdir(context: base_plugin.TBContext) -> str:
    flags = getattr(context, "flags", None)
    logdir = getattr(context, "logdir", None) or getattr(flags, "logdir", "") or ""
    if not logdir and flags is not None and getattr(flags, "logdir_spec", ""):
        logdir = flags.logdir_spec.split(",")[0].split(":", 1)[-1]  # first dir of name:dir pairs
    return logdir


class TorchProfilerPlugin(base_plugin.TBPlugin):
    plugin_name = PLUGIN_NAME

    def __init__(self, context: base_plugin.TBContext) -> None:
        self.app = ProfilerApp(Settings.from_flags(_logdir(context), getattr(context, "flags", None)))
        self.store = self.app.store
        self._routes = self.app.routes
        self._warmer = self.app.warmer

    def get_plugin_apps(self) -> dict[str, Callable[..., Any]]:
        return self.app.apps()

    def is_active(self) -> bool:
        self.store.wait_first_scan(timeout=10.0)
        return bool(self.store.run_names())

    def frontend_metadata(self) -> base_plugin.FrontendMetadata:
        return base_plugin.FrontendMetadata(
            es_module_path="/index.js", tab_name="PyTorch Profiler", disable_reload=True
        )


class TorchProfilerLoader(base_plugin.TBLoader):
    """Adds the plugin's flags to TensorBoard and creates the plugin."""

    def define_flags(self, parser: Any) -> None:
        define_flags(parser.add_argument_group(PLUGIN_NAME))

    def fix_flags(self, flags: Any) -> None:
        try:
            check(Settings.from_flags("", flags))
        except ValueError as e:
            raise base_plugin.FlagsError(str(e)) from None

    def load(self, context: base_plugin.TBContext) -> TorchProfilerPlugin:
        return TorchProfilerPlugin(context)

"""PyTorch Profiler TensorBoard plugin: the maintained successor of torch-tb-profiler."""

from __future__ import annotations

import pandas as _pd

from torch_tb_profiler.trace.version import VERSION as __version__

__all__ = ["__version__", "show"]


def show(
    logdir: str,
    view: str | None = None,
    run: str | None = None,
    worker: str | None = None,
    span: str | None = None,
    height: int = 800,
    port: int = 0,
    proxy_url: str | None = None,
) -> None:
    """Display the profiler's page for ``logdir`` in a notebook cell (Jupyter, VS Code): starts a server
    on 127.0.0.1 in the background the first time, reuses it after (docs/user_guide.md, "Notebooks")."""
    from torch_tb_profiler.serve.notebook import show as show_in_cell

    show_in_cell(
        logdir, view=view, run=run, worker=worker, span=span, height=height, port=port, proxy_url=proxy_url
    )


# pandas 3 stores "str" columns in pyarrow when pyarrow is installed (the [dask] extra and the index bring
# it): our tables are built from interned Python strs, and the pyarrow storage copies each one and makes
# loading ~40% slower (100 MB trace: 1.39 s -> 1.92 s). Keep the Python storage, installed or not.
_pd.options.mode.string_storage = "python"

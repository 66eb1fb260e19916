"""PyTorch Profiler TensorBoard plugin: the maintained successor of torch-tb-profiler."""

import pandas as _pd

__version__ = "0.5.0.dev0"

# pandas 3 stores "str" columns in pyarrow when pyarrow is installed (the [dask] extra and the index bring
# it): our tables are built from interned Python strs, and the pyarrow storage copies each one and makes
# loading ~40% slower (100 MB trace: 1.39 s -> 1.92 s). Keep the Python storage, installed or not.
_pd.options.mode.string_storage = "python"

"""The package's version, at the bottom of the layers so that any module may read it (the persisted
index keys on it; ``torch_tb_profiler.__version__`` re-exports it). pyproject.toml holds the same string
(tests/test_packaging.py)."""

VERSION = "0.5.0.dev0"

"""PyTorch Profiler TensorBoard plugin: the maintained successor of torch-tb-profiler."""

__version__ = "0.5.0.dev0"

"""The Operator and Kernel views: per-operator host and device times, grouped by name or input
shape, with call stacks (``operators``); per-kernel statistics and launch shapes (``kernels``)."""

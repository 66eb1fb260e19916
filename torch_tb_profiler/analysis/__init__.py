"""Every number the product shows, as pure functions ``Profile -> plain data``, one family a package.

- ``core/``: what every family builds on: the memo cache, step boundaries, name codes, the device kind,
  plain JSON data.
- ``device/``: how the device spent each step: the step-time breakdown, utilization, occupancy, Tensor
  Core eligibility.
- ``ops/``: the Operator and Kernel views' tables.
- ``memory/``: the Memory view: curves, peaks, allocations, per-operator statistics.
- ``timeline/``: the Trace view's index and its answers (windows, search, details, counters).
- ``distributed/``: the workers of a run as one job: collectives, overlap, waits, stragglers.
- ``modules/``: the Module view: ``nn.Module`` and Lightning-hook trees per step.
- ``overview/``: the Overview page, recommendations and the CLI's per-profile summary.
- ``diff/``: one profile against another (the Diff view and ``compare``).

Families import downwards only (``core`` imports no other family); the definitions are in
docs/metrics.md.
"""

"""Why the device waits: idle time per stream and step (``idle``), the temporal breakdown
(``temporal``), kernel launch statistics (``launches``), queue length and copy bandwidth over time
(``queues``), frequent kernel sequences (``sequences``) and the critical path of a step
(``critical_path``); ``summary`` gathers them for ``summary --json`` (docs/metrics.md, "Why the device
waits"). Builds on ``core``, ``device`` and the model.
"""

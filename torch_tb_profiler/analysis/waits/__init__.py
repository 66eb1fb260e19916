"""Why the device waits: idle time per stream and step (``idle``), the temporal breakdown
(``temporal``), kernel launch statistics (``launches``), queue length and copy bandwidth over time
(``queues``), frequent kernel sequences (``sequences``) and the critical path of a step
(``critical_path``); ``summary`` gathers them for ``summary --json`` (docs/metrics.md, "Why the device
waits"). Builds on ``core`` and the model only.
"""

from torch_tb_profiler.analysis.waits import launches as _launches  # noqa: F401  registers "launch"
from torch_tb_profiler.analysis.waits import queues as _queues  # noqa: F401  registers "queue"

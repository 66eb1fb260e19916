"""``python -m torch_tb_profiler summary PATH ...`` (same as the ``torch-tb-profiler`` command)."""

import sys

from torch_tb_profiler.cli import main

sys.exit(main())

"""``python -m torch_tb_profiler.cli``: the same as the ``torch-tb-profiler`` command."""

import sys

from torch_tb_profiler.cli.main import main

sys.exit(main())

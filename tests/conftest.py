"""Session-wide settings for the tests."""

import os

# The plugin and the CLI write a persisted index to a per-user cache folder by default (ingest/persist.py).
# Tests neither touch the user's cache nor read an index an earlier run left there: the tests of the index
# turn it on with a folder of their own.
os.environ["TORCH_PROFILER_INDEX_DIR"] = "off"

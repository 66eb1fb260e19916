"""The profiler's web app without TensorBoard: its settings (the ``--profiler_*`` flags), the route table
as WSGI apps and the static frontend. TensorBoard's plugin (``plugin.py``) and the standalone server
(``serve/``) both mount what ``ProfilerApp.apps()`` returns; nothing here imports TensorBoard."""

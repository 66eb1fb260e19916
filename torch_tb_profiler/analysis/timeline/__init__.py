"""The Trace view: the per-profile timeline index of every timed event on a track and row (``index``),
windows of it at a zoom (``windows``), search, details, longest instance and area aggregates
(``queries``), event details with links (``events``), and the per-device utilization counter tracks (``counters``)."""

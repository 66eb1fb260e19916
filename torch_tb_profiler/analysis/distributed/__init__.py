"""The workers of a run as one job: which workers are ranks of one job (``job_split``), each worker's
collective calls (``collectives``) with their message sizes and bandwidths (``comm_bytes``), overlap,
waits and stragglers (``job``), per-rank heatmaps and spreads (``matrix``), unions of many interval
groups at once (``interval_groups``)."""

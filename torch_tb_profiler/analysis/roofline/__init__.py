"""Roofline: how much work each operator and kernel did, and how close it came to the device's limits.

``work`` (FLOPs and bytes of one op call from its shapes and dtypes), ``attribution`` (trace counts
first, then the model; which call holds the work so nothing counts twice; each kernel's share),
``peaks`` (the vendor datasheet table and how a trace's device is matched), ``figures`` (per op and
kernel row: intensity, achieved TFLOP/s and TB/s, percent of the roofline, bound, time lost), ``mfu``
(per step and per profile). Definitions: docs/metrics.md, "Roofline".
"""

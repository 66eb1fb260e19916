"""The whole profile at a glance: the Overview page (``page``), recommendations with their evidence
(``recommendations``), and the headless per-profile summary of ``torch-tb-profiler summary``
(``summary``)."""

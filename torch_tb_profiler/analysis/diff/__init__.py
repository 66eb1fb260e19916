"""One profile against another: step, operator and kernel changes with their noise and the waterfall
(``compare``), ``--fail-on`` rules (``rules``), kernel families: the part of a kernel's name that survives
a recompile (``kernel_family``)."""

"""The headless command line: ``main`` (the parser and dispatch), one module per command (``summary``,
``compare``, ``index``) with its text report beside it (``summary_report``, ``compare_report``), and what
they share (``common``)."""

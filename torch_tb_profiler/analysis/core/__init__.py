"""What every analysis builds on: the per-profile memo cache (``cache``), steps extended to the device
(``steps``), name tests done once per distinct name (``names``), the device kind and its vendor terms (``accelerator``), and plain JSON
data (``plain``)."""

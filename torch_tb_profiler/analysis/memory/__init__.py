"""The Memory view: per-device curves and peaks, allocation/free events, per-operator statistics
(``usage``); bounded series for drawing (``downsample``)."""

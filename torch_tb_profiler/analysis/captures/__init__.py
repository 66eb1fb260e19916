"""Graph capture traces merged into the replay traces that ran their graphs: each replayed kernel matched
to the capture-time launch that recorded it, and the launching ops copied onto the replay (``match``)."""

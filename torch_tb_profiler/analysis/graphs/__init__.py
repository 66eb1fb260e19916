"""CUDA/HIP graph replays: which device work ran in graph replays, how much of it the trace attributes
to operators, and what the Overview says about the rest (``replays``)."""

"""The Module view: ``nn.Module`` and Lightning-hook trees per thread and step (``tree``), backward
nodes through forward-backward flows (``backward``), Lightning hooks per step (``lightning``)."""

"""torch.nn.modules.distance's names (code written against torch's module layout:
``nn.modules.distance.X``); the classes are pf.nn's."""

from .. import CosineSimilarity, PairwiseDistance

__all__ = ["CosineSimilarity", "PairwiseDistance"]

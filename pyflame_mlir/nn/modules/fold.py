"""torch.nn.modules.fold's names (code written against torch's module layout:
``nn.modules.fold.X``); the classes are pf.nn's."""

from .. import Fold, Unfold

__all__ = ["Fold", "Unfold"]

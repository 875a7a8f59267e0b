"""torch.nn.modules.flatten's names (code written against torch's module layout:
``nn.modules.flatten.X``); the classes are pf.nn's."""

from .. import Flatten, Unflatten

__all__ = ["Flatten", "Unflatten"]

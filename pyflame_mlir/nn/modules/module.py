"""torch.nn.modules.module's names (code written against torch's module layout:
``nn.modules.module.X``); the classes are pf.nn's."""

from .. import Module
from ..module import _IncompatibleKeys

__all__ = ["Module", "_IncompatibleKeys"]

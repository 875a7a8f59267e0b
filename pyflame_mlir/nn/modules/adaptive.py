"""torch.nn.modules.adaptive's names (code written against torch's module layout:
``nn.modules.adaptive.X``); the classes are pf.nn's."""

from .. import AdaptiveLogSoftmaxWithLoss
from ..lazy import _ASMoutput

__all__ = ["AdaptiveLogSoftmaxWithLoss", "_ASMoutput"]

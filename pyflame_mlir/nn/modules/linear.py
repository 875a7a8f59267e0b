"""torch.nn.modules.linear's names (code written against torch's module layout:
``nn.modules.linear.X``); the classes are pf.nn's."""

from .. import Bilinear, Identity, LazyLinear, Linear
from ..layers import NonDynamicallyQuantizableLinear

__all__ = ["Bilinear", "Identity", "LazyLinear", "Linear", "NonDynamicallyQuantizableLinear"]

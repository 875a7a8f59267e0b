"""torch.nn.modules.upsampling's names (code written against torch's module layout:
``nn.modules.upsampling.X``); the classes are pf.nn's."""

from .. import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

__all__ = ["Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"]

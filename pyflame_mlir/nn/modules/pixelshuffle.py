"""torch.nn.modules.pixelshuffle's names (code written against torch's module layout:
``nn.modules.pixelshuffle.X``); the classes are pf.nn's."""

from .. import PixelShuffle, PixelUnshuffle

__all__ = ["PixelShuffle", "PixelUnshuffle"]

"""torch.nn.modules.channelshuffle's names (code written against torch's module layout:
``nn.modules.channelshuffle.X``); the classes are pf.nn's."""

from .. import ChannelShuffle

__all__ = ["ChannelShuffle"]

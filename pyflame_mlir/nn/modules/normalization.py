"""torch.nn.modules.normalization's names (code written against torch's module layout:
``nn.modules.normalization.X``); the classes are pf.nn's."""

from .. import CrossMapLRN2d, GroupNorm, LayerNorm, LocalResponseNorm, RMSNorm

__all__ = ["CrossMapLRN2d", "GroupNorm", "LayerNorm", "LocalResponseNorm", "RMSNorm"]

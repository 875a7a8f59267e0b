"""torch.nn.modules.lazy's names (code written against torch's module layout:
``nn.modules.lazy.X``); the classes are pf.nn's."""

from .. import LazyModuleMixin

__all__ = ["LazyModuleMixin"]

"""``pf.nn``: modules with ``torch.nn``'s API (``Module``, ``Parameter``,
containers, ``Linear``, ``Embedding``...), ``pf.nn.init`` and ``pf.nn.utils``."""

from .module import Module, Parameter

__all__ = ["Module", "Parameter"]

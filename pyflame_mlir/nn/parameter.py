"""``pf.nn.parameter``: torch's module path for ``Parameter``
(``from torch.nn.parameter import Parameter``)."""

from .module import Parameter

__all__ = ["Parameter"]

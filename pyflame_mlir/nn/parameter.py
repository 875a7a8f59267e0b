"""``pf.nn.parameter``: torch's module path for ``Parameter``
(``from torch.nn.parameter import Parameter``), ``Buffer`` and the
uninitialized parameters of lazy modules."""

from .module import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

__all__ = ["Buffer", "Parameter", "UninitializedBuffer", "UninitializedParameter"]

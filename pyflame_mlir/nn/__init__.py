"""``pf.nn``: modules with ``torch.nn``'s API (``Module``, ``Parameter``,
containers, ``Linear``, ``Embedding``...), ``pf.nn.init`` and ``pf.nn.utils``."""

from . import init, utils
from .containers import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .linear import Bilinear, Embedding, Identity, Linear
from .module import Module, Parameter

__all__ = ["Bilinear", "Embedding", "Identity", "Linear", "Module", "ModuleDict", "ModuleList",
           "Parameter", "ParameterDict", "ParameterList", "Sequential", "init", "utils"]

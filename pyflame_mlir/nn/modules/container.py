"""torch.nn.modules.container's names (code written against torch's module layout:
``nn.modules.container.X``); the classes are pf.nn's."""

from .. import Container, ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential

__all__ = ["Container", "ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential"]

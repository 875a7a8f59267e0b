"""``pf.nn.utils.parametrize``: torch's parametrizations. ``weight`` becomes
a property computed from ``module.parametrizations.weight.original`` (or
``original0, original1, ...`` when the parametrization's ``right_inverse``
returns several tensors), so the state dict keys are torch's and a module
loads torch's state dict. The module's class is swapped for a generated
subclass holding the property, as torch does."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ...autodiff import no_grad
from ...core import Tensor
from ..containers import ModuleDict, ModuleList
from ..module import Module, Parameter

__all__ = ["ParametrizationList", "cached", "is_parametrized", "register_parametrization",
           "remove_parametrizations", "type_before_parametrizations"]

_cache_enabled = 0
_cache: dict[tuple[int, str], Tensor] = {}


@contextmanager
def cached() -> Iterator[None]:
    """Inside, each parametrized tensor is computed once (torch's ``cached``)."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


def _as_parameter(t: Tensor, requires_grad: bool) -> Parameter:
    return t if isinstance(t, Parameter) else Parameter(t.detach(), requires_grad)


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and the
    unconstrained ``original`` tensor(s) they are applied to."""

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False
                 ) -> None:
        if not modules:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        new: Any = original
        with no_grad():
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    new = module.right_inverse(new)
        requires_grad = original.requires_grad
        if isinstance(new, Tensor):
            self.is_tensor, self.ntensors = True, 1
            if not unsafe and (new.shape != original.shape or new.dtype != original.dtype):
                raise ValueError(f"When `right_inverse` outputs one tensor, it may not change "
                                 f"the shape or dtype: original {list(original.shape)} "
                                 f"{original.dtype.name}, right_inverse "
                                 f"{list(new.shape)} {new.dtype.name}")
            if isinstance(original, Parameter) and new is not original:
                with no_grad():
                    original.copy_(new)  # the same Parameter object: optimizers keep it
                new = original
            if isinstance(original, Parameter):
                self.original = _as_parameter(new, requires_grad)
            else:
                self.register_buffer("original", new.detach())
        else:
            if not isinstance(new, Sequence) or not all(isinstance(t, Tensor) for t in new):
                raise ValueError("'right_inverse' must return a Tensor or a Sequence of "
                                 f"tensors (list, tuple...), got {type(new).__name__}")
            self.is_tensor, self.ntensors = False, len(new)
            for i, t in enumerate(new):
                if isinstance(original, Parameter):
                    self.register_parameter(f"original{i}", Parameter(t.detach(),
                                                                      requires_grad))
                else:
                    self.register_buffer(f"original{i}", t.detach())
        if not unsafe:
            z = self()
            if not isinstance(z, Tensor):
                raise ValueError(f"A parametrization must return a tensor, got "
                                 f"{type(z).__name__}")
            if z.shape != original.shape or z.dtype != original.dtype:
                raise ValueError(f"Registering a parametrization may not change the shape or "
                                 f"dtype of the tensor: {list(original.shape)} "
                                 f"{original.dtype.name} became {list(z.shape)} {z.dtype.name}"
                                 " (pass unsafe=True to allow it)")

    def right_inverse(self, value: Tensor) -> None:
        """``module.weight = value``: the originals set so the parametrized
        tensor is ``value`` (through each ``right_inverse``)."""
        with no_grad():
            for module in reversed(list(self)):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not "
                                       "implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                self.original.copy_(value)
            else:
                for i, t in enumerate(value):
                    getattr(self, f"original{i}").copy_(t)

    def forward(self) -> Tensor:
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _get(module: Module, name: str) -> Tensor:
    plist = module.parametrizations[name]
    if not _cache_enabled:
        return plist()
    key = (id(module), name)
    if key not in _cache:
        _cache[key] = plist()
    return _cache[key]


def _inject_property(module: Module, name: str) -> None:
    cls = type(module)
    if not getattr(cls, "_is_parametrized_class", False):
        cls = type(f"Parametrized{cls.__name__}", (cls,), {"_is_parametrized_class": True,
                                                             "_original_class": cls})
        module.__class__ = cls

    def get(self: Module) -> Tensor:
        return _get(self, name)

    def set_(self: Module, value: Tensor) -> None:
        self.parametrizations[name].right_inverse(value)

    setattr(cls, name, property(get, set_))


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    plists = module.__dict__.get("_modules", {}).get("parametrizations")
    if plists is None or not isinstance(plists, ModuleDict):
        return False
    return len(plists) > 0 if tensor_name is None else tensor_name in plists


def type_before_parametrizations(module: Module) -> type:
    return getattr(type(module), "_original_class", type(module))


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Make ``module.<tensor_name>`` the output of ``parametrization``
    applied to an unconstrained original (a parameter if the tensor was one)."""
    if is_parametrized(module, tensor_name):
        plist = module.parametrizations[tensor_name]
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, Tensor) or x.shape != y.shape or x.dtype != y.dtype:
                raise ValueError(f"Registering a parametrization may not change the shape or "
                                 f"dtype of the tensor {tensor_name!r} (pass unsafe=True)")
        plist.append(parametrization)
        plist.unsafe |= unsafe
        return module
    if tensor_name not in module._parameters and tensor_name not in module._buffers:  # noqa: SLF001
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    original = getattr(module, tensor_name)
    plist = ParametrizationList([parametrization], original, unsafe=unsafe)
    delattr(module, tensor_name)
    if not is_parametrized(module):
        module.parametrizations = ModuleDict()
    module.parametrizations[tensor_name] = plist
    _inject_property(module, tensor_name)
    return module


def remove_parametrizations(module: Module, tensor_name: str,
                            leave_parametrized: bool = True) -> Module:
    """Undo ``register_parametrization``: the tensor becomes a plain
    parameter again, holding the parametrized value (``leave_parametrized``)
    or the original."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if leave_parametrized:
        with no_grad():
            value = getattr(module, tensor_name).detach()
    elif plist.is_tensor:
        value = plist.original.detach()
    else:
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                         "that is parametrized in terms of a sequence of tensors.")
    requires_grad = (plist.original if plist.is_tensor else plist.original0).requires_grad
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    module.register_parameter(tensor_name, Parameter(value, requires_grad))
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = type_before_parametrizations(module)
    return module

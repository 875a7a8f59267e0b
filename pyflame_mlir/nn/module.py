"""``pf.nn.Module`` and ``pf.nn.Parameter`` with ``torch.nn``'s API and semantics.

A ``Parameter`` is a ``Tensor`` subclass (``isinstance(p, nn.Parameter)``) that
is an autograd leaf requiring grad. In-place updates under ``no_grad``
(``p -= lr * p.grad``, ``p.mul_(...)``) rebind the same object to a new lazy
promise (``inplace.py``), so an optimizer step records instead of computing,
and a module keeps seeing the updated parameter.

A ``Module`` registers the ``Parameter``s, sub-``Module``s and buffers assigned
to its attributes, exactly as ``torch.nn.Module`` does: assigning one
Parameter to two modules (``head.weight = emb.weight``) ties them, and
``named_parameters`` lists it once.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from ..autodiff import is_grad_enabled, no_grad
from ..autograd import Function
from ..core import AutogradMeta, Tensor, detach, realize, rebind, requires_grad, snapshot
from ..creation import tensor as _host_tensor
from ..creation import zeros
from ..dialects.dtypes import DType, bfloat16, default_float, float16, float32, float64
from ..dialects.dtypes import dtype as to_dtype
from ..ops import convert
from .sparse_grad import clear_rows

__all__ = ["Buffer", "Module", "Parameter", "RemovableHandle", "UninitializedBuffer",
           "UninitializedParameter"]


# ---- Parameter ----

class Parameter(Tensor):
    """``Parameter(data, requires_grad=True)``: a leaf tensor holding ``data``'s
    current value (or promise). Ops on it return plain ``Tensor``s."""

    __slots__ = ()

    def __new__(cls, data: Any = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            data = Tensor._leaf(np.empty((0,), dtype=np.float32))
        elif not isinstance(data, Tensor):
            data = _host_tensor(data)
        p = object.__new__(cls)
        _take_state(p, data)
        p._ag = p._mut = None
        if requires_grad:
            if not data.dtype.is_floating_point:
                raise RuntimeError("Only Tensors of floating point and complex dtype can "
                                   f"require gradients (got {data.dtype.name})")
            # a leaf whatever made ``data``: backward stops here
            p._ag = AutogradMeta()
            p._ag.requires_grad = True
        return p

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __reduce_ex__(self, _protocol: Any) -> Any:
        """``pickle``: a Parameter of the (computed) value, as torch's."""
        return (Parameter, (detach(self), self.requires_grad))

    def __deepcopy__(self, memo: dict) -> Parameter:
        """``copy.deepcopy(model)``: a new leaf with the same value (or promise:
        recorded ops never change, so sharing one is a copy)."""
        out = Parameter(detach(self), self.requires_grad)
        memo[id(self)] = out
        if self.grad is not None:  # torch's deepcopy keeps .grad
            out.grad = detach(self.grad)
        return out


_UNINITIALIZED = ("Can't access the shape of an uninitialized parameter or buffer. This error "
                  "usually happens in `load_state_dict` when trying to load an uninitialized "
                  "parameter into an initialized one. Call `forward` to initialize the "
                  "parameters before accessing their attributes.")


class _Uninitialized:
    """What torch's ``UninitializedTensorMixin`` gives: no shape until
    ``materialize(shape)``, which gives the tensor (the same object, so an
    optimizer holding it sees it) zeros of that shape and the class it
    becomes (``cls_to_become``)."""

    __slots__ = ()
    cls_to_become: type = Tensor

    @property
    def shape(self) -> Any:
        raise ValueError(_UNINITIALIZED)

    @shape.setter
    def shape(self, value: Any) -> None:
        Tensor.shape.__set__(self, value)  # type: ignore[attr-defined]

    def size(self, *args: Any) -> Any:
        raise ValueError(_UNINITIALIZED)

    def numel(self) -> int:
        raise ValueError(_UNINITIALIZED)

    @property
    def ndim(self) -> int:
        raise ValueError(_UNINITIALIZED)

    def dim(self) -> int:
        raise ValueError(_UNINITIALIZED)

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        del device
        dt = to_dtype(dtype) if dtype is not None else self.dtype
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        value = Tensor._leaf(np.zeros(shape, dtype=dt.np))
        _take_state(self, value)  # type: ignore[arg-type]
        self.__class__ = self.cls_to_become

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    __str__ = __repr__

    def __reduce_ex__(self, _protocol: Any) -> Any:
        return (type(self), (self.requires_grad, None, self.dtype))

    def __deepcopy__(self, memo: dict) -> Any:
        out = type(self)(self.requires_grad, None, self.dtype)
        memo[id(self)] = out
        return out


class UninitializedParameter(_Uninitialized, Parameter):
    """``torch.nn.UninitializedParameter``: the parameter of a lazy module
    before its first forward (or a state dict) gives it a shape."""

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device: Any = None, dtype: Any = None
                ) -> UninitializedParameter:
        del device
        dt = to_dtype(dtype) if dtype is not None else default_float()
        return Parameter.__new__(cls, Tensor._leaf(np.zeros((0,), dtype=dt.np)),
                                 requires_grad)


class UninitializedBuffer(_Uninitialized, Tensor):
    """``torch.nn.UninitializedBuffer``: a lazy module's buffer before it has a shape."""

    __slots__ = ()

    def __new__(cls, requires_grad: bool = False, device: Any = None, dtype: Any = None
                ) -> UninitializedBuffer:
        del device
        dt = to_dtype(dtype) if dtype is not None else default_float()
        t = object.__new__(cls)
        _take_state(t, Tensor._leaf(np.zeros((0,), dtype=dt.np)))
        t._ag = t._mut = None
        if requires_grad:
            t.requires_grad_(True)
        return t


def is_uninitialized(t: Any) -> bool:
    return isinstance(t, _Uninitialized)


class Buffer(Tensor):
    """``torch.nn.Buffer(data, persistent=True)``: assigned to a module's
    attribute, it registers ``data`` as a buffer (persistent or not)."""

    __slots__ = ("persistent",)

    def __new__(cls, data: Any = None, *, persistent: bool = True) -> Buffer:
        if data is None:
            data = Tensor._leaf(np.empty((0,), dtype=np.float32))
        elif not isinstance(data, Tensor):
            data = _host_tensor(data)
        b = object.__new__(cls)
        _take_state(b, data)
        b._ag = b._mut = None
        b.persistent = persistent
        if data.requires_grad:
            b.requires_grad_(True)
        return b


def _take_state(dst: Tensor, src: Tensor) -> None:
    dst.shape, dst.dtype = src.shape, src.dtype
    dst._node, dst._index, dst._value, dst._hist = src._node, src._index, src._value, None
    dst._view = dst._cell = None  # (core.Tensor's slots: a new tensor is no view, unread)


def set_data(t: Tensor, value: Any) -> None:
    """``t.data = value``: ``t`` (the same object, its autograd flags and
    ``.grad`` kept) holds ``value``'s state from now on (shape and dtype may
    change, as in PyTorch). Ops recorded before read the old state."""
    if not isinstance(value, Tensor):
        raise TypeError(f"data must be a Tensor, got {type(value).__name__}")
    if value._node is not None:
        # computed now, as in PyTorch: a lazy value may read ``t``'s current
        # state, which a later in-place update would no longer keep alive
        realize([value])
    old, start = snapshot(t)
    rebind(t, old, start, detach(value))
    t.shape, t.dtype = value.shape, value.dtype
    t._hist = None


# ---- hooks ----

class RemovableHandle:
    """What ``register_*_hook`` returns: ``remove()`` unregisters the hook
    (also as a context manager)."""

    _ids = itertools.count()

    def __init__(self, *tables: dict) -> None:
        self.id = next(RemovableHandle._ids)
        self._tables = tables

    def remove(self) -> None:
        for table in self._tables:
            table.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(s: str, spaces: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join(" " * spaces + line for line in lines)


def _typename(v: Any) -> str:
    if isinstance(v, Tensor):
        return "pyflame_mlir.Tensor"
    t = type(v)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _torch_size(shape: tuple[int, ...]) -> str:
    return f"torch.Size({list(shape)})"


def _host_value(v: Any) -> Tensor:
    """A state-dict value as one of our tensors: ours as is; a torch tensor or
    numpy array copied (never pickled, never sharing the caller's memory)."""
    if isinstance(v, Tensor):
        return v
    if hasattr(v, "detach") and hasattr(v, "cpu"):  # a torch.Tensor, without importing torch
        t = v.detach().cpu()
        if str(t.dtype) == "torch.bfloat16":
            return Tensor._leaf(t.float().numpy().astype(bfloat16.np))
        return Tensor._leaf(np.array(t.numpy(), copy=True))
    if isinstance(v, np.ndarray | np.generic | int | float | bool | list):
        return Tensor._leaf(np.array(v, copy=True))
    raise TypeError(f"a state_dict value must be a tensor or an array, got {_typename(v)}")


# ---- Module ----

class Module:
    """Base class of all modules: subclasses set parameters, buffers and
    submodules as attributes in ``__init__`` and define ``forward``."""

    training: bool

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments")
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", {})
        setattr_(self, "_buffers", {})
        setattr_(self, "_non_persistent_buffers_set", set())
        setattr_(self, "_modules", {})
        setattr_(self, "_forward_hooks", OrderedDict())
        setattr_(self, "_forward_hooks_with_kwargs", {})
        setattr_(self, "_forward_hooks_always_called", {})
        setattr_(self, "_forward_pre_hooks", OrderedDict())
        setattr_(self, "_forward_pre_hooks_with_kwargs", {})
        setattr_(self, "_backward_hooks", OrderedDict())
        setattr_(self, "_backward_pre_hooks", OrderedDict())

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  '"forward" function')

    # ---- registration ----
    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True
                        ) -> None:
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str) -> Module:
        if target == "":
            return self
        mod: Module = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def get_parameter(self, target: str) -> Parameter:
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if name not in mod._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return mod._buffers[name]

    # ---- attributes ----
    def __getattr__(self, name: str) -> Any:
        # only called when normal lookup fails: registered members live in the tables
        d = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            members = d.get(table)
            if members is not None and name in members:
                return members[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        def remove_from(*tables: Any) -> None:
            for t in tables:
                if name in t:
                    if isinstance(t, dict):
                        del t[name]
                    else:
                        t.discard(name)

        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Buffer):  # torch.nn.Buffer: registered as a (plain) buffer
            if d.get("_buffers") is None:
                raise AttributeError("cannot assign buffer before Module.__init__() call")
            remove_from(d, self._parameters, self._modules)
            plain = detach(value)
            if value.requires_grad:
                plain.requires_grad_(True)
            self.register_buffer(name, plain, value.persistent)
            return
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        else:
            modules = d.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(d, self._parameters, self._buffers,
                            self._non_persistent_buffers_set)
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(f"cannot assign '{_typename(value)}' as child module "
                                    f"'{name}' (torch.nn.Module or None expected)")
                modules[name] = value
            else:
                buffers = d.get("_buffers")
                if buffers is not None and name in buffers:
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(f"cannot assign '{_typename(value)}' as buffer "
                                        f"'{name}' (torch.Tensor or None expected)")
                    buffers[name] = value
                else:
                    object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        attrs = set(dir(type(self))) | set(self.__dict__)
        attrs |= set(self._parameters) | set(self._modules) | set(self._buffers)
        return sorted(a for a in attrs if not a[:1].isdigit())

    # ---- traversal ----
    def _named_members(self, get_members: Callable[[Module], Any], prefix: str = "",
                       recurse: bool = True, remove_duplicate: bool = True
                       ) -> Iterator[tuple[str, Any]]:
        memo: set[int] = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or id(v) in memo:
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield (module_prefix + ("." if module_prefix else "") + k, v)

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                   remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                   remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_children(self) -> Iterator[tuple[str, Module]]:
        memo: set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in memo:
                memo.add(id(module))
                yield name, module

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        if memo is None:
            memo = set()
        if id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    def apply(self, fn: Callable[[Module], None]) -> Module:
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ---- modes and gradients ----
    def train(self, mode: bool = True) -> Module:
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:  # noqa: A003  (torch's name)
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.parameters():
            zero_grad_of(p, set_to_none)

    # ---- dtype conversion ----
    def _apply(self, fn: Callable[[Tensor], Tensor]) -> Module:
        """Replace every parameter's and buffer's value by ``fn`` of it, in place:
        the Parameter objects stay the same (optimizers keep working)."""
        for module in self.children():
            module._apply(fn)
        with no_grad():
            params = [p for p in self._parameters.values() if p is not None]
            new_params = [fn(p) for p in params]
            new_grads = [None if p.grad is None else fn(p.grad) for p in params]
            buffers = {k: fn(b) for k, b in self._buffers.items() if b is not None}
            realize([t for t in [*new_params, *new_grads, *buffers.values()]
                     if t is not None and t._node is not None])  # one graph
            for p, new, g in zip(params, new_params, new_grads):
                if new is p:  # (unchanged: an uninitialized parameter of a lazy module)
                    continue
                # torch's ``param.data = fn(param)``: the version stays, a ``p.data``
                # taken before keeps the old value (and dtype)
                p.data = new
                if g is not None:
                    p.grad = g
            self._buffers.update(buffers)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(tensor)``:
        floating parameters and buffers take the dtype; the device must be the CPU
        (the backend, not the device, chooses where graphs run)."""
        dtype: DType | None = None
        device = kwargs.pop("device", None)
        if "dtype" in kwargs:
            dtype = to_dtype(kwargs.pop("dtype"))
        kwargs.pop("non_blocking", None)
        kwargs.pop("memory_format", None)  # (no strides here: every format is the same values)
        if kwargs:
            raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
        for a in args:
            if isinstance(a, Tensor):
                dtype = a.dtype
            elif isinstance(a, str) or type(a).__name__ == "device":
                device = a
            elif isinstance(a, bool):  # non_blocking
                continue
            else:
                dtype = to_dtype(a)
        if device is not None and str(device).split(":")[0] != "cpu":
            raise RuntimeError(f"to(): device {str(device)!r} is not supported (only 'cpu'); "
                               "choose where graphs run with pf.set_backend")
        if dtype is not None:
            if not dtype.is_floating_point:
                raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got "
                                f"desired dtype={dtype.name}")
            self._cast_floating(dtype)
        return self

    def _cast_floating(self, dt: DType) -> Module:
        def cast(t: Tensor) -> Tensor:
            if is_uninitialized(t):  # a lazy module's: it will materialize in ``dt``
                if t.dtype.is_floating_point:
                    _take_state(t, Tensor._leaf(np.zeros((0,), dtype=dt.np)))
                return t
            return convert(t, dt) if t.dtype.is_floating_point and t.dtype is not dt else t
        return self._apply(cast)

    def float(self) -> Module:  # noqa: A003
        return self._cast_floating(float32)

    def double(self) -> Module:
        return self._cast_floating(float64)

    def half(self) -> Module:
        return self._cast_floating(float16)

    def bfloat16(self) -> Module:
        return self._cast_floating(bfloat16)

    def cpu(self) -> Module:
        return self

    def cuda(self, device: Any = None) -> Module:
        raise RuntimeError("Module.cuda(): pyflame has no CUDA device (pf.cuda.is_available() "
                           "is False); GPUs run through the MAX backend: pf.set_backend('max')")

    # ---- calling ----
    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        handle = RemovableHandle(self._forward_pre_hooks, self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                              with_kwargs: bool = False, always_call: bool = False
                              ) -> RemovableHandle:
        handle = RemovableHandle(self._forward_hooks, self._forward_hooks_with_kwargs,
                                 self._forward_hooks_always_called)
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook: Callable[..., Any], *, prepend: bool = False
                                    ) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` once the gradients of the
        module's positional tensor inputs are computed (None where an input
        does not require grad); a tuple it returns replaces ``grad_input``."""
        return self._add_backward_hook(self._backward_hooks, hook, prepend)

    def register_full_backward_pre_hook(self, hook: Callable[..., Any], *,
                                        prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_output)`` when the gradients of the module's
        outputs are known; a tuple it returns replaces ``grad_output``."""
        return self._add_backward_hook(self._backward_pre_hooks, hook, prepend)

    def register_backward_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        raise RuntimeError(
            "register_backward_hook is deprecated in PyTorch: its grad_input is that of the "
            "module's last op, not of the module's inputs. Use register_full_backward_hook "
            "(module-level gradients, PyTorch's recommended replacement)")

    def _add_backward_hook(self, table: OrderedDict, hook: Callable[..., Any],
                           prepend: bool) -> RemovableHandle:
        handle = RemovableHandle(table)
        table[handle.id] = hook
        if prepend:
            table.move_to_end(handle.id, last=False)
        return handle

    def __setstate__(self, state: dict) -> None:
        """Unpickling: a module pickled before backward hooks existed gets the tables."""
        self.__dict__.update(state)
        self.__dict__.setdefault("_backward_hooks", OrderedDict())
        self.__dict__.setdefault("_backward_pre_hooks", OrderedDict())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._backward_hooks or self._backward_pre_hooks:
            return _call_with_backward_hooks(self, args, kwargs)
        if not self._forward_pre_hooks and not self._forward_hooks:
            return self.forward(*args, **kwargs)
        return self._call_with_forward_hooks(args, kwargs)

    def _call_with_forward_hooks(self, args: tuple, kwargs: dict,
                                 wrap_inputs: Callable[[tuple], tuple] | None = None) -> Any:
        for hid, hook in list(self._forward_pre_hooks.items()):
            if hid in self._forward_pre_hooks_with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {result}.")
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        if wrap_inputs is not None:  # after the pre-hooks, as PyTorch's backward hooks
            args = wrap_inputs(args)
        called: set[int] = set()
        try:
            output = self.forward(*args, **kwargs)
            for hid, hook in list(self._forward_hooks.items()):
                called.add(hid)
                if hid in self._forward_hooks_with_kwargs:
                    result = hook(self, args, kwargs, output)
                else:
                    result = hook(self, args, output)
                if result is not None:
                    output = result
        except Exception:
            for hid, hook in list(self._forward_hooks.items()):
                if hid in self._forward_hooks_always_called and hid not in called:
                    try:
                        if hid in self._forward_hooks_with_kwargs:
                            hook(self, args, kwargs, None)
                        else:
                            hook(self, args, None)
                    except Exception:  # noqa: BLE001, S110  (torch: the first error wins)
                        pass
            raise
        return output

    # ---- state dicts ----
    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars or is_uninitialized(p) \
                    else detach(p)
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars or is_uninitialized(b) \
                    else detach(b)

    def state_dict(self, *, destination: dict | None = None, prefix: str = "",
                   keep_vars: bool = False) -> OrderedDict[str, Tensor]:
        """Parameters and persistent buffers by dotted name, in registration
        order; detached unless ``keep_vars``. A tied parameter appears under
        each of its names (as in PyTorch)."""
        if destination is None:
            destination = OrderedDict()
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        return destination

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy values into the parameters and buffers (their objects stay the
        same unless ``assign``). Raises PyTorch's error text for missing or
        unexpected keys (``strict``) and for shape mismatches."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict and not self._optional_key(k)]
        unexpected = [k for k in state_dict if k not in own]
        errors: list[str] = []
        updates: list[tuple[str, Tensor]] = []
        for key, current in own.items():
            if key not in state_dict:
                continue
            value = _host_value(state_dict[key])
            if is_uninitialized(current):  # a lazy module's: the checkpoint gives the shape
                with no_grad():
                    current.materialize(value.shape)
            if value.shape != current.shape:
                errors.append(f"size mismatch for {key}: copying a param with shape "
                              f"{_torch_size(value.shape)} from checkpoint, the shape in "
                              f"current model is {_torch_size(current.shape)}.")
                continue
            updates.append((key, value))
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        for key, value in updates:
            self._load_one(key, value, assign)
        return _IncompatibleKeys(missing, unexpected)

    def _optional_key(self, key: str) -> bool:
        """A norm layer's ``num_batches_tracked``: checkpoints from before it
        existed lack it, and PyTorch loads them strictly (the count stays)."""
        module_path, _, name = key.rpartition(".")
        return name == "num_batches_tracked" and \
            hasattr(self.get_submodule(module_path), "track_running_stats")

    def _load_one(self, key: str, value: Tensor, assign: bool) -> None:
        module_path, _, name = key.rpartition(".")
        mod = self.get_submodule(module_path)
        with no_grad():
            if name in mod._parameters:
                p = mod._parameters[name]
                if assign:
                    setattr(mod, name, Parameter(detach(value), p.requires_grad))
                else:
                    p.copy_(value)  # casts to the parameter's dtype, as copy_ does
            else:
                b = mod._buffers[name]
                mod._buffers[name] = detach(value) if assign else convert(value, b.dtype) \
                    if value.dtype is not b.dtype else detach(value)

    # ---- printing ----
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(module), 2)
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


def zero_grad_of(p: Tensor, set_to_none: bool = True) -> None:
    """``p.grad = None``, or, when not ``set_to_none``, the ``.grad`` tensor
    zeroed in place as PyTorch's (a reference to it sees the zeros; one with
    history, from ``create_graph``, is replaced by zeros without it)."""
    g = p.grad
    if g is None:
        return
    clear_rows(p)
    if set_to_none:
        p.grad = None
    elif g.requires_grad:
        with no_grad():
            p.grad = Tensor._leaf(np.zeros(g.shape, dtype=g.dtype.np))
    else:
        with no_grad():  # host zeros: a leaf, no op to run (as before, but in place)
            g.copy_(Tensor._leaf(np.zeros(g.shape, dtype=g.dtype.np)))


# ---- module backward hooks (PyTorch's BackwardHook) ----

class _BackwardHookCall:
    """One call of a module with backward hooks: the gradients of its outputs,
    kept until those of its inputs are known."""

    def __init__(self, module: Module, n_inputs: int, inputs_require_grad: bool):
        self.module = module
        self.n_inputs = n_inputs
        self.inputs_require_grad = inputs_require_grad
        self.grad_output: tuple | None = None

    def outputs_done(self, grads: tuple) -> tuple:
        m = self.module
        for hook in list(m._backward_pre_hooks.values()):
            new = hook(m, grads)
            if new is not None:
                grads = _checked_grads("backward pre-hook", new, grads)
        self.grad_output = grads
        if not self.inputs_require_grad:  # no input gradient will come: call them now
            self.inputs_done((None,) * self.n_inputs)
        return grads

    def inputs_done(self, grads: tuple) -> tuple:
        m = self.module
        grad_output = self.grad_output if self.grad_output is not None else (None,)
        for hook in list(m._backward_hooks.values()):
            new = hook(m, grads, grad_output)
            if new is not None:
                grads = _checked_grads("backward hook", new, grads)
        return grads


def _checked_grads(what: str, new: Any, old: tuple) -> tuple:
    new = tuple(new) if isinstance(new, tuple | list) else (new,)
    if len(new) != len(old):
        raise RuntimeError(f"a module {what} returned {len(new)} gradients, expected "
                           f"{len(old)}")
    for n, o in zip(new, old):
        if n is not None and not isinstance(n, Tensor):
            raise TypeError(f"a module {what} returned a {type(n).__name__}, expected a "
                            "tensor or None")
        if n is not None and o is not None and n.shape != o.shape:
            raise RuntimeError(f"a module {what} returned a gradient of shape "
                               f"{list(n.shape)}, expected {list(o.shape)}")
    return new


class _HookIdentity(Function):
    """The module's tensors passed through unchanged; the backward of the
    subclass hands their gradients to the hooks."""

    @staticmethod
    def forward(ctx: Any, call: _BackwardHookCall, *xs: Tensor) -> tuple:
        ctx.call = call
        ctx.specs = [(x.shape, x.dtype) for x in xs]
        ctx.set_materialize_grads(False)
        return xs


class _HookOutputs(_HookIdentity):
    @staticmethod
    def backward(ctx: Any, *grads: Tensor | None) -> tuple:
        grads = tuple(g if need else None for g, need in zip(grads, ctx.needs_input_grad[1:]))
        return (None, *ctx.call.outputs_done(grads))


class _HookInputs(_HookIdentity):
    @staticmethod
    def backward(ctx: Any, *grads: Tensor | None) -> tuple:
        # as PyTorch: an input that does not require grad gets zeros (None if not float);
        # one that does and got no gradient gets zeros too
        grads = tuple((g if g is not None else zeros(list(shape), dtype=dtype)) if need
                      else zeros(list(shape), dtype=dtype) if dtype.is_floating_point
                      else None
                      for g, need, (shape, dtype) in zip(grads, ctx.needs_input_grad[1:],
                                                          ctx.specs))
        return (None, *ctx.call.inputs_done(grads))


def _call_with_backward_hooks(module: Module, args: tuple, kwargs: dict) -> Any:
    """``module(*args, **kwargs)`` with identity Functions around its positional
    tensor inputs and its tensor outputs, whose backward calls the hooks."""
    if not is_grad_enabled():
        return module._call_with_forward_hooks(args, kwargs)
    call: list[_BackwardHookCall] = []

    def wrap_inputs(args: tuple) -> tuple:
        at = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        rg = any(requires_grad(args[i]) for i in at)
        call.append(_BackwardHookCall(module, len(at), rg))
        if not rg:
            return args
        new = list(args)
        for i, t in zip(at, _HookInputs.apply(call[0], *[args[i] for i in at])):
            new[i] = t
        return tuple(new)

    out = module._call_with_forward_hooks(args, kwargs, wrap_inputs)
    outs = (out,) if isinstance(out, Tensor) else out
    if not isinstance(outs, tuple | list) or not all(isinstance(o, Tensor) for o in outs):
        raise RuntimeError(f"{type(module).__name__}: a module with full backward hooks must "
                           f"return a tensor or a tuple of tensors, got {type(out).__name__}")
    if not any(requires_grad(o) for o in outs):
        return out
    wrapped = _HookOutputs.apply(call[0], *outs)
    if isinstance(out, Tensor):
        return wrapped[0]
    return type(out)(wrapped) if isinstance(out, list) else tuple(wrapped)

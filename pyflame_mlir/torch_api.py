"""torch's utility names a script calls outside the op API: facts about
dtypes (``finfo``, ``iinfo``), the default float dtype, and type tests."""

from __future__ import annotations

import functools
import inspect
import warnings
from typing import Any

import ml_dtypes
import numpy as np

from .core import GRAD_MODE, Tensor
from .dialects.dtypes import TORCH_TYPE_NAMES, DType, can_cast, default_float, set_default_float
from .dialects.dtypes import dtype as to_dtype

__all__ = ["finfo", "get_default_dtype", "iinfo", "is_tensor", "numel", "set_default_dtype"]


def set_default_dtype(d: Any) -> None:
    """The dtype Python floats, ``randn``/``zeros``/``arange`` with float
    bounds and new layers' parameters get (float32 unless set), as torch's."""
    set_default_float(to_dtype(d))


def get_default_dtype() -> DType:
    return default_float()


class finfo:  # noqa: N801  (torch's name)
    """Machine limits of a floating dtype (the default dtype when omitted)."""

    def __init__(self, type: Any = None) -> None:  # noqa: A002  (torch's argument name)
        d = default_float() if type is None else to_dtype(type)
        if not d.is_floating_point:
            raise TypeError(f"finfo: {d.name} is not a floating point dtype (use iinfo)")
        info = ml_dtypes.finfo(d.np) if d.name == "bfloat16" else np.finfo(d.np)
        self.dtype = d.name
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)  # torch: a Python float, exactly

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution}, min={self.min}, max={self.max}, "
                f"eps={self.eps}, smallest_normal={self.smallest_normal}, tiny={self.tiny}, "
                f"dtype={self.dtype})")


class iinfo:  # noqa: N801  (torch's name)
    """Limits of an integer (or bool) dtype."""

    def __init__(self, type: Any) -> None:  # noqa: A002  (torch's argument name)
        d = to_dtype(type)
        if d.is_floating_point:
            raise TypeError(f"iinfo: {d.name} is a floating point dtype (use finfo)")
        if d.name == "bool":
            self.bits, self.min, self.max = 8, 0, 1
        else:
            info = np.iinfo(d.np)
            self.bits, self.min, self.max = int(info.bits), int(info.min), int(info.max)
        self.dtype = d.name

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


def is_tensor(obj: Any) -> bool:
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:  # noqa: A002
    if not isinstance(input, Tensor):
        raise TypeError(f"numel(): argument 'input' must be Tensor, not {type(input).__name__}")
    return input.numel()


# ---- numpy's argument names (torch's parser takes axis= and keepdims=) and out= ----

def _requires_grad(args: Any) -> bool:
    """Whether a tensor among ``args`` (lists and tuples looked into, as
    ``cat``'s) requires grad."""
    for a in args:
        if isinstance(a, Tensor):
            if a.requires_grad:
                return True
        elif isinstance(a, list | tuple) and _requires_grad(a):
            return True
    return False


def _write_out(name: str, result: Any, out: Any) -> Any:
    """torch's ``out=``: ``result`` cast (without a change of kind) and copied
    into ``out`` in place, ``out`` resized first when its shape differs (with
    torch's deprecation warning unless it was empty); returns ``out``."""
    if isinstance(out, list | tuple):
        if not isinstance(result, tuple) or len(result) != len(out):
            n = len(result) if isinstance(result, tuple) else 1
            raise TypeError(f"{name}(): out= takes {n} tensor(s) here, got a "
                            f"{type(out).__name__} of {len(out)}")
        outs = [_write_out(name, r, o) for r, o in zip(result, out)]
        return type(result)(*outs) if hasattr(result, "_fields") else tuple(outs)
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if not isinstance(result, Tensor):
        raise TypeError(f"{name}() got an unexpected keyword argument 'out'")
    if result.dtype is not out.dtype and not can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"{name}(): result type {TORCH_TYPE_NAMES.get(result.dtype)} can't be "
                           f"cast to the desired output type {TORCH_TYPE_NAMES.get(out.dtype)}")
    if tuple(out.shape) != tuple(result.shape):
        if out.numel():
            warnings.warn(f"An output with one or more elements was resized since it had shape "
                          f"{list(out.shape)}, which does not match the required output shape "
                          f"{list(result.shape)}. This behavior is deprecated, and in a future "
                          "PyTorch release outputs will not be resized unless they have zero "
                          "elements. You can explicitly reuse an out tensor t by resizing it, "
                          "inplace, to zero elements with t.resize_(0).", UserWarning,
                          stacklevel=4)
        out.resize_(result.shape)
    out.copy_(result)
    return out


# the modules whose functions are torch's ops (they take ``out=``); graph, tracing,
# tree and driver utilities in the same namespace do not
_OP_MODULES = frozenset(f"pyflame_mlir.{m}" for m in (
    "ops", "creation", "reductions", "indexing", "linalg", "special", "special_cephes", "fft",
    "math_rules", "composites", "composites2", "composites3", "torch_compat", "torch_compat2",
    "nn.functional"))


_FACTORIES = frozenset(("arange", "empty", "eye", "full", "linspace", "logspace", "normal", "ones",
                        "rand", "randint", "randn", "randperm", "zeros"))
_ACCUMULATING = frozenset(("sum", "prod", "cumsum", "cumprod", "nansum", "mean", "nanmean"))


def accept_torch_names(fn: Any) -> Any:
    """``fn`` also taking torch's ``out=`` (when it has no ``out`` parameter
    of its own), and ``axis=`` for ``dim=`` and ``keepdims=`` for ``keepdim=``
    (when it has ``dim``/``keepdim`` but not the numpy names), as torch's
    functions do (JAX and numpy code writes ``x.sum(axis=0, keepdims=True)``;
    torch's tutorials ``torch.matmul(a, b, out=c)``). ``out=`` computes the
    result, then writes it into ``out`` in place; as torch, not while an
    argument requires grad. ``fn`` itself when it needs neither."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn
    numpy_names = ("dim" in params or "keepdim" in params) and "axis" not in params \
        and "keepdims" not in params
    out_arg = "out" not in params and getattr(inspect.unwrap(fn), "__module__", None) in _OP_MODULES
    if not (numpy_names or out_arg):
        return fn
    # torch's factories take their dtype from out= (torch.zeros(2, out=int_tensor))
    factory = out_arg and "dtype" in params and fn.__name__ in _FACTORIES \
        and inspect.unwrap(fn).__module__ == "pyflame_mlir.creation"
    # and its sums, products and means accumulate in a floating out's dtype
    accumulate = out_arg and "dtype" in params and fn.__name__ in _ACCUMULATING

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        if not kwargs:
            return fn(*args)
        if numpy_names and ("axis" in kwargs or "keepdims" in kwargs):
            for numpy_name, name in (("axis", "dim"), ("keepdims", "keepdim")):
                if numpy_name in kwargs:
                    if name in kwargs:
                        raise TypeError(f"{fn.__name__}() got both {name}= and its alias "
                                        f"{numpy_name}=")
                    kwargs[name] = kwargs.pop(numpy_name)
        if out_arg and "out" in kwargs:
            out = kwargs.pop("out")
            if out is None:
                return fn(*args, **kwargs)
            return call_with_out(fn, args, kwargs, out, dtype_from_out=factory or (
                accumulate and isinstance(out, Tensor) and out.dtype.is_floating_point))
        return fn(*args, **kwargs)
    return call


def call_with_out(fn: Any, args: tuple, kwargs: dict[str, Any], out: Any,
                  dtype_from_out: bool = False) -> Any:
    """torch's ``out=`` (not None) on a call of ``fn``: refused while an argument
    requires grad (as torch), else the result computed and written into
    ``out`` in place (``_write_out``); ``dtype_from_out``: the result is
    computed in ``out``'s dtype when the call names none (torch's factories,
    and its sums and means into a floating ``out``)."""
    if GRAD_MODE.enabled and (_requires_grad(args) or _requires_grad(kwargs.values())
                              or _requires_grad((out,))):
        raise RuntimeError(f"{fn.__name__}(): functions with out=... arguments don't "
                           "support automatic differentiation, but one of the "
                           "arguments requires grad.")
    if dtype_from_out and isinstance(out, Tensor) and kwargs.get("dtype") is None \
            and inspect.signature(fn).bind_partial(*args, **kwargs).arguments.get(
                "dtype") is None:
        kwargs = {**kwargs, "dtype": out.dtype}
    return _write_out(fn.__name__, fn(*args, **kwargs), out)


def accept_numpy_names(fn: Any) -> Any:
    """``fn`` also taking ``axis=`` for ``dim=`` and ``keepdims=`` for
    ``keepdim=`` (a Tensor method: torch's methods take no ``out=``)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn
    if ("dim" not in params and "keepdim" not in params) or "axis" in params \
            or "keepdims" in params:
        return fn

    # and numpy's ddof= for correction= (x.var(axis=-1, ddof=0): torch refuses ddof)
    aliases = (("axis", "dim"), ("keepdims", "keepdim"),
               *((("ddof", "correction"),) if "correction" in params else ()))

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        if kwargs and ("axis" in kwargs or "keepdims" in kwargs or "ddof" in kwargs):
            for numpy_name, name in aliases:
                if numpy_name in kwargs:
                    if name in kwargs:
                        raise TypeError(f"{fn.__name__}() got both {name}= and its alias "
                                        f"{numpy_name}=")
                    kwargs[name] = kwargs.pop(numpy_name)
        return fn(*args, **kwargs)
    return call


def install_numpy_names(namespace: dict[str, Any], cls: type | None = None) -> None:
    """``accept_torch_names`` on the functions of a namespace (numpy's names
    and ``out=``), ``accept_numpy_names`` on the methods of a class."""
    for name, value in list(namespace.items()):
        if not name.startswith("_") and inspect.isfunction(value):
            namespace[name] = accept_torch_names(value)
    for name, value in list(vars(cls).items()) if cls is not None else ():
        if not name.startswith("_") and inspect.isfunction(value):
            setattr(cls, name, accept_numpy_names(value))

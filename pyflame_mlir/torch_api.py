"""torch's utility names a script calls outside the op API: facts about
dtypes (``finfo``, ``iinfo``), the default float dtype, and type tests."""

from __future__ import annotations

import functools
import inspect
from typing import Any

import ml_dtypes
import numpy as np

from .core import Tensor
from .dialects.dtypes import DType, default_float, set_default_float
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


# ---- numpy's argument names (torch's parser takes axis= and keepdims=) ----

def accept_numpy_names(fn: Any) -> Any:
    """``fn`` also taking ``axis=`` for ``dim=`` and ``keepdims=`` for
    ``keepdim=``, as torch's functions and Tensor methods do (JAX and numpy
    code writes ``x.sum(axis=0, keepdims=True)``); ``fn`` itself when it has
    neither parameter or already takes the numpy names."""
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
    """``accept_numpy_names`` on the functions of a namespace and the methods of a class."""
    for name, value in list(namespace.items()):
        if not name.startswith("_") and inspect.isfunction(value):
            namespace[name] = accept_numpy_names(value)
    for name, value in list(vars(cls).items()) if cls is not None else ():
        if not name.startswith("_") and inspect.isfunction(value):
            setattr(cls, name, accept_numpy_names(value))

"""In-place updates with PyTorch's semantics, recorded lazily: ``t.add_(x)``,
``t += x``, ``t[idx] = v`` compute the new value as a new promise and rebind
the same tensor object to it (``core.rebind``); ops recorded before read the
old state. Version counters (``t._version``) and PyTorch's errors: a leaf
that requires grad cannot be modified in place while grad is enabled.

At import this module sets the in-place methods on ``Tensor`` (as ``ops.py``
sets the others)."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as np

from .core import GRAD_MODE, Tensor, rebind, record, snapshot, splat_value
from .creation import rand_like, randn_like
from .dialects import OPS
from .indexing import (
    index_add,
    index_copy,
    index_fill,
    index_put,
    is_advanced,
    masked_scatter,
    scatter,
    scatter_add,
    scatter_reduce,
    setitem_value,
    tril,
    triu,
)
from .ops import as_tensor_arg, broadcast_to, clamp, convert, getitem, reshape, where


def _update(t: Tensor, make: Callable[[Tensor], Any], what: str) -> Tensor:
    """Rebind ``t`` to ``make(old)``, ``old`` holding its current state."""
    ag = t._ag
    if GRAD_MODE.enabled and ag is not None and ag.requires_grad:
        raise RuntimeError(f"{what}: a leaf Variable that requires grad is being used in "
                           "an in-place operation (wrap the update in pf.no_grad())")
    old, start = snapshot(t)
    new = as_tensor_arg(make(old))
    if new.shape != t.shape:
        if new.ndim > t.ndim or broadcast_shape(new.shape, t.shape) != t.shape:
            raise RuntimeError(f"{what}: output with shape {list(t.shape)} doesn't match the "
                               f"broadcast shape {list(new.shape)}")
        new = broadcast_to(new, t.shape)
    if new.dtype is not t.dtype:
        new = convert(new, t.dtype)  # PyTorch casts the result to the tensor's dtype
    if ag is not None and ag.detached and new.requires_grad:
        raise RuntimeError(f"{what}: a detached tensor cannot take a value that requires "
                           "grad in place")
    rebind(t, old, start, new)
    return t


def broadcast_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(a, b))


def add_(self: Tensor, other: Any, alpha: Any = 1) -> Tensor:
    return _update(self, lambda o: o + (other if alpha == 1 else other * alpha), "add_")


def sub_(self: Tensor, other: Any, alpha: Any = 1) -> Tensor:
    return _update(self, lambda o: o - (other if alpha == 1 else other * alpha), "sub_")


def mul_(self: Tensor, other: Any) -> Tensor:
    return _update(self, lambda o: o * other, "mul_")


def div_(self: Tensor, other: Any) -> Tensor:
    return _update(self, lambda o: o / other, "div_")


def zero_(self: Tensor) -> Tensor:
    return fill_(self, 0)


def fill_(self: Tensor, value: Any) -> Tensor:
    if isinstance(value, Tensor):
        return _update(self, lambda o: value, "fill_")
    return _update(self, lambda o: record(OPS["constant"], (), {"value": splat_value(
        value, self.shape, self.dtype)}), "fill_")


def copy_(self: Tensor, src: Any) -> Tensor:
    return _update(self, lambda o: src, "copy_")


def clamp_(self: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    return _update(self, lambda o: clamp(o, min, max), "clamp_")


def masked_fill_(self: Tensor, mask: Any, value: Any) -> Tensor:
    return _update(self, lambda o: where(mask, value, o), "masked_fill_")


def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:
    return _update(self, lambda o: randn_like(o) * std + mean, "normal_")


def uniform_(self: Tensor, a: float = 0.0, b: float = 1.0) -> Tensor:
    return _update(self, lambda o: rand_like(o) * (b - a) + a, "uniform_")


def setitem(self: Tensor, index: Any, value: Any) -> None:
    """``t[index] = value``. Basic indexes (ints, slices, None, Ellipsis):
    ``where(region, value placed by padding, t)``, differentiable in both;
    advanced ones: ``indexing.setitem_value`` (a scatter at host positions)."""
    if is_advanced(index):
        _update(self, lambda o: setitem_value(o, index, value), "setitem")
        return
    probe = np.zeros(self.shape, dtype=bool)
    try:
        probe[index] = True
    except (IndexError, TypeError) as e:
        raise IndexError(f"t[{index!r}] = ...: {e}") from None
    getitem(Tensor._leaf(np.zeros(self.shape, dtype=np.float32)), index)  # same checks
    region = Tensor._leaf(probe)
    items = np.nonzero(probe)
    if not items[0].size:
        return
    lo = [int(i.min()) for i in items]
    hi = [int(i.max()) for i in items]
    strides = []
    for i in items:
        u = np.unique(i)
        strides.append(int(u[1] - u[0]) if len(u) > 1 else 1)
    counts = [(b - a) // k + 1 for a, b, k in zip(lo, hi, strides)]
    v = as_tensor_arg(value)
    sel_shape = getitem(Tensor._leaf(np.zeros(self.shape, dtype=np.float32)), index).shape
    if v.shape != sel_shape:
        v = broadcast_to(v, sel_shape)
    v = reshape(v, tuple(counts))
    if v.dtype is not self.dtype:
        v = convert(v, self.dtype)
    placed = v
    if lo != [0] * self.ndim or counts != list(self.shape) or \
            builtins.any(k != 1 for k in strides):
        placed = _record_pad(v, lo, [s - 1 - b for s, b in zip(self.shape, hi)],
                             [k - 1 for k in strides])
    _update(self, lambda o: where(region, placed, o), "setitem")


def _record_pad(v: Tensor, low: list[int], high: list[int], interior: list[int]) -> Tensor:
    return record(OPS["pad"], (v,), {"low": tuple(low), "high": tuple(high),
                                     "interior": tuple(interior)})


def _iop(name: str):
    method = {"add": add_, "sub": sub_, "mul": mul_, "div": div_}[name]

    def iop(self: Tensor, other: Any) -> Tensor:
        return method(self, other)
    iop.__name__ = f"__i{name}__"
    return iop


for _f in (add_, sub_, mul_, div_, zero_, fill_, copy_, clamp_, masked_fill_, normal_,
           uniform_):
    setattr(Tensor, _f.__name__, _f)
Tensor.__setitem__ = setitem
Tensor.__iadd__ = _iop("add")
Tensor.__isub__ = _iop("sub")
Tensor.__imul__ = _iop("mul")
Tensor.__itruediv__ = _iop("div")


# ---- the in-place forms of the indexing setters (pyflame_mlir/indexing.py) ----

def _in_place(fn: Callable[..., Tensor], name: str) -> Callable[..., Tensor]:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return _update(self, lambda o: fn(o, *args, **kwargs), name)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In-place {fn.__name__} (PyTorch's ``Tensor.{name}``)."
    return method


for _fn in (index_put, index_add, index_copy, index_fill, scatter, scatter_add, scatter_reduce,
            masked_scatter, tril, triu):
    setattr(Tensor, f"{_fn.__name__}_", _in_place(_fn, f"{_fn.__name__}_"))

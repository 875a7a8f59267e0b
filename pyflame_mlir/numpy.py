"""``pf.numpy``: ``jax.numpy``'s semantics where they differ from torch's
(``pf``'s top level is torch's), so a JAX program can use it as ``jnp``.

What differs, and is JAX's here: reductions return values only
(``max(x, axis=0)``, ``sort``, ``median``), ``var``/``std`` take ``ddof``
(0 by default), ``axis=None`` flattens (``cumsum``, ``argmax``, ``take``,
``repeat``, ``roll``, ``flip``), ``split`` takes a number of sections or
split points, ``repeat`` is numpy's (torch's ``repeat_interleave``),
``transpose`` reverses the axes by default, ``dot`` is numpy's, ``where=``
masks the sum, mean and product, new arrays are float32/int32 (JAX's
dtypes without 64-bit mode: numpy's float64 and int64 data are converted),
``nonzero`` gives a tuple, ``linalg.norm`` takes ``ord``/``axis``. Every
other name is ``pf``'s (``jnp.exp``, ``jnp.einsum``, ``jnp.float32``, ...).
"""

from __future__ import annotations

import builtins
import math
import sys
import types
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import creation, indexing, ops, reductions
from . import linalg as _pf_linalg
from .composites import tensordot
from .core import Tensor
from .dialects.dtypes import DType, bool_, float32, int32
from .dialects.dtypes import dtype as to_dtype
from .lax import pad as lax_pad

pi, e, inf, nan, newaxis = math.pi, math.e, math.inf, math.nan, None
ndarray = Tensor

_CANONICAL = {np.dtype(np.float64): np.float32, np.dtype(np.int64): np.int32,
              np.dtype(np.uint64): np.uint32}


def _dt(dtype: Any) -> DType | None:
    return None if dtype is None else to_dtype(dtype)


def asarray(a: Any, dtype: Any = None, copy: bool | None = None) -> Tensor:
    """A tensor of ``a``; host data as JAX makes it without 64-bit mode
    (float64 to float32, int64 to int32); a tensor is kept (or cast)."""
    if isinstance(a, Tensor):
        out = a if dtype is None else a.to(to_dtype(dtype))
        return out.clone() if copy and out is a else out
    if isinstance(a, list | tuple) and any(isinstance(v, Tensor) for v in a):
        return ops.stack([asarray(v, dtype) for v in a])
    arr = np.asarray(a)
    if dtype is not None:
        arr = arr.astype(to_dtype(dtype).np)
    elif arr.dtype in _CANONICAL:
        arr = arr.astype(_CANONICAL[arr.dtype])
    if arr.dtype == np.uint32:
        raise TypeError("pf.numpy: uint32 data has no pyflame dtype")
    return Tensor._leaf(np.array(arr) if copy is not False else arr)


def array(object: Any, dtype: Any = None, copy: bool = True) -> Tensor:  # noqa: A002
    return asarray(object, dtype, copy)


def _t(a: Any) -> Tensor:
    return a if isinstance(a, Tensor) else asarray(a)


def _shape(shape: Any) -> tuple[int, ...]:
    return (int(shape),) if isinstance(shape, int | np.integer) else tuple(int(d) for d in shape)


def zeros(shape: Any, dtype: Any = None) -> Tensor:
    return creation.zeros(list(_shape(shape)), dtype=_dt(dtype) or float32)


def ones(shape: Any, dtype: Any = None) -> Tensor:
    return creation.ones(list(_shape(shape)), dtype=_dt(dtype) or float32)


def empty(shape: Any, dtype: Any = None) -> Tensor:
    return zeros(shape, dtype)


def full(shape: Any, fill_value: Any, dtype: Any = None) -> Tensor:
    if dtype is None:
        dtype = fill_value.dtype if isinstance(fill_value, Tensor) else \
            asarray(fill_value).dtype
    return creation.full(list(_shape(shape)), fill_value, dtype=_dt(dtype))


def zeros_like(a: Any, dtype: Any = None, shape: Any = None) -> Tensor:
    t = _t(a)
    return zeros(t.shape if shape is None else shape, dtype or t.dtype)


def ones_like(a: Any, dtype: Any = None, shape: Any = None) -> Tensor:
    t = _t(a)
    return ones(t.shape if shape is None else shape, dtype or t.dtype)


def full_like(a: Any, fill_value: Any, dtype: Any = None, shape: Any = None) -> Tensor:
    t = _t(a)
    return full(t.shape if shape is None else shape, fill_value, dtype or t.dtype)


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None) -> Tensor:
    """numpy's arange: int32 for integer arguments, float32 otherwise."""
    args = [v for v in (start, stop, step) if v is not None]
    if dtype is None:
        dtype = int32 if all(isinstance(v, int | np.integer) for v in args) else float32
    if stop is None:
        start, stop = 0, start
    return creation.arange(start, stop, 1 if step is None else step, dtype=to_dtype(dtype))


def linspace(start: float, stop: float, num: int = 50, endpoint: bool = True,
             retstep: bool = False, dtype: Any = None, axis: int = 0) -> Any:
    if axis != 0:
        raise NotImplementedError("pf.numpy.linspace(axis=...) is not supported")
    div = (num - 1) if endpoint else num
    step = (stop - start) / div if div > 0 else 0.0
    values = np.linspace(start, stop, num, endpoint=endpoint, dtype=np.float64)
    out = Tensor._leaf(values.astype((_dt(dtype) or float32).np))
    return (out, step) if retstep else out


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Tensor:  # noqa: N803
    return Tensor._leaf(np.eye(N, M, k, dtype=(_dt(dtype) or float32).np))


def identity(n: int, dtype: Any = None) -> Tensor:
    return eye(n, dtype=dtype)


# ---- reductions: values only, numpy's ddof and where= ----

def _axis(t: Tensor, axis: Any) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(t.ndim))
    axes = (axis,) if isinstance(axis, int | np.integer) else tuple(axis)
    return tuple(int(a) % t.ndim for a in axes) if t.ndim else ()


def _masked(t: Tensor, where: Any, fill: float) -> Tensor:
    return t if where is None else ops.where(_t(where), t, fill)


def sum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,  # noqa: A001
        keepdims: bool = False, initial: Any = None, where: Any = None) -> Tensor:
    _no_out(out)
    t = _masked(_t(a), where, 0)
    if dtype is not None:
        t = t.to(to_dtype(dtype))
    elif t.dtype is bool_:
        t = t.to(int32)
    r = ops.sum(t, _axis(t, axis), keepdim=keepdims) if t.ndim else t
    if dtype is None and r.dtype is not t.dtype:  # (JAX keeps int32 sums int32)
        r = r.to(t.dtype)
    return r if initial is None else r + initial


def mean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
         keepdims: bool = False, where: Any = None) -> Tensor:
    _no_out(out)
    t = _t(a)
    if not t.dtype.is_floating_point:
        t = t.to(float32)
    if dtype is not None:
        t = t.to(to_dtype(dtype))
    if where is None:
        return ops.mean(t, _axis(t, axis), keepdim=keepdims) if t.ndim else t
    m = ops.broadcast_to(_t(where), t.shape)
    return sum(t, axis, keepdims=keepdims, where=m) / sum(m.to(t.dtype), axis,
                                                          keepdims=keepdims)


def prod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
         keepdims: bool = False, initial: Any = None, where: Any = None) -> Tensor:
    _no_out(out)
    t = _masked(_t(a), where, 1)
    if dtype is not None:
        t = t.to(to_dtype(dtype))
    axes = _axis(t, axis)
    for ax in sorted(axes, reverse=True):
        t = reductions.prod(t, ax, keepdim=keepdims)
    return t if initial is None else t * initial


def _extreme(name: str) -> Any:
    def f(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,
          initial: Any = None, where: Any = None) -> Tensor:
        _no_out(out)
        t = _t(a)
        if where is not None:
            if initial is None:
                raise ValueError(f"reduction {name}(where=...) requires an initial value")
            t = ops.where(_t(where), t, initial)
        r = (ops.amax if name == "max" else ops.amin)(t, _axis(t, axis), keepdim=keepdims) \
            if t.ndim else t
        if initial is not None:
            r = (ops.maximum if name == "max" else ops.minimum)(r, _t(initial).to(r.dtype))
        return r
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"numpy's ``{name}``: the values only (torch's gives values and indices)."
    return f


max, min = _extreme("max"), _extreme("min")  # noqa: A001
amax, amin = max, min


def ptp(a: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    return max(a, axis, keepdims=keepdims) - min(a, axis, keepdims=keepdims)


def _moments(name: str) -> Any:
    def f(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
          keepdims: bool = False, *, where: Any = None, correction: Any = None) -> Tensor:
        _no_out(out)
        if where is not None:
            raise NotImplementedError(f"pf.numpy.{name}(where=...) is not supported")
        t = _t(a)
        if not t.dtype.is_floating_point:
            t = t.to(float32)
        if dtype is not None:
            t = t.to(to_dtype(dtype))
        c = ddof if correction is None else correction
        fn = reductions.var if name == "var" else reductions.std
        return fn(t, _axis(t, axis), keepdim=keepdims, correction=c)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"numpy's ``{name}``: ``ddof`` 0 by default (torch's default is 1)."
    return f


var, std = _moments("var"), _moments("std")


def _flat_or(t: Tensor, axis: Any) -> tuple[Tensor, int]:
    return (ops.reshape(t, (-1,)), 0) if axis is None else (t, int(axis) % builtins.max(t.ndim, 1))


def argmax(a: Any, axis: int | None = None, out: Any = None, keepdims: bool = False) -> Tensor:
    _no_out(out)
    t = _t(a)
    r = ops.argmax(t, axis, keepdim=keepdims if axis is not None else False)
    if axis is None and keepdims:
        r = ops.reshape(r, (1,) * t.ndim)
    return r.to(int32)


def argmin(a: Any, axis: int | None = None, out: Any = None, keepdims: bool = False) -> Tensor:
    _no_out(out)
    t = _t(a)
    r = ops.argmin(t, axis, keepdim=keepdims if axis is not None else False)
    if axis is None and keepdims:
        r = ops.reshape(r, (1,) * t.ndim)
    return r.to(int32)


def median(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Tensor:
    """numpy's median: the mean of the two middle values for an even count."""
    _no_out(out)
    return quantile(a, 0.5, axis, keepdims=keepdims)


def quantile(a: Any, q: Any, axis: Any = None, out: Any = None, keepdims: bool = False,
             method: str = "linear") -> Tensor:
    _no_out(out)
    t = _t(a)
    if not t.dtype.is_floating_point:
        t = t.to(float32)
    if axis is not None and not isinstance(axis, int | np.integer):
        raise NotImplementedError("pf.numpy.quantile: axis must be an int or None")
    qt = q if isinstance(q, float | int) else _t(q).to(t.dtype)
    return reductions.quantile(t, qt, None if axis is None else int(axis), keepdim=keepdims,
                               interpolation=method)


def percentile(a: Any, q: Any, axis: Any = None, out: Any = None, keepdims: bool = False,
               method: str = "linear") -> Tensor:
    qq = q / 100 if isinstance(q, float | int) else _t(q) / 100
    return quantile(a, qq, axis, out, keepdims, method)


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False,
            keepdims: bool = False) -> Any:
    t = _t(a)
    if not t.dtype.is_floating_point:
        t = t.to(float32)
    if weights is None:
        avg = mean(t, axis, keepdims=keepdims)
        total = ops.broadcast_to(_t(math.prod(t.shape[i] for i in _axis(t, axis))).to(t.dtype),
                                 avg.shape)
    else:
        w = _t(weights).to(t.dtype)
        if w.ndim == 1 and t.ndim > 1 and axis is not None:
            view = [1] * t.ndim
            view[int(axis) % t.ndim] = w.shape[0]
            w = ops.reshape(w, tuple(view))
        w = ops.broadcast_to(w, t.shape)
        total = sum(w, axis, keepdims=keepdims)
        avg = sum(t * w, axis, keepdims=keepdims) / total
    return (avg, total) if returned else avg


def cumsum(a: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Tensor:
    _no_out(out)
    t, ax = _flat_or(_t(a), axis)
    return reductions.cumsum(t, ax, dtype=_dt(dtype))


def cumprod(a: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Tensor:
    _no_out(out)
    t, ax = _flat_or(_t(a), axis)
    return reductions.cumprod(t, ax, dtype=_dt(dtype))


def sort(a: Any, axis: int | None = -1, *, kind: Any = None, order: Any = None,
         stable: bool = True, descending: bool = False) -> Tensor:
    """The sorted values (torch's gives values and indices); stable."""
    t, ax = _flat_or(_t(a), axis)
    return reductions.sort(t, ax, descending, stable=True).values


def argsort(a: Any, axis: int | None = -1, *, kind: Any = None, order: Any = None,
            stable: bool = True, descending: bool = False) -> Tensor:
    t, ax = _flat_or(_t(a), axis)
    return reductions.sort(t, ax, descending, stable=True).indices.to(int32)


def nonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> tuple[Tensor, ...]:
    if size is not None:
        raise NotImplementedError("pf.numpy.nonzero(size=...) is not supported")
    return tuple(i.to(int32) for i in indexing.nonzero(_t(a), as_tuple=True))


# ---- indexing and shapes: numpy's ----

def take(a: Any, indices: Any, axis: int | None = None, mode: Any = None) -> Tensor:
    t, ax = _flat_or(_t(a), axis)
    idx = _t(indices)
    flat = ops.reshape(idx, (-1,)) if idx.ndim != 1 else idx
    out = indexing.index_select(t, ax, flat)
    return ops.reshape(out, (*t.shape[:ax], *idx.shape, *t.shape[ax + 1:]))


def take_along_axis(arr: Any, indices: Any, axis: int | None, mode: Any = None) -> Tensor:
    t, ax = _flat_or(_t(arr), axis)
    return indexing.take_along_dim(t, _t(indices), ax)


def reshape(a: Any, shape: Any = None, order: str = "C", *, newshape: Any = None) -> Tensor:
    if order != "C":
        raise NotImplementedError("pf.numpy.reshape: only order='C'")
    return ops.reshape(_t(a), _shape(newshape if shape is None else shape))


def ravel(a: Any, order: str = "C") -> Tensor:
    return reshape(a, (-1,), order)


def transpose(a: Any, axes: Sequence[int] | None = None) -> Tensor:
    t = _t(a)
    return ops.permute(t, tuple(range(t.ndim))[::-1] if axes is None else tuple(axes))


def swapaxes(a: Any, axis1: int, axis2: int) -> Tensor:
    return ops.swapaxes(_t(a), axis1, axis2)


def moveaxis(a: Any, source: Any, destination: Any) -> Tensor:
    return indexing.movedim(_t(a), source, destination)


def expand_dims(a: Any, axis: int | Sequence[int]) -> Tensor:
    t = _t(a)
    axes = (axis,) if isinstance(axis, int | np.integer) else tuple(axis)
    n = t.ndim + len(axes)
    shape = list(t.shape)
    for ax in sorted(int(x) % n for x in axes):
        shape.insert(ax, 1)
    return ops.reshape(t, tuple(shape))


def squeeze(a: Any, axis: int | Sequence[int] | None = None) -> Tensor:
    t = _t(a)
    if axis is None:
        return ops.reshape(t, tuple(n for n in t.shape if n != 1))
    axes = {int(x) % t.ndim for x in ((axis,) if isinstance(axis, int | np.integer) else axis)}
    for ax in axes:
        if t.shape[ax] != 1:
            raise ValueError(f"cannot select an axis to squeeze out which has size not equal "
                             f"to one (axis {ax} of shape {list(t.shape)})")
    return ops.reshape(t, tuple(n for i, n in enumerate(t.shape) if i not in axes))


def concatenate(arrays: Sequence[Any], axis: int | None = 0, dtype: Any = None) -> Tensor:
    ts = [_t(x) for x in arrays]
    if axis is None:
        ts, axis = [ops.reshape(x, (-1,)) for x in ts], 0
    out = ops.cat(ts, axis)
    return out if dtype is None else out.to(to_dtype(dtype))


def stack(arrays: Sequence[Any], axis: int = 0, dtype: Any = None) -> Tensor:
    out = ops.stack([_t(x) for x in arrays], axis)
    return out if dtype is None else out.to(to_dtype(dtype))


def hstack(tup: Sequence[Any]) -> Tensor:
    ts = [_t(x) for x in tup]
    return concatenate(ts, 0 if all(x.ndim == 1 for x in ts) else 1)


def vstack(tup: Sequence[Any]) -> Tensor:
    return concatenate([x if x.ndim > 1 else ops.reshape(x, (1, -1)) for x in map(_t, tup)], 0)


def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Tensor]:
    """numpy's split: a number of equal sections, or the split points."""
    t = _t(ary)
    ax = int(axis) % t.ndim
    n = t.shape[ax]
    if isinstance(indices_or_sections, int | np.integer):
        k = int(indices_or_sections)
        if n % k:
            raise ValueError("array split does not result in an equal division")
        return list(ops.split(t, n // k, ax))
    points = [int(p) for p in indices_or_sections]
    bounds = [0, *[builtins.min(builtins.max(p + (n if p < 0 else 0), 0), n) for p in points], n]
    sizes = [builtins.max(b - a, 0) for a, b in zip(bounds[:-1], bounds[1:])]
    return list(ops.split(t, sizes, ax))


def repeat(a: Any, repeats: Any, axis: int | None = None, *,
           total_repeat_length: int | None = None) -> Tensor:
    """numpy's repeat: each element ``repeats`` times (torch's ``repeat_interleave``)."""
    t, ax = _flat_or(_t(a), axis)
    out = indexing.repeat_interleave(t, repeats, ax)
    if total_repeat_length is not None and out.shape[ax] != total_repeat_length:
        raise NotImplementedError(f"pf.numpy.repeat: total_repeat_length={total_repeat_length} "
                                  f"differs from the {out.shape[ax]} repeats (JAX pads or cuts)")
    return out


def tile(A: Any, reps: Any) -> Tensor:  # noqa: N803
    return indexing.tile(_t(A), _shape(reps))


def flip(m: Any, axis: Any = None) -> Tensor:
    t = _t(m)
    return indexing.flip(t, _axis(t, axis))


def roll(a: Any, shift: Any, axis: Any = None) -> Tensor:
    t = _t(a)
    if axis is None:
        return ops.reshape(indexing.roll(ops.reshape(t, (-1,)), shift, 0), t.shape)
    return indexing.roll(t, shift, axis)


def clip(a: Any, a_min: Any = None, a_max: Any = None, *, min: Any = None,  # noqa: A002
         max: Any = None) -> Tensor:  # noqa: A002
    """``minimum(maximum(a, lo), hi)`` (JAX's: ties share the derivative)."""
    lo = a_min if min is None else min
    hi = a_max if max is None else max
    t = _t(a)
    if lo is not None:
        t = ops.maximum(t, _t(lo).to(t.dtype) if isinstance(lo, Tensor) else
                        asarray(lo, t.dtype))
    if hi is not None:
        t = ops.minimum(t, _t(hi).to(t.dtype) if isinstance(hi, Tensor) else
                        asarray(hi, t.dtype))
    return t


def pad(array: Any, pad_width: Any, mode: str = "constant", constant_values: Any = 0) -> Tensor:
    if mode != "constant":
        raise NotImplementedError(f"pf.numpy.pad: mode {mode!r} (only 'constant')")
    t = _t(array)
    w = np.broadcast_to(np.asarray(pad_width, dtype=np.int64).reshape(-1, 2)
                        if np.ndim(pad_width) else np.asarray([[pad_width] * 2]),
                        (t.ndim, 2))
    return lax_pad(t, constant_values, [(int(lo), int(hi), 0) for lo, hi in w])


# ---- products ----

def dot(a: Any, b: Any) -> Tensor:
    """numpy's dot: a product for scalars, a contraction of a's last axis
    with b's last (1-d b) or second-to-last axis."""
    x, y = _t(a), _t(b)
    if x.ndim == 0 or y.ndim == 0:
        return x * y
    if y.ndim == 1:
        return tensordot(x, y, ([x.ndim - 1], [0]))
    return tensordot(x, y, ([x.ndim - 1], [y.ndim - 2]))


def vdot(a: Any, b: Any) -> Tensor:
    return ops.sum(ops.reshape(_t(a), (-1,)) * ops.reshape(_t(b), (-1,)))


def outer(a: Any, b: Any) -> Tensor:
    return ops.reshape(_t(a), (-1, 1)) * ops.reshape(_t(b), (1, -1))


def inner(a: Any, b: Any) -> Tensor:
    x, y = _t(a), _t(b)
    if x.ndim == 0 or y.ndim == 0:
        return x * y
    return tensordot(x, y, ([x.ndim - 1], [y.ndim - 1]))


def where(condition: Any, x: Any = None, y: Any = None, *, size: Any = None) -> Any:
    if x is None and y is None:
        return nonzero(condition, size=size)
    return ops.where(_t(condition), _t(x) if not isinstance(x, int | float) else x,
                     _t(y) if not isinstance(y, int | float) else y)


def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> bool:
    x, y = _t(a1), _t(a2)
    if x.shape != y.shape:
        return False
    same = ops.eq(x, y)
    if equal_nan:
        same = ops.logical_or(same, ops.logical_and(ops.isnan(x), ops.isnan(y)))
    return bool(reductions.all(same).item())


def size(a: Any, axis: int | None = None) -> int:
    t = _t(a)
    return t.numel() if axis is None else t.shape[axis]


def shape(a: Any) -> tuple[int, ...]:
    return tuple(_t(a).shape)


def ndim(a: Any) -> int:
    return _t(a).ndim


def abs(x: Any) -> Tensor:  # noqa: A001
    """``|x|`` with JAX's derivative at 0 (1, as ``where(x >= 0, x, -x)``;
    torch's is 0)."""
    t = _t(x)
    if not t.dtype.is_floating_point:
        return ops.abs(t)
    return ops.where(t >= 0, t, ops.neg(t)) + 0.0  # (+ 0.0: |-0.0| is +0.0)


absolute = abs


def mod(x1: Any, x2: Any) -> Tensor:
    return ops.remainder(_t(x1), x2)


def power(x1: Any, x2: Any) -> Tensor:
    return ops.pow(_t(x1), x2)


def _no_out(out: Any) -> None:
    if out is not None:
        raise NotImplementedError("pf.numpy: out= is not supported (JAX arrays are immutable)")


# ---- linalg: numpy's norm, the rest pf.linalg's ----

def _norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Tensor:  # noqa: A002
    t = _t(x)
    if not t.dtype.is_floating_point:
        t = t.to(float32)
    if ord is None:
        return ops.sqrt(sum(t * t, axis, keepdims=keepdims))
    axes = _axis(t, axis)
    if len(axes) == 2:
        return _pf_linalg.matrix_norm(t, ord, axes, keepdims)
    if axis is None and t.ndim != 1:
        raise ValueError("pf.numpy.linalg.norm: ord with axis=None needs a 1-d or 2-d array")
    return _pf_linalg.vector_norm(t, ord, axes, keepdims)


class _Linalg(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        return getattr(_pf_linalg, name)


linalg = _Linalg("pyflame_mlir.numpy.linalg", "numpy's linalg names (norm), then pf.linalg's")
linalg.norm = _norm  # type: ignore[attr-defined]


def __getattr__(name: str) -> Any:
    """Every other name is pf's (jnp.exp, jnp.einsum, jnp.float32, ...): looked
    up on the package when asked (not imported: the package sits above)."""
    try:
        return getattr(sys.modules[__package__], name)
    except AttributeError:
        raise AttributeError(f"pf.numpy has no attribute {name!r} (nor has pf)") from None

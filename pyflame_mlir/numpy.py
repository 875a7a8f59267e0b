"""``pf.numpy``: ``jax.numpy``'s semantics where they differ from torch's
(``pf``'s top level is torch's), so a JAX program can use it as ``jnp``.

What differs, and is JAX's here: reductions return values only
(``max(x, axis=0)``, ``sort``, ``median``), ``var``/``std`` take ``ddof``
(0 by default), ``axis=None`` flattens (``cumsum``, ``argmax``, ``take``,
``repeat``, ``roll``, ``flip``), ``split`` takes a number of sections or
split points, ``repeat`` is numpy's (torch's ``repeat_interleave``),
``transpose`` reverses the axes by default, ``dot`` is numpy's, ``where=``
masks the sum, mean and product, new arrays are float32/int32 (JAX's
dtypes without 64-bit mode: numpy's float64 and int64 data are converted;
index results, int sums and scans are int32), ``nonzero`` gives a tuple,
``linalg.norm`` takes ``ord``/``axis``, ``meshgrid`` is ``'xy'``,
``histogram`` has 10 bins, ``equal`` is elementwise, ``round`` takes
``decimals``, ``tensordot`` takes ``axes``, ``pad`` has numpy's modes.

Only the names in ``SHARED_WITH_PF`` fall through to ``pf`` (``jnp.exp``,
``jnp.einsum``, ``jnp.float32``, ...): each is checked against
``jax.numpy`` in ``test/python/test_numpy_sweep.py``. Any other name raises
``AttributeError``: a torch function under a numpy name is a wrong answer,
which is worse than a missing name.
"""

from __future__ import annotations

import builtins
import math
import sys
import types
from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np

from . import composites, composites2, composites3, creation, indexing, ops, reductions
from . import linalg as _pf_linalg
from . import numpy_fft as fft  # noqa: F401  (jnp.fft)
from .composites import tensordot as _pf_tensordot
from .core import Tensor
from .dialects import dtypes as _dtypes
from .dialects.dtypes import DType
from .dialects.dtypes import bool_ as _bool
from .dialects.dtypes import dtype as to_dtype
from .dialects.dtypes import float32 as _f32
from .dialects.dtypes import float64 as _f64
from .dialects.dtypes import int32 as _int32
from .dialects.dtypes import int64 as _i64
from .fft import Complex
from .jax_config import CANONICAL, canonical_host
from .jax_config import config as _config
from .jax_config import default_float as _F  # noqa: N812  (float32; float64 with x64)
from .jax_config import default_int as _I  # noqa: N812  (int32; int64 with x64)
from .lax import pad as lax_pad
from .lax import saturating_cast
from .segment import segment_sum

pi, e, inf, nan, newaxis = math.pi, math.e, math.inf, math.nan, None
ndarray = Tensor

_CANONICAL = CANONICAL


_CANONICAL_DT = {"float64": _f32, "int64": _int32}


def _dt(dtype: Any) -> DType | None:
    """A user's dtype as JAX takes it: without 64-bit mode ``float``,
    ``int``, float64 and int64 become float32 and int32; with it (``pf.config.
    update("jax_enable_x64", True)``) they are float64 and int64."""
    if dtype is None:
        return None
    if dtype is float or dtype is int:
        return _F() if dtype is float else _I()
    d = to_dtype(dtype)
    return d if _config.jax_enable_x64 else _CANONICAL_DT.get(d.name, d)


def _weak(v: Any, like: Tensor) -> Tensor:
    """An operand beside ``like`` with JAX's weak typing: a Python number
    takes ``like``'s dtype when its kind fits (an int beside floats, a
    float beside floats), else JAX's default (a float beside ints is
    float32); a tensor is kept (the op promotes)."""
    if isinstance(v, Tensor):
        return v
    if isinstance(v, bool):
        return asarray(v)
    if isinstance(v, int):
        return asarray(v, like.dtype if like.dtype is not _bool else _I())
    if isinstance(v, float):
        return asarray(v, like.dtype if like.dtype.is_floating_point else _F())
    return asarray(v)


def asarray(a: Any, dtype: Any = None, copy: bool | None = None) -> Tensor:
    """A tensor of ``a``; host data as JAX makes it without 64-bit mode
    (float64 to float32, int64 to int32); a tensor is kept (or cast)."""
    if isinstance(a, Tensor):
        out = a if dtype is None else saturating_cast(a, _dt(dtype))
        return out.clone() if copy and out is a else out
    if isinstance(a, list | tuple) and builtins.any(isinstance(v, Tensor) for v in a):
        return ops.stack([asarray(v, dtype) for v in a])
    arr = np.asarray(a)
    if arr.dtype == object:
        raise TypeError(f"pf.numpy.asarray: cannot make an array of {type(a).__name__} "
                        f"values")
    if dtype is None and arr.dtype.kind == "i" and isinstance(a, int | list | tuple) and \
            arr.size and not _config.jax_enable_x64:  # (Python ints: JAX's OverflowError)
        for v in (arr.min(), arr.max()):
            _check_python_int(int(v))
    if dtype is not None:
        arr = arr.astype(_dt(dtype).np)
    else:
        arr = canonical_host(arr)
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
    return creation.zeros(list(_shape(shape)), dtype=_dt(dtype) or _F())


def ones(shape: Any, dtype: Any = None) -> Tensor:
    return creation.ones(list(_shape(shape)), dtype=_dt(dtype) or _F())


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
        dtype = _I() if builtins.all(isinstance(v, int | np.integer) for v in args) else _F()
    if stop is None:
        start, stop = 0, start
    return creation.arange(start, stop, 1 if step is None else step, dtype=_dt(dtype))


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
             retstep: bool = False, dtype: Any = None, axis: int = 0, *,
             device: Any = None) -> Any:
    """JAX's linspace: ``start * (1 - s) + stop * s`` for ``s = k / div`` in
    the computation dtype (JAX's rounding, not numpy's), differentiable in
    ``start`` and ``stop``, which may be arrays (the samples along ``axis``);
    an integer ``dtype`` floors."""
    del device
    num = int(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    a, b = _t(start), _t(stop)
    dt = _dt(dtype) or _inexact_dtype(promote_types(a.dtype, b.dtype))
    comp = _inexact_dtype(dt)
    a, b = a.to(comp), b.to(comp)
    shape = tuple(np.broadcast_shapes(tuple(a.shape), tuple(b.shape)))
    a, b = ops.broadcast_to(a, shape), ops.broadcast_to(b, shape)
    ax = len(shape) + axis + 1 if axis < 0 else axis
    bounds = list(shape)
    bounds.insert(ax, 1)
    div = (num - 1) if endpoint else num
    if num > 1:
        delta = (b - a) / full((), div, comp)
        iota_shape = [1] * len(bounds)
        iota_shape[ax] = div
        step = ops.reshape(arange(div, dtype=comp) / full((), div, comp), tuple(iota_shape))
        out = ops.reshape(a, tuple(bounds)) * (1 - step) + ops.reshape(b, tuple(bounds)) * step
        if endpoint:
            out = ops.cat([out, ops.unsqueeze(b, ax)], ax)
    elif num == 1:
        delta = full((), math.nan, comp) if endpoint else b - a
        out = ops.reshape(a, tuple(bounds))
    else:
        delta = full((), math.nan, comp)
        bounds[ax] = 0
        out = zeros(tuple(bounds), comp)
    if not dt.is_floating_point and dt is not _bool:
        out = ops.floor(out)
    out = out.to(dt)
    return (out, delta) if retstep else out


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Tensor:  # noqa: N803
    return Tensor._leaf(np.eye(N, M, k, dtype=(_dt(dtype) or _F()).np))


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
    t = t.to(_reduce_dtype(t, dtype, "sum"))
    r = ops.sum(t, _axis(t, axis), keepdim=keepdims) if t.ndim else t
    if r.dtype is not t.dtype:  # (JAX keeps int32 sums int32, dtype=int32 too)
        r = r.to(t.dtype)
    return r if initial is None else r + asarray(initial).to(r.dtype)


def mean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
         keepdims: bool = False, where: Any = None) -> Tensor:
    _no_out(out)
    t = _t(a)
    if not t.dtype.is_floating_point:
        t = _inexact(t)
    if dtype is not None:
        t = t.to(_dt(dtype))
    if where is None:
        return ops.mean(t, _axis(t, axis), keepdim=keepdims) if t.ndim else t
    m = ops.broadcast_to(_t(where), t.shape)
    return sum(t, axis, keepdims=keepdims, where=m) / sum(m.to(t.dtype), axis,
                                                          keepdims=keepdims)


def prod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
         keepdims: bool = False, initial: Any = None, where: Any = None) -> Tensor:
    _no_out(out)
    t = _masked(_t(a), where, 1)
    d = _reduce_dtype(t, dtype, "prod")
    t = t.to(d)
    axes = _axis(t, axis)
    for ax in sorted(axes, reverse=True):
        t = reductions.prod(t, ax, keepdim=keepdims).to(d)
    return t if initial is None else t * asarray(initial).to(t.dtype)


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


def ptp(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Tensor:
    _no_out(out)
    return max(a, axis, keepdims=keepdims) - min(a, axis, keepdims=keepdims)


def _moments(name: str) -> Any:
    def f(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
          keepdims: bool = False, *, where: Any = None, correction: Any = None) -> Tensor:
        _no_out(out)
        t = _t(a)
        if not t.dtype.is_floating_point:
            t = _inexact(t)
        if dtype is not None:
            t = t.to(_dt(dtype))
        c = ddof if correction is None else correction
        if where is not None:  # JAX's: the masked mean, squares summed over the mask
            m = ops.broadcast_to(_t(where), t.shape)
            centered = t - mean(t, axis, keepdims=True, where=m)
            n = sum(m.to(t.dtype), axis, keepdims=keepdims) - c
            v = ops.where(n > 0, sum(centered * centered, axis, keepdims=keepdims, where=m)
                          / n, math.nan)  # JAX's NaN where n - ddof <= 0 (torch's inf)
            return ops.sqrt(v) if name == "std" else v
        fn = reductions.var if name == "var" else reductions.std
        axes = _axis(t, axis)
        v = fn(t, axes, keepdim=keepdims, correction=c)
        if math.prod(t.shape[i] for i in axes) - c <= 0:  # JAX's NaN (torch's inf)
            v = ops.where(ops.isnan(v), v, math.nan)
        return v
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"numpy's ``{name}``: ``ddof`` 0 by default (torch's default is 1)."
    return f


var, std = _moments("var"), _moments("std")


def _bool_reduce(name: str) -> Any:
    def f(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, *,
          where: Any = None) -> Tensor:
        _no_out(out)
        t = _t(a)
        t = t if t.dtype is _bool else ops.ne(t, 0)
        if where is not None:  # JAX's: masked-out elements count as False (any), True (all)
            t = ops.where(_t(where), t, name == "all")
        fn = reductions.any if name == "any" else reductions.all
        axes = _axis(t, axis)
        if not axes:
            return t
        for ax in sorted(axes, reverse=True):
            t = fn(t, ax, keepdim=keepdims)
        return t
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"numpy's ``{name}`` (``where=`` as JAX's)."
    return f


any, all = _bool_reduce("any"), _bool_reduce("all")  # noqa: A001


def einsum(subscripts: str, *operands: Any, out: Any = None, optimize: Any = "auto",
           precision: Any = None, preferred_element_type: Any = None,
           _dot_general: Any = None) -> Tensor:
    """``jnp.einsum``: pf's pairwise contractions in the order ``optimize``
    picks (``einsum_path``'s: opt_einsum's, as JAX's, when it is installed,
    else numpy's greedy one; a path list is taken as given; ``False``: left
    to right). ``precision`` changes nothing (float32 products are exact on
    the host); with ``preferred_element_type`` the operands are computed in
    that dtype."""
    del precision
    _no_out(out)
    if _dot_general is not None:
        raise NotImplementedError("jnp.einsum(_dot_general=...) is not supported")
    ts = [_t(o) for o in operands]
    if preferred_element_type is not None:
        d = _dt(preferred_element_type)
        ts = [t.to(d) for t in ts]
    if len(ts) < 3 or optimize is False:
        return ops.einsum(subscripts, *ts)
    specs, target = _einsum_explicit(subscripts, [tuple(t.shape) for t in ts])
    if isinstance(optimize, list | tuple) and optimize and optimize[0] == "einsum_path":
        optimize = list(optimize[1:])  # numpy's form of a path
    path = optimize if isinstance(optimize, list | tuple) else _contraction_path(
        ",".join(specs) + "->" + target, [tuple(t.shape) for t in ts], optimize)
    items = list(zip(ts, specs))
    for step in path:
        picked = [items[i] for i in step]
        for i in sorted(step, reverse=True):
            items.pop(i)
        rest = set(target).union(*(set(sp) for _, sp in items))
        seen = "".join(sp for _, sp in picked)
        keep = "".join(dict.fromkeys(c for c in seen if c in rest))
        t = ops.einsum(",".join(sp for _, sp in picked) + "->" + keep, *(x for x, _ in picked))
        items.append((t, keep))
    if len(items) != 1:
        raise ValueError(f"jnp.einsum: the path {list(path)} leaves {len(items)} operands of "
                         f"{len(ts)}; a path contracts them all")
    t, sp = items[0]
    return ops.einsum(f"{sp}->{target}", t) if sp != target else t


def _einsum_explicit(subscripts: str, shapes: list[tuple[int, ...]]) -> tuple[list[str], str]:
    """The operands' labels and the output's with ``...`` spelled as letters
    no operand uses (right-aligned, as broadcasting), and the implicit
    output made explicit (the ellipsis, then the labels seen once, sorted)."""
    eq = subscripts.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    specs = lhs.split(",")
    if len(specs) != len(shapes):
        raise ValueError(f"jnp.einsum: {subscripts!r} names {len(specs)} operands, got "
                         f"{len(shapes)}")
    used = {c for c in eq if c.isalpha()}
    n_ell = builtins.max([len(sh) - len(sp.replace("...", "")) for sp, sh in zip(specs, shapes)
                          if "..." in sp], default=0)
    free = [c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in used]
    if n_ell > len(free):
        raise ValueError(f"jnp.einsum: {subscripts!r} has more dimensions than letters")
    ell = "".join(free[:n_ell])
    out_specs = [sp.replace("...", ell[n_ell - (len(sh) - len(sp) + 3):] if n_ell else "")
                 if "..." in sp else sp for sp, sh in zip(specs, shapes)]
    if arrow:
        target = rhs.replace("...", ell)
    else:
        letters = "".join(sp.replace("...", "") for sp in specs)
        target = ell + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    return out_specs, target


def _contraction_path(eq: str, shapes: list[tuple[int, ...]], optimize: Any
                      ) -> list[tuple[int, ...]]:
    strategy = "optimal" if optimize is True else optimize
    try:
        import opt_einsum  # JAX's path finder (jax depends on it)
    except ImportError:
        dummies = [np.broadcast_to(np.zeros((), np.float32), sh) for sh in shapes]
        np_strategy = "optimal" if strategy == "optimal" else "greedy"
        return [tuple(p) for p in np.einsum_path(eq, *dummies, optimize=np_strategy)[0][1:]]
    return [tuple(p) for p in opt_einsum.contract_path(eq, *shapes, shapes=True,
                                                       optimize=strategy)[0]]


def einsum_path(subscripts: str, /, *operands: Any, optimize: Any = "auto") -> tuple[list, Any]:
    """``jnp.einsum_path``: opt_einsum's ``contract_path`` on the operands'
    shapes, as JAX's (the path, and opt_einsum's report of it). Needs
    opt_einsum (JAX depends on it; pf does not)."""
    try:
        import opt_einsum
    except ImportError as e:
        raise ImportError("pf.numpy.einsum_path needs opt_einsum (pip install opt_einsum), "
                          "as jax.numpy.einsum_path does") from e
    shapes = [tuple(np.shape(o)) if not isinstance(o, Tensor) else tuple(o.shape)
              for o in operands]
    if isinstance(optimize, bool):  # JAX's: True is "optimal", False left to right
        optimize = "optimal" if optimize else [(0, 1)] * builtins.max(len(shapes) - 1, 0)
    return opt_einsum.contract_path(subscripts, *shapes, shapes=True, optimize=optimize)


def _flat_or(t: Tensor, axis: Any) -> tuple[Tensor, int]:
    return (ops.reshape(t, (-1,)), 0) if axis is None else (t, int(axis) % builtins.max(t.ndim, 1))


def argmax(a: Any, axis: int | None = None, out: Any = None, keepdims: bool = False) -> Tensor:
    _no_out(out)
    t = _t(a)
    t = t.to(_int32) if t.dtype is _bool else t
    r = ops.argmax(t, axis, keepdim=keepdims if axis is not None else False)
    if axis is None and keepdims:
        r = ops.reshape(r, (1,) * t.ndim)
    return r.to(_I())


def argmin(a: Any, axis: int | None = None, out: Any = None, keepdims: bool = False) -> Tensor:
    _no_out(out)
    t = _t(a)
    t = t.to(_int32) if t.dtype is _bool else t
    r = ops.argmin(t, axis, keepdim=keepdims if axis is not None else False)
    if axis is None and keepdims:
        r = ops.reshape(r, (1,) * t.ndim)
    return r.to(_I())


def median(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Tensor:
    """numpy's median: the mean of the two middle values for an even count
    (``overwrite_input`` is numpy's hint, without effect here as in JAX)."""
    del overwrite_input
    _no_out(out)
    return quantile(a, 0.5, axis, keepdims=keepdims)


def quantile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False) -> Tensor:
    del overwrite_input  # (numpy's hint: no effect, as in JAX)
    _no_out(out)
    t = _t(a)
    if not t.dtype.is_floating_point:
        t = _inexact(t)
    if axis is not None and not isinstance(axis, int | np.integer):
        raise NotImplementedError("pf.numpy.quantile: axis must be an int or None")
    qt = q if isinstance(q, float | int) else _t(q).to(t.dtype)
    return reductions.quantile(t, qt, None if axis is None else int(axis), keepdim=keepdims,
                               interpolation=method)


def percentile(a: Any, q: Any, axis: Any = None, out: Any = None,
               overwrite_input: bool = False, method: str = "linear",
               keepdims: bool = False) -> Tensor:
    del overwrite_input  # (numpy's hint: no effect, as in JAX)
    qq = q / 100 if isinstance(q, float | int) else _t(q) / 100
    return quantile(a, qq, axis, out, method=method, keepdims=keepdims)


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False,
            keepdims: bool = False) -> Any:
    t = _t(a)
    if not t.dtype.is_floating_point:
        t = _inexact(t)
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


def _scan_dtype(t: Tensor, dtype: Any) -> DType:
    """JAX's scan dtype: the input's (int32 stays int32; bool counts as
    int32), not torch's int64."""
    if dtype is not None:
        return _dt(dtype)
    return _int32 if t.dtype is _bool else t.dtype


def _reduce_dtype(t: Tensor, dtype: Any, what: str) -> DType:
    """JAX's sum/prod dtype: narrow signed integers and bool widen to int32
    (uint8 would widen to uint32, which pyflame has not)."""
    if dtype is not None:
        return _dt(dtype)
    if t.dtype is _bool or (not t.dtype.is_floating_point and t.dtype.itemsize < 4):
        if t.dtype.name == "uint8":
            raise NotImplementedError(f"pf.numpy.{what} of uint8 data: JAX's result is "
                                      "uint32, which pyflame has not (pass dtype=)")
        return _I()
    return t.dtype


def cumsum(a: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Tensor:
    _no_out(out)
    t, ax = _flat_or(_t(a), axis)
    d = _scan_dtype(t, dtype)
    return reductions.cumsum(t.to(d), ax).to(d)


def cumprod(a: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Tensor:
    _no_out(out)
    t, ax = _flat_or(_t(a), axis)
    d = _scan_dtype(t, dtype)
    return reductions.cumprod(t.to(d), ax).to(d)



def sort(a: Any, axis: int | None = -1, *, kind: Any = None, order: Any = None,
         stable: bool = True, descending: bool = False) -> Tensor:
    """The sorted values (torch's gives values and indices); stable."""
    t, ax = _flat_or(_t(a), axis)
    return reductions.sort(t, ax, descending, stable=True).values


def argsort(a: Any, axis: int | None = -1, *, kind: Any = None, order: Any = None,
            stable: bool = True, descending: bool = False) -> Tensor:
    t, ax = _flat_or(_t(a), axis)
    return reductions.sort(t, ax, descending, stable=True).indices.to(_I())


def nonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> tuple[Tensor, ...]:
    """numpy's nonzero; with ``size`` (JAX's static shape) the first ``size``
    positions, padded with ``fill_value`` (0, or one value per dimension),
    computed without reading the values (under ``vmap``/``pf.compile`` too)."""
    if size is None:
        return tuple(i.to(_I()) for i in indexing.nonzero(_t(a), as_tuple=True))
    t = _t(a)
    size = int(size)
    shape = tuple(t.shape) if t.ndim else (1,)
    fills = tuple(fill_value) if isinstance(fill_value, tuple | list) else \
        (0 if fill_value is None else fill_value,) * len(shape)
    if len(fills) != len(shape):
        raise ValueError(f"nonzero: fill_value must be a scalar or a tuple of length "
                         f"{len(shape)}; got {fill_value!r}")
    m = ops.reshape(t if t.dtype is _bool else ops.ne(t, 0), (-1,))
    rank = reductions.cumsum(m.to(_i64), 0) - 1  # each nonzero's place among them
    target = ops.where(m & (rank < size), rank, -1)  # (others: dropped)
    flat = Tensor._leaf(np.arange(math.prod(shape), dtype=np.int64))
    first = segment_sum(ops.where(m, flat, 0), target, size)
    filled = Tensor._leaf(np.arange(size)) < ops.sum(m.to(_i64))
    out, stride = [], math.prod(shape)
    for n, fill in zip(shape, fills):
        stride //= n
        coord = ops.remainder(ops.floor_divide(first, stride), n) if n else first
        out.append(ops.where(filled, coord, _t(fill).to(_i64)).to(_I()))
    return tuple(out)


# ---- indexing and shapes: numpy's ----

def take(a: Any, indices: Any, axis: int | None = None, out: Any = None,
         mode: Any = None, unique_indices: bool = False, indices_are_sorted: bool = False,
         fill_value: Any = None) -> Tensor:
    """numpy's take with JAX's modes: ``'fill'`` (the default) gives
    ``fill_value`` (NaN, the integer minimum, True) for an index out of
    range (negative ones count from the end); ``'clip'`` and ``'wrap'`` as
    numpy's."""
    del unique_indices, indices_are_sorted  # (hints: the result is the same)
    _no_out(out)
    t, ax = _flat_or(_t(a), axis)
    idx = _t(indices)
    n = t.shape[ax]
    if mode == "clip":
        idx = clip(idx, 0, n - 1)
    elif mode == "wrap":
        idx = ops.remainder(idx, n)
    elif mode in (None, "fill", "promise_in_bounds"):
        return t.at[(slice(None),) * ax + (idx,)].get(
            mode="clip" if mode == "promise_in_bounds" else "fill", fill_value=fill_value)
    else:
        raise ValueError(f"Invalid mode {mode!r} for take")
    flat = ops.reshape(idx, (-1,)) if idx.ndim != 1 else idx
    out = indexing.index_select(t, ax, flat)
    return ops.reshape(out, (*t.shape[:ax], *idx.shape, *t.shape[ax + 1:]))


def take_along_axis(arr: Any, indices: Any, axis: int | None, mode: Any = None,
                    fill_value: Any = None) -> Tensor:
    """numpy's take_along_axis with JAX's modes: ``'fill'`` (the default)
    gives ``fill_value`` (NaN, the integer minimum, True) for an index out of
    range, ``'clip'`` clamps (negative indices count from the end in both)."""
    t, ax = _flat_or(_t(arr), axis)
    idx = _t(indices)
    if mode not in (None, "fill", "clip", "promise_in_bounds"):
        raise ValueError(f"Invalid mode {mode!r} for take_along_axis")
    n = t.shape[ax]
    idx = ops.where(idx < 0, idx + n, idx)
    if mode in ("clip", "promise_in_bounds"):
        return indexing.take_along_dim(t, clip(idx, 0, builtins.max(n - 1, 0)), ax)
    inside = ops.logical_and(idx >= 0, idx < n)
    if fill_value is None:
        fill_value = nan if t.dtype.is_floating_point else (
            True if t.dtype is _bool else int(np.iinfo(t.dtype.np).min))
    slot_shape = list(t.shape)
    slot_shape[ax] = 1
    padded = ops.cat([t, creation.full(slot_shape, fill_value, dtype=t.dtype)], ax)
    return indexing.take_along_dim(padded, ops.where(inside, idx, asarray(n, idx.dtype)), ax)


def reshape(a: Any, shape: Any = None, order: str = "C", *, newshape: Any = None) -> Tensor:
    """numpy's reshape; ``order='F'`` reads and writes the elements with the
    first index fastest (a reshape of the reversed axes)."""
    t, target = _t(a), _shape(newshape if shape is None else shape)
    if order == "C":
        return ops.reshape(t, target)
    if order != "F":
        raise NotImplementedError(f"pf.numpy.reshape: order={order!r} (only 'C' and 'F')")
    flipped = ops.reshape(transpose(t), target[::-1])
    return transpose(flipped)


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
    return out if dtype is None else out.to(_dt(dtype))


def stack(arrays: Sequence[Any], axis: int = 0, out: Any = None, dtype: Any = None) -> Tensor:
    _no_out(out)
    out = ops.stack([_t(x) for x in arrays], axis)
    return out if dtype is None else out.to(_dt(dtype))


def hstack(tup: Sequence[Any]) -> Tensor:
    ts = [_t(x) for x in tup]
    return concatenate(ts, 0 if builtins.all(x.ndim == 1 for x in ts) else 1)


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
    if total_repeat_length is None or out.shape[ax] == total_repeat_length:
        return out
    n = int(total_repeat_length)
    if n < out.shape[ax]:  # JAX cuts the repeats
        return indexing.narrow(out, ax, 0, n)
    if out.shape[ax] == 0:
        raise ValueError(f"pf.numpy.repeat: total_repeat_length={n} pads with the last "
                         "repeated element, and there is none")
    last = indexing.narrow(out, ax, out.shape[ax] - 1, 1)  # JAX pads with the last one
    shape = list(out.shape)
    shape[ax] = n - out.shape[ax]
    return ops.cat([out, ops.broadcast_to(last, tuple(shape))], ax)


def diag(v: Any, k: int = 0) -> Tensor:
    """numpy's diag: a 1-d array's diagonal matrix, a 2-d array's ``k``-th
    diagonal (torch's ``diagonal=`` is numpy's ``k=``)."""
    return indexing.diag(_t(v), int(k))


def diagflat(v: Any, k: int = 0) -> Tensor:
    return composites2.diagflat(_t(v), int(k))


def rot90(m: Any, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Tensor:
    """numpy's rot90 (``axes``: torch's ``dims``)."""
    return composites2.rot90(_t(m), k, tuple(axes))


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
        t = ops.maximum(t, _weak(lo, t))
    if hi is not None:
        t = ops.minimum(t, _weak(hi, t))
    return t


def _pad_widths(pad_width: Any, ndim: int) -> np.ndarray:
    w = np.asarray(pad_width, dtype=np.int64)
    w = w.reshape(-1, 2) if w.ndim else np.asarray([[int(w)] * 2])
    w = np.broadcast_to(w, (ndim, 2))
    if np.any(w < 0):
        raise ValueError(f"pf.numpy.pad: negative pad widths {w.tolist()}")
    return w


_STATS = {"maximum": "max", "minimum": "min", "mean": "mean", "median": "median"}


def pad(array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Tensor:
    """numpy's pad. ``constant`` (``constant_values``), the index-map modes
    ``edge``, ``reflect``, ``symmetric``, ``wrap`` (a gather along each axis:
    numpy's map of ``arange(n)``), and the statistics ``maximum``,
    ``minimum``, ``mean``, ``median`` (whole axis; axes padded in order, as
    numpy); ``empty`` pads zeros, as JAX."""
    t = _t(array)
    w = _pad_widths(pad_width, t.ndim)
    if mode in ("constant", "empty"):
        extra = set(kwargs) - {"constant_values"}
        if extra or (mode == "empty" and kwargs):
            raise TypeError(f"pf.numpy.pad(mode={mode!r}): unsupported keywords {sorted(kwargs)}")
        cv = np.asarray(kwargs.get("constant_values", 0))
        if cv.ndim == 0:
            return lax_pad(t, cv.item(), [(int(lo), int(hi), 0) for lo, hi in w])
        cv = np.broadcast_to(cv.reshape(-1, 2) if cv.size > 1 else cv.reshape(1, 1),
                             (t.ndim, 2))
        for ax, ((lo, hi), (vlo, vhi)) in enumerate(zip(w, cv)):
            parts = []
            for n, v in ((lo, vlo), (hi, vhi)):
                shape = list(t.shape)
                shape[ax] = int(n)
                parts.append(full(shape, v, t.dtype))
            t = ops.cat([parts[0], t, parts[1]], ax)
        return t
    if mode in ("edge", "reflect", "symmetric", "wrap"):
        reflect_type = kwargs.pop("reflect_type", "even")
        if kwargs:
            raise TypeError(f"pf.numpy.pad(mode={mode!r}): unsupported keywords {sorted(kwargs)}")
        if reflect_type not in ("even", "odd"):
            raise ValueError(f"reflect_type must be 'even' or 'odd', got {reflect_type!r}")
        for ax, (lo, hi) in enumerate(w):
            if lo == hi == 0:
                continue
            n = t.shape[ax]
            if n == 0:
                raise ValueError(f"pf.numpy.pad(mode={mode!r}): can't extend empty axis {ax} "
                                 f"of shape {list(t.shape)}")
            if reflect_type == "odd" and mode in ("reflect", "symmetric"):
                t = _pad_odd(t, ax, int(lo), int(hi), mode)
                continue
            src = np.pad(np.arange(n), (int(lo), int(hi)), mode=mode)
            t = indexing.index_select(t, ax, Tensor._leaf(src.astype(np.int64)))
        return t
    if mode == "linear_ramp":
        ends = np.asarray(kwargs.pop("end_values", 0))
        if kwargs:
            raise TypeError(f"pf.numpy.pad(mode='linear_ramp'): unsupported keywords "
                            f"{sorted(kwargs)}")
        ends = np.broadcast_to(ends.reshape(-1, 2) if ends.size > 1 else ends.reshape(1, 1),
                               (t.ndim, 2))
        for ax, ((lo, hi), (e_lo, e_hi)) in enumerate(zip(w, ends)):
            n = t.shape[ax]
            before = linspace(e_lo.item(), ops.squeeze(indexing.narrow(t, ax, 0, 1), ax),
                              int(lo), endpoint=False, dtype=t.dtype, axis=ax)
            after = linspace(e_hi.item(), ops.squeeze(indexing.narrow(t, ax, n - 1, 1), ax),
                             int(hi), endpoint=False, dtype=t.dtype, axis=ax)
            t = ops.cat([before, t, flip(after, ax)], ax)
        return t
    if mode in _STATS:
        stat_length = kwargs.pop("stat_length", None)
        if kwargs:
            raise TypeError(f"pf.numpy.pad(mode={mode!r}): unsupported keywords {sorted(kwargs)}")
        lengths = None if stat_length is None else _pad_widths(stat_length, t.ndim)
        for ax, (lo, hi) in enumerate(w):
            if lengths is None:
                s_lo = s_hi = _pad_stat(mode, t, ax)
            else:
                n_lo, n_hi = (int(v) for v in lengths[ax])
                if n_lo == 0 or n_hi == 0:
                    raise ValueError("stat_length of 0 yields no value for padding")
                n = t.shape[ax]
                n_lo, n_hi = builtins.min(n_lo, n), builtins.min(n_hi, n)
                s_lo = _pad_stat(mode, indexing.narrow(t, ax, 0, n_lo), ax)
                s_hi = _pad_stat(mode, indexing.narrow(t, ax, n - n_hi, n_hi), ax)
            if lo == hi == 0:
                continue
            shape = list(t.shape)
            parts = []
            for k, st in ((lo, s_lo), (hi, s_hi)):
                shape[ax] = int(k)
                parts.append(ops.broadcast_to(st, tuple(shape)))
            t = ops.cat([parts[0], t, parts[1]], ax)
        return t
    raise NotImplementedError(f"pf.numpy.pad: mode {mode!r} is not implemented")


def _pad_odd(t: Tensor, ax: int, lo: int, hi: int, mode: str) -> Tensor:
    """reflect/symmetric with ``reflect_type='odd'`` along ``ax``: each
    reflected block is ``2 * edge - block``, the edge moving out block by
    block (JAX's loop, numpy's values)."""
    n = t.shape[ax]
    offset = 1 if (mode == "reflect" and n > 1) else 0
    for before, padding in ((True, lo), (False, hi)):
        size = t.shape[ax]
        edge = indexing.narrow(t, ax, 0 if before else size - 1, 1)
        while padding > 0:
            cur = builtins.min(padding, n - offset)
            padding -= cur
            size = t.shape[ax]
            if before:
                start = offset
            else:
                stop = size if (mode == "symmetric" or n == 1) else size - 1
                start = size - (cur + offset) if stop == size else stop - cur
            x = flip(indexing.narrow(t, ax, start, cur), ax)
            x = 2 * edge - x
            if n > 1:
                edge = indexing.narrow(x, ax, 0 if before else cur - 1, 1)
            t = ops.cat([x, t] if before else [t, x], ax)
    return t


def _pad_stat(mode: str, t: Tensor, ax: int) -> Tensor:
    if mode == "maximum":
        return max(t, ax, keepdims=True)
    if mode == "minimum":
        return min(t, ax, keepdims=True)
    s = (mean if mode == "mean" else median)(t, ax, keepdims=True)
    # numpy rounds an integer array's statistic back to its dtype
    return s if t.dtype.is_floating_point else ops.round(s).to(t.dtype)


# ---- products ----

def _preferred(ts: tuple[Any, ...], preferred_element_type: Any) -> list[Tensor]:
    """The operands of a product, computed in ``preferred_element_type`` when
    given (JAX's accumulation type: int8 products in int32, bfloat16 in
    float32, which holds their products exactly)."""
    out = [_t(t) for t in ts]
    if preferred_element_type is None:
        return out
    d = _dt(preferred_element_type)
    if builtins.any(d.itemsize < t.dtype.itemsize for t in out):
        raise NotImplementedError(f"preferred_element_type={d.name} narrower than the operands "
                                  f"({', '.join(t.dtype.name for t in out)}) is not supported")
    return [t.to(d) for t in out]


def dot(a: Any, b: Any, *, precision: Any = None,
        preferred_element_type: Any = None) -> Tensor:
    """numpy's dot: a product for scalars, a contraction of a's last axis
    with b's last (1-d b) or second-to-last axis. ``precision`` changes
    nothing (float32 products are exact on the host)."""
    del precision
    x, y = _preferred((a, b), preferred_element_type)
    if x.ndim == 0 or y.ndim == 0:
        return x * y
    if y.ndim == 1:
        return _pf_tensordot(x, y, ([x.ndim - 1], [0]))
    return _pf_tensordot(x, y, ([x.ndim - 1], [y.ndim - 2]))


def matmul(a: Any, b: Any, *, precision: Any = None,
           preferred_element_type: Any = None) -> Tensor:
    """``jnp.matmul`` (``@``), with JAX's ``precision`` (changes nothing
    here) and ``preferred_element_type``."""
    del precision
    x, y = _preferred((a, b), preferred_element_type)
    return ops.matmul(x, y)


def vdot(a: Any, b: Any, *, precision: Any = None,
         preferred_element_type: Any = None) -> Tensor:
    del precision
    x, y = _preferred((a, b), preferred_element_type)
    return sum(ops.reshape(x, (-1,)) * ops.reshape(y, (-1,)))


def outer(a: Any, b: Any) -> Tensor:
    return ops.reshape(_t(a), (-1, 1)) * ops.reshape(_t(b), (1, -1))


def inner(a: Any, b: Any, *, precision: Any = None,
          preferred_element_type: Any = None) -> Tensor:
    del precision
    x, y = _preferred((a, b), preferred_element_type)
    if x.ndim == 0 or y.ndim == 0:
        return x * y
    return _pf_tensordot(x, y, ([x.ndim - 1], [y.ndim - 1]))


def where(condition: Any, x: Any = None, y: Any = None, *, size: Any = None,
          fill_value: Any = None) -> Any:
    """numpy's where; Python numbers are weakly typed as JAX's (``where(c,
    1, 0)`` is int32, ``where(c, ints, 0.5)`` float32)."""
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError("Either both or neither of the x and y arguments should be provided "
                         "to jax.numpy.where")
    if isinstance(x, Tensor):
        xt, yt = x, _weak(y, x)
    elif isinstance(y, Tensor):
        xt, yt = _weak(x, y), y
    else:
        d = result_type(*(v if isinstance(v, int | float) else asarray(v) for v in (x, y)))
        xt, yt = asarray(x, d), asarray(y, d)
    return ops.where(_t(condition), xt, yt)


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
    torch's is 0); of a complex array (``jnp.fft``'s), its modulus."""
    if isinstance(x, Complex):
        return x.__abs__()
    t = _t(x)
    if not t.dtype.is_floating_point:
        return ops.abs(t)
    return ops.where(t >= 0, t, ops.neg(t)) + 0.0  # (+ 0.0: |-0.0| is +0.0)


absolute = abs


def sign(x: Any, /) -> Tensor:
    """numpy's sign: NaN stays NaN and -0.0 stays -0.0 (torch's gives 0);
    derivative 0."""
    t = _t(x)
    if not t.dtype.is_floating_point:
        return ops.sign(t)
    keep = ops.logical_or(ops.isnan(t), ops.eq(t, 0.0))
    return ops.where(keep, t * 0.0, ops.sign(t))


def copysign(x1: Any, x2: Any, /) -> Tensor:
    """``|x1|`` with ``x2``'s sign bit (JAX's: ``where(signbit(x2), -|x1|,
    |x1|)``, whose derivative at x1 = 0 is +-1, not torch's 0)."""
    a, b = _inexact(_t(x1)), _inexact(_t(x2))
    dt = promote_types(a.dtype, b.dtype)
    a, b = a.to(dt), b.to(dt)
    mag = abs(a)
    return ops.where(composites2.signbit(b), ops.neg(mag), mag)


def mod(x1: Any, x2: Any) -> Tensor:
    return ops.remainder(_t(x1), x2)


def power(x1: Any, x2: Any) -> Tensor:
    _check_python_int(x2)
    t = _t(x1)
    if t.dtype is _bool and isinstance(x2, int) and not isinstance(x2, bool):
        t = t.to(_I())  # (JAX's weak int: bool ** 2 is int32)
    return ops.pow(t, x2)


def _no_out(out: Any) -> None:
    if out is not None:
        raise NotImplementedError("pf.numpy: out= is not supported (JAX arrays are immutable)")


# ---- names whose torch meaning differs from numpy's (defaults, dtypes, arguments) ----

def _i32(t: Tensor) -> Tensor:
    """JAX's int32 index results (torch's are int64)."""
    return t.to(_I()) if t.dtype is _i64 else t


def _inexact_dtype(d: DType) -> DType:
    """JAX's float for integer or bool data: float32, and float64 for int64
    data with ``jax_enable_x64`` (``jnp.sin(int32)`` is float32 in both modes)."""
    return d if d.is_floating_point else \
        (_f64 if d is _i64 and _config.jax_enable_x64 else _f32)


def _inexact(t: Tensor) -> Tensor:
    return t if t.dtype.is_floating_point else t.to(_inexact_dtype(t.dtype))


def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False,
             indexing: str = "xy") -> list[Tensor]:
    """numpy's meshgrid: ``indexing='xy'`` by default (torch's is 'ij'): the
    first two outputs have shape ``(len(y), len(x), ...)``; ``sparse`` keeps
    the size-1 axes."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing!r}")
    ts = [_t(x) for x in xi]
    for i, t in enumerate(ts):
        if t.ndim != 1:
            raise ValueError(f"Arguments to jax.numpy.meshgrid must be 1D, got shape "
                             f"{list(t.shape)} for argument {i}")
    n = len(ts)
    swap = indexing == "xy" and n >= 2
    axes = [(1 - i if swap and i < 2 else i) for i in range(n)]
    full_shape = [0] * n
    for ax, t in zip(axes, ts):
        full_shape[ax] = t.shape[0]
    out = []
    for ax, t in zip(axes, ts):
        view = [1] * n
        view[ax] = t.shape[0]
        r = ops.reshape(t, tuple(view))
        out.append(r if sparse else ops.broadcast_to(r, tuple(full_shape)))
    return out


def round(a: Any, decimals: int = 0, out: Any = None) -> Tensor:  # noqa: A001
    """numpy's round: half to even, at ``decimals`` digits (``x * 10**d``
    rounded, divided by ``10**d``, as JAX); integers are kept (negative
    ``decimals`` on integers is refused, as JAX)."""
    _no_out(out)
    t = _t(a)
    decimals = int(decimals)
    if not t.dtype.is_floating_point:
        if decimals < 0:
            raise NotImplementedError("integer np.round not implemented for decimals < 0")
        return t
    if decimals == 0:
        return ops.round(t)
    factor = float(np.asarray(10.0 ** decimals, t.dtype.np))
    return ops.round(t * factor) / factor


around = round


def cbrt(x: Any) -> Tensor:
    """The real cube root (negative for negative x): ``sign(x) |x|^(1/3)``."""
    t = _inexact(_t(x))
    mag = ops.pow(abs(t), 1.0 / 3.0)  # (JAX's |x| derivative: cbrt'(0) is inf, not nan)
    return ops.where(t < 0, ops.neg(mag), mag)


def equal(x1: Any, x2: Any) -> Tensor:
    """Elementwise ``x1 == x2`` (torch's ``equal`` is one bool for the whole)."""
    return ops.eq(_t(x1), x2 if isinstance(x2, int | float) else _t(x2))


def float_power(x1: Any, x2: Any) -> Tensor:
    """``x1 ** x2`` in JAX's inexact dtype of the operands (float32 for
    integers; torch's is float64)."""
    return ops.pow(_inexact(_t(x1)), _inexact(_t(x2)))


def heaviside(x1: Any, x2: Any) -> Tensor:
    """0 below zero, 1 above, ``x2`` at zero; NaN stays NaN (as JAX's)."""
    a, b = _inexact(_t(x1)), _inexact(_t(x2))
    out = ops.where(a < 0, 0.0, ops.where(a > 0, 1.0, b)).to(a.dtype)
    return ops.where(ops.isnan(a), a, out)


def real(val: Any) -> Tensor:
    return val.real if isinstance(val, Complex) else _t(val)


def imag(val: Any) -> Tensor:
    if isinstance(val, Complex):
        return val.imag
    t = _t(val)
    return zeros(t.shape, t.dtype)


def conj(x: Any) -> Any:
    return x.conj() if isinstance(x, Complex) else _t(x)


def angle(z: Any, deg: bool = False) -> Tensor:
    """The complex argument (``atan2(imag, real)``; of a real array 0 or pi)."""
    c = z if isinstance(z, Complex) else Complex(z)
    a = c.angle()
    return a * (180.0 / math.pi) if deg else a


conjugate = conj


def argwhere(a: Any, *, size: int | None = None, fill_value: Any = None) -> Tensor:
    t = _t(a)
    if size is not None:
        if t.ndim == 0:
            raise NotImplementedError("pf.numpy.argwhere(size=...) of a 0-d array")
        return ops.stack(nonzero(t, size=size, fill_value=fill_value), 1)
    if t.ndim == 0:  # numpy's: one empty row when the scalar is nonzero
        return Tensor._leaf(np.zeros((int(bool(t.item())), 0), _I().np))
    return _i32(indexing.argwhere(t))


def flatnonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> Tensor:
    return nonzero(ravel(a), size=size, fill_value=fill_value)[0]


def count_nonzero(a: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    t = _t(a)
    return sum(ops.ne(t, 0), axis, keepdims=keepdims)


def bincount(x: Any, weights: Any = None, minlength: int = 0, *,
             length: int | None = None) -> Tensor:
    """JAX's bincount: ``length`` bins when given (values at or past it are
    dropped, negatives count in bin 0), else ``max(x) + 1`` (at least
    ``minlength``) read from the values; int32 counts or the weights' dtype."""
    t = _t(x)
    if t.dtype.is_floating_point or t.dtype is _bool:
        raise TypeError(f"bincount: x argument must have an integer type, got {t.dtype.name}")
    if t.ndim != 1:
        raise ValueError(f"bincount: x must be 1-dimensional, got shape {list(t.shape)}")
    if length is None:
        top = int(ops.amax(t, (0,)).item()) + 1 if t.shape[0] else 0
        length = builtins.max(top, int(minlength))
    idx = ops.maximum(t, asarray(0, t.dtype))
    keep = idx < length
    w = ones(t.shape, _I()) if weights is None else _t(weights)
    w = ops.where(keep, w, asarray(0, w.dtype))
    idx = ops.where(keep, idx, asarray(0, t.dtype)).to(_i64)
    return indexing.index_add(zeros((int(length),), w.dtype), 0, idx, w)


def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None, *,
                 method: str = "scan") -> Tensor:
    if side not in ("left", "right"):
        raise ValueError(f"{side!r} is an invalid value for keyword 'side'")
    s = _t(a)
    if s.ndim != 1:
        raise ValueError("a should be 1-dimensional")
    if sorter is not None:
        s = take(s, sorter)
    vv = _t(v)
    vv = vv.to(s.dtype) if vv.dtype != s.dtype else vv
    if not s.dtype.is_floating_point:
        return composites.searchsorted(s, vv, side=side).to(_int32)  # (JAX's, in both modes)
    # NaN sorts after everything (numpy's and JAX's order): searched as +inf,
    # then a NaN query goes after the numbers (left) or the NaNs too (right)
    # and no number goes past the first NaN of ``a``
    a_nan = ops.isnan(s)
    numbers = sum(ops.logical_not(a_nan)).to(_int32)
    pos = composites.searchsorted(ops.where(a_nan, math.inf, s),
                                  ops.where(ops.isnan(vv), math.inf, vv), side=side).to(_int32)
    at_nan = numbers if side == "left" else asarray(s.shape[0], _int32)
    return ops.where(ops.isnan(vv), at_nan, ops.minimum(pos, numbers))


def unravel_index(indices: Any, shape: Any) -> tuple[Tensor, ...]:
    """The coordinates of flat indices; out-of-range indices are clipped to
    the array, as JAX (numpy raises)."""
    idx = _t(indices)
    dims = _shape(shape)
    total = math.prod(dims)
    idx = clip(idx, -total, total - 1)
    idx = ops.where(idx < 0, idx + total, idx)
    return tuple(_i32(c) for c in composites2.unravel_index(idx, dims))


def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None) -> Tensor:
    """numpy's diff; a scalar ``prepend``/``append`` is broadcast along the
    other axes."""
    t = _t(a)
    ax = int(axis) % t.ndim
    parts = []
    for extra in (prepend, append):
        if extra is None:
            parts.append(None)
            continue
        e = _t(extra)
        if e.ndim == 0:
            shape = list(t.shape)
            shape[ax] = 1
            e = ops.broadcast_to(e.to(t.dtype), tuple(shape))
        parts.append(e)
    if parts[0] is not None:
        t = ops.cat([parts[0].to(t.dtype), t], ax)
    if parts[1] is not None:
        t = ops.cat([t, parts[1].to(t.dtype)], ax)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    for _ in range(n):
        t = _slice_axis(t, ax, 1, None) - _slice_axis(t, ax, 0, -1)
    return t


def _slice_axis(t: Tensor, ax: int, start: int | None, stop: int | None) -> Tensor:
    key = [builtins.slice(None)] * t.ndim
    key[ax] = builtins.slice(start, stop)
    return t[tuple(key)]


def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Tensor:
    t = ravel(ary)
    d = t[1:] - t[:-1]
    parts = [ravel(_t(to_begin).to(d.dtype))] if to_begin is not None else []
    parts.append(d)
    if to_end is not None:
        parts.append(ravel(_t(to_end).to(d.dtype)))
    return ops.cat(parts, 0) if len(parts) > 1 else d


def histogram_bin_edges(a: Any, bins: Any = 10, range: Any = None,  # noqa: A002
                        weights: Any = None) -> Tensor:
    """JAX's edges: given ones, or ``bins + 1`` evenly spaced (JAX's
    ``start (1 - s) + stop s`` formula) over ``range`` (the data's min and
    max by default, widened by 0.5 each side when they are equal)."""
    t = _inexact(_t(a))
    if isinstance(bins, str):
        raise NotImplementedError(f"pf.numpy.histogram: string bins {bins!r}")
    if np.ndim(bins) == 1 or isinstance(bins, Tensor):
        return _t(bins).to(t.dtype)
    nb = int(bins)
    if range is None:
        lo, hi = min(t), max(t)
    else:
        if len(range) != 2:
            raise ValueError(f"histogram_bin_edges: range must have shape (2,), got {range}")
        lo, hi = asarray(range[0], t.dtype), asarray(range[1], t.dtype)
    same = ops.eq(hi - lo, 0)
    lo, hi = ops.where(same, lo - 0.5, lo), ops.where(same, hi + 0.5, hi)
    step = creation.arange(0, nb + 1, 1, dtype=t.dtype) / float(nb)
    edges = lo * (1.0 - step) + hi * step
    return ops.cat([edges[:-1], ops.reshape(hi, (1,))], 0)


def histogram(a: Any, bins: Any = 10, range: Any = None,  # noqa: A002
              weights: Any = None, density: bool | None = None) -> tuple[Tensor, Tensor]:
    """numpy's histogram (10 bins by default; torch's is 100): the last bin
    is closed, values outside the edges are not counted."""
    t = ravel(_inexact(_t(a)))
    edges = histogram_bin_edges(t, bins, range)
    w = ones(t.shape, t.dtype) if weights is None else ravel(_t(weights)).to(t.dtype)
    nb = edges.shape[0]
    idx = composites.searchsorted(edges, t, side="right")
    idx = ops.where(ops.eq(t, edges[-1]), nb - 1, idx)
    counts = indexing.index_add(zeros((nb + 1,), w.dtype), 0, idx.to(_i64), w)[1:nb]
    if density:
        widths = edges[1:] - edges[:-1]
        counts = counts / widths / sum(counts)
    return counts, edges


def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False,
        ddof: int | None = None, fweights: Any = None, aweights: Any = None) -> Tensor:
    t = _inexact(_t(m))
    t = ops.reshape(t, (1, -1)) if t.ndim < 2 else t
    if not rowvar and t.shape[0] != 1:
        t = transpose(t)
    if y is not None:
        u = _inexact(_t(y))
        u = ops.reshape(u, (1, -1)) if u.ndim < 2 else u
        if not rowvar and u.shape[0] != 1:
            u = transpose(u)
        t = ops.cat([t, u.to(t.dtype)], 0)
    c = (0 if bias else 1) if ddof is None else int(ddof)
    r = composites2.cov(t, correction=c, fweights=fweights, aweights=aweights)
    return r


def corrcoef(x: Any, y: Any = None, rowvar: bool = True) -> Tensor:
    c = cov(x, y, rowvar)
    if c.ndim == 0:
        return c / c
    d = ops.sqrt(indexing.diagonal(c))
    return clip(c / ops.reshape(d, (-1, 1)) / ops.reshape(d, (1, -1)), -1, 1)


def select(condlist: Sequence[Any], choicelist: Sequence[Any], default: Any = 0) -> Tensor:
    """The first true condition's choice, ``default`` where none is true."""
    if len(condlist) != len(choicelist):
        raise ValueError(f"condlist must have length equal to choicelist ({len(condlist)} vs "
                         f"{len(choicelist)})")
    if not condlist:
        raise ValueError("condlist must be non-empty")
    choices = [_t(c) for c in choicelist]
    out = _t(default)
    for cond, ch in zip(reversed(condlist), reversed(choices)):
        out = ops.where(_t(cond), ch, out)
    return out


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None,
          out: Any = None) -> Tensor:
    _no_out(out)
    d = indexing.diagonal(_t(a), offset, axis1, axis2)
    return sum(d, -1, dtype=dtype)


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
    return indexing.diagonal(_t(a), offset, axis1, axis2)


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Tensor, Tensor]:
    """numpy's ``tril_indices(n, k=0, m=n)``: a pair of int32 index arrays."""
    r, c = np.tril_indices(int(n), int(k), None if m is None else int(m))
    return Tensor._leaf(r.astype(_I().np)), Tensor._leaf(c.astype(_I().np))


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Tensor, Tensor]:
    """numpy's ``triu_indices(n, k=0, m=n)``: a pair of int32 index arrays."""
    r, c = np.triu_indices(int(n), int(k), None if m is None else int(m))
    return Tensor._leaf(r.astype(_I().np)), Tensor._leaf(c.astype(_I().np))


def tril_indices_from(arr: Any, k: int = 0) -> tuple[Tensor, Tensor]:
    s = shape(arr)
    if len(s) != 2:
        raise ValueError("input array must be 2-d")
    return tril_indices(s[0], k, s[1])


def triu_indices_from(arr: Any, k: int = 0) -> tuple[Tensor, Tensor]:
    s = shape(arr)
    if len(s) != 2:
        raise ValueError("input array must be 2-d")
    return triu_indices(s[0], k, s[1])


def diag_indices(n: int, ndim: int = 2) -> tuple[Tensor, ...]:
    i = arange(int(n))
    return (i,) * int(ndim)


def diag_indices_from(arr: Any) -> tuple[Tensor, ...]:
    s = shape(arr)
    if len(s) < 2 or len(set(s)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(s[0], len(s))


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Tensor:  # noqa: N803
    return Tensor._leaf(np.tri(int(N), M, int(k), dtype=(_dt(dtype) or _f32).np))


def indices(dimensions: Sequence[int], dtype: Any = None,
            sparse: bool = False) -> Any:
    d = _dt(dtype) or _int32
    grids = np.indices(tuple(dimensions), dtype=d.np, sparse=sparse)
    if sparse:
        return tuple(Tensor._leaf(np.ascontiguousarray(g)) for g in grids)
    return Tensor._leaf(np.ascontiguousarray(grids))


def unique(ar: Any, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: int | None = None, *, equal_nan: bool = True,
           size: int | None = None, fill_value: Any = None) -> Any:
    """numpy's unique of the flattened array (sorted; NaNs last, equal when
    ``equal_nan``), read from the values, as JAX's (index, inverse and counts
    int32). As JAX: without ``size`` the values are constants (no gradient);
    with ``size`` they are a gather of the input, padded with the smallest
    value (or ``fill_value``), and the gradient flows to the gathered elements."""
    if axis is not None:
        return _unique_axis(_t(ar), int(axis), return_index, return_inverse, return_counts,
                            equal_nan, size, fill_value)
    t = _t(ar)
    flat = ravel(t)
    host = flat.numpy()
    perm = np.argsort(host, kind="stable")
    aux = host[perm]
    neq = aux[1:] != aux[:-1]
    if equal_nan and aux.dtype.kind == "f":
        neq &= ~(np.isnan(aux[1:]) & np.isnan(aux[:-1]))
    mask = np.concatenate([np.ones(builtins.min(aux.size, 1), bool), neq])
    first = np.flatnonzero(mask)
    ind = first if size is None else np.pad(first[:size], (0, builtins.max(size - first.size, 0)))
    if size is None:
        vals = Tensor._leaf(np.ascontiguousarray(aux[ind]))
    else:
        vals = indexing.index_select(flat, 0, Tensor._leaf(perm[ind].astype(np.int64)))
        if fill_value is not None:
            valid = Tensor._leaf(np.arange(size) < first.size)
            vals = ops.where(valid, vals, _t(fill_value).to(vals.dtype))
    out: list[Tensor] = [vals]
    if return_index:
        out.append(Tensor._leaf(perm[ind].astype(_I().np)))
    if return_inverse:
        inv = np.zeros(aux.size, _I().np)
        inv[perm] = np.cumsum(mask) - 1
        out.append(Tensor._leaf(inv.reshape(t.shape)))
    if return_counts:
        if size is None:
            idx = np.append(first, mask.size)
        else:
            idx = np.pad(first[:size + 1], (0, builtins.max(size + 1 - first.size, 0)))
            idx[1:] = np.where(idx[1:] != 0, idx[1:], mask.size)
        out.append(Tensor._leaf(np.diff(idx).astype(_I().np)))
    return vals if len(out) == 1 else tuple(out)


def _unique_axis(t: Tensor, axis: int, return_index: bool, return_inverse: bool,
                 return_counts: bool, equal_nan: bool, size: int | None, fill_value: Any
                 ) -> Any:
    """``unique(axis=)``: the distinct slices along ``axis``, sorted
    lexicographically (NaNs last, equal when ``equal_nan``), read from the
    values (constants, as the flat form without ``size``). With ``size``, as
    JAX's: the first ``size`` slices gathered from the input (the gradient
    flows to them), padded with the smallest slice or ``fill_value``; the
    index padded with the smallest slice's, the counts with zeros."""
    ax = axis % builtins.max(t.ndim, 1)
    host = np.moveaxis(t.numpy(), ax, 0)
    if size is not None and host.shape[0] == 0 and size and fill_value is None:
        raise ValueError("jnp.unique: for zero-sized input with nonzero size argument, "
                         "fill_value must be specified")
    rows = host.reshape(host.shape[0], -1)
    perm = np.lexsort(rows.T[::-1]) if rows.shape[1] else np.arange(rows.shape[0])
    srt = rows[perm]
    diff = srt[1:] != srt[:-1]
    if equal_nan and srt.dtype.kind == "f":
        diff &= ~(np.isnan(srt[1:]) & np.isnan(srt[:-1]))
    mask = np.concatenate([np.ones(builtins.min(len(srt), 1), bool), diff.any(axis=1)])
    first = np.flatnonzero(mask)
    if size is None:
        ind = first
        out: list[Tensor] = [Tensor._leaf(np.ascontiguousarray(
            np.moveaxis(host[perm[ind]], 0, ax)))]
    else:
        ind = np.pad(first[:size], (0, builtins.max(size - first.size, 0)))
        if len(srt):
            vals = indexing.index_select(t, ax, Tensor._leaf(perm[ind].astype(np.int64)))
        else:
            shape = list(t.shape)
            shape[ax] = size
            vals = zeros(tuple(shape), t.dtype)
        if fill_value is not None:
            valid = np.arange(size) < first.size
            valid = valid.reshape([-1 if d == ax else 1 for d in builtins.range(t.ndim)])
            vals = ops.where(Tensor._leaf(valid), vals, _t(fill_value).to(vals.dtype))
        out = [vals]
    if return_index:
        out.append(Tensor._leaf((perm[ind] if len(srt) else perm).astype(_I().np)))
    if return_inverse:
        inv = np.zeros(len(srt), _I().np)
        inv[perm] = np.cumsum(mask) - 1
        out.append(Tensor._leaf(inv))
    if return_counts:
        if size is None:
            idx = np.append(first, len(srt))
        else:
            idx = np.pad(first[:size + 1], (0, builtins.max(size + 1 - first.size, 0)))
            idx[1:] = np.where(idx[1:] != 0, idx[1:], mask.size)
        out.append(Tensor._leaf(np.diff(idx).astype(_I().np)))
    return out[0] if len(out) == 1 else tuple(out)


def unique_values(x: Any, /, *, size: int | None = None, fill_value: Any = None) -> Tensor:
    return unique(x, size=size, fill_value=fill_value)


def unique_counts(x: Any, /, *, size: int | None = None, fill_value: Any = None) -> Any:
    return unique(x, return_counts=True, size=size, fill_value=fill_value)


def unique_inverse(x: Any, /, *, size: int | None = None, fill_value: Any = None) -> Any:
    return unique(x, return_inverse=True, size=size, fill_value=fill_value)


def unique_all(x: Any, /, *, size: int | None = None, fill_value: Any = None) -> Any:
    return unique(x, return_index=True, return_inverse=True, return_counts=True, size=size,
                  fill_value=fill_value)


def fmax(x1: Any, x2: Any) -> Tensor:
    """numpy's fmax (NaN ignored), JAX's ties: ``where(x1 > x2 | isnan(x2), x1, x2)``."""
    a, b = _t(x1), _t(x2)
    pick = ops.gt(a, b)
    if b.dtype.is_floating_point:
        pick = ops.logical_or(pick, ops.isnan(b))
    return ops.where(pick, a, b)


def fmin(x1: Any, x2: Any) -> Tensor:
    """numpy's fmin (NaN ignored), JAX's ties: ``where(x1 < x2 | isnan(x2), x1, x2)``."""
    a, b = _t(x1), _t(x2)
    pick = ops.lt(a, b)
    if b.dtype.is_floating_point:
        pick = ops.logical_or(pick, ops.isnan(b))
    return ops.where(pick, a, b)


def put(a: Any, ind: Any, v: Any, mode: str | None = None, *, inplace: bool = True) -> Tensor:
    """JAX's put (``inplace=False`` required): ``a.flat[ind] = v``, ``v``
    repeated to ``ind``'s length; the last write to an index wins."""
    if inplace:
        raise ValueError("jax.numpy.put cannot modify arrays in-place, because JAX arrays "
                         "are immutable. Pass inplace=False to instead return an updated array.")
    if mode not in (None, "clip", "wrap", "fill"):
        raise ValueError(f"put: invalid mode {mode!r}")
    t = _t(a)
    flat = ravel(t)
    n = flat.shape[0]
    idx = ravel(_t(ind)).numpy().astype(np.int64)
    if mode == "wrap":
        idx = idx % n
    elif mode == "clip":
        idx = np.clip(idx, 0, n - 1)
    elif np.any((idx < -n) | (idx >= n)):
        raise NotImplementedError(f"pf.numpy.put: index out of range for size {n} (JAX's "
                                  f"mode={mode!r} drops it)")
    idx = idx % n if n else idx
    vals = ravel(_t(v)).to(t.dtype)
    if vals.shape[0] != idx.shape[0]:
        reps = -(-idx.shape[0] // builtins.max(vals.shape[0], 1))
        vals = indexing.tile(vals, (reps,))[:idx.shape[0]]
    # the last write wins: keep each index's last occurrence
    last = {int(i): j for j, i in enumerate(idx)}
    pos = np.array(sorted(last), np.int64)
    src = np.array([last[int(i)] for i in pos], np.int64)
    picked = indexing.index_select(vals, 0, Tensor._leaf(src))
    mask = np.zeros(n, bool)
    mask[pos] = True
    placed = indexing.index_add(zeros((n,), t.dtype), 0, Tensor._leaf(pos), picked)
    return ops.reshape(ops.where(Tensor._leaf(mask), placed, flat), t.shape)


def fill_diagonal(a: Any, val: Any, wrap: bool = False, *, inplace: bool = True) -> Tensor:
    """numpy's fill_diagonal, out of place (``inplace=False``, as JAX asks):
    the main diagonal (all dims equal past 2-d) set to ``val`` (repeated)."""
    if inplace:
        raise ValueError("JAX arrays are immutable. Pass inplace=False to instead return "
                         "an updated array.")
    t = _t(a)
    if t.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if t.ndim > 2 and len(set(t.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    n_total = math.prod(t.shape)
    if t.ndim == 2:
        step = t.shape[1] + 1
        end = n_total if wrap else t.shape[1] * t.shape[1]
    else:
        step = 1 + int(np.cumprod(t.shape[:-1]).sum())
        end = n_total
    pos = np.arange(0, builtins.min(end, n_total), step, dtype=np.int64)
    vals = ravel(_t(val)).to(t.dtype)
    if vals.shape[0] != pos.shape[0]:
        reps = -(-pos.shape[0] // builtins.max(vals.shape[0], 1))
        vals = indexing.tile(vals, (reps,))[:pos.shape[0]]
    mask = np.zeros(n_total, bool)
    mask[pos] = True
    placed = indexing.index_add(zeros((n_total,), t.dtype), 0, Tensor._leaf(pos), vals)
    return ops.reshape(ops.where(Tensor._leaf(mask), placed, ravel(t)), t.shape)


def tensordot(a: Any, b: Any, axes: Any = 2, *, precision: Any = None,
              preferred_element_type: Any = None) -> Tensor:
    """numpy's tensordot: ``axes`` an int (a's last and b's first axes) or a
    pair of axis lists (or of single axes)."""
    if isinstance(axes, int | np.integer):
        return _tensordot(_t(a), _t(b), int(axes))
    if len(axes) != 2:
        raise TypeError(f"tensordot axes argument must be an int, a pair of ints, or a pair "
                        f"of lists/tuples, got {axes}")
    xa, xb = axes
    la = [int(xa)] if isinstance(xa, int | np.integer) else [int(v) for v in xa]
    lb = [int(xb)] if isinstance(xb, int | np.integer) else [int(v) for v in xb]
    return _tensordot(_t(a), _t(b), (la, lb))


def _tensordot(a: Tensor, b: Tensor, dims: Any) -> Tensor:
    if dims == 0 or dims == ([], []):
        return ops.reshape(a, (*a.shape, *(1,) * b.ndim)) * b
    return _pf_tensordot(a, b, dims)


def kron(a: Any, b: Any) -> Tensor:
    return composites.kron(_t(a), _t(b))


def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: int | None = None) -> Tensor:
    """numpy's cross product along the last axis (torch's default picks the
    first axis of size 3); a 2-vector has z = 0, and two of them give the
    z component alone (a scalar per pair), as numpy's and JAX's."""
    x, y = _t(a), _t(b)
    if axis is not None:
        axisa = axisb = axisc = axis
    x, y = moveaxis(x, axisa, -1), moveaxis(y, axisb, -1)
    if x.shape[-1] not in (2, 3) or y.shape[-1] not in (2, 3):
        raise ValueError(f"incompatible dimensions for cross product (dimension must be 2 or "
                         f"3), got {x.shape[-1]} and {y.shape[-1]}")
    if x.shape[-1] == 2 and y.shape[-1] == 2:
        return x[..., 0] * y[..., 1] - x[..., 1] * y[..., 0]
    x, y = (ops.cat([v, zeros((*v.shape[:-1], 1), v.dtype)], -1) if v.shape[-1] == 2 else v
            for v in (x, y))
    return moveaxis(composites.cross(x, y, -1), -1, axisc)


def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None,
           period: Any = None) -> Tensor:
    """numpy's linear interpolation (JAX's formula: ``fp[i-1] + (x -
    xp[i-1]) / dx * df`` with ``i`` from ``searchsorted(side='right')``)."""
    xa, xpa, fpa = _inexact(_t(x)), _inexact(_t(xp)), _inexact(_t(fp))
    dt = promote_types(promote_types(xa.dtype, xpa.dtype), fpa.dtype)
    xa, xpa, fpa = xa.to(dt), xpa.to(dt), fpa.to(dt)
    if xpa.ndim != 1 or fpa.ndim != 1 or xpa.shape != fpa.shape:
        raise ValueError(f"xp and fp must be one-dimensional arrays of equal size, got "
                         f"{list(xpa.shape)} and {list(fpa.shape)}")
    if period is not None:
        if left is not None or right is not None:
            raise ValueError("left and right are not used with period")
        p = builtins.abs(float(period))
        xa = ops.remainder(xa, p)
        xpa = ops.remainder(xpa, p)
        order = argsort(xpa)
        xpa, fpa = take(xpa, order), take(fpa, order)
        xpa = ops.cat([xpa[-1:] - p, xpa, xpa[:1] + p], 0)
        fpa = ops.cat([fpa[-1:], fpa, fpa[:1]], 0)
    n = xpa.shape[0]
    i = clip(composites.searchsorted(xpa, xa, side="right"), 1, n - 1).to(_i64)
    flat_i = ravel(i)
    fp_i = ops.reshape(indexing.index_select(fpa, 0, flat_i), i.shape)
    fp_im = ops.reshape(indexing.index_select(fpa, 0, flat_i - 1), i.shape)
    xp_i = ops.reshape(indexing.index_select(xpa, 0, flat_i), i.shape)
    xp_im = ops.reshape(indexing.index_select(xpa, 0, flat_i - 1), i.shape)
    df, dx, delta = fp_i - fp_im, xp_i - xp_im, xa - xp_im
    eps = float(np.spacing(np.finfo(dt.np).eps))
    dx0 = ops.abs(dx) <= eps
    f = ops.where(dx0, fp_im, fp_im + (delta / ops.where(dx0, 1.0, dx)) * df)
    if period is None:
        f = ops.where(xa < xpa[0], fpa[0] if left is None else _t(left).to(dt), f)
        f = ops.where(xa > xpa[-1], fpa[-1] if right is None else _t(right).to(dt), f)
    return f


def polyval(p: Any, x: Any, *, unroll: int = 16) -> Tensor:
    """Horner's rule: ``y = y * x + p[i]`` from the leading coefficient."""
    pt, xt = _t(p), _t(x)
    dt = promote_types(pt.dtype, xt.dtype)
    pt, xt = pt.to(dt), xt.to(dt)
    y = zeros(xt.shape, dt)
    for i in builtins.range(pt.shape[0]):
        y = y * xt + pt[i]
    return y


def _conv1d(a: Tensor, v: Tensor, mode: str, what: str) -> Tensor:
    """The full/same/valid 1-d correlation of ``a`` with ``v``: a gather of
    the zero-padded ``a`` by ``k + j`` times ``v[j]`` (differentiable in both)."""
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError(f"{what}() only support 1-dimensional inputs.")
    if a.shape[0] == 0 or v.shape[0] == 0:
        raise ValueError(f"{what}: inputs cannot be empty, got shapes {a.shape} and {v.shape}")
    n = v.shape[0]
    if mode == "valid":
        lo = hi = 0
    elif mode == "same":
        lo, hi = n // 2, n - n // 2 - 1
    elif mode == "full":
        lo = hi = n - 1
    else:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    ap = lax_pad(a, 0, [(lo, hi, 0)])
    m = ap.shape[0] - n + 1
    idx = np.arange(m)[:, None] + np.arange(n)[None, :]
    windows = ops.reshape(indexing.index_select(ap, 0, Tensor._leaf(idx.reshape(-1))), (m, n))
    return ops.matmul(windows, v)


def _conv_args(a: Any, v: Any) -> tuple[Tensor, Tensor]:
    x, y = _inexact(_t(a)), _inexact(_t(v))
    dt = promote_types(x.dtype, y.dtype)
    return x.to(dt), y.to(dt)


def convolve(a: Any, v: Any, mode: str = "full", *, precision: Any = None,
             preferred_element_type: Any = None) -> Tensor:
    """numpy's 1-d convolution (JAX's: the longer input is the signal)."""
    x, y = _conv_args(a, v)
    if x.shape[0] < y.shape[0]:
        x, y = y, x
    return _conv1d(x, flip(y), mode, "convolve")


def correlate(a: Any, v: Any, mode: str = "valid", *, precision: Any = None,
              preferred_element_type: Any = None) -> Tensor:
    """numpy's 1-d cross-correlation ``c[k] = sum_n a[n+k] v[n]`` (JAX's: the
    inputs swapped and the result reversed when ``v`` is longer)."""
    x, y = _conv_args(a, v)
    if x.shape[0] < y.shape[0]:
        return flip(_conv1d(y, x, mode, "correlate"))
    return _conv1d(x, y, mode, "correlate")


def lexsort(keys: Any, axis: int = -1) -> Tensor:
    """The indices that sort by the last key, then the one before, ... (stable
    sorts from the first key to the last)."""
    ks = [_t(k) for k in keys] if not isinstance(keys, Tensor) else list(keys)
    if not ks:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    shapes = {tuple(k.shape) for k in ks}
    if len(shapes) != 1:
        raise ValueError(f"all keys need to be the same shape, got {sorted(shapes)}")
    first = ks[0]
    ax = int(axis) % builtins.max(first.ndim, 1)
    idx = argsort(first, axis=ax).to(_i64)
    for k in ks[1:]:
        order = argsort(take_along_axis(k, idx, ax), axis=ax).to(_i64)
        idx = take_along_axis(idx, order, ax)
    return idx.to(_I())


def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Tensor]:
    """numpy's array_split: ``n`` sections, the first ``len % n`` one longer."""
    t = _t(ary)
    if not isinstance(indices_or_sections, int | np.integer):
        return split(t, indices_or_sections, axis)
    ax = int(axis) % t.ndim
    n, k = t.shape[ax], int(indices_or_sections)
    if k <= 0:
        raise ValueError("number sections must be larger than 0.")
    q, r = builtins.divmod(n, k)
    sizes = [q + 1] * r + [q] * (k - r)
    return list(ops.split(t, sizes, ax))


def append(arr: Any, values: Any, axis: int | None = None) -> Tensor:
    if axis is None:
        return ops.cat([ravel(arr), ravel(values)], 0)
    return ops.cat([_t(arr), _t(values)], int(axis))


def astype(x: Any, dtype: Any, /, *, copy: bool = False, device: Any = None) -> Tensor:
    """``x`` in ``dtype``; a float beyond an integer type's range saturates,
    NaN is 0 (XLA's conversion, as JAX's)."""
    return saturating_cast(_t(x), _dt(dtype))


def copy(a: Any, order: Any = None) -> Tensor:
    return _t(a).clone()


def broadcast_arrays(*args: Any) -> list[Tensor]:
    ts = [_t(a) for a in args]
    shp = np.broadcast_shapes(*(tuple(t.shape) for t in ts))
    return [ops.broadcast_to(t, shp) for t in ts]


def matrix_transpose(x: Any, /) -> Tensor:
    t = _t(x)
    if t.ndim < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got "
                         f"ndim={t.ndim}")
    return ops.swapaxes(t, -1, -2)


def permute_dims(a: Any, /, axes: Sequence[int]) -> Tensor:
    return transpose(a, axes)


def rollaxis(a: Any, axis: int, start: int = 0) -> Tensor:
    t = _t(a)
    n = t.ndim
    axis = int(axis) % n
    start = int(start) + n if start < 0 else int(start)
    if axis < start:
        start -= 1
    return moveaxis(t, axis, start)


def unstack(x: Any, /, *, axis: int = 0) -> tuple[Tensor, ...]:
    t = _t(x)
    ax = int(axis) % t.ndim
    return tuple(indexing.select(t, ax, i) for i in builtins.range(t.shape[ax]))


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Tensor:
    a, b = broadcast_arrays(x1, x2)
    return sum(a * b, axis)


def matvec(x1: Any, x2: Any, /) -> Tensor:
    return ops.matmul(_t(x1), ops.unsqueeze(_t(x2), -1))[..., 0]


def vecmat(x1: Any, x2: Any, /) -> Tensor:
    return ops.matmul(ops.unsqueeze(_t(x1), -2), _t(x2))[..., 0, :]


def _cumulative(scan: Any, initial: Any, x: Any, axis: int | None, dtype: Any,
                include_initial: bool) -> Tensor:
    """The array API's cumulative_sum/prod: ``scan`` along ``axis`` (needed
    above 1-D), with the identity ``initial(shape, dtype)`` prepended."""
    t = _t(x)
    if axis is None:
        if t.ndim > 1:
            raise ValueError("The input array has ndim > 1; axis must be specified")
        axis = 0
    out = scan(t, axis, dtype)
    if include_initial:
        ax = int(axis) % out.ndim
        shape = list(out.shape)
        shape[ax] = 1
        out = ops.cat([initial(shape, out.dtype), out], ax)
    return out


def cumulative_sum(x: Any, /, *, axis: int | None = None, dtype: Any = None,
                   include_initial: bool = False) -> Tensor:
    return _cumulative(cumsum, zeros, x, axis, dtype, include_initial)


def cumulative_prod(x: Any, /, *, axis: int | None = None, dtype: Any = None,
                    include_initial: bool = False) -> Tensor:
    return _cumulative(cumprod, ones, x, axis, dtype, include_initial)


def degrees(x: Any, /) -> Tensor:
    return _inexact(_t(x)) * float(np.float32(180.0 / np.pi))


def radians(x: Any, /) -> Tensor:
    return _inexact(_t(x)) * float(np.float32(np.pi / 180.0))


def fabs(x: Any, /) -> Tensor:
    return abs(_inexact(_t(x)))


def rint(x: Any, /) -> Tensor:
    t = _t(x)
    return ops.round(t) if t.dtype.is_floating_point else _inexact(t)


def modf(x: Any, /, out: Any = None) -> tuple[Tensor, Tensor]:
    _no_out(out)
    t = _inexact(_t(x))
    whole = ops.trunc(t)
    return t - whole, whole


def divmod(x1: Any, x2: Any, /) -> tuple[Tensor, Tensor]:  # noqa: A001
    a = _t(x1)
    return ops.floor_divide(a, x2), ops.remainder(a, x2)


def invert(x: Any, /) -> Tensor:
    return ops.bitwise_not(_t(x))


bitwise_invert = invert


def left_shift(x1: Any, x2: Any, /) -> Tensor:
    return ops.bitwise_left_shift(_t(x1), x2)


def right_shift(x1: Any, x2: Any, /) -> Tensor:
    return ops.bitwise_right_shift(_t(x1), x2)


def geomspace(start: float, stop: float, num: int = 50, endpoint: bool = True,
              dtype: Any = None, axis: int = 0) -> Tensor:
    if axis != 0:
        raise NotImplementedError("pf.numpy.geomspace(axis=...) is not supported")
    return Tensor._leaf(np.geomspace(start, stop, num, endpoint=endpoint)
                        .astype((_dt(dtype) or _F()).np))


def _window(name: str) -> Any:
    def f(M: int) -> Tensor:  # noqa: N803
        return Tensor._leaf(getattr(np, name)(int(M)).astype(_F().np))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"numpy's ``{name}`` window (float32)."
    return f


bartlett, blackman, hamming, hanning = (_window(n) for n in
                                        ("bartlett", "blackman", "hamming", "hanning"))


def kaiser(M: int, beta: float) -> Tensor:  # noqa: N803
    return Tensor._leaf(np.kaiser(int(M), float(beta)).astype(_F().np))


def isscalar(element: Any) -> bool:
    if isinstance(element, Tensor):
        return element.ndim == 0
    return bool(np.isscalar(element)) or isinstance(element, np.generic)


def iscomplexobj(x: Any) -> bool:
    """True for a complex array (``jnp.fft``'s results; pf has no other)."""
    return isinstance(x, Complex)


def isrealobj(x: Any) -> bool:
    return not isinstance(x, Complex)


def promote_types(a: Any, b: Any) -> DType:
    """JAX's promotion of two dtypes (int with float gives the float:
    int32 + float32 is float32, not numpy's float64)."""
    return composites.promote_types(to_dtype(a), to_dtype(b))


def result_type(*args: Any) -> DType:
    """JAX's result dtype: arrays and dtypes promote; Python scalars are
    weak (they only lift an integer result to float32)."""
    strong: list[DType] = []
    weak_float = weak_int = False
    for a in args:
        if isinstance(a, Tensor):
            strong.append(a.dtype)
        elif isinstance(a, bool):
            strong.append(_bool)
        elif isinstance(a, int):
            weak_int = True
        elif isinstance(a, float):
            weak_float = True
        else:
            strong.append(_canonical(a))
    if not strong:
        return _F() if weak_float else (_I() if weak_int else _bool)
    out = strong[0]
    for d in strong[1:]:
        out = promote_types(out, d)
    if weak_float and not out.is_floating_point:
        return _F()
    if weak_int and out is _bool:
        return _I()
    return out


def _canonical(a: Any) -> DType:
    arr = np.asarray(a) if not isinstance(a, DType | _ScalarType | type | np.dtype | str) else None
    if arr is not None:
        d = np.dtype(_CANONICAL.get(arr.dtype, arr.dtype))
        return to_dtype(d)
    return to_dtype(a)


def _nanreduce(name: str, fill: float | None) -> Any:
    def f(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,
          **kw: Any) -> Tensor:
        _no_out(out)
        t = _t(a)
        if not t.dtype.is_floating_point:
            return globals()[name[3:]](t, axis, keepdims=keepdims, **kw)
        mask = ops.isnan(t)
        if name in ("nanmax", "nanmin"):
            big = math.inf if name == "nanmin" else -math.inf
            r = globals()[name[3:]](ops.where(mask, big, t), axis, keepdims=keepdims)
            allnan = _all_axes(mask, axis, keepdims)
            return ops.where(allnan, math.nan, r)
        return globals()[name[3:]](ops.where(mask, fill, t), axis, keepdims=keepdims, **kw)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"numpy's ``{name}``: ``{name[3:]}`` ignoring NaNs."
    return f


def _all_axes(t: Tensor, axis: Any, keepdims: bool) -> Tensor:
    axes = _axis(t, axis)
    return reductions.all(t, axes, keepdim=keepdims) if t.ndim else t


nanmax, nanmin = _nanreduce("nanmax", None), _nanreduce("nanmin", None)


def nanprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
            initial: Any = None, where: Any = None) -> Tensor:
    """numpy's nanprod: ``prod`` with NaNs as 1."""
    t = _t(a)
    if t.dtype.is_floating_point:
        t = ops.where(ops.isnan(t), 1.0, t)
    return prod(t, axis, dtype, out, keepdims, initial, where)


def _nanarg(t: Tensor, axis: int | None, out: Any, keepdims: bool, fill: float,
            arg: Any) -> Tensor:
    """JAX's nanargmax/nanargmin: NaNs skipped, -1 where all are NaN."""
    if not t.dtype.is_floating_point:
        return arg(t, axis, out, keepdims)
    nan = ops.isnan(t)
    res = arg(ops.where(nan, fill, t), axis, out, keepdims)
    return ops.where(all(nan, axis, keepdims=keepdims), asarray(-1, res.dtype), res)


def nanargmax(a: Any, axis: int | None = None, out: Any = None, keepdims: bool = False) -> Tensor:
    return _nanarg(_t(a), axis, out, keepdims, -math.inf, argmax)


def nanargmin(a: Any, axis: int | None = None, out: Any = None, keepdims: bool = False) -> Tensor:
    return _nanarg(_t(a), axis, out, keepdims, math.inf, argmin)


def nancumsum(a: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Tensor:
    t = _t(a)
    return cumsum(ops.where(ops.isnan(t), 0.0, t) if t.dtype.is_floating_point else t,
                  axis, dtype, out)


def nancumprod(a: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Tensor:
    t = _t(a)
    return cumprod(ops.where(ops.isnan(t), 1.0, t) if t.dtype.is_floating_point else t,
                   axis, dtype, out)


def _nanmoment(name: str) -> Any:
    def f(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
          keepdims: bool = False, *, where: Any = None) -> Tensor:
        _no_out(out)
        if where is not None:
            raise NotImplementedError(f"pf.numpy.{name}(where=...) is not supported")
        t = _inexact(_t(a))
        if dtype is not None:
            t = t.to(_dt(dtype))
        keep = ops.logical_not(ops.isnan(t))
        count = keep.to(t.dtype)
        m = sum(ops.where(keep, t, 0.0), axis, keepdims=True) / sum(count, axis, keepdims=True)
        dev = ops.where(keep, t - m, 0.0)
        n = sum(count, axis, keepdims=keepdims) - ddof
        v = ops.where(n > 0, sum(dev * dev, axis, keepdims=keepdims) / n, math.nan)  # JAX's
        return ops.sqrt(v) if name == "nanstd" else v
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"numpy's ``{name}``: ``{name[3:]}`` of the non-NaN values (``ddof`` 0)."
    return f


nanvar, nanstd = _nanmoment("nanvar"), _nanmoment("nanstd")


def nanpercentile(a: Any, q: Any, axis: Any = None, out: Any = None,
                  overwrite_input: bool = False, method: str = "linear",
                  keepdims: bool = False) -> Tensor:
    del overwrite_input  # (numpy's hint: no effect, as in JAX)
    qq = q / 100 if isinstance(q, float | int) else _t(q) / 100
    return nanquantile(a, qq, axis, out, method=method, keepdims=keepdims)


def nanquantile(a: Any, q: Any, axis: Any = None, out: Any = None,
                overwrite_input: bool = False, method: str = "linear",
                keepdims: bool = False) -> Tensor:
    del overwrite_input  # (numpy's hint: no effect, as in JAX)
    _no_out(out)
    t = _inexact(_t(a))
    if axis is not None and not isinstance(axis, int | np.integer):
        raise NotImplementedError("pf.numpy.nanquantile: axis must be an int or None")
    qt = q if isinstance(q, float | int) else _t(q).to(t.dtype)
    return reductions.nanquantile(t, qt, None if axis is None else int(axis),
                                  keepdim=keepdims, interpolation=method)


def nanmedian(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Tensor:
    """The median of the non-NaN values (numpy's: the mean of the two middle
    ones; torch's nanmedian takes the lower)."""
    del overwrite_input  # (numpy's hint: no effect, as in JAX)
    return nanquantile(a, 0.5, axis, out, keepdims=keepdims)


def polyadd(a1: Any, a2: Any) -> Tensor:
    x, y = _t(a1), _t(a2)
    n = builtins.max(x.shape[0], y.shape[0])
    x = lax_pad(x, 0, [(n - x.shape[0], 0, 0)])
    y = lax_pad(y, 0, [(n - y.shape[0], 0, 0)])
    return x + y


def polysub(a1: Any, a2: Any) -> Tensor:
    return polyadd(a1, -_t(a2))


def polymul(a1: Any, a2: Any, *, trim_leading_zeros: bool = False) -> Tensor:
    if trim_leading_zeros:
        raise NotImplementedError("pf.numpy.polymul(trim_leading_zeros=True)")
    x, y = _inexact(_t(a1)), _inexact(_t(a2))
    return convolve(x, y)


def polyder(p: Any, m: int = 1) -> Tensor:
    t = _inexact(_t(p))
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    for _ in builtins.range(int(m)):
        n = t.shape[0] - 1
        t = t[:-1] * arange(n, 0, -1).to(t.dtype)
    return t


def polyint(p: Any, m: int = 1, k: Any = None) -> Tensor:
    t = _inexact(_t(p))
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    ks = np.zeros(int(m)) if k is None else np.broadcast_to(np.asarray(k, np.float64),
                                                            (int(m),))
    for i in builtins.range(int(m)):
        n = t.shape[0]
        t = ops.cat([t / arange(n, 0, -1).to(t.dtype),
                     asarray(np.asarray([ks[i]], t.dtype.np))], 0)
    return t


# ---- more of numpy's names (JAX's conventions) ----

euler_gamma = 0.5772156649015329
# numpy's abstract scalar types, for issubdtype(x.dtype, pf.numpy.floating)
generic, number, inexact, floating, integer = np.generic, np.number, np.inexact, np.floating, \
    np.integer
signedinteger, unsignedinteger = np.signedinteger, np.unsignedinteger


def issubdtype(arg1: Any, arg2: Any) -> bool:
    """numpy's issubdtype on pf's dtypes (``jnp.issubdtype(x.dtype, jnp.floating)``)."""
    def np_of(a: Any) -> Any:
        if isinstance(a, type) and issubclass(a, np.generic):
            return a
        return np.dtype(to_dtype(a).np) if isinstance(a, DType | str) else np.dtype(a)
    return bool(np.issubdtype(np_of(arg1), np_of(arg2)))


def isdtype(dtype: Any, kind: Any) -> bool:
    """The array API's isdtype: a kind name ('bool', 'signed integer',
    'unsigned integer', 'integral', 'real floating', 'numeric') or dtypes."""
    d = _dt(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            npd = np.dtype(d.np)
            hit = {"bool": npd.kind == "b", "signed integer": npd.kind == "i",
                   "unsigned integer": npd.kind == "u", "integral": npd.kind in "iu",
                   "real floating": npd.kind == "f", "complex floating": False,
                   "numeric": npd.kind in "iuf"}.get(k)
            if hit is None:
                raise ValueError(f"Unrecognized data type kind: {k!r}")
        else:
            hit = to_dtype(k) is d
        if hit:
            return True
    return False


def iterable(y: Any) -> bool:
    return bool(np.iterable(y.numpy() if isinstance(y, Tensor) else y))


def digitize(x: Any, bins: Any, right: bool = False, *, method: str | None = None) -> Tensor:
    """The bin of each value (int32), for increasing or decreasing ``bins``."""
    xt, b = _t(x), _t(bins)
    if b.ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got shape "
                         f"{list(b.shape)}")
    if b.shape[0] == 0:
        return zeros(xt.shape, _I())
    side = "left" if right else "right"
    up = searchsorted(b, xt, side=side)
    down = b.shape[0] - searchsorted(flip(b), xt, side=side)
    return ops.where(ops.ge(b[-1], b[0]), up, down).to(_I())


def ravel_multi_index(multi_index: Sequence[Any], dims: Sequence[int], mode: str = "raise",
                      order: str = "C") -> Tensor:
    idx = [_t(i) for i in multi_index]
    dims = tuple(int(d) for d in dims)
    if len(idx) != len(dims):
        raise ValueError(f"len(multi_index)={len(idx)} != len(dims)={len(dims)}")
    for i in idx:
        if i.dtype.is_floating_point or i.dtype is _bool:
            raise TypeError("only int indices permitted")
    if mode == "raise":
        for i, d in zip(idx, dims):
            v = i.numpy()
            if np.any((v < 0) | (v >= d)):
                raise ValueError("invalid entry in coordinates array")
    elif mode == "clip":
        idx = [clip(i, 0, d - 1) for i, d in zip(idx, dims)]
    elif mode == "wrap":
        idx = [ops.remainder(i, d) for i, d in zip(idx, dims)]
    elif mode != "ignore":
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', 'clip', or 'ignore'.")
    if order == "F":
        strides = np.cumprod((1,) + dims[:-1])
    elif order == "C":
        strides = np.cumprod((1,) + dims[1:][::-1])[::-1]
    else:
        raise ValueError(f"invalid order={order!r}. Expected 'C' or 'F'")
    out = zeros((), _I())
    for i, s in zip(idx, strides):
        out = out + i.to(_I()) * int(s)
    return out


def resize(a: Any, new_shape: Any) -> Tensor:
    """numpy's resize: the flattened array repeated (or cut) to the new shape."""
    shape = _shape(new_shape)
    if builtins.any(d < 0 for d in shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    flat = ravel(a)
    n = math.prod(shape)
    if flat.shape[0] == 0 or n == 0:
        return zeros(shape, flat.dtype)
    reps = -(-n // flat.shape[0])
    return ops.reshape(indexing.tile(flat, (reps,))[:n], shape)


def compress(condition: Any, a: Any, axis: int | None = None, *, size: int | None = None,
             fill_value: Any = 0, out: Any = None) -> Tensor:
    _no_out(out)
    cond = ravel(condition).numpy().astype(bool)
    t = ravel(a) if axis is None else moveaxis(a, axis, 0)
    cond, extra = cond[:t.shape[0]], cond[t.shape[0]:]
    if size is not None:
        raise NotImplementedError("pf.numpy.compress(size=...) is not supported")
    if np.any(extra):
        raise ValueError("condition contains entries that are out of bounds")
    picked = indexing.index_select(t, 0, Tensor._leaf(np.flatnonzero(cond)))
    return picked if axis is None else moveaxis(picked, 0, axis)


def extract(condition: Any, arr: Any, *, size: int | None = None, fill_value: Any = 0) -> Tensor:
    if size is not None:
        raise NotImplementedError("pf.numpy.extract(size=...) is not supported")
    return compress(ravel(condition), ravel(arr))


def choose(a: Any, choices: Sequence[Any], out: Any = None, mode: str = "raise") -> Tensor:
    _no_out(out)
    idx = _t(a)
    cs = broadcast_arrays(idx, *choices)
    idx, cs = cs[0], cs[1:]
    n = len(cs)
    if mode == "raise":
        v = idx.numpy()
        if np.any((v < 0) | (v >= n)):
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        idx = ops.remainder(idx, n)
    elif mode == "clip":
        idx = clip(idx, 0, n - 1)
    else:
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    out_t = cs[0]
    for i in builtins.range(1, n):
        out_t = ops.where(ops.eq(idx, i), cs[i], out_t)
    return out_t


def piecewise(x: Any, condlist: Any, funclist: Sequence[Any], *args: Any, **kw: Any) -> Tensor:
    """numpy's piecewise: where several conditions hold the last one wins;
    the extra function (or 0) where none holds. Each function is applied to
    the whole of ``x`` (elementwise functions, as JAX's switch assumes)."""
    xt = _t(x)
    conds = [_t(c) for c in (condlist if isinstance(condlist, list | tuple) else [condlist])]
    nc, nf = len(conds), len(funclist)
    if nf == nc + 1:
        funcs = [funclist[-1], *funclist[:-1]]
    elif nf == nc:
        funcs = [0, *funclist]
    else:
        raise ValueError(f"with {nc} condition(s), either {nc} or {nc + 1} functions are "
                         f"expected; got {nf}")

    def value(fn: Any) -> Tensor:
        r = fn(xt, *args, **kw) if callable(fn) else _t(fn)
        return ops.broadcast_to(_t(r).to(xt.dtype), xt.shape)
    out = value(funcs[0])
    for cond, fn in zip(conds, funcs[1:]):
        out = ops.where(cond, value(fn), out)
    return out


def argpartition(a: Any, kth: int, axis: int = -1) -> Tensor:
    """JAX's argpartition: the ``kth + 1`` smallest in ascending order, then
    the rest largest first (top-k order; ties by position)."""
    t = swapaxes(_t(a), axis, -1)
    n = t.shape[-1]
    kth = int(kth) % n
    bottom = argsort(t, axis=-1)[..., :kth + 1]
    host = bottom.numpy()
    proxy = np.ones(t.shape, np.float32)
    np.put_along_axis(proxy, host.astype(np.int64), 0.0, axis=-1)
    top = np.argsort(-proxy, axis=-1, kind="stable")[..., :n - kth - 1]
    out = Tensor._leaf(np.concatenate([host, top.astype(_I().np)], -1))
    return swapaxes(out, -1, axis)


def partition(a: Any, kth: int, axis: int = -1) -> Tensor:
    """JAX's partition: the ``kth + 1`` smallest ascending, then the rest
    descending."""
    t = swapaxes(_t(a), axis, -1)
    n = t.shape[-1]
    kth = int(kth) % n
    s = sort(t, axis=-1)
    out = ops.cat([s[..., :kth + 1], flip(s[..., kth + 1:], -1)], -1)
    return swapaxes(out, -1, axis)


def trim_zeros(filt: Any, trim: str = "fb", axis: Any = None) -> Tensor:
    t = _t(filt)
    v = t.numpy()
    axes = set(_axis(t, axis))
    key = []
    for ax in builtins.range(t.ndim):
        if ax not in axes or ("f" not in trim.lower() and "b" not in trim.lower()):
            key.append(builtins.slice(None))
            continue
        mask = np.any(v != 0, axis=tuple(i for i in builtins.range(v.ndim) if i != ax))
        if not mask.any():
            key.append(builtins.slice(0, 0))
            continue
        start = int(mask.argmax()) if "f" in trim.lower() else None
        stop = v.shape[ax] - int(mask[::-1].argmax()) if "b" in trim.lower() else None
        key.append(builtins.slice(start, stop))
    return t[tuple(key)]


def insert(arr: Any, obj: Any, values: Any, axis: int | None = None) -> Tensor:
    """numpy's insert of ``values`` before the index (or indices) ``obj``."""
    t = ravel(arr) if axis is None else _t(arr)
    ax = 0 if axis is None else int(axis) % t.ndim
    n = t.shape[ax]
    if isinstance(obj, builtins.slice):
        pos = np.arange(n)[obj]
    else:
        pos = np.asarray(obj.numpy() if isinstance(obj, Tensor) else obj)
    scalar = pos.ndim == 0
    pos = np.where(pos.reshape(-1) < 0, pos.reshape(-1) + n, pos.reshape(-1))
    if np.any((pos < 0) | (pos > n)):
        raise IndexError(f"index out of bounds for axis {ax} with size {n}")
    vals = _t(values).to(t.dtype)
    shape = list(t.shape)
    if scalar:  # numpy's: values at least arr.ndim-d, their first axis moved to ``ax``
        vals = ops.reshape(vals, (1,) * (t.ndim - vals.ndim) + tuple(vals.shape)) \
            if vals.ndim < t.ndim else vals
        vals = moveaxis(vals, 0, ax)
        k = vals.shape[ax]
        shape[ax] = k
        vals = ops.broadcast_to(vals, tuple(shape))
        pos = np.repeat(pos, k)
    else:
        shape[ax] = pos.size
        vals = ops.broadcast_to(vals, tuple(shape))
    order = np.argsort(pos, kind="stable")
    new_pos = pos[order] + np.arange(pos.size)
    total = n + pos.size
    is_new = np.zeros(total, bool)
    is_new[new_pos] = True
    src = np.empty(total, np.int64)
    src[~is_new] = np.arange(n)
    src[new_pos] = n + order
    joined = ops.cat([t, vals], ax)
    return indexing.index_select(joined, ax, Tensor._leaf(src))


def delete(arr: Any, obj: Any, axis: int | None = None, *,
           assume_unique_indices: bool = False) -> Tensor:
    """numpy's delete (repeated indices drop once; ``assume_unique_indices``
    is JAX's hint, the result is the same)."""
    del assume_unique_indices
    t = ravel(arr) if axis is None else _t(arr)
    ax = 0 if axis is None else int(axis) % t.ndim
    n = t.shape[ax]
    if isinstance(obj, builtins.slice):
        drop = np.arange(n)[obj]
    else:
        drop = np.asarray(obj.numpy() if isinstance(obj, Tensor) else obj).reshape(-1)
        if drop.dtype == bool:
            raise NotImplementedError("pf.numpy.delete with a boolean mask")
        if np.any((drop < -n) | (drop >= n)):
            raise IndexError(f"index out of bounds for axis {ax} with size {n}")
        drop = np.where(drop < 0, drop + n, drop)
    keep = np.setdiff1d(np.arange(n), drop)
    return indexing.index_select(t, ax, Tensor._leaf(keep.astype(np.int64)))


def _sized(vals: np.ndarray, size: int | None, fill_value: Any,
           default_fill: Any) -> np.ndarray:
    """JAX's ``size=`` of a set operation: the first ``size`` results, padded
    with ``fill_value`` (``default_fill`` when None)."""
    if size is None:
        return vals
    size = int(size)
    if size < 0:
        raise ValueError(f"size must be non-negative, got {size}")
    fill = default_fill if fill_value is None else fill_value
    if isinstance(fill, Tensor):
        fill = fill.numpy()
    if np.ndim(fill) != 0:
        raise ValueError(f"fill_value must be a scalar, got shape {np.shape(fill)}")
    out = np.full((size,), np.asarray(fill).astype(vals.dtype), vals.dtype)
    k = builtins.min(size, vals.size)
    out[:k] = vals[:k]
    return out


def _setop(name: str) -> Any:
    def f(ar1: Any, ar2: Any, assume_unique: bool = False, *, size: int | None = None,
          fill_value: Any = None) -> Tensor:
        a, b = _t(ar1), _t(ar2)
        dt = promote_types(a.dtype, b.dtype)
        out = getattr(np, name)(a.numpy(), b.numpy()).astype(dt.np)
        # JAX's padding: setdiff1d with 0, setxor1d with its smallest result
        # (0 when there is none)
        default = 0 if name == "setdiff1d" or out.size == 0 or size == 0 else out[:size].min()
        return Tensor._leaf(np.ascontiguousarray(_sized(out, size, fill_value, default)))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"numpy's ``{name}`` (sorted, read from the values; no gradient); "
                 "``size=`` keeps the first ``size`` results padded with ``fill_value`` "
                 "as JAX's.")
    return f


setdiff1d, setxor1d = (_setop(n) for n in ("setdiff1d", "setxor1d"))


def union1d(ar1: Any, ar2: Any, *, size: int | None = None, fill_value: Any = None) -> Tensor:
    """numpy's ``union1d``: JAX's ``unique`` of both arrays flattened (with
    ``size=``, padded with the smallest value or ``fill_value``)."""
    a, b = _t(ar1), _t(ar2)
    dt = promote_types(a.dtype, b.dtype)
    return unique(concatenate([ravel(a).to(dt), ravel(b).to(dt)]), size=size,
                  fill_value=fill_value)


def intersect1d(ar1: Any, ar2: Any, assume_unique: bool = False,
                return_indices: bool = False, *, size: int | None = None,
                fill_value: Any = None) -> Any:
    """numpy's ``intersect1d`` (read from the values; no gradient). ``size=``
    as JAX's: the first ``size`` values padded with ``fill_value`` (default
    the smallest value found, 0 when none), the indices padded with each
    array's size."""
    a, b = _t(ar1), _t(ar2)
    dt = promote_types(a.dtype, b.dtype)
    an, bn = a.numpy().ravel(), b.numpy().ravel()
    out = np.intersect1d(an, bn, assume_unique, True)
    vals = out[0].astype(dt.np)
    default = vals[:size].min() if vals.size and size != 0 else 0
    vals = Tensor._leaf(np.ascontiguousarray(_sized(vals, size, fill_value, default)))
    if not return_indices:
        return vals
    i1 = _sized(out[1].astype(_I().np), size, an.size, an.size)
    i2 = _sized(out[2].astype(_I().np), size, bn.size, bn.size)
    return vals, Tensor._leaf(i1), Tensor._leaf(i2)


def histogram2d(x: Any, y: Any, bins: Any = 10, range: Any = None,  # noqa: A002
                weights: Any = None, density: bool | None = None) -> tuple[Tensor, ...]:
    if isinstance(bins, int | np.integer) or np.ndim(bins) == 1 and \
            not isinstance(bins, list | tuple):
        bins = [bins, bins]
    hist, edges = histogramdd(stack([_t(x), _t(y)], 1), bins, range, weights, density)
    return hist, edges[0], edges[1]


def histogramdd(sample: Any, bins: Any = 10, range: Any = None,  # noqa: A002
                weights: Any = None, density: bool | None = None) -> tuple[Tensor, list[Tensor]]:
    """numpy's histogramdd (JAX's int32 counts without weights): each
    coordinate binned as ``histogram`` bins it, counted by flat bin index."""
    s = _inexact(_t(sample))
    if s.ndim != 2:
        raise ValueError(f"histogramdd: sample must be 2-d (N, D), got {list(s.shape)}")
    n, d = s.shape
    nbins = [bins] * d if isinstance(bins, int | np.integer) else list(bins)
    ranges = [None] * d if range is None else list(range)
    edges = [histogram_bin_edges(s[:, i], nbins[i], ranges[i]) for i in builtins.range(d)]
    flat = zeros((n,), _i64)
    inside = ones((n,), _bool)
    for i, e in enumerate(edges):
        col = s[:, i]
        k = e.shape[0]
        idx = composites.searchsorted(e, col, side="right")
        idx = ops.where(ops.eq(col, e[-1]), k - 1, idx)
        inside = ops.logical_and(inside, ops.logical_and(idx >= 1, idx <= k - 1))
        flat = flat * (k - 1) + clip(idx - 1, 0, k - 2).to(_i64)
    sizes = [e.shape[0] - 1 for e in edges]
    w = ones((n,), _I()) if weights is None else _t(weights).to(s.dtype)
    w = ops.where(inside, w, asarray(0, w.dtype))
    counts = indexing.index_add(zeros((math.prod(sizes),), w.dtype), 0, flat, w)
    hist = ops.reshape(counts, tuple(sizes))
    if density:
        hist = hist.to(s.dtype) / sum(hist)
        for i, e in enumerate(edges):
            view = [1] * d
            view[i] = sizes[i]
            hist = hist / ops.reshape(e[1:] - e[:-1], tuple(view))
    return hist, edges


def _grid(sparse: bool) -> Any:
    class _Grid:
        """``mgrid[a:b:step, ...]`` (``ogrid``: sparse); a complex step is a count."""

        def __getitem__(self, key: Any) -> Any:
            keys = key if isinstance(key, tuple) else (key,)
            axes = []
            for k in keys:
                if not isinstance(k, builtins.slice):
                    raise TypeError(f"mgrid/ogrid take slices, got {k!r}")
                start = 0 if k.start is None else k.start
                step = 1 if k.step is None else k.step
                if isinstance(step, complex):
                    axes.append(linspace(start, k.stop, int(builtins.abs(step))))
                else:
                    axes.append(arange(start, k.stop, step))
            if len(axes) == 1 and not isinstance(key, tuple):
                return axes[0]
            grids = meshgrid(*axes, indexing="ij", sparse=sparse)
            dt = result_type(*grids)
            grids = [g.to(dt) for g in grids]
            return grids if sparse else stack(grids)
    return _Grid()


mgrid, ogrid = _grid(False), _grid(True)


def ix_(*args: Any) -> tuple[Tensor, ...]:
    ts = [_t(a) for a in args]
    out = []
    for i, t in enumerate(ts):
        if t.ndim != 1:
            raise ValueError(f"Cross index must be 1 dimensional, got {t.ndim}")
        view = [1] * len(ts)
        view[i] = t.shape[0]
        out.append(ops.reshape(t.to(_I()) if t.dtype is _i64 else t, tuple(view)))
    return tuple(out)


def apply_along_axis(func1d: Any, axis: int, arr: Any, *args: Any, **kwargs: Any) -> Tensor:
    """``func1d`` on every 1-d slice along ``axis`` (a loop over the slices;
    the results stacked where the axis was)."""
    t = moveaxis(arr, axis, -1)
    batch = tuple(t.shape[:-1])
    flat = ops.reshape(t, (-1, t.shape[-1]))
    outs = [_t(func1d(flat[i], *args, **kwargs)) for i in builtins.range(flat.shape[0])]
    res = stack(outs)
    res = ops.reshape(res, batch + tuple(res.shape[1:]))
    nd = res.ndim - len(batch)
    ax = int(axis) % _t(arr).ndim
    for j in builtins.range(nd):
        res = moveaxis(res, len(batch) + j, ax + j)
    return res


def _gufunc_signature(signature: str) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """numpy's ``"(m,n),(n)->(m)"``: the core dimension names per input and output."""
    import re
    sig = signature.replace(" ", "")
    lhs, arrow, rhs = sig.partition("->")
    group = r"\(([^()]*)\)"
    if not arrow or not re.fullmatch(rf"{group}(,{group})*", lhs) or not re.fullmatch(
            rf"{group}(,{group})*", rhs):
        raise ValueError(f"not a valid gufunc signature: {signature}")

    def dims(side: str) -> list[tuple[str, ...]]:
        return [tuple(d for d in g.split(",") if d) for g in re.findall(group, side)]
    return dims(lhs), dims(rhs)


def vectorize(pyfunc: Any, *, excluded: Any = frozenset(), signature: str | None = None) -> Any:
    """numpy's vectorize by ``pf.vmap``: of a function of scalars over every
    broadcast element, or with a ``signature`` (``"(n),(n)->()"``) over the
    broadcast loop dimensions before each input's core dimensions."""
    from .vmap import vmap
    core_in, core_out = _gufunc_signature(signature) if signature is not None else (None, None)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        keep = {i for i in excluded if isinstance(i, int)}
        live = [i for i in builtins.range(len(args)) if i not in keep]

        def call(*xs: Any) -> Any:
            full = list(args)
            for i, x in zip(live, xs):
                full[i] = x
            return pyfunc(*full, **kwargs)
        if core_in is None:
            arrays = broadcast_arrays(*(args[i] for i in live))
            shape = tuple(arrays[0].shape) if arrays else ()
            if not shape:
                return pyfunc(*args, **kwargs)
            out = vmap(call)(*(ravel(a) for a in arrays))
            return ops.reshape(out, shape + tuple(out.shape[1:]))
        ts = [_t(args[i]) for i in live]
        if len(ts) != len(core_in):
            raise TypeError(f"wrong number of positional arguments: expected {len(core_in)}, "
                            f"got {len(ts)}")
        sizes: dict[str, int] = {}
        loops = []
        for t, core in zip(ts, core_in):
            if t.ndim < len(core):
                raise ValueError(f"input with shape {tuple(t.shape)} does not have enough "
                                 f"dimensions for its core dimensions {core}")
            for name, n in zip(core, t.shape[t.ndim - len(core):]):
                if sizes.setdefault(name, n) != n:
                    raise ValueError(f"inconsistent size for core dimension {name!r}: "
                                     f"{n} vs {sizes[name]}")
            loops.append(tuple(t.shape[:t.ndim - len(core)]))
        loop = tuple(np.broadcast_shapes(*loops))
        count = math.prod(loop)
        flat = [ops.reshape(ops.broadcast_to(t, loop + tuple(t.shape[len(lp):])),
                            (count, *t.shape[len(lp):])) for t, lp in zip(ts, loops)]
        out = vmap(call)(*flat)
        outs = out if isinstance(out, tuple) else (out,)
        if len(outs) != len(core_out):
            raise ValueError(f"wrong number of outputs from the function: expected "
                             f"{len(core_out)}, got {len(outs)}")
        shaped = tuple(ops.reshape(o, loop + tuple(o.shape[1:])) for o in outs)
        return shaped if isinstance(out, tuple) else shaped[0]
    return wrapped


def block(arrays: Any) -> Tensor:
    """numpy's block: nested lists concatenated, the innermost along the last axis."""
    def depth(x: Any) -> int:
        return 1 + depth(x[0]) if isinstance(x, list) else 0
    d = depth(arrays)

    def build(x: Any, level: int) -> Tensor:
        if not isinstance(x, list):
            return _t(x)
        parts = [build(p, level + 1) for p in x]
        nd = builtins.max(builtins.max(p.ndim for p in parts), d)
        parts = [ops.reshape(p, (1,) * (nd - p.ndim) + tuple(p.shape)) for p in parts]
        return ops.cat(parts, -(d - level))
    return build(arrays, 0)


def spacing(x: Any, /) -> Tensor:
    """The distance to the next float away from zero (numpy's spacing)."""
    t = _inexact(_t(x))
    v = t.numpy()
    return Tensor._leaf(np.spacing(v).astype(v.dtype))


def polyfit(x: Any, y: Any, deg: int, rcond: float | None = None, full: bool = False,
            w: Any = None, cov: bool = False) -> Tensor:
    """Least-squares polynomial coefficients (highest power first), by the
    column-scaled Vandermonde system as numpy/JAX; ``full``/``cov`` are not
    supported."""
    if full or cov:
        raise NotImplementedError("pf.numpy.polyfit(full=True or cov=True) is not supported")
    xt, yt = _inexact(_t(x)), _inexact(_t(y))
    order = int(deg) + 1
    lhs = ops.pow(ops.unsqueeze(xt, -1), arange(order - 1, -1, -1).to(xt.dtype))
    rhs = yt
    if w is not None:
        wt = _t(w).to(xt.dtype)
        lhs = lhs * ops.unsqueeze(wt, -1)
        rhs = rhs * (wt if rhs.ndim == 1 else ops.unsqueeze(wt, -1))
    scale = ops.sqrt(sum(lhs * lhs, 0))
    lhs = lhs / scale
    sol = _pf_linalg.lstsq(lhs, rhs if rhs.ndim == 2 else ops.unsqueeze(rhs, -1))[0]
    sol = sol / ops.unsqueeze(scale, -1)
    return sol[:, 0] if rhs.ndim == 1 else sol


def put_along_axis(arr: Any, indices: Any, values: Any, axis: int | None, *,
                   inplace: bool = True, mode: str | None = None) -> Tensor:
    """``arr`` with ``values`` placed at ``indices`` along ``axis``
    (``inplace=False``, as JAX asks)."""
    if inplace:
        raise ValueError("jax.numpy.put_along_axis cannot modify arrays in-place, because JAX "
                         "arrays are immutable. Pass inplace=False to instead return an "
                         "updated array.")
    t = _t(arr)
    if axis is None:
        return reshape(put_along_axis(ravel(t), ravel(indices), ravel(values), 0,
                                      inplace=False), t.shape)
    ax = int(axis) % t.ndim
    idx = _t(indices).to(_i64)
    idx = ops.where(idx < 0, idx + t.shape[ax], idx)
    vals = ops.broadcast_to(_t(values).to(t.dtype), tuple(idx.shape))
    return indexing.scatter(t, ax, idx, vals)


class _ScalarType:
    """JAX's scalar types (``jnp.float32``, ``jnp.int32``, ``jnp.bfloat16``...):
    called, an array of that dtype (``jnp.float32(2.0)`` is a 0-d float32
    array, ``jnp.int32(x)`` casts, float64/int64 are float32/int32 without
    64-bit mode, as JAX's); as a dtype argument, the dtype (its ``dtype`` is
    numpy's, so every dtype argument and ``np.dtype`` take it), and it
    compares equal to that dtype (``x.dtype == jnp.float32``)."""

    __slots__ = ("__name__", "_pf", "dtype")

    def __init__(self, pf_dtype: DType, name: str):
        self._pf, self.dtype, self.__name__ = pf_dtype, pf_dtype.np, name

    def __call__(self, x: Any = 0) -> Tensor:
        return asarray(x, self._pf)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _ScalarType):
            return other._pf is self._pf
        try:
            return to_dtype(other) is self._pf
        except TypeError:
            return NotImplemented

    def __hash__(self) -> int:
        return hash(self._pf)

    def __repr__(self) -> str:
        return f"pf.numpy.{self.__name__}"


def dtype(obj: Any, align: bool = False, copy: bool = False) -> DType:
    """``jnp.dtype``: the dtype ``obj`` names (a name, a scalar type, numpy's
    dtype, an array's dtype), as pf's dtype (which numpy takes as its own)."""
    del align, copy
    return obj.dtype if isinstance(obj, Tensor) else to_dtype(obj)


def finfo(dtype: Any) -> Any:
    """JAX's ``finfo``: numpy's (ml_dtypes' for bfloat16), its values numpy
    scalars of the type (torch's ``pf.finfo`` gives Python floats)."""
    d = dtype.dtype if isinstance(dtype, Tensor) else to_dtype(dtype)
    if not d.is_floating_point:
        raise ValueError(f"finfo: {d.name} is not an inexact dtype (use iinfo)")
    return ml_dtypes.finfo(d.np)


def iinfo(int_type: Any) -> Any:
    """JAX's ``iinfo``: numpy's."""
    d = int_type.dtype if isinstance(int_type, Tensor) else to_dtype(int_type)
    if d.is_floating_point or d is _bool:
        raise ValueError(f"iinfo: {d.name} is not an integer dtype (use finfo)")
    return ml_dtypes.iinfo(d.np)


# (looked up by the module's ``__getattr__``: the names here stay pf's dtypes
# and the builtin ``bool``)
_SCALAR_TYPES: dict[str, _ScalarType] = {
    d.name: _ScalarType(d, d.name) for d in (
        _dtypes.bfloat16, _dtypes.float16, _dtypes.float32, _dtypes.float64, _dtypes.int8,
        _dtypes.int16, _dtypes.int32, _dtypes.int64, _dtypes.uint8, _dtypes.bool_)}
_SCALAR_TYPES.update({"bool_": _SCALAR_TYPES["bool"], "single": _SCALAR_TYPES["float32"],
                      "double": _SCALAR_TYPES["float64"]})
index_exp, s_ = np.index_exp, np.s_  # (plain Python slicing helpers: tuples of slices)


def array_equiv(a1: Any, a2: Any) -> bool:
    x, y = _t(a1), _t(a2)
    try:
        shp = np.broadcast_shapes(tuple(x.shape), tuple(y.shape))
    except ValueError:
        return False
    return bool(reductions.all(ops.eq(ops.broadcast_to(x, shp), ops.broadcast_to(y, shp)))
                .item())


def can_cast(from_: Any, to: Any, casting: str = "safe") -> bool:
    src = from_.dtype if isinstance(from_, Tensor) else to_dtype(from_)
    return bool(np.can_cast(np.dtype(src.np), np.dtype(to_dtype(to).np), casting))


def iscomplex(x: Any) -> Tensor:
    """Where the imaginary part is nonzero (False everywhere for a real array)."""
    if isinstance(x, Complex):
        return ops.ne(x.imag, 0.0)
    t = _t(x)
    return zeros(t.shape, _bool)


def fromfunction(function: Any, shape: Any, *, dtype: Any = None, **kwargs: Any) -> Any:
    """``function`` of the index grids (float32 by default, as JAX)."""
    grids = indices(_shape(shape), dtype=_dt(dtype) or _F())
    return function(*(grids[i] for i in builtins.range(len(_shape(shape)))), **kwargs)


def unwrap(p: Any, discont: Any = None, axis: int = -1, period: float = 2 * math.pi) -> Tensor:
    """numpy's unwrap: steps larger than ``discont`` (``period/2``) are
    corrected by multiples of ``period`` (JAX's formula)."""
    t = _inexact(_t(p))
    ax = int(axis) % t.ndim
    dd = diff(t, axis=ax)
    half = period / 2
    disc = half if discont is None else builtins.max(float(discont), half)
    ddmod = ops.remainder(dd + half, float(period)) - half
    ddmod = ops.where(ops.logical_and(ops.eq(ddmod, -half), dd > 0), half, ddmod)
    correction = ops.where(ops.abs(dd) < disc, 0.0, ddmod - dd)
    first = _slice_axis(t, ax, 0, 1)
    return ops.cat([first, _slice_axis(t, ax, 1, None) + cumsum(correction, ax)], ax)


def poly(seq_of_zeros: Any) -> Tensor:
    """The coefficients of the monic polynomial with the given (real) roots."""
    z = _inexact(_t(seq_of_zeros))
    if z.ndim == 2 and z.shape[0] == z.shape[1]:
        raise NotImplementedError("pf.numpy.poly of a matrix (its eigenvalues may be complex)")
    if z.ndim != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    out = ones((1,), z.dtype)
    for i in builtins.range(z.shape[0]):
        out = convolve(out, ops.stack([ones((), z.dtype), -z[i]]))
    return out


def polydiv(u: Any, v: Any, *, trim_leading_zeros: bool = False) -> tuple[Tensor, Tensor]:
    """Polynomial long division: quotient and remainder (highest power first)."""
    if trim_leading_zeros:
        raise NotImplementedError("pf.numpy.polydiv(trim_leading_zeros=True)")
    num, den = _inexact(_t(u)), _inexact(_t(v))
    dt = promote_types(num.dtype, den.dtype)
    num, den = num.to(dt), den.to(dt)
    m, n = num.shape[0] - 1, den.shape[0] - 1
    scale = 1.0 / den[0]
    q = []
    rem = num
    for k in builtins.range(builtins.max(0, m - n + 1)):
        d = scale * rem[k]
        q.append(d)
        shift = zeros((k,), dt)
        tail = zeros((m - n - k,), dt)
        rem = rem - ops.cat([shift, d * den, tail], 0)
    quot = ops.stack(q) if q else zeros((1,), dt)
    return quot, rem


def mask_indices(n: int, mask_func: Any, k: int = 0, *, size: int | None = None
                 ) -> tuple[Tensor, Tensor]:
    if size is not None:
        raise NotImplementedError("pf.numpy.mask_indices(size=...) is not supported")
    m = _t(mask_func(ones((int(n), int(n)), _int32), k)).numpy() != 0
    r, c = np.nonzero(m)
    return Tensor._leaf(r.astype(_I().np)), Tensor._leaf(c.astype(_I().np))


def place(arr: Any, mask: Any, vals: Any, *, inplace: bool = True) -> Tensor:
    """numpy's place, out of place (``inplace=False``, as JAX asks): the
    masked positions, in order, take ``vals`` (repeated)."""
    if inplace:
        raise ValueError("jax.numpy.place cannot modify arrays in-place, because JAX arrays "
                         "are immutable. Pass inplace=False to instead return an updated array.")
    t = _t(arr)
    flat = ravel(t)
    pos = np.flatnonzero(ravel(mask).numpy())
    if pos.size == 0:
        return t
    v = ravel(vals).to(t.dtype)
    reps = -(-pos.size // builtins.max(v.shape[0], 1))
    v = indexing.tile(v, (reps,))[:pos.size]
    sel = np.zeros(flat.shape[0], bool)
    sel[pos] = True
    placed = indexing.index_add(zeros((flat.shape[0],), t.dtype), 0, Tensor._leaf(pos), v)
    return ops.reshape(ops.where(Tensor._leaf(sel), placed, flat), t.shape)


def bitwise_count(x: Any, /) -> Tensor:
    """The number of 1 bits of each integer's absolute value (uint8, as numpy)."""
    t = _t(x)
    if t.dtype.is_floating_point:
        raise TypeError(f"bitwise_count requires integer input, got {t.dtype.name}")
    v = np.abs(t.numpy().astype(np.int64)).astype(np.uint64)
    return Tensor._leaf(np.bitwise_count(v).astype(np.uint8))


def apply_over_axes(func: Any, a: Any, axes: Sequence[int]) -> Tensor:
    t = _t(a)
    for ax in axes:
        r = _t(func(t, ax))
        t = r if r.ndim == t.ndim else expand_dims(r, ax)
    return t


def nan_to_num(x: Any, copy: bool = True, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Tensor:
    """numpy's nan_to_num (its second positional argument is ``copy``;
    torch's is ``nan``)."""
    t = _t(x)
    if not t.dtype.is_floating_point:
        return t
    return ops.nan_to_num(t, nan=nan, posinf=posinf, neginf=neginf)


def logspace(start: float, stop: float, num: int = 50, endpoint: bool = True,
             base: float = 10.0, dtype: Any = None, axis: int = 0) -> Tensor:
    """``base ** linspace(start, stop, num, endpoint)`` in float32 (numpy's
    argument order: torch's has ``base`` where numpy has ``endpoint``)."""
    exps = linspace(start, stop, num, endpoint, axis=axis)
    out = ops.pow(full((), base, _F()), exps)
    return out if dtype is None else out.to(_dt(dtype))


def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int | None = None) -> Any:
    """numpy's gradient: spacings as positional arguments (none: 1; one: for
    every axis; else one per axis), one array for a single axis, else a list."""
    t = _t(f)
    axes = _axis(t, axis)
    spacing: Any = 1.0
    if len(varargs) == 1:
        spacing = varargs[0] if not isinstance(varargs[0], Tensor) or varargs[0].ndim == 0 \
            else (varargs[0],) * len(axes)
        if isinstance(spacing, Tensor) and spacing.ndim == 0:
            spacing = spacing.item()
    elif varargs:
        if len(varargs) != len(axes):
            raise TypeError(f"gradient: {len(varargs)} spacings for {len(axes)} axes")
        spacing = tuple(v if isinstance(v, Tensor) and v.ndim else
                        (v.item() if isinstance(v, Tensor) else v) for v in varargs)
    grads = composites3.gradient(t, spacing=spacing, dim=axes, edge_order=edge_order or 1)
    return grads[0] if len(axes) == 1 else list(grads)


def nansum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
           initial: Any = None, where: Any = None) -> Tensor:
    """numpy's nansum (third positional argument ``dtype``; torch's is ``keepdim``)."""
    t = _t(a)
    if t.dtype.is_floating_point:
        t = ops.where(ops.isnan(t), 0.0, t)
    return sum(t, axis, dtype, out, keepdims, initial, where)


def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False, where: Any = None) -> Tensor:
    """The mean of the non-NaN values (numpy's argument order)."""
    _no_out(out)
    t = _inexact(_t(a))
    if dtype is not None:
        t = t.to(_dt(dtype))
    keep = ops.logical_not(ops.isnan(t))
    if where is not None:
        keep = ops.logical_and(keep, _t(where))
    return sum(ops.where(keep, t, 0.0), axis, keepdims=keepdims) / \
        sum(keep.to(t.dtype), axis, keepdims=keepdims)


# ---- linalg: numpy's norm, the rest pf.linalg's ----

def _vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False,
                 ord: Any = 2) -> Tensor:  # noqa: A002
    """JAX's ``vector_norm`` formulas on pf.numpy's ops, so its derivatives
    are JAX's (at 0: NaN for the 2-norm and p-norms, ``abs``'s 1 for the
    1-norm, ties sharing the max's); ``axis=None`` over every element."""
    t = _t(x)
    if not t.dtype.is_floating_point:
        t = _inexact(t)
    if axis is None:  # (every axis: reduced together, kept as 1s with keepdims)
        axis = tuple(range(t.ndim))
    if ord is None or (not isinstance(ord, str) and ord == 2):
        return ops.sqrt(sum(t * t, axis, keepdims=keepdims))
    if isinstance(ord, str):
        raise ValueError(f"Invalid order '{ord}' for vector norm."
                         + (" Use 'jax.numpy.inf' instead." if ord == "inf" else "")
                         + (" Use '-jax.numpy.inf' instead." if ord == "-inf" else ""))
    if ord == np.inf:
        return max(abs(t), axis, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return min(abs(t), axis, keepdims=keepdims)
    if ord == 0:
        return sum((t != 0).to(t.dtype), axis, keepdims=keepdims)
    if ord == 1:
        return sum(abs(t), axis, keepdims=keepdims)
    a = abs(t)
    p = np.asarray(ord, t.dtype.np)
    return power(sum(a ** p, axis, keepdims=keepdims), np.asarray(1.0 / p, t.dtype.np))


def _matrix_norm2(t: Tensor, ord: Any, axes: tuple[int, int], keepdims: bool) -> Tensor:  # noqa: A002
    """JAX's matrix norms over ``axes`` (row axis, column axis)."""
    row, col = axes
    if ord is None or ord in ("f", "fro"):
        return ops.sqrt(sum(t * t, axes, keepdims=keepdims))
    if isinstance(ord, str) and ord != "nuc":
        raise ValueError(f"Invalid order '{ord}' for matrix norm.")
    if ord in (1, -1):
        if not keepdims and col > row:
            col -= 1
        s_ = sum(abs(t), row, keepdims=keepdims)
        return max(s_, col, keepdims=keepdims, initial=0) if ord == 1 else \
            min(s_, col, keepdims=keepdims)
    if ord in (np.inf, -np.inf):
        if not keepdims and row > col:
            row -= 1
        s_ = sum(abs(t), col, keepdims=keepdims)
        return max(s_, row, keepdims=keepdims, initial=0) if ord == np.inf else \
            min(s_, row, keepdims=keepdims)
    if ord in ("nuc", 2, -2):
        sv = _pf_linalg.svdvals(moveaxis(t, axes, (-2, -1)))
        y = max(sv, -1, initial=0) if ord == 2 else min(sv, -1) if ord == -2 else sum(sv, -1)
        return expand_dims(y, axes) if keepdims else y
    raise ValueError(f"Invalid order '{ord}' for matrix norm.")


def _matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Tensor:  # noqa: A002
    t = _t(x)
    if not t.dtype.is_floating_point:
        t = _inexact(t)
    return _matrix_norm2(t, ord, (t.ndim - 2, t.ndim - 1), keepdims)


def _norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Tensor:  # noqa: A002
    """``jnp.linalg.norm``: JAX's formulas (its derivatives at 0 included)."""
    t = _t(x)
    if not t.dtype.is_floating_point:
        t = _inexact(t)
    if axis is None:
        if ord is None:
            return ops.sqrt(sum(t * t, keepdims=keepdims))
        axis = tuple(range(t.ndim))
    axes = _axis(t, axis)
    if len(axes) == 1:
        return _vector_norm(t, axis=axes[0], keepdims=keepdims, ord=2 if ord is None else ord)
    if len(axes) == 2:
        return _matrix_norm2(t, ord, axes, keepdims)
    raise ValueError(f"Improper number of axes for norm: axis={axis}. Pass one axis to compute "
                     "a vector-norm, or two axes to compute a matrix-norm.")


def _svd(a: Any, full_matrices: bool = True, compute_uv: bool = True,
         hermitian: bool = False) -> Any:
    t = _inexact(_t(a))
    if hermitian:
        raise NotImplementedError("pf.numpy.linalg.svd(hermitian=True) is not supported")
    if not compute_uv:
        return _pf_linalg.svdvals(t)
    return tuple(_pf_linalg.svd(t, full_matrices=full_matrices))


def _matrix_rank(M: Any, rtol: Any = None, *, tol: Any = None) -> Tensor:  # noqa: N803
    """numpy's rank: singular values above ``rtol * max(s)`` (``rtol``
    defaults to ``max(m, n) * eps``; ``tol`` is absolute)."""
    t = _inexact(_t(M))
    s = _pf_linalg.svdvals(t)
    if tol is not None:
        cut = _t(tol).to(t.dtype)
    else:
        r = (builtins.max(t.shape[-2:]) * float(np.finfo(t.dtype.np).eps)) if rtol is None \
            else rtol
        cut = ops.amax(s, (-1,), keepdim=True) * r
    return sum(s > cut, -1)


def _linalg_trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Tensor:
    return trace(x, offset, -2, -1, dtype)


def _linalg_tensordot(x1: Any, x2: Any, /, *, axes: Any = 2, precision: Any = None,
                      preferred_element_type: Any = None) -> Tensor:
    return tensordot(x1, x2, axes)


def _linalg_outer(x1: Any, x2: Any, /) -> Tensor:
    a, b = _t(x1), _t(x2)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are "
                         f"x1.ndim={a.ndim} and x2.ndim={b.ndim}")
    return outer(a, b)


def _linalg_diagonal(x: Any, /, *, offset: int = 0) -> Tensor:
    return indexing.diagonal(_t(x), offset, -2, -1)


def _linalg_cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Tensor:
    return cross(x1, x2, axis=axis)


def _lstsq(a: Any, b: Any, rcond: Any = None, *, numpy_resid: bool = False
           ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """JAX's lstsq by the SVD: the solution, the squared residual norms
    (empty under ``numpy_resid`` when rank-deficient or not tall), the
    rank (int32) and the singular values (torch's lstsq has other residuals)."""
    at, bt = _inexact(_t(a)), _inexact(_t(b))
    dt = promote_types(at.dtype, bt.dtype)
    at, bt = at.to(dt), bt.to(dt)
    if at.ndim != 2:
        raise TypeError(f"{at.ndim}-dimensional array given. Array must be two-dimensional")
    if at.shape[0] != bt.shape[0]:
        raise ValueError("Leading dimensions of input arrays must match")
    vec = bt.ndim == 1
    b2 = ops.unsqueeze(bt, -1) if vec else bt
    m, n = at.shape
    r = float(np.finfo(dt.np).eps) * builtins.max(n, m) if rcond is None else \
        (float(np.finfo(dt.np).eps) if rcond < 0 else float(rcond))
    u, s, vt = _pf_linalg.svd(at, full_matrices=False)
    mask = ops.logical_and(s > 0, s >= s[0] * r)
    rank = sum(mask)
    s_inv = ops.unsqueeze(ops.where(mask, 1.0 / ops.where(mask, s, 1.0), 0.0), -1)
    x = ops.matmul(transpose(vt), s_inv * ops.matmul(transpose(u), b2))
    if numpy_resid and (int(rank.item()) < n or m <= n):
        resid = zeros((0,), dt)
    else:
        d = b2 - ops.matmul(at, x)
        resid = sum(d * d, 0)
    return (ravel(x) if vec else x), resid, rank, s


def _pinv(a: Any, rtol: Any = None, hermitian: bool = False, *, rcond: Any = None) -> Tensor:
    t = _inexact(_t(a))
    tol = rcond if rtol is None else rtol
    return _pf_linalg.pinv(t, rtol=tol, hermitian=hermitian) if tol is not None else \
        _pf_linalg.pinv(t, hermitian=hermitian)


def _matrix_power(a: Any, n: int) -> Tensor:
    """``a`` to an integer power; a negative one is the inverse's power."""
    t = _t(a)
    n = int(n)
    if n < 0:
        return _pf_linalg.matrix_power(_pf_linalg.inv(t), -n)
    return _pf_linalg.matrix_power(t, n)


def _solve(a: Any, b: Any) -> Tensor:
    """numpy 2's (and JAX's) solve: ``b`` is a vector only when 1-d, else
    a (batch of) matrices; torch's reading of a batch of vectors is refused."""
    at, bt = _inexact(_t(a)), _inexact(_t(b))
    if bt.ndim >= 2 and bt.shape[-2] != at.shape[-1]:
        raise ValueError(f"Invalid shapes for solve: {tuple(at.shape)}, {tuple(bt.shape)}. "
                         "b is a vector only when 1-dimensional (numpy 2, JAX 0.5); use "
                         "b[..., None] for a batch of vectors.")
    return _pf_linalg.solve(at, bt)


# pf.linalg's names that give numpy.linalg's answers (checked against
# jax.numpy.linalg in test/python/test_numpy_sweep.py); any other name raises
_LINALG_SHARED = frozenset({
    "cond", "det", "inv", "matmul",
    "multi_dot", "slogdet", "svdvals", "tensorinv", "vecdot"})

def _qr(a: Any, mode: str = "reduced") -> Any:
    """numpy.linalg.qr: ``mode="r"`` returns R alone (torch's gives an empty Q
    with it)."""
    q, r = _pf_linalg.qr(_t(a), mode)
    return r if mode == "r" else _pf_linalg.QRResult(q, r)


def _symmetrized(a: Any, symmetrize_input: bool) -> Tensor:
    """JAX's ``symmetrize_input`` (its default): ``(a + a^T) / 2``, both
    triangles used (torch's read one)."""
    t = _t(a)
    return (t + matrix_transpose(t)) / 2 if symmetrize_input else t


def _eigh(a: Any, UPLO: str | None = None, symmetrize_input: bool = True) -> Any:  # noqa: N803
    return _pf_linalg.eigh(_symmetrized(a, symmetrize_input), "L" if UPLO is None else UPLO)


def _eigvalsh(a: Any, UPLO: str | None = "L", *,  # noqa: N803
              symmetrize_input: bool = True) -> Tensor:
    return _pf_linalg.eigvalsh(_symmetrized(a, symmetrize_input),
                               "L" if UPLO is None else UPLO)


def _cholesky(a: Any, *, upper: bool = False, symmetrize_input: bool = True) -> Tensor:
    return _pf_linalg.cholesky(_symmetrized(a, symmetrize_input), upper=upper)


_LINALG_OWN = {"norm": _norm, "vector_norm": _vector_norm, "matrix_norm": _matrix_norm,
               "qr": _qr, "eigh": _eigh, "eigvalsh": _eigvalsh,
               "cholesky": _cholesky, "svd": _svd, "matrix_rank": _matrix_rank,
               "trace": _linalg_trace,
               "tensordot": _linalg_tensordot, "outer": _linalg_outer,
               "diagonal": _linalg_diagonal, "cross": _linalg_cross,
               "matrix_transpose": matrix_transpose, "lstsq": _lstsq, "pinv": _pinv,
               "matrix_power": _matrix_power, "solve": _solve}


class _Linalg(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name in _LINALG_SHARED:
            return getattr(_pf_linalg, name)
        raise AttributeError(f"pf.numpy.linalg has no attribute {name!r} (pf.numpy.linalg."
                             f"{name} is not implemented; pf.linalg's name, if any, has "
                             "torch's semantics: not checked against numpy's)")


linalg = _Linalg("pyflame_mlir.numpy.linalg", "numpy's linalg names (norm, svd, ...), then "
                 "the pf.linalg names checked to agree with numpy.linalg")
for _name, _fn in _LINALG_OWN.items():
    setattr(linalg, _name, _fn)


# pf's top-level names whose torch semantics are numpy's for the arguments
# numpy takes (checked against jax.numpy in test/python/test_numpy_sweep.py):
# only these fall through; any other name raises AttributeError rather than
# giving torch's answer to a numpy question (meshgrid's indexing, histogram's
# bins, equal's single bool were such answers)
SHARED_WITH_PF = frozenset("""
    acos acosh add allclose arccos arccosh arcsin arcsinh arctan arctan2 arctanh asin
    asinh atan atan2 atanh atleast_1d atleast_2d atleast_3d bitwise_and bitwise_left_shift
    bitwise_not bitwise_or bitwise_right_shift bitwise_xor broadcast_shapes broadcast_to ceil
    column_stack concat cos cosh deg2rad divide dsplit dstack
    empty_like exp exp2 expm1 fliplr flipud floor floor_divide fmod frexp gcd
    greater greater_equal hsplit hypot i0 isclose isfinite isin isinf isnan isneginf
    isposinf isreal lcm ldexp less less_equal log log10 log1p log2 logaddexp logaddexp2
    logical_and logical_not logical_or logical_xor maximum minimum multiply
    negative nextafter not_equal positive pow rad2deg reciprocal
    remainder signbit sin sinc sinh sqrt square subtract tan tanh trapezoid tril triu
    true_divide trunc vander vsplit
""".split())


# the shared functions whose integer operands become floats: int64 ones become
# float64 with jax_enable_x64 (pf's, torch's, make float32 of any integer)
_INEXACT_SHARED = frozenset("""
    acos acosh arccos arccosh arcsin arcsinh arctan arctan2 arctanh asin asinh atan atan2
    atanh cos cosh deg2rad divide exp exp2 expm1 hypot i0 log log10 log1p log2 logaddexp
    logaddexp2 rad2deg sin sinc sinh sqrt tan tanh trapezoid true_divide
""".split())


def _x64_inexact(f: Any) -> Any:
    """``f`` on JAX's x64 inexact operands: int64 tensors as float64, and
    Python numbers as float64 when no tensor is given."""
    def g(*args: Any, **kwargs: Any) -> Any:
        if not _config.jax_enable_x64:
            return f(*args, **kwargs)
        tensors = builtins.any(isinstance(a, Tensor) for a in args)
        args = tuple(a.to(_f64) if isinstance(a, Tensor) and a.dtype is _i64
                     else asarray(a, _f64) if not tensors and isinstance(a, int | float)
                     and not isinstance(a, bool) else a for a in args)
        return f(*args, **kwargs)
    g.__name__ = g.__qualname__ = getattr(f, "__name__", "f")
    g.__doc__ = f.__doc__
    return g


# the shared arithmetic functions with JAX's weak Python ints: a bool array
# beside a Python int computes in JAX's default int (torch's is int64, or an
# error for subtract); a Python int outside that type's range raises JAX's
# OverflowError (it wrapped)
_WEAK_INT_SHARED = frozenset("""
    add subtract multiply maximum minimum pow floor_divide remainder fmod
""".split())


def _check_python_int(v: Any) -> None:
    if isinstance(v, int) and not isinstance(v, bool):
        info = np.iinfo(_I().np)
        if not info.min <= v <= info.max:
            raise OverflowError(f"Python int {v} too large to convert to {_I().name}")


def _weak_ints(f: Any) -> Any:
    def g(*args: Any, **kwargs: Any) -> Any:
        for v in args:
            _check_python_int(v)
        if builtins.any(isinstance(v, int) and not isinstance(v, bool) for v in args):
            args = tuple(v.to(_I()) if isinstance(v, Tensor) and v.dtype is _bool else v
                         for v in args)
        return f(*args, **kwargs)
    g.__name__ = g.__qualname__ = getattr(f, "__name__", "f")
    g.__doc__ = f.__doc__
    return g


_HOST_TYPES = (np.ndarray, list, tuple)


def _host_arrays(f: Any) -> Any:
    """``f`` with numpy arrays among its arguments (also in a list or tuple,
    as ``concat``'s) taken as ``asarray`` takes them: float64/int64 host data
    is float32/int32 without ``jax_enable_x64``, as JAX's (pf's functions keep
    a numpy array's dtype, as torch's: ``jnp.add(x32, f64_data)`` was float64)."""
    def host(v: Any) -> Any:
        if isinstance(v, np.ndarray):
            return asarray(v)
        if isinstance(v, list | tuple) and builtins.any(isinstance(e, np.ndarray) for e in v):
            return type(v)(asarray(e) if isinstance(e, np.ndarray) else e for e in v)
        return v

    def g(*args: Any, **kwargs: Any) -> Any:
        if not kwargs:
            for a in args:
                if type(a) is not Tensor and isinstance(a, _HOST_TYPES):
                    break
            else:  # (no host data: the common call, kept cheap)
                return f(*args)
        return f(*(host(a) for a in args), **{k: host(v) for k, v in kwargs.items()})
    g.__name__ = g.__qualname__ = getattr(f, "__name__", "f")
    g.__doc__ = f.__doc__
    return g


def __getattr__(name: str) -> Any:
    """The names in ``SHARED_WITH_PF`` are pf's (jnp.exp, jnp.einsum, ...):
    looked up on the package when asked (not imported: the package sits
    above); any other name is not implemented here."""
    if name in SHARED_WITH_PF:
        f = _host_arrays(getattr(sys.modules[__package__], name))
        if name in _WEAK_INT_SHARED:
            return _weak_ints(f)
        return _x64_inexact(f) if name in _INEXACT_SHARED else f
    if name in _SCALAR_TYPES:
        return _SCALAR_TYPES[name]
    if name in ("float_", "int_"):  # the defaults: float32/int32, float64/int64 with x64
        return _SCALAR_TYPES[(_F() if name == "float_" else _I()).name]
    hint = " (pf's has torch's semantics, not checked against numpy's)" \
        if hasattr(sys.modules[__package__], name) else ""
    raise AttributeError(f"pf.numpy has no attribute {name!r} (pf.numpy.{name} is not "
                         f"implemented{hint})")

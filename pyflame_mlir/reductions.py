"""Reductions, scans and sorting beyond ``sum mean max min`` (which stay in
``ops.py``), with torch's names, arguments and return types.

Primitives: ``prod`` (``dialects/reduction.py``), the scans ``cumsum cumprod
logcumsumexp cummax cummin`` (``dialects/scan.py``), ``sort`` and its index
moves ``select_along``/``scatter_add_along`` (``dialects/sorting.py``).
Everything else is a composite of recorded ops: ``var std var_mean std_mean
all any count_nonzero aminmax nansum nanmean`` and ``argsort topk kthvalue
median nanmedian mode msort`` (through ``sort`` + ``select_along``, so their
gradients reach the selected elements).

This module shadows ``all`` and ``any`` on purpose (the op names); the
builtins are used as ``builtins.X``.
"""

from __future__ import annotations

import builtins
from collections import namedtuple
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import saved
from .core import Tensor, detach, record
from .dialects import OPS
from .dialects.dtypes import bool_, int64
from .dialects.dtypes import dtype as to_dtype
from .dialects.opdef import ShapeError, normalize_dim
from .inplace import _update
from .ops import (
    ELEMENTWISE,
    ValuesIndices,
    _dims,
    amax,
    amin,
    argmax,
    as_tensor_arg,
    autocast_policy,
    cat,
    convert,
    getitem,
    isinf,
    isnan,
    lerp,
    mean,
    reshape,
    scalar,
    sum,
    where,
)

logical_not, ne, sqrt = ELEMENTWISE["logical_not"], ELEMENTWISE["ne"], ELEMENTWISE["sqrt"]

MinMax = namedtuple("MinMax", ["min", "max"])
Dim = int | Sequence[int] | None


def _count(x: Tensor, dims: Sequence[int]) -> int:
    n = 1
    for d in dims:
        n *= x.shape[d]
    return n


def _require_float(name: str, x: Tensor) -> None:
    if not x.dtype.is_floating_point:
        raise ShapeError(name, f"expects a floating-point input, got {x.dtype.name}")


def _isnan(x: Tensor) -> Tensor:
    return ne(x, x)


# ---- reductions ----

@autocast_policy("fp32")
def prod(input: Any, dim: int | None = None, keepdim: bool = False, *, dtype: Any = None
         ) -> Tensor:
    """torch.prod: the product over ``dim`` (all elements when None); integers
    and bool give int64."""
    t = as_tensor_arg(input) if dtype is None else convert(input, dtype)
    if dim is not None and not isinstance(dim, int):
        raise TypeError(f"prod: dim must be an int or None, got {dim!r}")
    out = record(OPS["prod"], (t,), {"dims": _dims("prod", t, dim),
                                     "keepdim": keepdim and dim is not None})
    return out if dtype is None else convert(out, t.dtype)


def _correction(name: str, dim: Any, unbiased: bool | None, correction: float | None
                ) -> tuple[Any, float]:
    if isinstance(dim, bool):  # torch.var(x, True): the legacy ``unbiased`` positional
        dim, unbiased = None, dim if unbiased is None else unbiased
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}: pass either unbiased or correction, not both")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    return dim, float(correction)


def _var_mean(name: str, input: Any, dim: Any, unbiased: bool | None, keepdim: bool,
              correction: float | None) -> tuple[Tensor, Tensor]:
    x = as_tensor_arg(input)
    _require_float(name, x)
    dim, c = _correction(name, dim, unbiased, correction)
    dims = _dims(name, x, dim)
    m = mean(x, dims, keepdim=True)
    dev = x - m
    dof = builtins.max(0.0, _count(x, dims) - c)
    var = sum(dev * dev, dims, keepdim=keepdim) / scalar(dof, x.dtype)
    return var, (m if keepdim else reshape(m, var.shape))


def var(input: Any, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *,
        correction: float | None = None) -> Tensor:
    """torch.var: sum of squared deviations / (N - correction), correction 1
    by default; ``unbiased`` is the legacy spelling (False: correction 0).
    Checked by autograd as torch's one op (which saves its input)."""
    first = saved.start()
    x = as_tensor_arg(input)
    return saved.composite(_var_mean("var", x, dim, unbiased, keepdim, correction)[0], first,
                           (x,), op="var")


def _sqrt_at_zero(v: Tensor) -> Tensor:
    """sqrt whose derivative at 0 is 0, not inf (torch's std backward: a
    constant slice has a zero gradient, never NaN)."""
    zero = v == 0
    return where(zero, scalar(0, v.dtype), sqrt(where(zero, scalar(1, v.dtype), v)))


def std(input: Any, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *,
        correction: float | None = None) -> Tensor:
    """torch.std; checked by autograd as torch's one op (which saves its input
    and its result)."""
    first = saved.start()
    x = as_tensor_arg(input)
    return saved.composite(
        _sqrt_at_zero(_var_mean("std", x, dim, unbiased, keepdim, correction)[0]), first,
        (x,), True, "std")


def var_mean(input: Any, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False,
             *, correction: float | None = None) -> tuple[Tensor, Tensor]:
    return _var_mean("var_mean", input, dim, unbiased, keepdim, correction)


def std_mean(input: Any, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False,
             *, correction: float | None = None) -> tuple[Tensor, Tensor]:
    v, m = _var_mean("std_mean", input, dim, unbiased, keepdim, correction)
    return _sqrt_at_zero(v), m


def _truth_count(name: str, input: Any, dim: Dim, keepdim: bool, negate: bool) -> Tensor:
    x = as_tensor_arg(input)
    truth = convert(x, bool_)  # nonzero (NaN included) is true, as torch
    if negate:
        truth = logical_not(truth)
    return sum(truth, _dims(name, x, dim), keepdim=keepdim)  # bool sums to int64


def all(input: Any, dim: Dim = None, keepdim: bool = False) -> Tensor:
    """torch.all: True where every element is nonzero (True over an empty dim)."""
    return _truth_count("all", input, dim, keepdim, negate=True) == 0


def any(input: Any, dim: Dim = None, keepdim: bool = False) -> Tensor:
    """torch.any: True where some element is nonzero (False over an empty dim)."""
    return _truth_count("any", input, dim, keepdim, negate=False) > 0


def count_nonzero(input: Any, dim: Dim = None) -> Tensor:
    return _truth_count("count_nonzero", input, dim, False, negate=False)


def aminmax(input: Any, *, dim: int | None = None, keepdim: bool = False) -> MinMax:
    """torch.aminmax: (min, max) over ``dim`` or the whole tensor."""
    x = as_tensor_arg(input)
    if dim is None and keepdim:  # torch keeps every dim as size 1
        return MinMax(amin(x, None, keepdim=True), amax(x, None, keepdim=True))
    return MinMax(amin(x, dim, keepdim=keepdim), amax(x, dim, keepdim=keepdim))


def _without_nan(x: Tensor) -> Tensor:
    if not x.dtype.is_floating_point:
        return x
    return where(_isnan(x), scalar(0, x.dtype), x)


def nansum(input: Any, dim: Dim = None, keepdim: bool = False, *, dtype: Any = None
           ) -> Tensor:
    """torch.nansum: the sum with NaN counted as zero."""
    x = as_tensor_arg(input) if dtype is None else convert(input, dtype)
    return sum(_without_nan(x), dim, keepdim=keepdim)


def nanmean(input: Any, dim: Dim = None, keepdim: bool = False, *, dtype: Any = None
            ) -> Tensor:
    """torch.nanmean: the mean of the non-NaN elements (NaN where there are none)."""
    x = as_tensor_arg(input) if dtype is None else convert(input, dtype)
    _require_float("nanmean", x)
    dims = _dims("nanmean", x, dim)
    total = sum(_without_nan(x), dims, keepdim=keepdim)
    kept = sum(logical_not(_isnan(x)), dims, keepdim=keepdim)
    return total / convert(kept, x.dtype)


# ---- scans ----

def _scan_dim(name: str, x: Tensor, dim: int) -> tuple[Tensor, int]:
    """A 0-d operand scans as shape [1] (torch accepts dim 0 or -1 for it)."""
    d = normalize_dim(name, dim, x.ndim)
    return (reshape(x, (1,)) if x.ndim == 0 else x), d


def _scan(name: str, input: Any, dim: int, dtype: Any, attrs: dict[str, Any]) -> Tensor:
    x = as_tensor_arg(input) if dtype is None else convert(input, dtype)
    t, d = _scan_dim(name, x, dim)
    out = record(OPS[name], (t,), {"dim": d, **attrs})
    if dtype is not None:
        out = convert(out, t.dtype)  # cumsum(int32, dtype=int32) stays int32
    return reshape(out, x.shape) if x.ndim == 0 else out


def cumsum(input: Any, dim: int, *, dtype: Any = None) -> Tensor:
    """torch.cumsum: integers and bool accumulate in int64 unless ``dtype``."""
    return _scan("cumsum", input, dim, dtype, {"reverse": False})


def cumprod(input: Any, dim: int, *, dtype: Any = None) -> Tensor:
    return _scan("cumprod", input, dim, dtype, {})


def logcumsumexp(input: Any, dim: int) -> Tensor:
    x = as_tensor_arg(input)
    _require_float("logcumsumexp", x)
    return _scan("logcumsumexp", x, dim, None, {"reverse": False})


def _cumextreme(name: str, input: Any, dim: int) -> ValuesIndices:
    x = as_tensor_arg(input)
    t, d = _scan_dim(name, x, dim)
    values, indices = record(OPS[name], (t,), {"dim": d})
    if x.ndim == 0:
        values, indices = reshape(values, ()), reshape(indices, ())
    return ValuesIndices(values, indices)


def cummax(input: Any, dim: int) -> ValuesIndices:
    """torch.cummax: running maximum and the index of the latest element equal
    to it (NaN propagates, indexed at the latest NaN)."""
    return _cumextreme("cummax", input, dim)


def cummin(input: Any, dim: int) -> ValuesIndices:
    return _cumextreme("cummin", input, dim)


# ---- sorting ----

def sort(input: Any, dim: int = -1, descending: bool = False, *, stable: bool = False
         ) -> ValuesIndices:
    """torch.sort: (values, indices). Always stable (equal elements keep their
    order, which ``stable=True`` asks for); NaN sorts as the largest value."""
    del stable  # every sort here is stable: a valid answer to stable=False too
    x = as_tensor_arg(input)
    t, d = _scan_dim("sort", x, dim)
    values, indices = record(OPS["sort"], (t,), {"dim": d, "descending": bool(descending)})
    if x.ndim == 0:
        values, indices = reshape(values, ()), reshape(indices, ())
    return ValuesIndices(values, indices)


def argsort(input: Any, dim: int = -1, descending: bool = False, *, stable: bool = False
            ) -> Tensor:
    return sort(input, dim, descending, stable=stable).indices


def msort(input: Any) -> Tensor:
    return sort(input, 0).values


def _narrow(x: Tensor, dim: int, start: int, length: int) -> Tensor:
    index = (slice(None),) * dim + (slice(start, start + length),)
    return getitem(x, index)


def topk(input: Any, k: int, dim: int = -1, largest: bool = True, sorted: bool = True
         ) -> ValuesIndices:
    """torch.topk: the k largest (smallest with ``largest=False``) along
    ``dim``, in order (also when ``sorted=False``, which leaves it open)."""
    x = as_tensor_arg(input)
    t, d = _scan_dim("topk", x, dim)
    n = t.shape[d]
    if not 0 <= k <= n:
        raise ShapeError("topk", f"k = {k} is out of range for dimension {d} of size {n}")
    values, indices = sort(t, d, descending=largest)
    values, indices = _narrow(values, d, 0, k), _narrow(indices, d, 0, k)
    if x.ndim == 0:
        values, indices = reshape(values, ()), reshape(indices, ())
    return ValuesIndices(values, indices)


def _squeeze_dim(v: Tensor, d: int, keepdim: bool) -> Tensor:
    return v if keepdim else reshape(v, v.shape[:d] + v.shape[d + 1:])


def _select_sorted(name: str, x: Tensor, dim: int, keepdim: bool, position) -> ValuesIndices:
    """Sort along ``dim`` and take, per slice, the element at ``position(t,
    d, n)`` (an int, or an int64 tensor with size 1 at ``d``)."""
    t, d = _scan_dim(name, x, dim)
    n = t.shape[d]
    if n == 0:
        raise ShapeError(name, f"cannot take a value from empty dimension {d} of shape "
                               f"{list(t.shape)}")
    values, indices = record(OPS["sort"], (t,), {"dim": d, "descending": False})
    pos = position(t, d, n)
    if isinstance(pos, int):
        v, i = _narrow(values, d, pos, 1), _narrow(indices, d, pos, 1)
    else:
        v = record(OPS["select_along"], (values, pos), {"dim": d})
        i = record(OPS["select_along"], (indices, pos), {"dim": d})
    if x.ndim == 0:
        return ValuesIndices(reshape(v, ()), reshape(i, ()))
    return ValuesIndices(_squeeze_dim(v, d, keepdim), _squeeze_dim(i, d, keepdim))


def kthvalue(input: Any, k: int, dim: int = -1, keepdim: bool = False) -> ValuesIndices:
    """torch.kthvalue: the k-th smallest element (1-based) and its index."""
    x = as_tensor_arg(input)

    def position(t: Tensor, d: int, n: int) -> int:
        if not 1 <= k <= n:
            raise ShapeError("kthvalue", f"k = {k} is out of range for dimension {d} "
                                         f"of size {n}")
        return k - 1
    return _select_sorted("kthvalue", x, dim, keepdim, position)


def _nan_count(t: Tensor, d: int) -> Tensor:
    return sum(_isnan(t), d, keepdim=True)  # int64, size 1 at d


def _all_equal_nth_element_first(n: int) -> int:
    """Which of n mutually equal elements libstdc++'s ``std::nth_element(first,
    first, last)`` leaves first: torch's nanmedian index for an all-NaN slice
    (its comparator finds no NaN smaller than another). Introselect with
    nothing comparing less: the median-of-three pivot moves the middle element
    to the front, the partition swaps pairs from both ends inward and returns
    the middle, and the range keeps its front half until at most 3 remain
    (insertion sort moves nothing). Matches torch 2.13 for n = 1..299."""
    order = list(range(n))
    last = n
    while last > 3:  # (halving never reaches the depth limit 2 log2 n)
        mid = last // 2
        order[0], order[mid] = order[mid], order[0]
        lo, hi = 1, last
        while True:
            hi -= 1
            if lo >= hi:
                break
            order[lo], order[hi] = order[hi], order[lo]
            lo += 1
        last = lo  # the nth, the front, lies before the cut
    return order[0]


def _median(name: str, input: Any, dim: int | None, keepdim: bool, ignore_nan: bool):
    x = as_tensor_arg(input)
    flat = dim is None
    if flat:
        x = reshape(x, (x.numel(),)) if x.ndim != 1 else x
        if x.numel() == 0 and x.dtype.is_floating_point:  # torch: NaN, not an error
            return reshape(sum(x, None), ()) / scalar(0, x.dtype)

    def position(t: Tensor, d: int, n: int) -> int | Tensor:
        lower = (n - 1) // 2
        if not t.dtype.is_floating_point:
            return lower
        nans = _nan_count(t, d)
        if ignore_nan:  # the lower median of the non-NaN elements (NaN if all are)
            valid = scalar(n, int64) - nans
            half = convert(convert(valid - 1, t.dtype) / scalar(2, t.dtype), int64)
            # all NaN: torch's index (the stable order is the identity there)
            return where(valid > 0, half, scalar(_all_equal_nth_element_first(n), int64))
        # any NaN makes the median NaN: point at the first NaN (sorted last)
        return where(nans > 0, scalar(n, int64) - nans, scalar(lower, int64))
    out = _select_sorted(name, x, 0 if flat else dim, keepdim, position)
    if not flat:
        return out
    m = out.values
    if not m.dtype.is_floating_point:
        return m
    # torch's evenly_distribute_backward for the median of all elements: the
    # gradient is shared by every element equal to it (the NaNs if it is NaN),
    # not sent to the one the sort picked. A term of value exactly 0 carries it.
    # (An infinite median keeps none: inf - inf would spoil the value.)
    mask = where(isnan(m), isnan(x), ELEMENTWISE["eq"](x, m))
    shared = ELEMENTWISE["logical_and"](mask, logical_not(isinf(x)))
    count = sum(convert(mask, x.dtype))
    zero = sum(where(shared, x - detach(x), 0.0)) / count
    return detach(m) + zero


def median(input: Any, dim: int | None = None, keepdim: bool = False
           ) -> Tensor | ValuesIndices:
    """torch.median: the lower median; NaN if a NaN is present. Without
    ``dim``, of all elements (a 0-d tensor); with ``dim``, (values, indices)."""
    return _median("median", input, dim, keepdim, ignore_nan=False)


def nanmedian(input: Any, dim: int | None = None, keepdim: bool = False
              ) -> Tensor | ValuesIndices:
    """torch.nanmedian: the lower median of the non-NaN elements."""
    return _median("nanmedian", input, dim, keepdim, ignore_nan=True)


def mode(input: Any, dim: int = -1, keepdim: bool = False) -> ValuesIndices:
    """torch.mode: the most frequent value along ``dim`` (the smallest of the
    equally frequent) and the index of its last occurrence.

    Measured on torch 2.13 CPU (hypothesis over small integer-valued tensors):
    the value rule always holds; the index is the last occurrence for slices
    of up to 16 elements (torch's std::sort of (value, index) pairs by value
    is an insertion sort there, which is stable), and for longer slices
    whichever occurrence its introsort leaves last (9% the last one): not a
    rule we can reproduce, so there ours stays the last occurrence. NaN
    breaks torch's comparison (its sort's order is undefined): each NaN is
    its own run here, as in torch's count."""
    x = as_tensor_arg(input)
    t, d = _scan_dim("mode", x, dim)
    n = t.shape[d]
    if n == 0:
        raise ShapeError("mode", f"expected reduction dim {d} to have non-zero size, got shape "
                                 f"{list(t.shape)}")
    values, indices = record(OPS["sort"], (t,), {"dim": d, "descending": False})
    place = record(OPS["iota"], (), {"shape": t.shape, "dim": d, "dtype": int64})
    # a run of equal values starts where the value differs from the previous
    # one, and ends where it differs from the next (NaN differs from NaN)
    differs = ne(_narrow(values, d, 1, n - 1), _narrow(values, d, 0, n - 1))
    edge = reshape(scalar(True, bool_), (1,) * t.ndim).expand(
        *(1 if k == d else s_ for k, s_ in enumerate(t.shape)))
    starts = cat([edge, differs], d)
    ends = cat([differs, edge], d)
    start = cummax(where(starts, place, scalar(0, int64)), d).values
    count = where(ends, place - start + scalar(1, int64), scalar(0, int64))
    most = amax(count, d, keepdim=True)
    # the first run with the highest count: the smallest value (ascending order)
    pos = argmax(convert(count == most, int64), d, keepdim=True)
    v = record(OPS["select_along"], (values, pos), {"dim": d})
    i = record(OPS["select_along"], (indices, pos), {"dim": d})
    if x.ndim == 0:
        return ValuesIndices(reshape(v, ()), reshape(i, ()))
    return ValuesIndices(_squeeze_dim(v, d, keepdim), _squeeze_dim(i, d, keepdim))


# ---- quantiles (torch's algorithm: sort, a rank per quantile, then interpolate) ----

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name: str, input: Any, q: Any, dim: int | None, keepdim: bool,  # noqa: A002
              interpolation: str, ignore_nan: bool) -> Tensor:
    x = as_tensor_arg(input)
    if x.dtype.name not in ("float32", "float64"):
        raise ShapeError(name, f"input tensor must be either float or double dtype, got "
                               f"{x.dtype.name}")
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(f"{name}: interpolation must be one of {_INTERPOLATIONS}, got "
                         f"{interpolation!r}")
    if x.numel() == 0:
        raise ShapeError(name, f"input tensor must be non-empty, got shape {list(x.shape)}")
    if isinstance(q, Tensor):
        if q.dtype is not x.dtype:
            raise ShapeError(name, f"q tensor must be same dtype as the input tensor, got "
                                   f"{q.dtype.name} and {x.dtype.name}")
        qv, qt = q.numpy(), q  # torch checks q's values: an evaluation, as torch's sync
    else:
        qv = np.asarray(q, dtype=x.dtype.np)
        qt = scalar(float(qv), x.dtype) if qv.ndim == 0 else as_tensor_arg(qv.copy())
    if qv.ndim > 1:
        raise ShapeError(name, f"q must be a scalar or 1D tensor, got shape {list(qv.shape)}")
    if qv.size and not ((qv >= 0) & (qv <= 1)).all():
        raise ValueError(f"{name}: q values must be in the range [0, 1]")
    if dim is None:
        t, d, kept = reshape(x, (x.numel(),)), 0, [1] * x.ndim
    else:
        d = normalize_dim(name, dim, x.ndim) if x.ndim else 0
        t = reshape(x, (1,)) if x.ndim == 0 else x
        kept = list(x.shape)
        if x.ndim:
            kept[d] = 1
    t = t.movedim(d, -1)  # the reduced dim last: (..., n)
    n = t.shape[-1]
    values = sort(t, -1).values  # NaN last
    nq = 1 if qv.ndim == 0 else qv.shape[0]
    qs = reshape(qt, (1,) * (t.ndim - 1) + (nq,))
    nans = sum(_isnan(values), -1, keepdim=True)  # int64 (..., 1)
    if ignore_nan:  # rank among the non-NaN values (0 if all are NaN: that value is NaN)
        ranks = qs * convert(scalar(n - 1, int64) - nans, x.dtype)
        ranks = where(ranks < 0, scalar(0, x.dtype), ranks)
    else:  # any NaN: the last rank, which holds a NaN
        ranks = where(nans > 0, scalar(n - 1, x.dtype), qs * scalar(n - 1, x.dtype))
    if interpolation == "lower":
        ranks = ELEMENTWISE["floor"](ranks)
    elif interpolation == "higher":
        ranks = ELEMENTWISE["ceil"](ranks)
    elif interpolation == "nearest":
        ranks = ELEMENTWISE["round"](ranks)  # half to even, as torch
    shape = t.shape[:-1] + (nq,)
    below = convert(ranks, int64)
    below = below if below.shape == shape else below.expand(*shape)
    out = record(OPS["select_along"], (values, below), {"dim": t.ndim - 1})
    if interpolation in ("linear", "midpoint"):
        above = convert(ELEMENTWISE["ceil"](ranks), int64)
        above = above if above.shape == shape else above.expand(*shape)
        weight = scalar(0.5, x.dtype) if interpolation == "midpoint" else \
            ranks - convert(below, x.dtype)
        out = lerp(out, record(OPS["select_along"], (values, above), {"dim": t.ndim - 1}),
                   weight)
    # (..., nq) -> (nq, *kept or squeezed dims)
    lead = kept if keepdim else [s_ for k, s_ in enumerate(kept) if dim is not None and
                                 x.ndim and k != d]
    out = out.movedim(-1, 0)
    out = reshape(out, (nq, *lead))
    return reshape(out, tuple(lead)) if qv.ndim == 0 else out


@autocast_policy("fp32")
def quantile(input: Any, q: Any, dim: int | None = None, keepdim: bool = False,  # noqa: A002
             *, interpolation: str = "linear") -> Tensor:
    """torch.quantile: the q-th quantiles along ``dim`` (of all elements when
    None), by ``interpolation`` between the two nearest ranks; NaN where a
    slice has a NaN. A 1-D ``q`` adds a leading dimension."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, ignore_nan=False)


@autocast_policy("fp32")
def nanquantile(input: Any, q: Any, dim: int | None = None, keepdim: bool = False,  # noqa: A002
                *, interpolation: str = "linear") -> Tensor:
    """torch.nanquantile: quantile ignoring NaNs (NaN where a slice is all NaN)."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, ignore_nan=True)


# Functions that are also Tensor methods (``x.prod()``, ``x.sort(1)``)
METHODS = tuple(("prod var std all any count_nonzero aminmax nansum nanmean cumsum cumprod "
                 "logcumsumexp cummax cummin sort argsort msort topk kthvalue median "
                 "nanmedian mode quantile nanquantile").split())


def _scan_inplace(name: str):
    fn = globals()[name]

    def method(self: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
        if dtype is not None and to_dtype(dtype) is not self.dtype:
            raise RuntimeError(f"{name}_: dtype {dtype} must be the tensor's own dtype "
                               f"{self.dtype.name} (an in-place result keeps it)")
        return _update(self, lambda old: fn(old, dim, dtype=dtype), f"{name}_")
    method.__name__ = f"{name}_"
    return method


def _set_tensor_methods() -> None:
    api = globals()
    for name in METHODS:
        setattr(Tensor, name, api[name])
    for name in ("cumsum", "cumprod"):  # torch's in-place scans
        setattr(Tensor, f"{name}_", _scan_inplace(name))


_set_tensor_methods()

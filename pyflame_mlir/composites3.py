"""torch functions pf lacked after session 10 (issue 14, session 11's scan of
``torch.*``), written from the op API as ``composites2.py`` is, so every
backend and autodiff take them with no rule of their own: ``gradient``
(numpy's and torch's second-order finite differences), ``histogram``,
``index_reduce``, ``as_strided`` (a view: writes through it reach the base,
as torch's), the ``*_copy`` forms of the view ops, torch's constants
(``pi e inf nan newaxis``), ``range`` and top-level spellings of Tensor
members. Functions that need complex numbers (``polar``, ``view_as_real``,
``stft``...) raise, naming the op: pf has no complex dtype.
"""

from __future__ import annotations

import builtins
import math
import warnings
from collections import namedtuple
from collections.abc import Sequence
from typing import Any

import numpy as np

from .core import Tensor, as_view, geometry, untracked_views
from .core import detach as _detach
from .core import is_inference as _is_inference
from .creation import linspace, tensor
from .dialects.dtypes import default_float, int64
from .dialects.dtypes import dtype as to_dtype
from .dialects.opdef import normalize_dim
from .indexing import _host as _host_values
from .indexing import diagonal, index_select, narrow, scatter_reduce, select, unbind
from .inplace import _update
from .ops import (
    TensorLike,
    as_tensor_arg,
    cat,
    convert,
    expand,
    floor_divide,
    permute,
    reshape,
    split,
    squeeze,
    transpose,
    unsqueeze,
    view,
    where,
)

__all__ = [
    "gradient", "histogram", "histogramdd", "index_reduce", "as_strided", "as_strided_copy",
    "as_strided_scatter", "pi", "e", "inf", "nan", "newaxis", "detach", "fill", "range",
    "is_signed", "is_inference", "is_conj", "is_neg", "unsafe_chunk", "unsafe_split",
    "unsafe_split_with_sizes", "alias_copy", "detach_copy", "diagonal_copy", "expand_copy",
    "permute_copy", "select_copy", "slice_copy", "squeeze_copy", "t_copy", "transpose_copy",
    "unbind_copy", "unsqueeze_copy", "view_copy", "split_copy", "split_with_sizes_copy",
    "narrow_copy", "unfold_copy", "polar", "complex", "view_as_real", "view_as_complex",
    "stft", "istft",
]

pi, e, inf, nan = math.pi, math.e, math.inf, math.nan
newaxis = None


# ---- torch.gradient ----

def _spacings(name: str, spacing: Any, dims: list[int], x: Tensor) -> list[Any]:
    """One entry per dim: a float step or a 1-D coordinates tensor."""
    if spacing is None:
        return [1.0] * len(dims)
    if isinstance(spacing, int | float) or (isinstance(spacing, Tensor) and spacing.ndim == 0):
        return [float(spacing)] * len(dims)
    items = list(spacing)
    if len(items) != len(dims):
        raise RuntimeError(f"{name} expected spacing to be unspecified, a scalar or it's "
                           f"spacing and dim arguments to have the same length, but got a "
                           f"spacing argument of length {len(items)} and a dim argument of "
                           f"length {len(dims)}.")
    out: list[Any] = []
    for d, s in zip(dims, items):
        if isinstance(s, Tensor) and s.ndim > 0:
            if s.ndim != 1 or s.shape[0] != x.shape[d]:
                raise RuntimeError(f"{name} expected each tensor to be on the same device "
                                   f"and of size {x.shape[d]} (the input's dim {d}), got "
                                   f"coordinates of shape {list(s.shape)}")
            out.append(s)
        else:
            out.append(float(s))
    return out


def gradient(input: TensorLike, *, spacing: Any = 1, dim: Any = None,  # noqa: A002
             edge_order: int = 1) -> tuple[Tensor, ...]:
    """``torch.gradient``: central differences inside, one-sided ones of order
    ``edge_order`` (1 or 2) at the ends, for each dim of ``dim`` (all when
    None); ``spacing`` is a step, one step per dim, or one coordinates tensor
    per dim (numpy's nonuniform formulas). Differentiable in the input."""
    name = "torch.gradient"
    x = as_tensor_arg(input)
    if edge_order not in (1, 2):
        raise RuntimeError(f"{name} only supports edge_order=1 and edge_order=2.")
    if not x.dtype.is_floating_point:
        x = convert(x, default_float())
    if dim is None:
        dims = list(builtins.range(x.ndim))
    elif isinstance(dim, int):
        dims = [normalize_dim("gradient", dim, x.ndim)]
    else:
        dims = [normalize_dim("gradient", d, x.ndim) for d in dim]
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"{name}: dim {list(dims)} appears multiple times in the list of "
                           "dims")
    steps = _spacings(name, spacing, dims, x)
    for d in dims:
        if x.shape[d] < edge_order + 1:
            raise RuntimeError(f"{name} expected each dimension size to be at least "
                               "edge_order+1")
    return tuple(_gradient_along(x, d, h, edge_order) for d, h in zip(dims, steps))


def _along(x: Tensor, d: int, start: int, length: int) -> Tensor:
    return narrow(x, d, start % x.shape[d] if start < 0 else start, length)


def _coef(c: Any, x: Tensor, d: int) -> Any:
    """A coefficient per position along ``d`` (a 1-D tensor), shaped to broadcast."""
    if not isinstance(c, Tensor):
        return c
    shape = [1] * x.ndim
    shape[d] = c.shape[0]
    return reshape(convert(c, x.dtype), tuple(shape))


def _gradient_along(x: Tensor, d: int, h: Any, edge_order: int) -> Tensor:
    n = x.shape[d]
    f = lambda s, k: _along(x, d, s, k)  # noqa: E731
    if not isinstance(h, Tensor):
        inner = (f(2, n - 2) - f(0, n - 2)) / (2.0 * h) if n > 2 else None
        if edge_order == 1:
            first = (f(1, 1) - f(0, 1)) / h
            last = (f(n - 1, 1) - f(n - 2, 1)) / h
        else:
            first = (-1.5 * f(0, 1) + 2.0 * f(1, 1) - 0.5 * f(2, 1)) / h
            last = (0.5 * f(n - 3, 1) - 2.0 * f(n - 2, 1) + 1.5 * f(n - 1, 1)) / h
    else:
        c = np.asarray(_host_values(h), dtype=np.float64)  # coordinates: constants
        dx = np.diff(c)
        inner = None
        if n > 2:
            dx1, dx2 = dx[:-1], dx[1:]
            a = -dx2 / (dx1 * (dx1 + dx2))
            b = (dx2 - dx1) / (dx1 * dx2)
            cc = dx1 / (dx2 * (dx1 + dx2))
            k = lambda v: _coef(tensor(v, dtype=x.dtype), x, d)  # noqa: E731
            inner = k(a) * f(0, n - 2) + k(b) * f(1, n - 2) + k(cc) * f(2, n - 2)
        if edge_order == 1:
            first = (f(1, 1) - f(0, 1)) / float(dx[0])
            last = (f(n - 1, 1) - f(n - 2, 1)) / float(dx[-1])
        else:
            d1, d2 = float(dx[0]), float(dx[1])
            a, b, cc = (-(2.0 * d1 + d2) / (d1 * (d1 + d2)), (d1 + d2) / (d1 * d2),
                        -d1 / (d2 * (d1 + d2)))
            first = a * f(0, 1) + b * f(1, 1) + cc * f(2, 1)
            d1, d2 = float(dx[-2]), float(dx[-1])
            a, b, cc = (d2 / (d1 * (d1 + d2)), -(d2 + d1) / (d1 * d2),
                        (2.0 * d2 + d1) / (d2 * (d1 + d2)))
            last = a * f(n - 3, 1) + b * f(n - 2, 1) + cc * f(n - 1, 1)
    parts = [first] + ([inner] if inner is not None else []) + [last]
    return convert(cat(parts, d), x.dtype)


# ---- histograms (not differentiable, as torch's) ----

Histogram = namedtuple("histogram", ["hist", "bin_edges"])
Histogramdd = namedtuple("histogramdd", ["hist", "bin_edges"])


def _edges_of(name: str, values: np.ndarray, bins: Any, rng: Any, dt: Any, dim: int
              ) -> np.ndarray:
    if isinstance(bins, Tensor | np.ndarray | list | tuple):
        edges = np.asarray(_host_values(bins) if isinstance(bins, Tensor) else bins,
                           dtype=dt.np)
        if edges.ndim != 1 or edges.size < 1:
            raise RuntimeError(f"{name}(): bins must be a 1-D tensor of bin edges with at "
                               f"least one edge, got shape {list(edges.shape)}")
        if np.any(np.diff(edges) < 0):
            raise RuntimeError(f"{name}(): bin edges must increase monotonically, got "
                               f"{edges.tolist()}")
        return edges
    bins = int(bins)
    if bins <= 0:
        raise RuntimeError(f"torch.{name}(): bins must be > 0, but got {bins} for dimension "
                           f"{dim}")
    if rng is not None:
        lo, hi = float(rng[0]), float(rng[1])
    else:
        finite = values[~np.isnan(values)]
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    if lo > hi:
        raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {lo:g} "
                           f"max {hi:g} for dimension {dim}")
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histogramdd: dimension {dim}'s range [{lo}, {hi}] is not "
                           "finite")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return np.asarray(linspace(lo, hi, bins + 1, dtype=dt).numpy())


def _bin_of(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """The bin of each value (-1 outside; the last edge belongs to the last bin)."""
    pos = np.searchsorted(edges, values, side="right") - 1
    nb = edges.size - 1
    pos = np.where((values == edges[-1]) & (pos >= nb), nb - 1, pos)
    ok = (pos >= 0) & (pos < nb) & ~np.isnan(values)
    return np.where(ok, pos, -1)


def histogram(input: TensorLike, bins: Any = 100, *, range: Any = None,  # noqa: A002
              weight: TensorLike | None = None, density: bool = False) -> Histogram:
    """``torch.histogram``: counts (or summed ``weight``) of the values in
    ``bins`` equal bins over ``range`` (the data's, NaNs left out, when None)
    or between the given edges; the last bin includes its right edge. The
    input is evaluated (the result has no gradient, as torch's)."""
    x = as_tensor_arg(input)
    if not x.dtype.is_floating_point:
        raise RuntimeError(f'"histogramdd" not implemented for {x.dtype.name!r}')
    hist, edges = _histogramdd("histogram", x.reshape(-1, 1), [bins], range, weight, density,
                               (x.numel(),))
    return Histogram(hist, edges[0])


def histogramdd(input: TensorLike, bins: Any = 10, *, range: Any = None,  # noqa: A002
                weight: TensorLike | None = None, density: bool = False) -> Histogramdd:
    """``torch.histogramdd``: the histogram of the points in the last dim of
    ``input`` (``bins`` an int, one int per dim, or one edges tensor per dim;
    ``range`` a flat sequence of min, max pairs)."""
    x = as_tensor_arg(input)
    if not x.dtype.is_floating_point:
        raise RuntimeError(f'"histogramdd" not implemented for {x.dtype.name!r}')
    if x.ndim < 1:
        raise RuntimeError("torch.histogramdd: input should have at least 1 dimension")
    k = x.shape[-1]
    if isinstance(bins, int):
        bins = [bins] * k
    bins = list(bins)
    if len(bins) != k:
        raise RuntimeError(f"torch.histogramdd: expected {k} sequences of bin edges for each "
                           f"dimension, but got {len(bins)}")
    rng = None
    if range is not None:
        flat = list(range)
        if len(flat) != 2 * k:
            raise RuntimeError(f"torch.histogramdd: for a {k}-dimensional histogram, range "
                               f"should have {2 * k} elements, but got {len(flat)}")
        rng = [(flat[2 * i], flat[2 * i + 1]) for i in builtins.range(k)]
    hist, edges = _histogramdd("histogramdd", reshape(x, (-1, k)), bins, rng, weight, density,
                               x.shape[:-1])
    return Histogramdd(hist, list(edges))


def _histogramdd(name: str, pts: Tensor, bins: list[Any], rng: Any, weight: Any,
                 density: bool, wshape: tuple[int, ...]) -> tuple[Tensor, list[Tensor]]:
    dt = pts.dtype
    values = np.asarray(_host_values(pts), dtype=dt.np)
    k = values.shape[1]
    if name == "histogram" and rng is not None:
        rng = [rng]
    edges = [_edges_of(name, values[:, i], bins[i], None if rng is None else rng[i], dt, i)
             for i in builtins.range(k)]
    w = None
    if weight is not None:
        wt = as_tensor_arg(weight)
        if tuple(wt.shape) != tuple(wshape):
            raise RuntimeError(f"torch.{name}: if weight tensor is provided it should have "
                               f"the same shape as the input tensor excluding its innermost "
                               f"dimension, but got input with shape {list(pts.shape)} and "
                               f"weight with shape {list(wt.shape)}")
        w = np.asarray(_host_values(wt), dtype=dt.np).reshape(-1)
    pos = np.stack([_bin_of(values[:, i], edges[i]) for i in builtins.range(k)], 1) \
        if values.shape[0] else np.zeros((0, k), np.int64)
    keep = np.all(pos >= 0, axis=1)
    shape = tuple(e.size - 1 for e in edges)
    hist = np.zeros(shape, dtype=dt.np)
    if keep.any():
        np.add.at(hist, tuple(pos[keep].T), (w[keep] if w is not None else 1))
    if density:
        total = hist.sum()
        vol = np.ones(shape, dtype=dt.np)
        for i, ed in enumerate(edges):
            s = [1] * k
            s[i] = ed.size - 1
            vol = vol * np.diff(ed).reshape(s)
        hist = hist / (total * vol)
    return (tensor(hist.astype(dt.np), dtype=dt),
            [tensor(e.astype(dt.np), dtype=dt) for e in edges])


# ---- index_reduce ----

def index_reduce(input: TensorLike, dim: int, index: TensorLike, source: TensorLike,  # noqa: A002
                 reduce: str, *, include_self: bool = True) -> Tensor:
    """``torch.index_reduce``: the slices of ``source`` reduced ("prod",
    "mean", "amax" or "amin") into the slices of ``input`` that ``index``
    names along ``dim``; ``include_self=False`` leaves out the input's own
    values where a slice is written. The mean of integers rounds down, as
    torch's. Gradients are scatter_reduce's (torch's)."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    x, src = as_tensor_arg(input), as_tensor_arg(source)
    idx = as_tensor_arg(np.asarray(index) if isinstance(index, list | tuple) else index)
    if idx.dtype.name not in ("int32", "int64"):
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: "
                           f"{idx.dtype.name}")
    if idx.ndim > 1:
        raise RuntimeError(f"index_reduce_(): Index is supposed to be a vector, but got dim: "
                           f"{idx.ndim} with type: {idx.dtype.name} and size: "
                           f"{list(idx.shape)}")
    d = normalize_dim("index_reduce", dim, builtins.max(x.ndim, 1))
    xs = x.shape if x.ndim else (1,)
    ss = src.shape if src.ndim else (1,)
    n = builtins.max(idx.numel(), 1) if idx.ndim == 0 else idx.shape[0]
    if len(xs) != len(ss) or builtins.any(a != b for i, (a, b) in enumerate(zip(xs, ss))
                                          if i != d):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(x.shape)} "
                           f"source.shape = {list(src.shape)}")
    if ss[d] != n:
        raise RuntimeError(f"index_reduce_(): Number of indices ({n}) should be equal to "
                           f"source.size(dim) ({ss[d]})")
    if src.dtype != x.dtype:
        raise RuntimeError(f"index_reduce_(): self ({x.dtype.name}) and source "
                           f"({src.dtype.name}) must have the same scalar type")
    values = np.asarray(_host_values(idx)).reshape(-1)
    if values.size and (values.min() < -xs[d] or values.max() >= xs[d]):
        raise IndexError("index out of range in self")
    x2, s2 = reshape(x, xs), reshape(src, ss)
    shape = [1] * len(ss)
    shape[d] = n
    full = expand(reshape(convert(idx, int64), tuple(shape)), ss)
    full = where(full < 0, full + xs[d], full)
    if reduce == "mean" and not x.dtype.is_floating_point:
        total = scatter_reduce(x2, d, full, s2, "sum", include_self=include_self)
        ones = expand(tensor(1, dtype=x.dtype), ss)
        base = expand(tensor(1 if include_self else 0, dtype=x.dtype), xs)
        count = scatter_reduce(base, d, full, ones, "sum")
        out = floor_divide(total, where(count > 0, count, tensor(1, dtype=x.dtype)))
    else:
        out = scatter_reduce(x2, d, full, s2, reduce, include_self=include_self)
    return reshape(out, x.shape)


def _index_reduce_method(self: Tensor, dim: int, index: TensorLike, source: TensorLike,
                         reduce: str, *, include_self: bool = True) -> Tensor:
    return index_reduce(self, dim, index, source, reduce, include_self=include_self)


def _index_reduce_in_place(self: Tensor, dim: int, index: TensorLike, source: TensorLike,
                           reduce: str, *, include_self: bool = True) -> Tensor:
    # the reduce is the update itself (recorded after its snapshot): autograd's
    # version check does not count its read of ``self``, as PyTorch's
    return _update(self, lambda o: index_reduce(o, dim, index, source, reduce,
                                                include_self=include_self), "index_reduce_")


# ---- as_strided: a view of the storage with any sizes and strides ----

def _strided_positions(sizes: tuple[int, ...], strides: tuple[int, ...], offset: int
                       ) -> np.ndarray:
    pos = np.full(sizes, offset, dtype=np.int64)
    for i, (n, s) in enumerate(zip(sizes, strides)):
        shape = [1] * len(sizes)
        shape[i] = n
        pos = pos + (np.arange(n, dtype=np.int64) * s).reshape(shape)
    return pos


def _strided_args(op: str, x: Tensor, size: Sequence[int], stride: Sequence[int],
                  storage_offset: int | None) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    sizes, strides = tuple(int(v) for v in size), tuple(int(v) for v in stride)
    if len(sizes) != len(strides):
        raise RuntimeError(f"{op}: mismatch in length of strides and shape ({len(strides)} "
                           f"strides for {len(sizes)} sizes)")
    if builtins.any(v < 0 for v in sizes):
        raise RuntimeError(f"{op}: sizes must be non-negative, got {list(sizes)}")
    if builtins.any(v < 0 for v in strides):
        raise RuntimeError(f"{op}: as_strided: Negative strides are not supported at the "
                           f"moment, got strides: {list(strides)}")
    offset = geometry(x)[2] if storage_offset is None else int(storage_offset)
    if offset < 0:
        raise RuntimeError(f"{op}: Tensor: invalid storage offset {offset}")
    return sizes, strides, offset


def _check_storage(sizes: tuple[int, ...], strides: tuple[int, ...], offset: int,
                   itemsize: int, storage: int) -> None:
    if 0 in sizes:
        return
    need = offset + builtins.sum((n - 1) * s for n, s in zip(sizes, strides)) + 1
    if need > storage:
        raise RuntimeError(f"setStorage: sizes {list(sizes)}, strides {list(strides)}, "
                           f"storage offset {offset}, and itemsize {itemsize} requiring a "
                           f"storage size of {need * itemsize} are out of bounds for storage "
                           f"of size {storage * itemsize}")


def _root_of(x: Tensor) -> Tensor:
    base = x._base
    while base is not None and base._base is not None:
        base = base._base
    return x if base is None else base


def _gather_strided(root: Tensor, sizes: tuple[int, ...], strides: tuple[int, ...],
                    offset: int) -> Tensor:
    pos = _strided_positions(sizes, strides, offset)
    flat = reshape(root, (-1,))
    return reshape(index_select(flat, 0, tensor(pos.reshape(-1))), sizes)


def as_strided(input: TensorLike, size: Sequence[int], stride: Sequence[int],  # noqa: A002
               storage_offset: int | None = None) -> Tensor:
    """``torch.as_strided``: the elements of ``input``'s storage (its root
    tensor, row-major) at ``storage_offset + sum(i_k * stride_k)``, as a view:
    in-place writes through it reach the base. A view whose elements overlap
    (sliding windows) reads as torch's, and refuses in-place writes: torch
    writes each shared element once per alias, in its kernel's order.
    Differentiable (a gather)."""
    x = as_tensor_arg(input)
    sizes, strides, offset = _strided_args("as_strided", x, size, stride, storage_offset)
    root = _root_of(x)
    _check_storage(sizes, strides, offset, x.dtype.itemsize, root.numel())
    with untracked_views():
        out = _gather_strided(root, sizes, strides, offset)
    view = as_view(root, out, lambda r: _gather_strided(r, sizes, strides, offset),
                   sizes, strides, offset)
    pos = _strided_positions(sizes, strides, offset)
    if np.unique(pos).size != pos.size and type(view) is Tensor:
        view.__class__ = _OverlappingStrided
    return view


def _refuse_write(name: str) -> Any:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{name}: unsupported operation: more than one element of the "
                           f"written-to tensor (an as_strided view of shape "
                           f"{list(self.shape)} whose elements overlap) refers to a single "
                           "memory location. Please clone() the tensor before performing "
                           "the operation.")
    method.__name__ = name
    return method


_NOT_WRITES = {"requires_grad_", "share_memory_"}
_IN_PLACE_OPERATORS = ("__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__",
                       "__ifloordiv__", "__imod__", "__ipow__", "__iand__", "__ior__",
                       "__ixor__", "__ilshift__", "__irshift__", "__imatmul__")


class _OverlappingStrided(Tensor):
    """A view of overlapping elements: it reads as any view; every in-place
    write (a method ending in ``_``, whenever it was added to Tensor, or an
    in-place operator) is refused."""

    __slots__ = ()

    def __getattribute__(self, name: str) -> Any:
        if name.endswith("_") and not name.startswith("_") and name not in _NOT_WRITES:
            return _refuse_write(name).__get__(self)
        return super().__getattribute__(name)


for _op in _IN_PLACE_OPERATORS:
    setattr(_OverlappingStrided, _op, _refuse_write(_op))


def as_strided_copy(input: TensorLike, size: Sequence[int], stride: Sequence[int],  # noqa: A002
                    storage_offset: int | None = None) -> Tensor:
    return as_strided(input, size, stride, storage_offset).clone()


def as_strided_scatter(input: TensorLike, src: TensorLike, size: Sequence[int],  # noqa: A002
                       stride: Sequence[int], storage_offset: int | None = None) -> Tensor:
    """``torch.as_strided_scatter``: ``input`` (taken as its own contiguous
    storage) with the strided positions replaced by ``src``."""
    x, s = as_tensor_arg(input), as_tensor_arg(src)
    sizes, strides, offset = _strided_args("as_strided_scatter", x, size, stride,
                                           storage_offset)
    _check_storage(sizes, strides, offset, x.dtype.itemsize, x.numel())
    if tuple(s.shape) != sizes:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src "
                           f"size = {list(s.shape)}, slice size = {list(sizes)}")
    pos = _strided_positions(sizes, strides, offset).reshape(-1)
    if np.unique(pos).size != pos.size:
        raise RuntimeError("as_strided_scatter: the strided positions overlap (more than one "
                           "element refers to a single memory location)")
    flat = reshape(x, (-1,)).clone()
    flat[tensor(pos)] = reshape(convert(s, x.dtype), (-1,))
    return reshape(flat, x.shape)


# ---- small top-level spellings ----

def detach(input: TensorLike) -> Tensor:  # noqa: A002
    return _detach(as_tensor_arg(input))


def fill(input: TensorLike, value: Any) -> Tensor:  # noqa: A002
    """``torch.fill``: a new tensor of ``input``'s shape and dtype filled with ``value``."""
    x = as_tensor_arg(input)
    v = as_tensor_arg(value)
    if v.ndim != 0:
        raise RuntimeError(f"fill only supports 0-dimension value tensor but got tensor with "
                           f"{v.ndim} dimensions.")
    return expand(convert(v, x.dtype), x.shape).clone()


def range(start: float = 0, end: float | None = None, step: float = 1,  # noqa: A001
          *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """``torch.range`` (deprecated in torch, kept for old scripts): ``start``
    to ``end`` inclusive, in the default float dtype unless ``dtype``."""
    del device
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    dt = to_dtype(dtype) if dtype is not None else default_float()
    n = int(math.floor((end - start) / step)) + 1
    values = start + np.arange(n, dtype=np.float64) * step
    out = tensor(values.astype(dt.np), dtype=dt)
    if requires_grad:
        out.requires_grad_(True)
    return out


def is_signed(input: Tensor) -> bool:  # noqa: A002
    return as_tensor_arg(input).is_signed()


def is_inference(input: Tensor) -> bool:  # noqa: A002
    return _is_inference(as_tensor_arg(input))


def is_conj(input: Tensor) -> bool:  # noqa: A002
    return False


def is_neg(input: Tensor) -> bool:  # noqa: A002
    return False


def unsafe_chunk(input: TensorLike, chunks: int, dim: int = 0) -> list[Tensor]:  # noqa: A002
    return [t.clone() for t in as_tensor_arg(input).chunk(chunks, dim)]


def unsafe_split(input: TensorLike, split_size: Any, dim: int = 0) -> list[Tensor]:  # noqa: A002
    return [t.clone() for t in split(as_tensor_arg(input), split_size, dim)]


def unsafe_split_with_sizes(input: TensorLike, split_sizes: Sequence[int],  # noqa: A002
                            dim: int = 0) -> list[Tensor]:
    x = as_tensor_arg(input)
    d = normalize_dim("split_with_sizes", dim, x.ndim)
    if builtins.sum(split_sizes) != x.shape[d]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to "
                           f"{x.shape[d]} (input tensor's size at dimension {d}), but got "
                           f"split_sizes={list(split_sizes)}")
    return [t.clone() for t in split(x, list(split_sizes), d)]


# the *_copy forms: the view op's result as a new tensor (no aliasing)
def alias_copy(input: TensorLike) -> Tensor:  # noqa: A002
    return as_tensor_arg(input).clone()


def detach_copy(input: TensorLike) -> Tensor:  # noqa: A002
    return _detach(as_tensor_arg(input)).clone()


def diagonal_copy(input: TensorLike, offset: int = 0, dim1: int = 0, dim2: int = 1  # noqa: A002
                  ) -> Tensor:
    return diagonal(input, offset, dim1, dim2).clone()


def expand_copy(input: TensorLike, size: Sequence[int], *, implicit: bool = False  # noqa: A002
                ) -> Tensor:
    del implicit
    return expand(as_tensor_arg(input), tuple(size)).clone()


def permute_copy(input: TensorLike, dims: Sequence[int]) -> Tensor:  # noqa: A002
    return permute(as_tensor_arg(input), tuple(dims)).clone()


def select_copy(input: TensorLike, dim: int, index: int) -> Tensor:  # noqa: A002
    return select(input, dim, index).clone()


def slice_copy(input: TensorLike, dim: int = 0, start: int | None = None,  # noqa: A002
               end: int | None = None, step: int = 1) -> Tensor:
    x = as_tensor_arg(input)
    d = normalize_dim("slice_copy", dim, x.ndim)
    return x[(slice(None),) * d + (slice(start, end, step),)].clone()


def squeeze_copy(input: TensorLike, dim: Any = None) -> Tensor:  # noqa: A002
    x = as_tensor_arg(input)
    return (squeeze(x) if dim is None else squeeze(x, dim)).clone()


def t_copy(input: TensorLike) -> Tensor:  # noqa: A002
    return as_tensor_arg(input).t().clone()


def transpose_copy(input: TensorLike, dim0: int, dim1: int) -> Tensor:  # noqa: A002
    return transpose(as_tensor_arg(input), dim0, dim1).clone()


def unbind_copy(input: TensorLike, dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    return tuple(t.clone() for t in unbind(input, dim))


def unsqueeze_copy(input: TensorLike, dim: int) -> Tensor:  # noqa: A002
    return unsqueeze(as_tensor_arg(input), dim).clone()


def view_copy(input: TensorLike, *size: Any, dtype: Any = None) -> Tensor:  # noqa: A002
    x = as_tensor_arg(input)
    if dtype is not None:
        return x.view(dtype).clone()
    shape = tuple(size[0]) if len(size) == 1 and not isinstance(size[0], int) else size
    return view(x, shape).clone()


def split_copy(input: TensorLike, split_size: Any, dim: int = 0) -> list[Tensor]:  # noqa: A002
    return unsafe_split(input, split_size, dim)


def split_with_sizes_copy(input: TensorLike, split_sizes: Sequence[int],  # noqa: A002
                          dim: int = 0) -> list[Tensor]:
    return unsafe_split_with_sizes(input, split_sizes, dim)


def narrow_copy(input: TensorLike, dim: int, start: int, length: int) -> Tensor:  # noqa: A002
    return narrow(input, dim, start, length).clone()


def unfold_copy(input: TensorLike, dimension: int, size: int, step: int) -> Tensor:  # noqa: A002
    return as_tensor_arg(input).unfold(dimension, size, step).clone()


# ---- complex numbers: pf has none ----

def _no_complex(op: str) -> Any:
    def fn(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"torch.{op}: its result is complex, and pf has no complex "
                                  "dtype (float16/bfloat16/float32/float64 and integers only)")
    fn.__name__ = op
    return fn


polar = _no_complex("polar")
complex = _no_complex("complex")  # noqa: A001
view_as_real = _no_complex("view_as_real")
view_as_complex = _no_complex("view_as_complex")
stft = _no_complex("stft")
istft = _no_complex("istft")

# ---- Tensor members ----

_METHODS: dict[str, Any] = {
    "index_reduce": _index_reduce_method, "index_reduce_": _index_reduce_in_place,
    "as_strided": as_strided, "as_strided_scatter": as_strided_scatter,
    "histogram": histogram, "narrow_copy": narrow_copy,
    "unsafe_chunk": unsafe_chunk, "unsafe_split": unsafe_split,
    "unsafe_split_with_sizes": unsafe_split_with_sizes,
    "stft": stft, "istft": istft,
}


def _set_tensor_methods() -> None:
    for name, fn in _METHODS.items():
        if not hasattr(Tensor, name):
            setattr(Tensor, name, fn)


_set_tensor_methods()

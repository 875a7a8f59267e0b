"""Sorting along one dim, and the two index moves its derivatives need.

- ``sort(x; dim, descending)`` -> (values, int64 indices): always stable
  (elements that compare equal keep their order, torch's ``stable=True``,
  also for ``descending``); NaN is the largest value (last ascending, first
  descending), as torch.
- ``select_along(x, idx; dim)``: ``out[.., j, ..] = x[.., idx[.., j, ..], ..]``
  (numpy's ``take_along_axis``; ``idx`` has x's shape except at ``dim``).
- ``scatter_add_along(src, idx; dim, size)``: its transpose, the zero tensor
  of src's shape with ``size`` at ``dim`` where ``out[.., idx[.., j, ..], ..]
  += src[.., j, ..]``.

Named apart from the indexing family's ``gather``/``scatter``: these two are
the derivative plumbing of sort, topk, kthvalue, median and cummax. The MAX
and linalg lowerings give ``select_along`` and ``scatter_add_along`` their
``gather``/``scatter_add`` rules, and ``sort`` an O(n log n) rule of their
own (MAX's ``top_k``; a bitonic network of ``scf.for`` loops in linalg).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import ad
from .dtypes import FLOAT, DType, int64
from .opdef import OpDef, Shape, ShapeError, define, fmt_shape


def _check_dim(name: str, dim: int, shape: Shape) -> None:
    if not shape:
        raise ShapeError(name, "expects an operand of rank >= 1 (the frontend reshapes "
                               "a 0-d tensor)")
    if not 0 <= dim < len(shape):
        raise ShapeError(name, f"dimension {dim} is out of range for rank {len(shape)}")


def _sort_rule(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
    (shape,), (d,) = shapes, dtypes
    _check_dim("sort", attrs["dim"], shape)
    return ((shape, d), (shape, int64))


def _check_index(name: str, x: Shape, idx: Shape, idx_dtype: DType, dim: int) -> None:
    _check_dim(name, dim, x)
    if idx_dtype is not int64:
        raise ShapeError(name, f"indices must be int64, got {idx_dtype.name}")
    if len(idx) != len(x) or any(a != b for k, (a, b) in enumerate(zip(x, idx)) if k != dim):
        raise ShapeError(name, f"indices of shape {fmt_shape(idx)} must match the operand's "
                               f"shape {fmt_shape(x)} in every dimension but {dim}")


def _select_rule(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
    (x, idx), (d, di) = shapes, dtypes
    _check_index("select_along", x, idx, di, attrs["dim"])
    if x[attrs["dim"]] == 0 and idx[attrs["dim"]] != 0:
        raise ShapeError("select_along", f"cannot select from empty dimension {attrs['dim']} "
                                         f"of shape {fmt_shape(x)}")
    return ((idx, d),)


def _scatter_rule(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
    (src, idx), (d, di) = shapes, dtypes
    dim, size = attrs["dim"], attrs["size"]
    _check_index("scatter_add_along", src, idx, di, dim)
    if idx[dim] != src[dim]:
        raise ShapeError("scatter_add_along", f"indices {fmt_shape(idx)} and source "
                                              f"{fmt_shape(src)} must have one shape")
    if d.category != FLOAT:
        raise ShapeError("scatter_add_along", f"expects a floating-point source, got {d.name}")
    if size < 0:
        raise ShapeError("scatter_add_along", f"size must be >= 0, got {size}")
    return ((tuple(size if k == dim else s for k, s in enumerate(src)), d),)


def _sort(x: np.ndarray, dim: int, descending: bool) -> tuple[np.ndarray, np.ndarray]:
    if descending:
        # stable descending with NaN first: a stable ascending sort of the
        # reversed operand, read backwards (equal elements keep their order)
        n = x.shape[dim]
        rev = np.argsort(np.flip(x, dim), axis=dim, kind="stable")
        idx = (n - 1) - np.flip(rev, dim)
    else:
        idx = np.argsort(x, axis=dim, kind="stable")  # NaN last, as torch
    idx = np.ascontiguousarray(idx, dtype=np.int64)
    return np.take_along_axis(x, idx, axis=dim), idx


def _bounds(name: str, idx: np.ndarray, n: int) -> None:
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise IndexError(f"pyflame.{name}: index {int(idx.min() if idx.min() < 0 else idx.max())}"
                         f" is out of range for a dimension of size {n}")


def _select_along(x: np.ndarray, idx: np.ndarray, dim: int) -> np.ndarray:
    _bounds("select_along", idx, x.shape[dim])
    return np.ascontiguousarray(np.take_along_axis(x, idx, axis=dim))


def _scatter_add_along(src: np.ndarray, idx: np.ndarray, dim: int, size: int) -> np.ndarray:
    _bounds("scatter_add_along", idx, size)
    out = np.zeros(tuple(size if k == dim else s for k, s in enumerate(src.shape)), src.dtype)
    grids = np.indices(idx.shape, sparse=True)
    np.add.at(out, tuple(idx if k == dim else g for k, g in enumerate(grids)), src)
    return out


define(OpDef("sort", "sorting", _sort_rule, _sort, 1, {"dim": "int", "descending": "bool"},
             num_results=2))
define(OpDef("select_along", "sorting", _select_rule, _select_along, 2, {"dim": "int"},
             index_bounds=lambda shapes, attrs: (1, attrs["dim"], shapes[0][attrs["dim"]])))
define(OpDef("scatter_add_along", "sorting", _scatter_rule, _scatter_add_along, 2,
             {"dim": "int", "size": "int"},
             index_bounds=lambda shapes, attrs: (1, attrs["dim"], attrs["size"])))


# ---- derivatives: the cotangent goes back to the selected positions ----

def _sort_vjp(b, cts, inputs, outputs, dim, descending):
    g, (x,), (_, indices) = cts[0], inputs, outputs
    if g is None:
        return [None]
    return [b.scatter_add_along(g, indices, dim=dim, size=b.shape(x)[dim])]


def _sort_jvp(b, tangents, inputs, outputs, dim, descending):
    (t,), (_, indices) = tangents, outputs
    return [b.select_along(t, indices, dim=dim), None]


def _select_vjp(b, cts, inputs, outputs, dim):
    (g,), (x, idx) = cts, inputs
    return [b.scatter_add_along(g, idx, dim=dim, size=b.shape(x)[dim]), None]


def _select_jvp(b, tangents, inputs, outputs, dim):
    t = tangents[0]
    return [None if t is None else b.select_along(t, inputs[1], dim=dim)]


def _scatter_vjp(b, cts, inputs, outputs, dim, size):
    (g,), (_, idx) = cts, inputs
    return [b.select_along(g, idx, dim=dim), None]


def _scatter_jvp(b, tangents, inputs, outputs, dim, size):
    t = tangents[0]
    return [None if t is None else b.scatter_add_along(t, inputs[1], dim=dim, size=size)]


ad.defvjp("sort", _sort_vjp)
ad.defjvp("sort", _sort_jvp)
ad.defvjp("select_along", _select_vjp)
ad.defjvp("select_along", _select_jvp)
ad.defvjp("scatter_add_along", _scatter_vjp)
ad.defjvp("scatter_add_along", _scatter_jvp)
# PyTorch's sort saves only its indices (output 1): the input may change in place
ad.reads_no_input_values("sort")
ad.saves_results("sort", outputs=(1,))

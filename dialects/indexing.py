"""Indexing ops: ``gather`` and ``scatter_add`` (torch.gather / torch.scatter_add).

The two primitives every indexing function of the frontend reduces to
(``pyflame_mlir/indexing.py``): advanced indexing is a ``gather`` on a flat
index, ``index_select``/``take_along_dim``/``embedding`` are gathers, and the
setters (``t[idx] = v``, ``index_put_``, ``index_add_``, ``scatter``) are
``scatter_add``s. Each is the other's transpose, so their VJPs are each other.

Index semantics are torch's: ``index`` has the rank of ``x``; along ``dim`` it
holds positions in ``[0, x.shape[dim])``, elsewhere its sizes are at most
``x``'s (the leading part of ``x`` is used). Out-of-range positions (negative
ones included: the frontend wraps negative indices before recording) raise
``IndexError`` naming the op, the dim and its size when the kernel runs; that
is at evaluation for a lazily computed index, never a silent wrong read.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np

from . import ad, native_kernels, shape_ops  # noqa: F401  (shape_ops: its ops are named below)
from .dtypes import DType
from .opdef import OpDef, Shape, ShapeError, define, fmt_shape


def _check_index(op: str, x: Shape, index: Shape, index_dtype: DType, dim: int) -> None:
    if index_dtype.name not in ("int32", "int64"):
        raise ShapeError(op, f"index must be int32 or int64, got {index_dtype.name}")
    if len(index) != len(x):
        raise ShapeError(op, f"index {fmt_shape(index)} must have the rank of the input "
                             f"{fmt_shape(x)}")
    if not 0 <= dim < max(len(x), 1):
        raise ShapeError(op, f"dimension {dim} is out of range for rank {len(x)}")
    for d, (n, k) in enumerate(zip(x, index)):
        if d != dim and k > n:
            raise ShapeError(op, f"index {fmt_shape(index)} is larger than the input "
                                 f"{fmt_shape(x)} in dimension {d} (not the gathered {dim})")


def _gather_rule(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
    (x, index), dim = shapes, attrs["dim"]
    _check_index("gather", x, index, dtypes[1], dim)
    return ((tuple(index), dtypes[0]),)


def _scatter_add_rule(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
    (x, index, src), dim = shapes, attrs["dim"]
    _check_index("scatter_add", x, index, dtypes[1], dim)
    if tuple(src) != tuple(index):
        raise ShapeError("scatter_add", f"src {fmt_shape(src)} must have the shape of the "
                                        f"index {fmt_shape(index)}")
    if dtypes[2] is not dtypes[0]:
        raise ShapeError("scatter_add", f"src ({dtypes[2].name}) must have the input's "
                                        f"dtype ({dtypes[0].name})")
    return ((tuple(x), dtypes[0]),)


def _in_range(op: str, index: np.ndarray, size: int, dim: int) -> None:
    if index.size == 0:
        return
    lo, hi = int(index.min()), int(index.max())
    if lo < 0 or hi >= size:
        bad = lo if lo < 0 else hi
        raise IndexError(f"pyflame.{op}: index {bad} is out of bounds for dimension {dim} "
                         f"with size {size}")


def _coords(index: np.ndarray, dim: int) -> tuple[np.ndarray, ...]:
    """Full coordinates of the positions ``index`` names: its own grid, ``index`` at ``dim``."""
    grid = list(np.indices(index.shape, sparse=True))
    grid[dim] = index
    return tuple(grid)


def _whole_rows(index: np.ndarray, dim: int) -> np.ndarray | None:
    """The 1-d positions along ``dim`` when ``index`` names whole rows (it is
    constant across every other axis, as an embedding's or index_select's
    broadcast index is), else None. A broadcast view (stride 0) is recognized
    for free; another index costs one compare, far less than ``np.add.at``."""
    if index.ndim < 2 or index.size == 0:
        return None
    first = index[tuple(slice(None) if d == dim else slice(0, 1) for d in range(index.ndim))]
    if any(st != 0 for d, st in enumerate(index.strides) if d != dim) and \
            not np.array_equal(np.broadcast_to(first, index.shape), index):
        return None
    return first.reshape(-1)


def _block(x: np.ndarray, index_shape: Shape, dim: int) -> np.ndarray:
    """The leading part of ``x`` the index covers (all of ``dim``), with ``dim``
    first: a view."""
    region = x[tuple(slice(None) if d == dim else slice(0, n) for d, n in enumerate(index_shape))]
    return np.moveaxis(region, dim, 0)


def _one_pick(x: Shape, index: np.ndarray, dim: int) -> np.ndarray | None:
    """Flat C-order positions in ``x`` when ``index`` picks one element along
    ``dim`` at every other position of ``x`` (its shape is ``x``'s with 1 at
    ``dim``: max pooling's choice among a window's offsets), else None. The
    positions are then all distinct."""
    if index.ndim < 2 or index.shape[dim] != 1 or index.size < _PICK_MIN or \
            index.shape[:dim] != x[:dim] or index.shape[dim + 1:] != x[dim + 1:]:
        return None
    inner = math.prod(x[dim + 1:])
    base = _pick_base(tuple(x), dim)
    picks = index.reshape(base.shape) * inner
    picks += base
    return picks.reshape(-1)


_PICK_MIN = 4096  # below, numpy's fancy indexing costs about the same


@functools.lru_cache(maxsize=16)
def _pick_base(x: Shape, dim: int) -> np.ndarray:
    """The flat position of each (outer, inner) pair at offset 0 along ``dim``
    (a forward gather and its backward scatter share one)."""
    inner = math.prod(x[dim + 1:])
    base = np.arange(math.prod(x[:dim]))[:, None] * (x[dim] * inner) + np.arange(inner)
    base.flags.writeable = False
    return base


def _gather(x: np.ndarray, index: np.ndarray, dim: int) -> np.ndarray:
    _in_range("gather", index, x.shape[dim] if x.ndim else 1, dim)
    if x.ndim == 0:
        return np.array(x, copy=True)
    # one flat take (of contiguous data only: a broadcast input would be
    # materialized, x.shape[dim] times the result's size)
    picks = _one_pick(x.shape, index, dim) if x.flags.c_contiguous else None
    if picks is not None:
        return np.take(x.reshape(-1), picks).reshape(index.shape)
    rows = _whole_rows(index, dim)
    if rows is not None:  # one take of whole rows, not a read per coordinate
        picked = np.take(_block(x, index.shape, dim), rows, axis=0)
        return np.ascontiguousarray(np.moveaxis(picked, 0, dim))
    return np.ascontiguousarray(x[_coords(index, dim)])


def _scatter_add(x: np.ndarray, index: np.ndarray, src: np.ndarray, dim: int) -> np.ndarray:
    _in_range("scatter_add", index, x.shape[dim] if x.ndim else 1, dim)
    fill = None
    if x.ndim and x.size and not any(x.strides):  # one broadcast value (an AD zero): a fill
        fill = x[(0,) * x.ndim]
        out = np.full(x.shape, fill, x.dtype)
    else:
        out = np.array(x, copy=True, order="C")  # C order: the flat writes below see it
    if x.ndim == 0:
        return out + src if index.size else out
    if out.dtype == np.bool_:
        np.logical_or.at(out, _coords(index, dim), src)
        return out
    picks = _one_pick(x.shape, index, dim)
    if picks is not None:  # distinct positions: a plain read-add-write, no np.add.at
        flat = out.reshape(-1)  # a view: out is a C-ordered copy
        if fill is not None:  # every picked position holds ``fill``: no read back
            flat[picks] = src.reshape(-1) + fill  # (fill + src: 0 + -0.0 is +0.0)
        else:
            flat[picks] += src.reshape(-1)
        return out
    rows = _whole_rows(index, dim)
    if rows is None:
        np.add.at(out, _coords(index, dim), src)
        return out
    native = native_kernels.KERNELS
    if native is not None and dim == 0 and out.dtype == np.float32 and src.ndim == 2 and \
            src.shape == index.shape and out.shape[1:] == index.shape[1:]:
        # out[rows[i]] += src[i] in order, one C loop (_kernels.c): np.add.at's
        # order, so its bits (the sorted sums below add each run first)
        native.scatter_rows_f32(out, np.ascontiguousarray(rows, dtype=np.int64),
                                np.ascontiguousarray(src), out.shape[1])
        return out
    # whole rows (an embedding's gradient): sort the positions, sum each run of
    # equal ones with one reduceat (in the order add.at would add them), and
    # add each sum into its row once
    order = np.argsort(rows, kind="stable")
    ranked = rows[order]
    starts = np.flatnonzero(np.concatenate(([True], ranked[1:] != ranked[:-1])))
    sums = np.add.reduceat(np.take(np.moveaxis(src, dim, 0), order, axis=0), starts, axis=0)
    _block(out, index.shape, dim)[ranked[starts]] += sums
    return out


def _index_bounds(shapes: Sequence[Shape], attrs: dict) -> tuple[int, int, int]:
    x, dim = shapes[0], attrs["dim"]
    return 1, dim, x[dim] if x else 1


define(OpDef("gather", "indexing", _gather_rule, _gather, 2, {"dim": "int"},
             index_bounds=_index_bounds,
             doc="out[i][j] = x[index[i][j]][j] for dim 0 (torch.gather)"))
define(OpDef("scatter_add", "indexing", _scatter_add_rule, _scatter_add, 3, {"dim": "int"},
             index_bounds=_index_bounds,
             doc="out = x; out[index[i][j]][j] += src[i][j] for dim 0 (torch.scatter_add)"))


# ---- derivatives: gather and scatter_add are each other's transpose ----

def _gather_vjp(b, cts, inputs, outputs, dim):
    (g,), (x, index) = cts, inputs
    return [b.scatter_add(ad.zeros(b, b.shape(x), g), index, g, dim=dim), None]


def _gather_jvp(b, tangents, inputs, outputs, dim):
    t = tangents[0]
    return [None if t is None else b.gather(t, inputs[1], dim=dim)]


def _scatter_add_vjp(b, cts, inputs, outputs, dim):
    (g,), (_, index, _) = cts, inputs
    return [g, None, b.gather(g, index, dim=dim)]


def _scatter_add_jvp(b, tangents, inputs, outputs, dim):
    (tx, _, ts), (x, index, _) = tangents, inputs
    if ts is None:
        return [tx]
    return [b.scatter_add(ad.instantiate(b, tx, b.shape(x), ts), index, ts, dim=dim)]


ad.defvjp("gather", _gather_vjp)
ad.defjvp("gather", _gather_jvp)
ad.defvjp("scatter_add", _scatter_add_vjp)
ad.defjvp("scatter_add", _scatter_add_jvp)
# (their reads, and the shape ops' that indexing records, never need the values)
ad.reads_no_input_values("gather", "scatter_add", "slice", "reshape", "permute",
                         "broadcast_to", "pad", "concat", "split")

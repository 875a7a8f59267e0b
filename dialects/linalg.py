"""``matmul`` with numpy/PyTorch semantics: 1-D and 2-D operands, and batched
operands whose leading dimensions broadcast."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from . import ad
from .dtypes import BOOL, DType, is_float_array
from .opdef import OpDef, Shape, ShapeError, broadcast_shapes, define, fmt_shape, same_dtype


def matmul_shape(a: Shape, b: Shape) -> Shape:
    if not a or not b:
        raise ShapeError("matmul", f"both operands need at least one dimension, got "
                                   f"{fmt_shape(a)} and {fmt_shape(b)}")
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        raise ShapeError("matmul", f"cannot multiply {fmt_shape(a)} by {fmt_shape(b)}: the "
                                   f"contracted dimensions differ ({a2[-1]} != {b2[-2]})")
    try:
        batch = broadcast_shapes("matmul", [a2[:-2], b2[:-2]])
    except ShapeError:  # name the operands, not just their batch parts
        raise ShapeError("matmul", f"cannot multiply {fmt_shape(a)} by {fmt_shape(b)}: the "
                                   f"batch dimensions {fmt_shape(a2[:-2])} and "
                                   f"{fmt_shape(b2[:-2])} cannot be broadcast together"
                         ) from None
    out = batch + (a2[-2], b2[-1])
    if len(a) == 1:
        out = out[:-2] + out[-1:]
    if len(b) == 1:
        out = out[:-1]
    return out


def _matmul_rule(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
    d = same_dtype("matmul", dtypes)
    if d.category == BOOL:
        raise ShapeError("matmul", "is not defined on bool tensors")
    return ((matmul_shape(*shapes), d),)


def _gemm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """One 2-D product, computed as (b.T @ a.T).T when the result has fewer
    rows than columns: OpenBLAS splits its threads over the rows of the
    result, and with few rows and a long contraction (the weight gradients
    x.T @ g, an im2col convolution) it ran 3-40x slower (measured under load
    on 2 cores). The transposes are views (BLAS trans flags), and so is the
    result."""
    if a.shape[0] < b.shape[1] and is_float_array(a):
        return np.matmul(b.T, a.T).T
    return np.matmul(a, b)


def _matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if is_float_array(a) and a.dtype.itemsize < 4:  # half: accumulate in float32
        return _matmul(a.astype(np.float32), b.astype(np.float32)).astype(a.dtype)
    if a.ndim > 2 and b.ndim == 2:
        # a stack times one matrix (a linear layer): one GEMM over the stacked
        # rows, not numpy's loop of one small GEMM per matrix of the stack
        rows = a.reshape(math.prod(a.shape[:-1]), a.shape[-1])
        return _gemm(rows, b).reshape(a.shape[:-1] + b.shape[-1:])
    if a.ndim == 2 and b.ndim == 2:
        return _gemm(a, b)
    return np.asarray(np.matmul(a, b))


define(OpDef("matmul", "linalg", _matmul_rule, _matmul, 2))


# ---- derivatives (rules against the builder interface of dialects/ad.py) ----

def _as_matrix(b, v, is_lhs: bool):
    """1-D operands take part as a row (lhs) or a column (rhs) matrix."""
    s = b.shape(v)
    if len(s) >= 2:
        return v
    return ad.reshape(b, v, (1, s[0]) if is_lhs else (s[0], 1))


def _mT(b, v):
    n = len(b.shape(v))
    perm = tuple(range(n - 2)) + (n - 1, n - 2)
    return b.permute(v, perm=perm)


def _matmul_vjp(b, cts, inputs, outputs, **attrs):
    (g,), (x, y) = cts, inputs
    x2, y2 = _as_matrix(b, x, True), _as_matrix(b, y, False)
    out2 = matmul_shape(b.shape(x2), b.shape(y2))
    g2 = ad.reshape(b, g, out2)
    gx = ad.sum_to(b, b.matmul(g2, _mT(b, y2)), b.shape(x2))
    sx = b.shape(x2)
    if len(sx) > 2 and len(b.shape(y2)) == 2:
        # a stack times one matrix (a linear layer): the rows of the stack are
        # one matrix, so y's gradient is one matmul, not a stack summed after
        rows = ad.reshape(b, x2, (math.prod(sx[:-1]), sx[-1]))
        gy = b.matmul(_mT(b, rows), ad.reshape(b, g2, (math.prod(sx[:-1]), out2[-1])))
    else:
        gy = ad.sum_to(b, b.matmul(_mT(b, x2), g2), b.shape(y2))
    return [ad.reshape(b, gx, b.shape(x)), ad.reshape(b, gy, b.shape(y))]


def _matmul_jvp(b, tangents, inputs, outputs, **attrs):
    (tx, ty), (x, y) = tangents, inputs
    parts = [b.matmul(tx, y) if tx is not None else None,
             b.matmul(x, ty) if ty is not None else None]
    parts = [p for p in parts if p is not None]
    return [parts[0] if len(parts) == 1 else b.add(*parts)]


ad.defvjp("matmul", _matmul_vjp)
ad.defjvp("matmul", _matmul_jvp)

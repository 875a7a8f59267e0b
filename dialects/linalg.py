"""``matmul`` with numpy/PyTorch semantics: 1-D and 2-D operands, and batched
operands whose leading dimensions broadcast."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

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
    batch = broadcast_shapes("matmul", [a2[:-2], b2[:-2]])
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


def _matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if is_float_array(a) and a.dtype.itemsize < 4:  # half: accumulate in float32
        return np.matmul(a.astype(np.float32), b.astype(np.float32)).astype(a.dtype)
    return np.asarray(np.matmul(a, b))


define(OpDef("matmul", "linalg", _matmul_rule, _matmul, 2))

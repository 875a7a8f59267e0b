"""Shape ops: ``reshape permute broadcast_to slice concat split``.

Every attribute is explicit and normalized in the IR (no ``-1`` in reshape,
no negative dims, full start/limit/stride lists in slice), so the frontend's
many spellings (``view``, ``flatten``, ``squeeze``, ``.T``, ``x[1:, None]``)
record to a few canonical ops.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .dtypes import DType
from .opdef import OpDef, Shape, ShapeError, define, fmt_shape, numel, same_dtype


def _reshape_rule(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
    (s,), new = shapes, attrs["shape"]
    if any(d < 0 for d in new):
        raise ShapeError("reshape", f"target shape {fmt_shape(new)} has a negative size")
    if numel(s) != numel(new):
        raise ShapeError("reshape", f"cannot reshape {fmt_shape(s)} ({numel(s)} elements) "
                                    f"to {fmt_shape(new)} ({numel(new)} elements)")
    return ((tuple(new), dtypes[0]),)


def _permute_rule(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
    (s,), perm = shapes, attrs["perm"]
    if sorted(perm) != list(range(len(s))):
        raise ShapeError("permute", f"{list(perm)} is not a permutation of the "
                                    f"{len(s)} dimensions of {fmt_shape(s)}")
    return ((tuple(s[p] for p in perm), dtypes[0]),)


def _broadcast_rule(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
    (s,), target = shapes, tuple(attrs["shape"])
    off = len(target) - len(s)
    if off < 0 or any(d not in (1, target[off + i]) for i, d in enumerate(s)):
        raise ShapeError("broadcast_to", f"cannot broadcast {fmt_shape(s)} to "
                                         f"{fmt_shape(target)} (trailing dimensions must "
                                         "match or be 1)")
    return ((target, dtypes[0]),)


def _slice_rule(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
    (s,) = shapes
    start, limit, stride = attrs["start"], attrs["limit"], attrs["stride"]
    if not len(start) == len(limit) == len(stride) == len(s):
        raise ShapeError("slice", f"start/limit/stride need {len(s)} entries for "
                                  f"{fmt_shape(s)}")
    out = []
    for i, (d, a, b, k) in enumerate(zip(s, start, limit, stride)):
        if k < 1:
            raise ShapeError("slice", f"stride {k} in dimension {i} must be positive")
        if not 0 <= a <= b <= d:
            raise ShapeError("slice", f"range [{a}, {b}) in dimension {i} is not within "
                                      f"[0, {d}] of {fmt_shape(s)}")
        out.append((b - a + k - 1) // k)
    return ((tuple(out), dtypes[0]),)


def _concat_rule(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
    dim, first = attrs["dim"], shapes[0]
    d = same_dtype("concat", dtypes)
    if not 0 <= dim < len(first):
        raise ShapeError("concat", f"dimension {dim} is out of range for rank {len(first)}")
    for s in shapes[1:]:
        if len(s) != len(first) or any(a != b for i, (a, b) in enumerate(zip(s, first))
                                        if i != dim):
            raise ShapeError("concat", "shapes " + ", ".join(fmt_shape(x) for x in shapes)
                             + f" must match except in dimension {dim}")
    total = sum(s[dim] for s in shapes)
    return ((first[:dim] + (total,) + first[dim + 1:], d),)


def _split_rule(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
    (s,), sizes, dim = shapes, attrs["sizes"], attrs["dim"]
    if not 0 <= dim < len(s):
        raise ShapeError("split", f"dimension {dim} is out of range for rank {len(s)}")
    if not sizes or any(k < 0 for k in sizes) or sum(sizes) != s[dim]:
        raise ShapeError("split", f"sizes {list(sizes)} must be non-negative and sum to "
                                  f"{s[dim]}, dimension {dim} of {fmt_shape(s)}")
    return tuple((s[:dim] + (k,) + s[dim + 1:], dtypes[0]) for k in sizes)


def _slice(x: np.ndarray, start: tuple, limit: tuple, stride: tuple) -> np.ndarray:
    return x[tuple(slice(a, b, k) for a, b, k in zip(start, limit, stride))]


def _split(x: np.ndarray, sizes: tuple, dim: int) -> tuple[np.ndarray, ...]:
    bounds = np.cumsum(sizes)[:-1]
    return tuple(np.split(x, bounds, axis=dim))


define(OpDef("reshape", "shape", _reshape_rule, lambda x, shape: np.reshape(x, shape), 1,
             {"shape": "ints"}))
define(OpDef("permute", "shape", _permute_rule, lambda x, perm: np.transpose(x, perm), 1,
             {"perm": "ints"}))
define(OpDef("broadcast_to", "shape", _broadcast_rule,
             lambda x, shape: np.broadcast_to(x, shape), 1, {"shape": "ints"}))
define(OpDef("slice", "shape", _slice_rule, _slice, 1,
             {"start": "ints", "limit": "ints", "stride": "ints"}))
define(OpDef("concat", "shape", _concat_rule,
             lambda *xs, dim: np.concatenate(xs, axis=dim), None, {"dim": "int"}))
define(OpDef("split", "shape", _split_rule, _split, 1, {"sizes": "ints", "dim": "int"},
             num_results=None))

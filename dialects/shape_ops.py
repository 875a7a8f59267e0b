"""Shape ops: ``reshape permute broadcast_to slice concat split``.

Every attribute is explicit and normalized in the IR (no ``-1`` in reshape,
no negative dims, full start/limit/stride lists in slice), so the frontend's
many spellings (``view``, ``flatten``, ``squeeze``, ``.T``, ``x[1:, None]``)
record to a few canonical ops.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import ad
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


def _reshape(x: np.ndarray, shape: tuple) -> np.ndarray:
    """np.reshape, but a copy that merges a short last axis of large stride
    into longer rows (the backward of max pooling's windows: (..., 14, 2, 14, 2)
    with the 2s far apart) copies one slice of that axis at a time: numpy's
    copy walks the destination in C order, two elements per inner loop
    (measured 3.3 -> 0.9 ms for the CNN's (64, 16, 14, 2, 14, 2)). Such a
    merge can never be a view, so the result is a new array either way."""
    n = x.shape[-1] if x.ndim >= 2 else 0
    if 1 < n <= 4 and x.shape[-2] > 1 and abs(x.strides[-1]) > abs(x.strides[-2]) and \
            shape and shape[-1] > n and shape[-1] % n == 0 and x.size >= 4096:
        out = np.empty(x.shape, x.dtype)
        for i in range(n):
            out[..., i] = x[..., i]
        return out.reshape(shape)
    return np.reshape(x, shape)


define(OpDef("reshape", "shape", _reshape_rule, _reshape, 1,
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


def _pad_rule(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
    (s,) = shapes
    low, high, interior = attrs["low"], attrs["high"], attrs["interior"]
    if not len(low) == len(high) == len(interior) == len(s):
        raise ShapeError("pad", f"low/high/interior need {len(s)} entries for {fmt_shape(s)}")
    if any(v < 0 for v in (*low, *high, *interior)):
        raise ShapeError("pad", "padding amounts must be non-negative")
    out = tuple(lo + hi + (d + (d - 1) * k if d else 0)
                for d, lo, hi, k in zip(s, low, high, interior))
    return ((out, dtypes[0]),)


def _pad(x: np.ndarray, low: tuple, high: tuple, interior: tuple) -> np.ndarray:
    (out_shape, _), = _pad_rule([x.shape], [None], {"low": low, "high": high,  # type: ignore
                                                    "interior": interior})
    out = np.zeros(out_shape, dtype=x.dtype)
    out[tuple(slice(lo, lo + (d - 1) * (k + 1) + 1 if d else lo, k + 1)
              for d, lo, k in zip(x.shape, low, interior))] = x
    return out


define(OpDef("pad", "shape", _pad_rule, _pad, 1,
             {"low": "ints", "high": "ints", "interior": "ints"},
             doc="zero padding before, after and between elements (the transpose of slice)"))


# ---- derivatives (rules against the builder interface of dialects/ad.py) ----

def _inverse(perm: Sequence[int]) -> tuple[int, ...]:
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


def _slice_transpose(b, g, x, start, limit, stride):
    low, high, interior = [], [], []
    for d, a, k, n in zip(b.shape(x), start, stride, b.shape(g)):
        if n == 0:
            return ad.zeros(b, b.shape(x), g)
        low.append(a)
        interior.append(k - 1)
        high.append(d - (a + (n - 1) * k + 1))
    return b.pad(g, low=tuple(low), high=tuple(high), interior=tuple(interior))


def _pad_transpose(b, g, x, low, high, interior):
    shape = b.shape(x)
    if 0 in shape:
        return ad.zeros(b, shape, g)
    limit = tuple(lo + (d - 1) * (k + 1) + 1 for d, lo, k in zip(shape, low, interior))
    return b.slice(g, start=tuple(low), limit=limit, stride=tuple(k + 1 for k in interior))


ad.deflinear_unary("reshape", lambda b, g, x, shape: ad.reshape(b, g, b.shape(x)))
ad.deflinear_unary("permute", lambda b, g, x, perm: b.permute(g, perm=_inverse(perm)))
ad.deflinear_unary("broadcast_to", lambda b, g, x, shape: ad.sum_to(b, g, b.shape(x)))
ad.deflinear_unary("slice", _slice_transpose)
ad.deflinear_unary("pad", _pad_transpose)


def _concat_vjp(b, cts, inputs, outputs, dim):
    sizes = tuple(b.shape(x)[dim] for x in inputs)
    return list(b.split(cts[0], sizes=sizes, dim=dim))


def _concat_jvp(b, tangents, inputs, outputs, dim):
    ts = [ad.instantiate(b, t, b.shape(x), x) for t, x in zip(tangents, inputs)]
    return [b.concat(*ts, dim=dim)]


def _split_vjp(b, cts, inputs, outputs, sizes, dim):
    parts = [ad.instantiate(b, c, b.shape(o), o) for c, o in zip(cts, outputs)]
    return [b.concat(*parts, dim=dim) if len(parts) > 1 else parts[0]]


def _split_jvp(b, tangents, inputs, outputs, sizes, dim):
    return list(b.split(tangents[0], sizes=sizes, dim=dim))


ad.defvjp("concat", _concat_vjp)
ad.defjvp("concat", _concat_jvp)
ad.defvjp("split", _split_vjp)
ad.defjvp("split", _split_jvp)

"""Reductions: ``sum mean prod max min`` over a set of dims, ``argmax argmin`` over
one dim (or the flattened tensor).

In the IR ``dims`` is explicit, normalized, sorted and unique (the frontend
turns ``dim=None`` into every dimension), so two spellings of one reduction
hash and print the same.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import ad
from .dtypes import BOOL, FLOAT, DType, int64, is_float_array
from .opdef import OpDef, Shape, ShapeError, check_dims, define, normalize_dim


def reduced_shape(shape: Shape, dims: Sequence[int], keepdim: bool) -> Shape:
    if keepdim:
        return tuple(1 if i in dims else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in dims)


def _reduce_rule(name: str, kind: str):
    """kind: 'sum' (ints widen to int64), 'mean' (floating only), 'extreme' (max/min)."""
    def infer(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
        (shape,), (d,) = shapes, dtypes
        dims = attrs["dims"]
        check_dims(name, dims, len(shape))
        if kind == "mean" and d.category != FLOAT:
            raise ShapeError(name, f"expects a floating-point operand, got {d.name}")
        if kind == "extreme":  # bool is fine (any/all), as in PyTorch
            if any(shape[i] == 0 for i in dims) or (not dims and 0 in shape):
                raise ShapeError(name, f"cannot reduce over an empty dimension of shape "
                                       f"{list(shape)}: the result has no identity")
        ties = attrs.get("ties")
        if ties is not None:
            if ties != "first":
                raise ShapeError(name, f"ties must be \"first\" (or absent), got {ties!r}")
            if len(dims) > 1:
                raise ShapeError(name, f"ties = \"first\" picks one element along one "
                                       f"dimension, got dims {list(dims)}")
        out_dtype = int64 if kind == "sum" and d.category != FLOAT else d
        return ((reduced_shape(shape, dims, attrs["keepdim"]), out_dtype),)
    return infer


def _arg_rule(name: str):
    def infer(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
        (shape,), (d,) = shapes, dtypes
        dim, keepdim = attrs["dim"], attrs["keepdim"]
        if d.category == BOOL:
            raise ShapeError(name, "is not defined on bool tensors")
        if dim is None:
            if 0 in shape:
                raise ShapeError(name, f"cannot reduce an empty tensor of shape {list(shape)}")
            return (((1,) * len(shape) if keepdim else (), int64),)
        if dim != normalize_dim(name, dim, len(shape)):
            raise ShapeError(name, f"dimension {dim} must be normalized to [0, {len(shape)})")
        if shape and shape[dim] == 0:
            raise ShapeError(name, f"cannot reduce over empty dimension {dim} of shape "
                                   f"{list(shape)}")
        dims = (dim,) if shape else ()
        return ((reduced_shape(shape, dims, keepdim), int64),)
    return infer


def _accumulator(x: np.ndarray) -> np.dtype | None:
    if is_float_array(x) and x.dtype.itemsize < 4:
        return np.dtype(np.float32)  # half precision accumulates in float32
    if x.dtype.kind in "biu":
        return np.dtype(np.int64)
    return None


# A reduction over a few short axes of a large array (the 2x2 windows of a
# pooling reshape, ``(N, C, Ho, 2, Wo, 2)`` over dims (3, 5)): numpy's reduce
# runs one tiny inner loop per output element there (20x slower, measured);
# one ufunc call per reduced position, over views of the whole array, is not.
_SHORT_GROUP, _LONG_REST = 16, 4096


def _over_views(ufunc: np.ufunc, x: np.ndarray, dims: tuple[int, ...], keepdim: bool
                ) -> np.ndarray | None:
    """``ufunc.reduce`` over ``dims`` as a fold of views, or None where numpy's
    own reduce is as fast (a long reduced group, a small result, or only the
    leading axes reduced, whose inner loops are already long)."""
    if not dims or x.ndim < 2 or len(dims) == x.ndim:
        return None
    group = 1
    for d in dims:
        group *= x.shape[d]
    if not 1 < group <= _SHORT_GROUP or x.size // group < _LONG_REST \
            or dims == tuple(range(len(dims))):
        return None
    views = []
    for at in np.ndindex(*(x.shape[d] for d in dims)):
        index: list = [slice(None)] * x.ndim
        for d, i in zip(dims, at):
            index[d] = i
        views.append(x[tuple(index)])
    acc = ufunc(views[0], views[1])
    for v in views[2:]:
        ufunc(acc, v, out=acc)
    return acc.reshape(reduced_shape(x.shape, dims, True)) if keepdim else acc


def reduce_identity(reduce: str, dtype: DType) -> float | int:
    """The element that never changes a max/min (``amax``/``amin``) or prod
    reduction of ``dtype``: what an empty segment or a padded slot holds."""
    if reduce == "prod":
        return 1
    if dtype.is_floating_point:
        return -np.inf if reduce in ("max", "amax") else np.inf
    info = np.iinfo(dtype.np)
    return int(info.min if reduce in ("max", "amax") else info.max)


# Sums along rows of 8..256 elements (the last axis: layer norm's moments and
# their gradients, softmax's denominators): numpy's reduce runs one short loop
# per row (~25 ns each); a matrix-vector product with ones is one BLAS call
# (float32 (1024, 128): 29 -> 6 us, (65536, 10): 900 -> 100 us; float64 about
# half that gain). Past 256 numpy's pairwise sum keeps more bits than BLAS's
# blocked one (measured on rows of 512: 1.4e-5 against 1.0e-5 absolute).
_GEMV_ROW = (8, 256)
_ONES: dict[tuple[int, np.dtype], np.ndarray] = {}


def row_sums(x: np.ndarray, keepdim: bool = True) -> np.ndarray | None:
    """The sum of ``x`` along its last axis as one BLAS matrix-vector product
    with ones, or None where numpy's reduce is to be used (other dtypes, rows
    shorter than 8 or longer than 256, fewer than 8 rows, a layout that is not
    rows of unit stride)."""
    n = x.shape[-1] if x.ndim >= 2 else 0
    if x.dtype.char not in "fd" or not _GEMV_ROW[0] <= n <= _GEMV_ROW[1] or x.size < 8 * n:
        return None
    if x.flags.c_contiguous:
        rows = x.reshape(-1, n)
    elif x.ndim == 2 and x.strides[1] == x.itemsize and x.strides[0] >= n * x.itemsize:
        rows = x  # rows with a leading dimension: BLAS reads them in place
    else:
        return None
    r = np.matmul(rows, _ones(n, x.dtype))
    return r.reshape(x.shape[:-1] + (1,) if keepdim else x.shape[:-1])


def _ones(n: int, dtype: np.dtype) -> np.ndarray:
    ones = _ONES.get((n, dtype))
    if ones is None:
        ones = np.ones(n, dtype)
        ones.flags.writeable = False
        if n <= 1 << 16:  # a vector per length seen, kept only while short
            _ONES[(n, dtype)] = ones
    return ones


def _leading_sums(x: np.ndarray, dims: tuple[int, ...], keepdim: bool) -> np.ndarray | None:
    """The sum over the leading ``dims`` of a contiguous float32/float64 array
    (a bias's gradient over batch and positions) as one BLAS product
    ``ones @ x.reshape(rows, rest)``, or None. numpy adds the rows one after
    the other there (so does BLAS, in blocks: no bits lost against it):
    (1024, 128) float32 19 -> 5 us, (12544, 32) 326 -> 18 us."""
    k = len(dims)
    if x.dtype.char not in "fd" or not 0 < k < x.ndim or dims != tuple(range(k)) \
            or not x.flags.c_contiguous:
        return None
    rows = 1
    for d in x.shape[:k]:
        rows *= d
    if rows < 8 or x.size < 8 * rows:
        return None
    r = np.matmul(_ones(rows, x.dtype), x.reshape(rows, -1))
    return r.reshape(reduced_shape(x.shape, dims, keepdim))


def _gemv_sum(x: np.ndarray, dims: tuple[int, ...], keepdim: bool) -> np.ndarray | None:
    if dims == (x.ndim - 1,):
        return row_sums(x, keepdim)
    return _leading_sums(x, dims, keepdim)


def _sum(x: np.ndarray, dims: tuple[int, ...], keepdim: bool) -> np.ndarray:
    if x.dtype.char in "fd":  # the ufunc itself: np.sum's wrapper costs more than 64x10
        by_blas = _gemv_sum(x, dims, keepdim)
        if by_blas is not None:
            return by_blas
        folded = _over_views(np.add, x, dims, keepdim)
        if folded is not None:
            return folded
        return np.asarray(np.add.reduce(x, axis=dims, keepdims=keepdim))
    acc = _accumulator(x)
    r = np.sum(x, axis=dims, keepdims=keepdim, dtype=acc)
    return np.asarray(r, dtype=x.dtype if is_float_array(x) else np.int64)


def _mean(x: np.ndarray, dims: tuple[int, ...], keepdim: bool) -> np.ndarray:
    if x.dtype.char in "fd" and x.size:  # np.mean's own steps, without its wrapper
        r = _gemv_sum(x, dims, keepdim)
        if r is None:
            r = np.add.reduce(x, axis=dims, keepdims=keepdim)
        n = x.size // max(r.size, 1)
        if isinstance(r, np.ndarray):
            return np.true_divide(r, np.intp(n), out=r, casting="unsafe")
        # a full reduction gives a numpy scalar: divide as np.mean does (in
        # float64, rounded once to the dtype), with Python floats
        return np.asarray(float(r) / n, dtype=x.dtype)
    return np.asarray(np.mean(x, axis=dims, keepdims=keepdim, dtype=_accumulator(x)),
                      dtype=x.dtype)


def _prod(x: np.ndarray, dims: tuple[int, ...], keepdim: bool) -> np.ndarray:
    r = np.prod(x, axis=dims, keepdims=keepdim, dtype=_accumulator(x))
    return np.asarray(r, dtype=x.dtype if is_float_array(x) else np.int64)


def _max(x: np.ndarray, dims: tuple[int, ...], keepdim: bool, ties: str | None = None
         ) -> np.ndarray:
    folded = _over_views(np.maximum, x, dims, keepdim) if x.dtype.kind == "f" else None
    if folded is not None:
        return folded
    return np.asarray(np.max(x, axis=dims, keepdims=keepdim), dtype=x.dtype)


def _min(x: np.ndarray, dims: tuple[int, ...], keepdim: bool, ties: str | None = None
         ) -> np.ndarray:
    folded = _over_views(np.minimum, x, dims, keepdim) if x.dtype.kind == "f" else None
    if folded is not None:
        return folded
    return np.asarray(np.min(x, axis=dims, keepdims=keepdim), dtype=x.dtype)


_SHORT_ARG_AXIS, _SHORT_ARG_MIN = 8, 4096


def _arg_over_short_axis(x: np.ndarray, dim: int, extreme: np.ufunc) -> np.ndarray:
    """numpy's argmax/argmin along a short axis (max pooling's window offsets)
    of a large array, by whole-array ops over its slices: the extreme, then
    the count of slices before the first one that attains it (or is NaN: the
    first NaN wins, as numpy's). numpy's own loop runs per output element over
    the few offsets (measured 6.6 -> 2 ms on the CNN's (4, 64, 16, 14, 14))."""
    lead = (slice(None),) * dim
    parts = [x[(*lead, j)] for j in range(x.shape[dim])]  # views, not copies
    best = extreme(parts[0], parts[1])  # NaN propagates, as numpy's choice
    for part in parts[2:]:
        extreme(best, part, out=best)
    count = np.zeros(best.shape, np.uint8)
    searching = np.ones(best.shape, bool)
    hit = np.empty(best.shape, bool)
    nan = np.empty(best.shape, bool) if x.dtype.kind == "f" else None
    for part in parts[:-1]:
        np.equal(part, best, out=hit)
        if nan is not None:
            hit |= np.isnan(part, out=nan)
        np.greater(searching, hit, out=searching)  # still searching: was, and no hit
        count += searching
    return count.astype(np.int64)


def _arg(fn, extreme: np.ufunc):
    def kernel(x: np.ndarray, dim: int | None, keepdim: bool) -> np.ndarray:
        if x.ndim == 0:
            return np.zeros((), np.int64)
        if dim is not None and 1 < x.shape[dim] <= _SHORT_ARG_AXIS and x.ndim > 1 and \
                x.size >= _SHORT_ARG_MIN and x.dtype.kind in "fiu":
            r = _arg_over_short_axis(x, dim, extreme)
            return np.expand_dims(r, dim) if keepdim else r
        r = fn(x, axis=dim, keepdims=keepdim)
        return np.asarray(r, dtype=np.int64)
    return kernel


_RED_ATTRS = {"dims": "ints", "keepdim": "bool"}
# max/min: where several elements attain the extreme, the derivative is shared
# among them (torch.amax, torch.max(x)); with ties = "first" it all goes to the
# first one along the single reduced dim, the index argmax returns (torch.max(x, dim))
_EXTREME_ATTRS = {**_RED_ATTRS, "ties": "opt_str"}
for _name, _kind, _kernel, _attrs in (("sum", "sum", _sum, _RED_ATTRS),
                                      ("mean", "mean", _mean, _RED_ATTRS),
                                      ("prod", "sum", _prod, _RED_ATTRS),
                                      ("max", "extreme", _max, _EXTREME_ATTRS),
                                      ("min", "extreme", _min, _EXTREME_ATTRS)):
    define(OpDef(_name, "reduction", _reduce_rule(_name, _kind), _kernel, 1, dict(_attrs)))
for _name, _fn, _extreme in (("argmax", np.argmax, np.maximum),
                             ("argmin", np.argmin, np.minimum)):
    define(OpDef(_name, "reduction", _arg_rule(_name), _arg(_fn, _extreme), 1,
                 {"dim": "opt_int", "keepdim": "bool"}))


# ---- derivatives (rules against the builder interface of dialects/ad.py) ----

def _count(shape: Shape, dims: Sequence[int]) -> int:
    n = 1
    for d in dims:
        n *= shape[d]
    return n


def _spread(b, g, x, dims, keepdim, scale=None):
    """Broadcast a reduced cotangent back over the reduced dims."""
    g = ad.keep_dims(b, g, b.shape(x), dims, keepdim)
    if scale is not None:
        g = b.mul(g, scale)
    return ad.broadcast(b, g, b.shape(x))


def _extreme_mask(b, x, z, dims, keepdim, ties, arg):
    """Where the derivative goes: every element attaining the extreme, divided
    by how many there are; with ties = "first", the one element ``arg``
    (argmax/argmin) picks."""
    if ties == "first" and dims:
        (dim,) = dims
        index = b.op(arg, x, dim=dim, keepdim=True)
        count = b.iota(shape=b.shape(x), dim=dim, dtype=b.dtype(index))
        return b.convert(b.eq(count, index), dtype=b.dtype(x))
    hit = b.convert(b.eq(x, ad.keep_dims(b, z, b.shape(x), dims, keepdim)), dtype=b.dtype(x))
    return b.div(hit, b.sum(hit, dims=tuple(dims), keepdim=True))


def _sum_vjp(b, cts, inputs, outputs, dims, keepdim):
    return [_spread(b, cts[0], inputs[0], dims, keepdim)]


def _mean_vjp(b, cts, inputs, outputs, dims, keepdim):
    x = inputs[0]
    n = _count(b.shape(x), dims)
    return [_spread(b, cts[0], x, dims, keepdim, b.scalar(1.0 / max(n, 1), like=x))]


def _prod_parts(b, x, dims, keepdim):
    """What prod's derivative needs, exact with zeros (torch's rule): per
    reduced group, ``none`` where it holds no zero (there the partial of x_i
    is out / x_i), ``lone`` at the zero of a group holding exactly one (its
    partial is the product of the others, ``rest``); groups with two zeros or
    more have a zero derivative."""
    dims = tuple(dims)
    zero = b.eq(x, b.scalar(0, like=x))
    count = b.sum(b.convert(zero, dtype=b.dtype(x)), dims=dims, keepdim=True)
    none = b.eq(count, b.scalar(0, like=x))
    lone = b.logical_and(zero, b.eq(count, b.scalar(1, like=x)))
    one = b.scalar(1, like=x)
    rest = b.prod(b.where(zero, one, x), dims=dims, keepdim=True)
    return none, lone, b.where(zero, one, x), rest


def _prod_vjp(b, cts, inputs, outputs, dims, keepdim):
    (g,), (x,), (z,) = cts, inputs, outputs
    none, lone, safe, rest = _prod_parts(b, x, dims, keepdim)
    g = ad.keep_dims(b, g, b.shape(x), dims, keepdim)
    z = ad.keep_dims(b, z, b.shape(x), dims, keepdim)
    zero = b.scalar(0, like=x)
    partial = b.where(none, b.div(z, safe), b.where(lone, rest, zero))
    return [b.mul(ad.broadcast(b, g, b.shape(x)), partial)]


def _prod_jvp(b, tangents, inputs, outputs, dims, keepdim):
    (t,), (x,), (z,) = tangents, inputs, outputs
    none, lone, safe, rest = _prod_parts(b, x, dims, keepdim)
    zk = ad.keep_dims(b, z, b.shape(x), dims, keepdim)
    zero = b.scalar(0, like=x)
    partial = b.where(none, b.div(zk, safe), b.where(lone, rest, zero))
    return [b.sum(b.mul(t, partial), dims=tuple(dims), keepdim=keepdim)]


def _extreme_rules(arg: str):
    def vjp(b, cts, inputs, outputs, dims, keepdim, ties=None):
        (g,), (x,), (z,) = cts, inputs, outputs
        if ties == "first" and dims:
            mask = _extreme_mask(b, x, z, dims, keepdim, ties, arg)
            return [b.mul(_spread(b, g, x, dims, keepdim), mask)]
        # torch's rule, (g / count) * hit: the division on the reduced shape, so
        # the input-sized work is one compare and one product (pooling's backward)
        hit = b.convert(b.eq(x, ad.keep_dims(b, z, b.shape(x), dims, keepdim)),
                        dtype=b.dtype(x))
        count = b.sum(hit, dims=tuple(dims), keepdim=True)
        share = b.div(ad.keep_dims(b, g, b.shape(x), dims, keepdim), count)
        return [b.mul(hit, share)]

    def jvp(b, tangents, inputs, outputs, dims, keepdim, ties=None):
        (t,), (x,), (z,) = tangents, inputs, outputs
        mask = _extreme_mask(b, x, z, dims, keepdim, ties, arg)
        return [b.sum(b.mul(t, mask), dims=tuple(dims), keepdim=keepdim)]
    return vjp, jvp


def _linear_jvp(name):
    def jvp(b, tangents, inputs, outputs, **attrs):
        return [b.op(name, tangents[0], **attrs)]
    return jvp


ad.defvjp("sum", _sum_vjp)
ad.defjvp("sum", _linear_jvp("sum"))
ad.defvjp("prod", _prod_vjp)
ad.defjvp("prod", _prod_jvp)
ad.saves_results("prod")  # (PyTorch saves the input and the result)
ad.defvjp("mean", _mean_vjp)
ad.reads_no_input_values("sum", "mean")
ad.defjvp("mean", _linear_jvp("mean"))
for _name, _arg_name in (("max", "argmax"), ("min", "argmin")):
    _vjp, _jvp = _extreme_rules(_arg_name)
    ad.defvjp(_name, _vjp)
    ad.defjvp(_name, _jvp)
ad.nondiff("argmax", "argmin")

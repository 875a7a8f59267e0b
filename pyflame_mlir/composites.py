"""More of torch's functions, written from the op API (as ``jax.numpy`` is
written from ``lax``): every backend and autodiff take them with no new rule.

Functions whose result shape depends on values (``unique``, ``bincount``,
``histc`` with data-given bounds) evaluate their input first, as torch
computes them eagerly; their results are realized tensors.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import math_rules as _rules
from .autodiff import enable_grad, no_grad
from .core import GRAD_MODE, Tensor
from .creation import tensor as _tensor
from .creation import zeros
from .dialects.dtypes import DType, default_float, int64, promote
from .dialects.dtypes import dtype as to_dtype
from .dialects.opdef import ShapeError
from .indexing import meshgrid, scatter_add, take_along_dim
from .inplace import _in_place
from .ops import (
    TensorLike,
    _cast,
    _promote,
    abs,
    add,
    as_tensor_arg,
    autocast_policy,
    broadcast_to,
    cat,
    convert,
    div,
    eq,
    exp,
    exp2,
    floor,
    ge,
    gt,
    le,
    log,
    log1p,
    logical_and,
    logical_or,
    lt,
    matmul,
    maximum,
    minimum,
    mul,
    permute,
    reshape,
    sin,
    sqrt,
    stack,
    sub,
    sum,
    where,
)

Scalar = int | float | bool


def _float_pair(name: str, a: TensorLike, b: TensorLike) -> tuple[Tensor, Tensor]:
    """Both operands in their promoted dtype, integers promoted to float32 (torch)."""
    dt = _promote([a, b])
    if not dt.is_floating_point:
        dt = default_float()
    return _cast(a, dt), _cast(b, dt)


# ---- pointwise ----

def addcmul(input: TensorLike, tensor1: TensorLike, tensor2: TensorLike, *,  # noqa: A002
            value: Scalar = 1) -> Tensor:
    """``input + value * tensor1 * tensor2``."""
    prod = mul(tensor1, tensor2)
    return add(input, prod if value == 1 else mul(prod, value))


def addcdiv(input: TensorLike, tensor1: TensorLike, tensor2: TensorLike, *,  # noqa: A002
            value: Scalar = 1) -> Tensor:
    """``input + value * tensor1 / tensor2`` (integer division raises, as torch)."""
    t1, t2 = as_tensor_arg(tensor1), as_tensor_arg(tensor2)
    if not (t1.dtype.is_floating_point or t2.dtype.is_floating_point):
        raise ShapeError("addcdiv", "integer division with addcdiv is not supported: use "
                                    "true_divide (tensor1 / tensor2) instead")
    q = div(t1, t2)
    return add(input, q if value == 1 else mul(q, value))


def logaddexp(input: TensorLike, other: TensorLike) -> Tensor:  # noqa: A002
    """``log(exp(a) + exp(b))`` without overflow. Derivatives torch's
    (math_rules.py): ``1 / (1 + exp(b - a))`` for ``a``, 1/2 each on a tie,
    NaN for equal infinities (``exp(inf - inf)``) as torch's."""
    a, b = _float_pair("logaddexp", input, other)
    return _rules.elementwise("LogaddexpBackward0", _logaddexp_value, [a, b],
                              lambda x, y: [1.0 / (1.0 + exp(y - x)), 1.0 / (1.0 + exp(x - y))])


def _logaddexp_value(a: Tensor, b: Tensor) -> Tensor:
    """``max + log1p(exp(-|a - b|))``; equal values give ``a + log 2``
    (equal infinities that infinity: their difference would be NaN)."""
    hi = maximum(a, b)
    same = eq(a, b)  # also a == b == +-inf
    d = where(same, 0.0, sub(a, b))
    return where(same, add(a, math.log(2.0)), add(hi, log1p(exp(mul(abs(d), -1.0)))))


def logaddexp2(input: TensorLike, other: TensorLike) -> Tensor:  # noqa: A002
    """``log2(2**a + 2**b)``, stable as ``logaddexp``; derivatives torch's,
    ``1 / (1 + 2**(b - a))``."""
    a, b = _float_pair("logaddexp2", input, other)
    return _rules.elementwise("Logaddexp2Backward0", _logaddexp2_value, [a, b],
                              lambda x, y: [1.0 / (1.0 + exp2(y - x)), 1.0 / (1.0 + exp2(x - y))])


def _logaddexp2_value(a: Tensor, b: Tensor) -> Tensor:
    hi = maximum(a, b)
    same = eq(a, b)
    d = where(same, 0.0, sub(a, b))
    return where(same, add(a, 1.0), add(hi, div(log1p(exp2(mul(abs(d), -1.0))), math.log(2.0))))


def xlogy(input: TensorLike, other: TensorLike) -> Tensor:  # noqa: A002
    """``x * log(y)``, 0 where x == 0 (unless y is NaN), as torch. Derivatives
    torch's (math_rules.py): ``log(y)`` for x (0 where x == 0 and y <= 0),
    ``x / y`` for y (NaN at x = y = 0); forward mode ``xlogy(t_x, y)`` (masked
    as the first) plus ``(t_y x) / y``, torch's forward formula (a zero
    tangent gives 0 where the partial is infinite or NaN, as there)."""
    x, y = _float_pair("xlogy", input, other)
    return _rules.elementwise("XlogyBackward0", _xlogy_value, [x, y],
                              lambda a, b: [_masked(a, b, 0.0, log(b)), div(a, b)],
                              tangent=lambda t, a, b: add(_masked(a, b, 0.0, xlogy(t[0], b)),
                                                          div(mul(t[1], a), b)))


def _masked(a: Tensor, b: Tensor, edge: float, v: Tensor) -> Tensor:
    """``v``, 0 where ``a == 0`` and ``b <= edge`` (torch's xlogy/xlog1py mask)."""
    return where(logical_and(eq(a, 0.0), le(b, edge)), 0.0, v)


def _xlogy_value(x: Tensor, y: Tensor) -> Tensor:
    zero = logical_and(eq(x, 0.0), eq(y, y))  # y == y: not NaN
    return where(zero, 0.0, mul(x, log(where(zero, 1.0, y))))


def xlog1py(input: TensorLike, other: TensorLike) -> Tensor:  # noqa: A002
    """``x * log1p(y)``, 0 where x == 0 (unless y is NaN), as torch.special.
    Derivatives torch's: ``log1p(y)`` for x (0 where x == 0 and y <= -1),
    ``x / (1 + y)`` for y."""
    x, y = _float_pair("xlog1py", input, other)
    return _rules.elementwise(
        "SpecialXlog1PyBackward0", _xlog1py_value, [x, y],
        lambda a, b: [_masked(a, b, -1.0, log1p(b)), div(a, add(b, 1.0))],
        tangent=lambda t, a, b: add(_masked(a, b, -1.0, xlog1py(t[0], b)),
                                    div(mul(t[1], a), add(b, 1.0))))


def _xlog1py_value(x: Tensor, y: Tensor) -> Tensor:
    zero = logical_and(eq(x, 0.0), eq(y, y))
    return where(zero, 0.0, mul(x, log1p(where(zero, 0.0, y))))


def hypot(input: TensorLike, other: TensorLike) -> Tensor:  # noqa: A002
    """``sqrt(a^2 + b^2)``, scaled by the larger magnitude so squares cannot
    overflow; infinities give inf (IEEE hypot), as torch."""
    a, b = _float_pair("hypot", input, other)
    if a.dtype is not b.dtype or not a.dtype.is_floating_point:
        raise ShapeError("hypot", f"expects floating-point tensors, got {a.dtype.name}")
    # torch's derivatives (math_rules.py): x / hypot and y / hypot (NaN at the origin)
    return _rules.elementwise("HypotBackward0", _hypot_value, [a, b],
                              lambda x, y: [div(x, hypot(x, y)), div(y, hypot(x, y))])


def _hypot_value(a: Tensor, b: Tensor) -> Tensor:
    aa, ab = abs(a), abs(b)
    hi, lo = maximum(aa, ab), minimum(aa, ab)
    safe = where(eq(hi, 0.0), 1.0, hi)
    r = div(lo, safe)
    out = mul(hi, sqrt(add(1.0, mul(r, r))))
    either_inf = logical_or(eq(aa, math.inf), eq(ab, math.inf))
    return where(either_inf, math.inf, out)  # inf with NaN: inf, as C's hypot


def sinc(input: TensorLike) -> Tensor:  # noqa: A002
    """``sin(pi x) / (pi x)``, 1 at 0."""
    x = as_tensor_arg(input)
    if not x.dtype.is_floating_point:
        x = _cast(x, default_float())
    zero = eq(x, 0.0)
    px = mul(where(zero, 1.0, x), math.pi)
    return where(zero, 1.0, div(sin(px), px))


def deg2rad(input: TensorLike) -> Tensor:  # noqa: A002
    x = as_tensor_arg(input)
    return mul(x if x.dtype.is_floating_point else _cast(x, default_float()), math.pi / 180.0)


def rad2deg(input: TensorLike) -> Tensor:  # noqa: A002
    x = as_tensor_arg(input)
    return mul(x if x.dtype.is_floating_point else _cast(x, default_float()), 180.0 / math.pi)


# ---- dtypes and broadcasting ----

def promote_types(type1: Any, type2: Any) -> DType:
    return promote(to_dtype(type1), to_dtype(type2))


def result_type(tensor1: TensorLike, tensor2: TensorLike) -> DType:
    """The dtype ``tensor1 op tensor2`` has (torch's rules, Python numbers weak)."""
    return _promote([tensor1, tensor2])


def broadcast_shapes(*shapes: Sequence[int] | int) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*[(s,) if isinstance(s, int) else tuple(s)
                                           for s in shapes]))
    except ValueError:
        raise ShapeError("broadcast_shapes", f"shapes {[tuple(s) if not isinstance(s, int) else (s,) for s in shapes]} "  # noqa: E501
                                             "cannot be broadcast together") from None


def broadcast_tensors(*tensors: TensorLike) -> tuple[Tensor, ...]:
    ts = [as_tensor_arg(t) for t in tensors]
    shape = broadcast_shapes(*[t.shape for t in ts])
    return tuple(t if t.shape == shape else broadcast_to(t, shape) for t in ts)


# ---- differences, products ----

def _dim(name: str, d: int, ndim: int) -> int:
    if not -ndim <= d < builtins.max(ndim, 1):
        raise ShapeError(name, f"dim {d} is out of range for a {ndim}-D tensor")
    return d % builtins.max(ndim, 1)


def diff(input: TensorLike, n: int = 1, dim: int = -1,  # noqa: A002
         prepend: TensorLike | None = None, append: TensorLike | None = None) -> Tensor:
    """The n-th forward difference along ``dim`` (torch.diff; bools by xor)."""
    x = as_tensor_arg(input)
    if x.ndim == 0:
        raise ShapeError("diff", "expects input to be at least one-dimensional")
    d = _dim("diff", dim, x.ndim)
    if n == 0:
        return x  # torch: the input as it is, prepend and append ignored
    parts = [as_tensor_arg(p) for p in (prepend,) if p is not None] + [x] + \
        [as_tensor_arg(a) for a in (append,) if a is not None]
    if len(parts) > 1:
        x = cat(parts, d)
    for _ in range(n):
        size = x.shape[d]
        if size == 0:
            break
        hi = x.narrow(d, 1, size - 1)
        lo = x.narrow(d, 0, size - 1)
        x = hi.logical_xor(lo) if x.dtype.is_bool else sub(hi, lo)
    return x


def cross(input: TensorLike, other: TensorLike, dim: int | None = None) -> Tensor:  # noqa: A002
    """Cross product of 3-vectors along ``dim`` (the first dim of size 3 when
    None, as torch.cross; ``linalg.cross`` defaults to -1)."""
    a, b = broadcast_tensors(input, other)
    if dim is None:
        dims = [i for i, s in enumerate(a.shape) if s == 3]
        if not dims:
            raise ShapeError("cross", f"no dimension of size 3 in input of shape {a.shape}")
        dim = dims[0]
    d = _dim("cross", dim, a.ndim)
    if a.shape[d] != 3:
        raise ShapeError("cross", f"inputs dimension {dim} must have length 3, got "
                                  f"{a.shape[d]}")
    a0, a1, a2 = (a.narrow(d, i, 1) for i in range(3))
    b0, b1, b2 = (b.narrow(d, i, 1) for i in range(3))
    return cat([sub(mul(a1, b2), mul(a2, b1)), sub(mul(a2, b0), mul(a0, b2)),
                sub(mul(a0, b1), mul(a1, b0))], d)


def tensordot(a: TensorLike, b: TensorLike, dims: Any = 2) -> Tensor:
    """Contract the last ``dims`` dims of a with the first of b, or the listed
    dim pairs (``dims=([1, 0], [0, 1])``), as one matmul."""
    x, y = as_tensor_arg(a), as_tensor_arg(b)
    if isinstance(dims, int):
        if dims < 0:
            raise ShapeError("tensordot", f"expects dims >= 0, but got dims={dims}")
        da, db = list(range(x.ndim - dims, x.ndim)), list(range(dims))
    else:
        da, db = dims
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
    da = [_dim("tensordot", i, x.ndim) for i in da]
    db = [_dim("tensordot", i, y.ndim) for i in db]
    if len(da) != len(db) or any(x.shape[i] != y.shape[j] for i, j in zip(da, db)):
        raise ShapeError("tensordot", f"contracted dimensions {da} of {x.shape} and {db} of "
                                      f"{y.shape} do not match")
    free_a = [i for i in range(x.ndim) if i not in da]
    free_b = [j for j in range(y.ndim) if j not in db]
    k = int(np.prod([x.shape[i] for i in da], dtype=np.int64))
    xa = reshape(permute(x, free_a + da), (-1, k) if x.ndim else (1, 1))
    yb = reshape(permute(y, db + free_b), (k, -1) if y.ndim else (1, 1))
    out = matmul(xa, yb)
    return reshape(out, tuple(x.shape[i] for i in free_a) + tuple(y.shape[j] for j in free_b))


def kron(input: TensorLike, other: TensorLike) -> Tensor:  # noqa: A002
    """Kronecker product: ``out[i*m + k] = a[i] * b[k]`` per dim."""
    a, b = as_tensor_arg(input), as_tensor_arg(other)
    n = builtins.max(a.ndim, b.ndim)
    a = reshape(a, (1,) * (n - a.ndim) + a.shape)
    b = reshape(b, (1,) * (n - b.ndim) + b.shape)
    # interleave: a -> (a0, 1, a1, 1, ...), b -> (1, b0, 1, b1, ...)
    ai = reshape(a, tuple(s for d in a.shape for s in (d, 1)))
    bi = reshape(b, tuple(s for d in b.shape for s in (1, d)))
    return reshape(mul(ai, bi), tuple(x * y for x, y in zip(a.shape, b.shape)))


@autocast_policy("fp32")
def cdist(x1: TensorLike, x2: TensorLike, p: float = 2.0,
          compute_mode: str | None = None) -> Tensor:
    """p-norm distances between the rows of x1 (.., P, M) and x2 (.., R, M).
    The gradient at a zero distance is 0, as torch's."""
    del compute_mode  # torch's choice of algorithm, not of the result
    a, b = as_tensor_arg(x1), as_tensor_arg(x2)
    if a.ndim < 2 or b.ndim < 2 or a.shape[-1] != b.shape[-1]:
        raise ShapeError("cdist", f"X1 {a.shape} and X2 {b.shape} must have the same number "
                                  "of columns and be at least 2-D")
    if p < 0:
        raise ShapeError("cdist", f"only supports non-negative p values, got {p}")
    d = sub(a.unsqueeze(-2), b.unsqueeze(-3))
    ad = abs(d)
    if p == 0:
        return sum(convert(ad.ne(0), a.dtype), -1)
    if p == math.inf:
        return ad.amax(-1)
    if p == 1:
        return sum(ad, -1)
    s = sum(ad ** p if p != 2 else mul(d, d), -1)
    nz = gt(s, 0.0)
    safe = where(nz, s, 1.0)
    return where(nz, safe ** (1.0 / p) if p != 2 else sqrt(safe), 0.0)


# ---- construction from shapes ----

def cartesian_prod(*tensors: TensorLike) -> Tensor:
    ts = [as_tensor_arg(t) for t in tensors]
    if any(t.ndim != 1 for t in ts):
        raise ShapeError("cartesian_prod", "expects one-dimensional tensors")
    if len(ts) == 1:
        return ts[0]
    return reshape(stack(meshgrid(*ts, indexing="ij"), -1), (-1, len(ts)))


def block_diag(*tensors: TensorLike) -> Tensor:
    ts = [as_tensor_arg(t) for t in tensors]
    ts = [reshape(t, (1, -1)) if t.ndim < 2 else t for t in ts]  # 0-d: 1x1, 1-D: a row
    if any(t.ndim != 2 for t in ts):
        raise ShapeError("block_diag", "expects tensors of at most 2 dimensions")
    if not ts:
        return zeros(1, 0)
    dt = ts[0].dtype
    for t in ts[1:]:
        dt = promote(dt, t.dtype)
    cols = builtins.sum(t.shape[1] for t in ts)
    rows, at = [], 0
    for t in ts:
        w = t.shape[1]
        h = t.shape[0]
        rows.append(cat([zeros(h, at, dtype=dt), convert(t, dt),
                         zeros(h, cols - at - w, dtype=dt)], 1))
        at += w
    return cat(rows, 0)


def _tri_indices(name: str, row: int, col: int, offset: int, upper: bool) -> Tensor:
    if row < 0 or col < 0:
        raise ShapeError(name, f"row and col must be non-negative, got {row}, {col}")
    r, c = (np.triu_indices if upper else np.tril_indices)(row, offset, col)
    return _tensor(np.stack([r, c]).astype(np.int64))


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = int64, **_: Any
                 ) -> Tensor:
    return convert(_tri_indices("tril_indices", row, col, offset, False), dtype)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = int64, **_: Any
                 ) -> Tensor:
    return convert(_tri_indices("triu_indices", row, col, offset, True), dtype)


# ---- searching and counting ----

def searchsorted(sorted_sequence: TensorLike, input: TensorLike, *,  # noqa: A002
                 out_int32: bool = False, right: bool = False, side: str | None = None,
                 sorter: TensorLike | None = None) -> Tensor:
    """Insertion points of ``input`` in the last dim of ``sorted_sequence``
    (1-D, or matching ``input``'s leading dims): how many elements are below
    (``left``) or at most (``right``) each value. A compare-and-count: O(n m)."""
    seq, v = as_tensor_arg(sorted_sequence), as_tensor_arg(input)
    if side is not None:
        if side not in ("left", "right"):
            raise ShapeError("searchsorted", f"side can only be 'left' or 'right', got {side!r}")
        if right and side == "left":
            raise ShapeError("searchsorted", "side and right can't be set to opposites")
        right = side == "right"
    if sorter is not None:
        seq = take_along_dim(seq, as_tensor_arg(sorter), -1)
    scalar_input = v.ndim == 0
    if scalar_input:
        if seq.ndim != 1:
            raise ShapeError("searchsorted", "a scalar input needs a 1-D sorted_sequence")
        v = reshape(v, (1,))
    if seq.ndim == 1:
        s = reshape(seq, (1,) * v.ndim + seq.shape)
    else:
        if seq.shape[:-1] != v.shape[:-1]:
            raise ShapeError("searchsorted", f"boundaries {seq.shape} and input {v.shape} "
                                             "must have the same leading dimensions")
        s = seq.unsqueeze(-2)
    dt = promote(seq.dtype, v.dtype)
    below = (le if right else lt)(convert(s, dt), convert(v.unsqueeze(-1), dt))
    out = convert(sum(convert(below, int64), -1), "int32" if out_int32 else int64)
    return reshape(out, ()) if scalar_input else out


def bucketize(input: TensorLike, boundaries: TensorLike, *, out_int32: bool = False,  # noqa: A002
              right: bool = False) -> Tensor:
    """The bucket of each value among 1-D ``boundaries`` (torch's ``right``:
    ``boundaries[i-1] < x <= boundaries[i]`` unless right)."""
    b = as_tensor_arg(boundaries)
    if b.ndim != 1:
        raise ShapeError("bucketize", f"boundaries must be 1-D, got {b.shape}")
    return searchsorted(b, input, out_int32=out_int32, right=right)


def _host(name: str, t: TensorLike) -> np.ndarray:
    """A value whose result shape depends on it: computed now, as torch would."""
    x = as_tensor_arg(t)
    with no_grad():
        return x.numpy()


def bincount(input: TensorLike, weights: TensorLike | None = None,  # noqa: A002
             minlength: int = 0) -> Tensor:
    """Counts of each value of a 1-D non-negative integer tensor (weighted sums
    with ``weights``); its length depends on the values, so they are evaluated."""
    x = as_tensor_arg(input)
    if x.ndim != 1 or x.dtype.is_floating_point or x.dtype.is_bool:
        raise ShapeError("bincount", f"only supports 1-d non-negative integral inputs, got "
                                     f"{x.dtype.name} {x.shape}")
    values = _host("bincount", x)
    if values.size and values.min() < 0:
        raise ShapeError("bincount", "input must contain only non-negative values")
    n = builtins.max(int(values.max()) + 1 if values.size else 0, minlength)
    if weights is None:
        return _tensor(np.bincount(values, minlength=n).astype(np.int64))
    w = as_tensor_arg(weights)
    if w.shape != x.shape:
        raise ShapeError("bincount", f"weights {w.shape} must have the shape of input "
                                     f"{x.shape}")
    dt = w.dtype if w.dtype.is_floating_point else to_dtype("float64")
    return scatter_add(zeros(n, dtype=dt), 0, x, convert(w, dt))


def histc(input: TensorLike, bins: int = 100, min: float = 0, max: float = 0  # noqa: A002
          ) -> Tensor:
    """Equal-width histogram over [min, max] (the data's range when both are
    0); values outside are ignored, ``max`` falls in the last bin."""
    x = as_tensor_arg(input)
    if not x.dtype.is_floating_point:
        raise ShapeError("histc", f"expects a floating-point input, got {x.dtype.name}")
    if bins <= 0:
        raise ShapeError("histc", f"bins must be > 0, got {bins}")
    lo, hi = float(min), float(max)
    if lo == hi:
        v = _host("histc", x)
        if v.size:
            lo, hi = float(v.min()), float(v.max())
        if lo == hi:
            lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise ShapeError("histc", f"max must be larger than min, got {lo} > {hi}")
    flat = reshape(x, (-1,))
    idx = convert(floor(mul(sub(flat, lo), bins / (hi - lo))), int64).clamp(0, bins - 1)
    inside = logical_and(ge(flat, lo), le(flat, hi))
    ones = convert(inside, x.dtype)
    return scatter_add(zeros(bins, dtype=x.dtype), 0, idx, ones)


def unique(input: TensorLike, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
           return_counts: bool = False, dim: int | None = None) -> Any:
    """The distinct values (sorted), evaluated now: the result's length depends
    on the values (torch.unique; not differentiable, as torch)."""
    del sorted  # torch sorts on CPU either way
    v = _host("unique", input)
    if dim is None:
        # (every NaN distinct, as torch's: NaN != NaN)
        vals, inv, counts = np.unique(v, return_inverse=True, return_counts=True,
                                      equal_nan=False)
        inv = inv.reshape(v.shape)
    else:
        d = _dim("unique", dim, v.ndim)
        vals, inv, counts = np.unique(v, return_inverse=True, return_counts=True, axis=d)
        inv = inv.reshape(-1)
    out: list[Tensor] = [_tensor(vals)]
    if return_inverse:
        out.append(_tensor(inv.astype(np.int64)))
    if return_counts:
        out.append(_tensor(counts.astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


# ---- grad modes ----

class inference_mode:  # noqa: N801  (torch's name: a context manager and decorator)
    """torch.inference_mode: gradients off (as ``no_grad``); ``mode=False``
    turns them on (as ``enable_grad``: torch's InferenceMode(false) sets grad
    mode, so it re-enables gradients inside ``no_grad``). A decorator with or without the call. Per
    thread, as torch's. Tensors made inside are inference tensors
    (``is_inference()``): outside, updating one in place, making it require
    grad, or a backward through an op that saved one raise PyTorch's errors
    (the last at the backward, where PyTorch raises when the op is recorded)."""

    def __new__(cls, mode: Any = True) -> Any:
        if callable(mode):  # @inference_mode without the call
            return cls(True)(mode)
        return super().__new__(cls)

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode
        self._ctx: Any = None
        self._prev = False

    def __enter__(self) -> None:
        self._prev = GRAD_MODE.inference
        GRAD_MODE.inference = bool(self.mode)
        self._ctx = no_grad() if self.mode else enable_grad()
        self._ctx.__enter__()

    def __exit__(self, *exc: Any) -> None:
        GRAD_MODE.inference = self._prev
        if self._ctx is not None:
            self._ctx.__exit__(*exc)
            self._ctx = None

    def __call__(self, fn: Any) -> Any:
        mode = self.mode

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with inference_mode(mode):
                return fn(*args, **kwargs)
        wrapped.__name__ = getattr(fn, "__name__", "wrapped")
        wrapped.__doc__ = fn.__doc__
        return wrapped


def is_inference_mode_enabled() -> bool:
    return GRAD_MODE.inference


# ---- Tensor methods (torch has these as methods; the in-place forms too) ----

COMPOSITE_METHODS = ("addcmul addcdiv logaddexp logaddexp2 xlogy hypot sinc deg2rad rad2deg "
                     "diff cross kron bincount histc unique").split()
for _name in COMPOSITE_METHODS:
    setattr(Tensor, _name, globals()[_name])
for _name in ("addcmul", "addcdiv", "xlogy", "hypot", "deg2rad", "rad2deg", "sinc"):
    setattr(Tensor, f"{_name}_", _in_place(globals()[_name], f"{_name}_"))

__all__ = ["addcmul", "addcdiv", "logaddexp", "logaddexp2", "xlogy", "xlog1py", "hypot",
           "sinc", "deg2rad", "rad2deg", "promote_types", "result_type", "broadcast_shapes",
           "broadcast_tensors", "diff", "cross", "tensordot", "kron", "cdist",
           "cartesian_prod", "block_diag", "tril_indices", "triu_indices", "searchsorted",
           "bucketize", "bincount", "histc", "unique", "inference_mode",
           "is_inference_mode_enabled"]

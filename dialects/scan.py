"""Scans along one dim: ``cumsum`` (``reverse``: from the end), ``cumprod``,
``logcumsumexp`` (``reverse``), ``cummax`` and ``cummin`` (values and int64
indices, as torch).

Each is a primitive because no composite of the other ops is both exact and
O(n): a scan is linear in the scanned dim (the reference kernels are numpy's
accumulate). The O(n^2) masked reduction of each (``out[j] = reduce_{i <= j} x[i]``,
``QUADRATIC``) is what backends without a scan primitive lower instead; it is
exact but quadratic in the scanned dim.

Derivatives: d(cumsum) is a reversed cumsum; cumprod's rule is exact with
zeros in the input (torch's: only elements up to and including the first zero
of a prefix get a derivative); logcumsumexp's splits the cotangent by sign
(torch's rule, stable); cummax/cummin send it to the selected index
(``scatter_add_along`` of ``dialects/sorting.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import ad
from .dtypes import BOOL, FLOAT, DType, int64, is_float_array
from .opdef import OpDef, Shape, ShapeError, define


def _scan_rule(name: str, kind: str):
    """kind: 'sum' (integers and bool widen to int64), 'float' (floating only),
    'extreme' (values of the operand's dtype and int64 indices)."""
    def infer(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
        (shape,), (d,) = shapes, dtypes
        dim = attrs["dim"]
        if not shape:
            raise ShapeError(name, "expects an operand of rank >= 1 (the frontend reshapes "
                                   "a 0-d tensor)")
        if not 0 <= dim < len(shape):
            raise ShapeError(name, f"dimension {dim} is out of range for rank {len(shape)}")
        if kind == "float" and d.category != FLOAT:
            raise ShapeError(name, f"expects a floating-point operand, got {d.name}")
        if kind == "extreme":
            return ((shape, d), (shape, int64))
        return ((shape, d if d.category == FLOAT else int64),)
    return infer


def _accumulator(x: np.ndarray) -> np.dtype:
    if is_float_array(x):
        return np.dtype(np.float32) if x.dtype.itemsize < 4 else x.dtype
    return np.dtype(np.int64)


def _out_dtype(x: np.ndarray) -> np.dtype:
    return x.dtype if is_float_array(x) else np.dtype(np.int64)


def _cumsum(x: np.ndarray, dim: int, reverse: bool) -> np.ndarray:
    src = np.flip(x, dim) if reverse else x
    r = np.cumsum(src, axis=dim, dtype=_accumulator(x))
    if reverse:
        r = np.flip(r, dim)
    return np.ascontiguousarray(r, dtype=_out_dtype(x))


def _cumprod(x: np.ndarray, dim: int) -> np.ndarray:
    return np.ascontiguousarray(np.cumprod(x, axis=dim, dtype=_accumulator(x)),
                                dtype=_out_dtype(x))


def _logcumsumexp(x: np.ndarray, dim: int, reverse: bool) -> np.ndarray:
    src = np.flip(x, dim) if reverse else x
    with np.errstate(invalid="ignore"):  # inf - inf inside logaddexp: its result is right
        r = np.logaddexp.accumulate(src.astype(_accumulator(x)), axis=dim)
    if reverse:
        r = np.flip(r, dim)
    return np.ascontiguousarray(r, dtype=x.dtype)


def _cumextreme(accumulate):
    def kernel(x: np.ndarray, dim: int) -> tuple[np.ndarray, np.ndarray]:
        values = accumulate(x, axis=dim) if x.size else x.copy()
        # torch: the index of the latest element equal to the running extreme
        # (``x >= out`` updates it), and of the latest NaN once a NaN is met
        hit = x == values
        if is_float_array(x):
            hit |= np.isnan(x) & np.isnan(values)
        shape = [1] * x.ndim
        shape[dim] = x.shape[dim]
        pos = np.arange(x.shape[dim], dtype=np.int64).reshape(shape)
        cand = np.where(hit, pos, np.int64(-1))
        indices = np.maximum.accumulate(cand, axis=dim) if x.size else cand
        return np.ascontiguousarray(values), np.ascontiguousarray(indices, dtype=np.int64)
    return kernel


# ---- the O(n^2) decompositions (backends without a scan primitive) ----

def pair_grid(b, v, dim: int, n: int):
    """``v`` (size ``n`` at ``dim``) broadcast over a new axis inserted at
    ``dim``: in the result, axis ``dim`` is the output position j and axis
    ``dim + 1`` the input position i; also returns iota j and iota i."""
    shape = tuple(b.shape(v))
    full = (*shape[:dim], n, *shape[dim:])
    grid = ad.broadcast(b, ad.reshape(b, v, (*shape[:dim], 1, *shape[dim:])), full)
    j = b.iota(shape=full, dim=dim, dtype=int64)
    i = b.iota(shape=full, dim=dim + 1, dtype=int64)
    return grid, j, i


def lowest(d: DType) -> float | int | bool:
    """The identity of max over dtype ``d`` (-inf, the smallest integer, False)."""
    if d.category == FLOAT:
        return -np.inf
    if d.category == BOOL:
        return False
    return int(np.iinfo(d.np).min)


def highest(d: DType) -> float | int | bool:
    if d.category == FLOAT:
        return np.inf
    if d.category == BOOL:
        return True
    return int(np.iinfo(d.np).max)


def _prefix(b, x, dim: int, reverse: bool, fill):
    n = b.shape(x)[dim]
    grid, j, i = pair_grid(b, x, dim, n)
    mask = b.ge(i, j) if reverse else b.le(i, j)
    return b.where(mask, grid, b.scalar(fill, like=x)), mask, i


def empty_like(b, x, d: DType):
    """An empty operand (no element to reduce over) as an empty result of dtype d."""
    return x if b.dtype(x) is d else b.convert(x, dtype=d)


def _scan_dtype(b, x) -> DType:
    return b.dtype(x) if b.dtype(x).category == FLOAT else int64


def _cumsum_decomposition(b, inputs, dim, reverse):
    if b.shape(inputs[0])[dim] == 0:
        return [empty_like(b, inputs[0], _scan_dtype(b, inputs[0]))]
    masked, _, _ = _prefix(b, inputs[0], dim, reverse, 0)
    return [b.sum(masked, dims=(dim + 1,), keepdim=False)]


def _cumprod_decomposition(b, inputs, dim):
    if b.shape(inputs[0])[dim] == 0:
        return [empty_like(b, inputs[0], _scan_dtype(b, inputs[0]))]
    masked, _, _ = _prefix(b, inputs[0], dim, False, 1)
    return [b.prod(masked, dims=(dim + 1,), keepdim=False)]


def _logcumsumexp_decomposition(b, inputs, dim, reverse):
    if b.shape(inputs[0])[dim] == 0:
        return [inputs[0]]
    masked, _, _ = _prefix(b, inputs[0], dim, reverse, -np.inf)
    return [b.logsumexp(masked, dims=(dim + 1,), keepdim=False)]


def _cumextreme_decomposition(kind: str):
    def decomposition(b, inputs, dim):
        (x,) = inputs
        d = b.dtype(x)
        if b.shape(x)[dim] == 0:
            return [x, empty_like(b, x, int64)]
        fill = lowest(d) if kind == "max" else highest(d)
        masked, mask, i = _prefix(b, x, dim, False, fill)
        values = b.op(kind, masked, dims=(dim + 1,), keepdim=False)
        hit = b.eq(x, values)
        if d.category == FLOAT:
            hit = b.logical_or(hit, b.logical_and(b.ne(x, x), b.ne(values, values)))
        n = b.shape(x)[dim]
        hit_grid, _, _ = pair_grid(b, hit, dim, n)
        cand = b.where(b.logical_and(mask, hit_grid), i, b.scalar(-1, like=i))
        return [values, b.max(cand, dims=(dim + 1,), keepdim=False)]
    return decomposition


_DIM_REVERSE = {"dim": "int", "reverse": "bool"}
define(OpDef("cumsum", "scan", _scan_rule("cumsum", "sum"), _cumsum, 1, dict(_DIM_REVERSE)))
define(OpDef("cumprod", "scan", _scan_rule("cumprod", "sum"), _cumprod, 1, {"dim": "int"}))
define(OpDef("logcumsumexp", "scan", _scan_rule("logcumsumexp", "float"), _logcumsumexp, 1,
             dict(_DIM_REVERSE)))
define(OpDef("cummax", "scan", _scan_rule("cummax", "extreme"),
             _cumextreme(np.maximum.accumulate), 1, {"dim": "int"}, num_results=2))
define(OpDef("cummin", "scan", _scan_rule("cummin", "extreme"),
             _cumextreme(np.minimum.accumulate), 1, {"dim": "int"}, num_results=2))

# op name -> its O(n^2) decomposition, for the MAX and linalg lowerings (not an
# ``OpDef.decomposition``: the ``decompose`` pass should never trade a scan for
# a quadratic program on a backend that has the primitive); sorting.py adds its ops
QUADRATIC: dict[str, Callable[..., list[Any]]] = {
    "cumsum": _cumsum_decomposition, "cumprod": _cumprod_decomposition,
    "logcumsumexp": _logcumsumexp_decomposition,
    "cummax": _cumextreme_decomposition("max"), "cummin": _cumextreme_decomposition("min")}


# ---- derivatives ----

def _cumsum_vjp(b, cts, inputs, outputs, dim, reverse):
    return [b.cumsum(cts[0], dim=dim, reverse=not reverse)]


def _cumprod_parts(b, x, out, dim):
    """What cumprod's derivative needs, exact with zeros: ``before`` marks the
    elements preceding the first zero of their prefix (there out/x is the
    product of the others), ``first`` the first zero itself, whose partial is
    the cumprod of x with that zero replaced by one (``out1``); elements after
    the first zero have none."""
    zero = b.eq(x, b.scalar(0, like=x))
    count = b.cumsum(b.convert(zero, dtype=b.dtype(x)), dim=dim, reverse=False)
    before = b.eq(count, b.scalar(0, like=x))
    first = b.logical_and(zero, b.eq(count, b.scalar(1, like=x)))
    one = b.scalar(1, like=x)
    safe = b.where(before, x, one)
    out1 = b.cumprod(b.where(first, one, x), dim=dim)
    return before, first, safe, out1


def _cumprod_vjp(b, cts, inputs, outputs, dim):
    (g,), (x,), (out,) = cts, inputs, outputs
    before, first, safe, out1 = _cumprod_parts(b, x, out, dim)
    zero = b.scalar(0, like=x)
    tail = b.cumsum(b.mul(g, out), dim=dim, reverse=True)
    term1 = b.where(before, b.div(tail, safe), zero)
    term2 = b.where(first, b.cumsum(b.mul(g, out1), dim=dim, reverse=True), zero)
    return [b.add(term1, term2)]


def _cumprod_jvp(b, tangents, inputs, outputs, dim):
    (t,), (x,), (out,) = tangents, inputs, outputs
    before, first, safe, out1 = _cumprod_parts(b, x, out, dim)
    zero = b.scalar(0, like=x)
    a = b.mul(out, b.cumsum(b.where(before, b.div(t, safe), zero), dim=dim, reverse=False))
    c = b.mul(out1, b.cumsum(b.where(first, t, zero), dim=dim, reverse=False))
    return [b.add(a, c)]


def _log_magnitudes(b, w):
    """(log w where w > 0, log -w where w < 0), the dtype's lowest finite
    number elsewhere (torch's choice: no inf - inf in the scans below, and
    no log(0) whose derivative would be inf)."""
    zero, one = b.scalar(0, like=w), b.scalar(1, like=w)
    low = b.scalar(float(np.finfo(b.dtype(w).np).min), like=w)
    parts = []
    for keep in (b.gt(w, zero), b.lt(w, zero)):
        parts.append(b.where(keep, b.log(b.where(keep, b.abs(w), one)), low))
    return parts


def _logcumsumexp_vjp(b, cts, inputs, outputs, dim, reverse):
    (g,), (x,), (out,) = cts, inputs, outputs
    # dx_i = sum_{j >= i} g_j exp(x_i - out_j): a scan the other way of g e^-out,
    # by sign, in log space (never exponentiates a large number)
    pos, neg = (b.exp(b.add(x, b.logcumsumexp(b.sub(m, out), dim=dim, reverse=not reverse)))
                for m in _log_magnitudes(b, g))
    return [b.sub(pos, neg)]


def _logcumsumexp_jvp(b, tangents, inputs, outputs, dim, reverse):
    (t,), (x,), (out,) = tangents, inputs, outputs
    # dout_j = sum_{i <= j} t_i exp(x_i - out_j)
    pos, neg = (b.exp(b.sub(b.logcumsumexp(b.add(x, m), dim=dim, reverse=reverse), out))
                for m in _log_magnitudes(b, t))
    return [b.sub(pos, neg)]


def _cumextreme_vjp(b, cts, inputs, outputs, dim):
    g, (x,), (_, indices) = cts[0], inputs, outputs
    if g is None:
        return [None]
    return [b.scatter_add_along(g, indices, dim=dim, size=b.shape(x)[dim])]


def _cumextreme_jvp(b, tangents, inputs, outputs, dim):
    (t,), (_, indices) = tangents, outputs
    return [b.select_along(t, indices, dim=dim), None]


ad.defvjp("cumsum", _cumsum_vjp)
ad.defjvp("cumsum", lambda b, ts, ins, outs, **a: [b.cumsum(ts[0], **a)])
ad.defvjp("cumprod", _cumprod_vjp)
ad.defjvp("cumprod", _cumprod_jvp)
ad.defvjp("logcumsumexp", _logcumsumexp_vjp)
ad.defjvp("logcumsumexp", _logcumsumexp_jvp)
for _name in ("cummax", "cummin"):
    ad.defvjp(_name, _cumextreme_vjp)
    ad.defjvp(_name, _cumextreme_jvp)

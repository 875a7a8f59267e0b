"""Scans along one dim: ``cumsum`` (``reverse``: from the end), ``cumprod``,
``logcumsumexp`` (``reverse``), ``cummax`` and ``cummin`` (values and int64
indices, as torch).

Each is a primitive because no composite of the other ops is both exact and
O(n): a scan is linear in the scanned dim (the reference kernels are numpy's
accumulate). Backends without a scan primitive lower each as a Hillis-Steele
scan of the other ops (``SCANS``: ceil(log2 n) shift-and-combine steps,
O(n log n) work), with the kernels' accumulator dtypes, NaN propagation and
cummax/cummin's index rule.

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
from .dtypes import BOOL, FLOAT, DType, float32, int32, int64, is_float_array
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


# ---- log-depth decompositions (backends without a scan primitive) ----

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


def empty_like(b, x, d: DType):
    """An empty operand (no element to reduce over) as an empty result of dtype d."""
    return x if b.dtype(x) is d else b.convert(x, dtype=d)


def _shift(b, v, dim: int, by: int, fill, reverse: bool):
    """``v`` moved ``by`` places along ``dim`` in scan order (toward the end;
    toward the start with ``reverse``), the vacated places holding ``fill``."""
    shape = tuple(b.shape(v))
    n, rank = shape[dim], len(shape)
    start, limit = [0] * rank, list(shape)
    if reverse:
        start[dim] = by
    else:
        limit[dim] = n - by
    kept = b.slice(v, start=tuple(start), limit=tuple(limit), stride=(1,) * rank)
    filler = ad.broadcast(b, b.scalar(fill, like=v),
                          tuple(by if k == dim else s for k, s in enumerate(shape)))
    return b.concat(kept, filler, dim=dim) if reverse else b.concat(filler, kept, dim=dim)


def log_depth_scan(b, values: list[Any], fills: Sequence[Any], dim: int, reverse: bool,
                   combine: Callable[[Any, list[Any], list[Any]], list[Any]]) -> list[Any]:
    """Hillis-Steele inclusive scan of the tuple ``values`` along ``dim``:
    ceil(log2 n) steps, each combining every element with the one ``2^t``
    places earlier in scan order (``fills``, the combine's identity, where
    there is none). ``combine(b, earlier, later)`` must be associative.
    O(n log n) work in O(log n) ops of the builder: what the MAX and linalg
    lowerings use for the scans they have no primitive for."""
    n = b.shape(values[0])[dim]
    by = 1
    while by < n:
        earlier = [_shift(b, v, dim, by, f, reverse) for v, f in zip(values, fills)]
        values = combine(b, earlier, values)
        by *= 2
    return values


def _scan_dtype(b, x) -> DType:
    return b.dtype(x) if b.dtype(x).category == FLOAT else int64


def _accumulate(b, x):
    """x in the reference kernel's accumulator: half in float32, integers and
    bool in int64."""
    d = b.dtype(x)
    acc = (float32 if d.itemsize < 4 else d) if d.category == FLOAT else int64
    return x if acc is d else b.convert(x, dtype=acc)


def _finish(b, r, d: DType):
    return r if b.dtype(r) is d else b.convert(r, dtype=d)


def _cumsum_decomposition(b, inputs, dim, reverse):
    (x,) = inputs
    (r,) = log_depth_scan(b, [_accumulate(b, x)], [0], dim, reverse,
                          lambda b, e, v: [b.add(e[0], v[0])])
    return [_finish(b, r, _scan_dtype(b, x))]


def _cumprod_decomposition(b, inputs, dim):
    (x,) = inputs
    (r,) = log_depth_scan(b, [_accumulate(b, x)], [1], dim, False,
                          lambda b, e, v: [b.mul(e[0], v[0])])
    return [_finish(b, r, _scan_dtype(b, x))]


def _logaddexp(b, e, v):
    """log(exp(a) + exp(c)) = max + log1p(exp(-|a - c|)); a == c (both
    infinite among them) gives max + log 2, so no inf - inf; NaN propagates."""
    a, c = e[0], v[0]
    top = b.maximum(a, c)
    gap = b.where(b.eq(a, c), b.scalar(0, like=a), b.neg(b.abs(b.sub(a, c))))
    return [b.add(top, b.log1p(b.exp(gap)))]


def _logcumsumexp_decomposition(b, inputs, dim, reverse):
    (x,) = inputs
    (r,) = log_depth_scan(b, [_accumulate(b, x)], [-np.inf], dim, reverse, _logaddexp)
    return [_finish(b, r, b.dtype(x))]


def _isnan(b, v):
    """NaN flags: the builder's own ``isnan`` where it has one (MAX's
    ``is_nan``: MO may fold ``x != x`` to false), else ``v != v``."""
    own = getattr(type(b), "isnan", None)
    return own(b, v) if own is not None else b.ne(v, v)


def _cumextreme_decomposition(kind: str):
    def decomposition(b, inputs, dim):
        (x,) = inputs
        d = b.dtype(x)
        n = b.shape(x)[dim]
        if n == 0:
            return [x, empty_like(b, x, int64)]
        v = b.convert(x, dtype=int32) if d.category == BOOL else x
        i = b.iota(shape=tuple(b.shape(x)), dim=dim, dtype=int64)
        fill = lowest(b.dtype(v)) if kind == "max" else highest(b.dtype(v))

        floating = b.dtype(v).category == FLOAT
        scanned, fills = [v, i], [fill, -1]
        if floating:  # a NaN flag scanned along (no x != x inside the steps)
            scanned.append(_isnan(b, v))
            fills.append(False)

        def combine(b, earlier, later):
            # the later element wins ties (torch: ``x >= out`` updates the
            # index), NaN beats every number and a later NaN beats an earlier
            wins = b.ge(later[0], earlier[0]) if kind == "max" else b.le(later[0], earlier[0])
            if floating:
                wins = b.logical_or(later[2], b.logical_and(wins, b.logical_not(earlier[2])))
            return [b.where(wins, lv, ev) for ev, lv in zip(earlier, later)]
        values, indices = log_depth_scan(b, scanned, fills, dim, False, combine)[:2]
        return [_finish(b, values, d), indices]
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

# op name -> its log-depth decomposition, for the MAX and linalg lowerings (not
# an ``OpDef.decomposition``: the ``decompose`` pass should never trade a scan
# for an O(n log n) program on a backend that has the primitive)
SCANS: dict[str, Callable[..., list[Any]]] = {
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
ad.reads_no_input_values("cumsum")
ad.defjvp("cumsum", lambda b, ts, ins, outs, **a: [b.cumsum(ts[0], **a)])
ad.defvjp("cumprod", _cumprod_vjp)
ad.defjvp("cumprod", _cumprod_jvp)
ad.defvjp("logcumsumexp", _logcumsumexp_vjp)
ad.defjvp("logcumsumexp", _logcumsumexp_jvp)
for _name in ("cummax", "cummin"):
    ad.defvjp(_name, _cumextreme_vjp)
    ad.defjvp(_name, _cumextreme_jvp)
# PyTorch saves their result (cumprod, logcumsumexp) or their indices (cummax, cummin)
ad.saves_results("cumprod", "logcumsumexp")
ad.saves_results("cummax", "cummin", outputs=(1,))

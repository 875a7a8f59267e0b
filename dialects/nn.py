"""The softmax family: ``softmax log_softmax`` along one dim and ``logsumexp``
over a set of dims. Kernels subtract the max first, so large inputs do not
overflow, and an all ``-inf`` slice gives ``-inf`` like PyTorch."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from . import ad, native_kernels
from .dtypes import FLOAT, DType
from .opdef import OpDef, Shape, ShapeError, check_dims, define
from .reduction import reduced_shape, row_sums


def _float_only(op: str, d: DType) -> None:
    if d.category != FLOAT:
        raise ShapeError(op, f"expects a floating-point operand, got {d.name}")


def _along_dim_rule(name: str):
    def infer(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
        _float_only(name, dtypes[0])
        check_dims(name, (attrs["dim"],), len(shapes[0]))
        return ((shapes[0], dtypes[0]),)
    return infer


def _logsumexp_rule(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
    _float_only("logsumexp", dtypes[0])
    check_dims("logsumexp", attrs["dims"], len(shapes[0]))
    return ((reduced_shape(shapes[0], attrs["dims"], attrs["keepdim"]), dtypes[0]),)


def _wide(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float32) if x.itemsize < 4 else x


def _short_rows(x: np.ndarray, axis: tuple[int, ...] | int) -> bool:
    """Along short rows of a tall matrix (class logits): numpy then runs one
    short loop per row; down the columns of the transposed copy it runs one
    vector loop per pass."""
    return axis in (1, -1, (1,), (-1,)) and x.ndim == 2 and x.shape[1] <= 32 < x.shape[0]


def _shift(m: np.ndarray, of_softmax: bool) -> np.ndarray:
    """What each slice is shifted by: its max, except that an all -inf slice
    shifts by 0, and for logsumexp so does a slice holding +inf (PyTorch gives
    +inf there, where softmax and log_softmax give NaN). One sum tells whether
    any max is not finite."""
    if math.isfinite(np.add.reduce(m, axis=None)):
        return m
    return np.where(m == -np.inf, 0, m) if of_softmax else np.where(np.isfinite(m), m, 0)


_FOLD_ROWS = (8, 256)  # row lengths whose max folds in halves (measured: numpy's
# reduction loop runs once per row, ~60 ns each; 0.4x its time at 16, 0.75x at
# 64 (attention rows), 5x at 512 where the per-row loop is long enough)


def _fold_max(x: np.ndarray) -> np.ndarray:
    """The max along the last axis by halving it: one ``np.maximum`` over the
    whole array per step instead of one reduction loop per row (the same
    values: max is exact, NaN propagates as numpy's reduction)."""
    n = x.shape[-1]
    while n > 1:
        if n <= 64 and n % 2 == 0 and x.flags.c_contiguous:
            # adjacent pairs of the flat array: one long stride-2 loop instead of
            # one short loop per row (rows of 64: 124 us against 170 on
            # attention's (16, 4, 64, 64); longer rows: halves are as fast)
            flat = x.reshape(-1)
            x, n = np.maximum(flat[0::2], flat[1::2]).reshape(x.shape[:-1] + (n // 2,)), n // 2
            continue
        h = n // 2
        r = np.maximum(x[..., :h], x[..., h:2 * h])
        if n % 2:
            np.maximum(r[..., :1], x[..., 2 * h:], out=r[..., :1])
        x, n = r, h
    return x


def _max_of(x: np.ndarray, axis: tuple[int, ...] | int) -> np.ndarray:
    if _short_rows(x, axis):
        return np.maximum.reduce(np.ascontiguousarray(x.T), axis=0).reshape(-1, 1)
    last = axis in (-1, x.ndim - 1, (-1,), (x.ndim - 1,))
    if last and x.ndim > 1 and _FOLD_ROWS[0] <= x.shape[-1] <= _FOLD_ROWS[1] and \
            x.size >= 64 * x.shape[-1]:
        return _fold_max(x)
    return np.maximum.reduce(x, axis=axis, keepdims=True)


def _row_sum(e: np.ndarray, axis: int) -> np.ndarray:
    """The sum along ``axis`` (dims kept); along the last axis one BLAS
    matrix-vector product with ones where ``row_sums`` takes the shape (12 us
    against numpy's 84 us of one reduction loop per row on attention's
    (16, 4, 64, 64))."""
    r = row_sums(e) if axis in (-1, e.ndim - 1) else None
    return np.add.reduce(e, axis=axis, keepdims=True) if r is None else r


def _native_rows(w: np.ndarray, dim: int, log: bool) -> np.ndarray | None:
    """softmax / log_softmax of float32 rows along the last axis in one C
    loop per row (``_kernels.c``: the max, shift, exp, sum and scale below,
    in cache); None where it does not apply."""
    native = native_kernels.KERNELS
    if native is None or w.dtype != np.float32 or dim not in (-1, w.ndim - 1) or \
            not w.flags.c_contiguous:
        return None
    out = np.empty(w.shape, np.float32)
    native.softmax_rows_f32(w, out, w.shape[-1], log)
    return out


def _softmax(x: np.ndarray, dim: int) -> np.ndarray:
    w = _wide(x)
    if not w.size:
        return w.astype(x.dtype)
    r = _native_rows(w, dim, False)
    if r is not None:
        return r.astype(x.dtype, copy=False)
    e = np.subtract(w, _shift(_max_of(w, dim), True))
    np.exp(e, out=e)  # in place: one temporary, not two
    e /= _row_sum(e, dim)
    return e.astype(x.dtype, copy=False)


def _log_softmax(x: np.ndarray, dim: int) -> np.ndarray:
    w = _wide(x)
    if not w.size:
        return w.astype(x.dtype)
    r = _native_rows(w, dim, True)
    if r is not None:
        return r.astype(x.dtype, copy=False)
    if _short_rows(w, dim):
        t = w.T.copy()  # classes down the columns: every pass is one vector loop
        t -= _shift(np.maximum.reduce(t, axis=0), True)
        lse = np.add.reduce(np.exp(t), axis=0)
        t -= np.log(lse, out=lse)
        return np.ascontiguousarray(t.T).astype(x.dtype, copy=False)
    shifted = w - _shift(_max_of(w, dim), True)
    shifted -= np.log(_row_sum(np.exp(shifted), dim))
    return shifted.astype(x.dtype, copy=False)


def _logsumexp(x: np.ndarray, dims: tuple[int, ...], keepdim: bool) -> np.ndarray:
    w = _wide(x)
    m = _shift(_max_of(w, dims), False) if w.size else np.zeros((), w.dtype)
    r = np.log(np.sum(np.exp(w - m), axis=dims, keepdims=True)) + m
    if not keepdim:
        r = np.squeeze(r, axis=dims)
    return np.asarray(r, dtype=x.dtype)


# ---- decompositions (what a backend without the primitive runs) ----
#
# The max-shift form: m = max(x), d = x - m, e = exp(d), s = sum(e) (both
# reductions keep their dims), then softmax = e / s, log_softmax = d - log(s),
# logsumexp = log(s) + m. Unlike the kernels above it shifts by the max as it
# is (an all -inf slice gives NaN) and computes in the operand's own dtype.

def _shifted(b, x, dims: tuple[int, ...]):
    m = b.max(x, dims=dims, keepdim=True)
    d = b.sub(x, m)
    e = b.exp(d)
    return m, d, e, b.sum(e, dims=dims, keepdim=True)


def _softmax_decomposition(b, inputs, dim):
    _, _, e, s = _shifted(b, inputs[0], (dim,))
    return [b.div(e, s)]


def _log_softmax_decomposition(b, inputs, dim):
    _, d, _, s = _shifted(b, inputs[0], (dim,))
    return [b.sub(d, b.log(s))]


def _logsumexp_decomposition(b, inputs, dims, keepdim):
    x = inputs[0]
    m, _, _, s = _shifted(b, x, tuple(dims))
    out = b.add(b.log(s), m)
    if not keepdim:
        out = b.reshape(out, shape=reduced_shape(b.shape(x), dims, False))
    return [out]


define(OpDef("softmax", "nn", _along_dim_rule("softmax"), _softmax, 1, {"dim": "int"},
             decomposition=_softmax_decomposition))
define(OpDef("log_softmax", "nn", _along_dim_rule("log_softmax"), _log_softmax, 1,
             {"dim": "int"}, decomposition=_log_softmax_decomposition))
define(OpDef("logsumexp", "nn", _logsumexp_rule, _logsumexp, 1,
             {"dims": "ints", "keepdim": "bool"}, decomposition=_logsumexp_decomposition))


# ---- derivatives (rules against the builder interface of dialects/ad.py) ----

def _softmax_vjp(b, cts, inputs, outputs, dim):
    (g,), (z,) = cts, outputs
    gz = b.mul(g, z)
    return [b.sub(gz, b.mul(z, b.sum(gz, dims=(dim,), keepdim=True)))]


def _softmax_jvp(b, tangents, inputs, outputs, dim):
    (t,), (z,) = tangents, outputs
    return [b.mul(z, b.sub(t, b.sum(b.mul(t, z), dims=(dim,), keepdim=True)))]


def _log_softmax_vjp(b, cts, inputs, outputs, dim):
    (g,), (z,) = cts, outputs
    return [b.sub(g, b.mul(b.exp(z), b.sum(g, dims=(dim,), keepdim=True)))]


def _log_softmax_jvp(b, tangents, inputs, outputs, dim):
    (t,), (z,) = tangents, outputs
    return [b.sub(t, b.sum(b.mul(b.exp(z), t), dims=(dim,), keepdim=True))]


def _lse_weights(b, x, z, dims, keepdim):
    return b.exp(b.sub(x, ad.keep_dims(b, z, b.shape(x), dims, keepdim)))


def _logsumexp_vjp(b, cts, inputs, outputs, dims, keepdim):
    (g,), (x,), (z,) = cts, inputs, outputs
    g = ad.broadcast(b, ad.keep_dims(b, g, b.shape(x), dims, keepdim), b.shape(x))
    return [b.mul(g, _lse_weights(b, x, z, dims, keepdim))]


def _logsumexp_jvp(b, tangents, inputs, outputs, dims, keepdim):
    (t,), (x,), (z,) = tangents, inputs, outputs
    return [b.sum(b.mul(t, _lse_weights(b, x, z, dims, keepdim)), dims=tuple(dims),
                  keepdim=keepdim)]


ad.defvjp("softmax", _softmax_vjp)
ad.defjvp("softmax", _softmax_jvp)
ad.reads_no_input_values("softmax", "log_softmax")  # (their VJPs read the result)
ad.saves_results("softmax", "log_softmax", "logsumexp")  # (PyTorch saves the result)
ad.defvjp("log_softmax", _log_softmax_vjp)
ad.defjvp("log_softmax", _log_softmax_jvp)
ad.defvjp("logsumexp", _logsumexp_vjp)
ad.defjvp("logsumexp", _logsumexp_jvp)

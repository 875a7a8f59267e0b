"""Elementwise ops: unary math, binary arithmetic with numpy broadcasting,
comparisons, logical ops, ``where`` and ``convert``.

In the IR, operands of a binary op share one element type: the frontend has
already applied PyTorch's type promotion and inserted ``convert`` ops, so
backends never guess. Broadcasting stays implicit (numpy rules).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from . import ad, native_kernels
from .dtypes import BOOL, FLOAT, DType, bool_
from .opdef import OpDef, Shape, ShapeError, broadcast_shapes, define, get_op, same_dtype

_SQRT_HALF = 1.0 / math.sqrt(2.0)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_erf_object = np.frompyfunc(math.erf, 1, 1)


def _compute_dtype(x: np.ndarray) -> np.dtype:
    """Half-precision math is computed in float32 and rounded once (as PyTorch's CPU does)."""
    return np.dtype(np.float32) if x.dtype.itemsize < 4 else x.dtype


# erf below 0.5: x * P(x^2), the Taylor series to 12 terms (next term < 3e-16)
_ERF_TAYLOR = tuple(2 / math.sqrt(math.pi) * (-1) ** n / (math.factorial(n) * (2 * n + 1))
                    for n in range(12))
_ERFCX_RANGE = (0.5, 4.0)  # past 4, erfc < 2e-8: erf is +-1 in every dtype below float64
_ERFCX_DEGREE = 14
_erfcx_fit: tuple[np.ndarray, float, float] | None = None


def _erfcx_polynomial() -> tuple[np.ndarray, float, float]:
    """erfc(a)·exp(a²) on ``_ERFCX_RANGE`` as a polynomial in s = alpha·t + beta,
    t = 1/(1 + a) (in t it is nearly polynomial): least squares at Chebyshev
    nodes against math.erfc, once per process. Relative error about 1e-12
    (tested), far below float32's 6e-8."""
    global _erfcx_fit
    if _erfcx_fit is None:
        lo, hi = _ERFCX_RANGE
        t_lo, t_hi = 1 / (1 + hi), 1 / (1 + lo)
        alpha, beta = 2 / (t_hi - t_lo), -(t_hi + t_lo) / (t_hi - t_lo)
        k = np.arange(1000)
        s = np.cos(np.pi * (k + 0.5) / k.size)  # Chebyshev nodes in s
        a = 1 / ((s - beta) / alpha) - 1
        y = np.array([math.erfc(v) * math.exp(v * v) for v in a])
        cheb = np.polynomial.chebyshev.chebfit(s, y, _ERFCX_DEGREE)
        _erfcx_fit = (np.polynomial.chebyshev.cheb2poly(cheb), alpha, beta)
    return _erfcx_fit


def _erf_float64(x: np.ndarray) -> np.ndarray:
    """erf of float64 values, vectorized: the Taylor series below 0.5, else
    1 - exp(-a²)·erfcx(a) with the fitted erfcx (no cancellation there: erf ≥ 0.52)."""
    coef, alpha, beta = _erfcx_polynomial()
    a = np.abs(x)
    x2 = x * x
    small = _ERF_TAYLOR[-1]
    for c in reversed(_ERF_TAYLOR[:-1]):
        small = small * x2 + c
    small *= x
    s = alpha / (1.0 + np.clip(a, *_ERFCX_RANGE)) + beta
    r = coef[-1]
    for c in coef[-2::-1]:
        r = r * s + c
    large = np.copysign(1.0 - np.exp(-x2) * r, x)
    return np.where(a < _ERFCX_RANGE[0], small, large)


_ERF_CHUNK = 1 << 16  # elements per pass of the vectorized erfs (fewest calls per element
# while the temporaries stay in L2: 23% less time than 1 << 14, measured)

# float32 erf, evaluated in float32: below _ERF32_SPLIT, x + x*P(x^2) (the exact
# leading term x keeps the polynomial's rounding errors a small part of the
# result); above, 1 - exp(-x^2)*erfcx(|x|) with erfcx a polynomial in
# s = alpha/(1 + |x|) + beta, clamped at 4 (erf rounds to +-1 in float32 past
# 3.92). Within 1 ulp of math.erf rounded to float32 (tested), ~96% exact.
_ERF32_SPLIT, _ERF32_TOP = 0.9, 4.0
_ERF32_DEGREES = (6, 7)  # P in x^2, erfcx in s
_erf32_fit: tuple[np.ndarray, np.ndarray, np.float32, np.float32] | None = None


def _erf32_coefficients() -> tuple[np.ndarray, np.ndarray, np.float32, np.float32]:
    """The two polynomials, fitted once per process (relative least squares at
    Chebyshev nodes against math.erf/math.erfc), as float32 coefficients."""
    global _erf32_fit
    if _erf32_fit is None:
        k = np.arange(2000)
        s = np.cos(np.pi * (k + 0.5) / k.size)  # Chebyshev nodes on [-1, 1]
        u = (s + 1) / 2 * _ERF32_SPLIT ** 2  # x^2 on [0, split^2]
        ratio = np.array([math.erf(v) / v for v in np.sqrt(u)])  # erf(x)/x
        small = np.polynomial.polynomial.polyfit(u, ratio, _ERF32_DEGREES[0], w=1 / ratio)
        small[0] -= 1.0  # erf(x) = x + x*(P(u) - 1)
        t_lo, t_hi = 1 / (1 + _ERF32_TOP), 1 / (1 + _ERF32_SPLIT)
        alpha, beta = 2 / (t_hi - t_lo), -(t_hi + t_lo) / (t_hi - t_lo)
        a = alpha / (s - beta) - 1
        erfcx = np.array([math.erfc(v) * math.exp(v * v) for v in a])
        cheb = np.polynomial.chebyshev.chebfit(s, erfcx, _ERF32_DEGREES[1], w=1 / erfcx)
        tail = np.polynomial.chebyshev.cheb2poly(cheb)
        _erf32_fit = (small.astype(np.float32), tail.astype(np.float32),
                      np.float32(alpha), np.float32(beta))
    return _erf32_fit


def _horner(coef: np.ndarray, v: np.ndarray) -> np.ndarray:
    r = v * coef[-1]
    r += coef[-2]
    for c in coef[-3::-1]:
        r *= v
        r += c
    return r


def _erf_float32_chunk(x: np.ndarray, out: np.ndarray) -> None:
    small, tail, alpha, beta = _erf32_coefficients()
    u = x * x
    p = _horner(small, u)
    p *= x
    np.add(p, x, out=out)
    big = np.flatnonzero(~(np.abs(x) < _ERF32_SPLIT))  # NaN too: the tail keeps it
    if big.size:
        xb, ub = x[big], u[big]
        s = np.minimum(np.abs(xb), np.float32(_ERF32_TOP))
        s += np.float32(1)
        np.divide(alpha, s, out=s)
        s += beta
        r = _horner(tail, s)
        np.negative(ub, out=ub)
        np.exp(ub, out=ub)
        r *= ub
        np.subtract(np.float32(1), r, out=r)
        out[big] = np.copysign(r, xb)


def _erf(x: np.ndarray) -> np.ndarray:
    if x.dtype == np.float64:  # math.erf: correctly rounded, one element at a time
        return np.asarray(_erf_object(x), dtype=np.float64)
    flat = np.ascontiguousarray(x).reshape(-1)
    out = np.empty(flat.shape, x.dtype)
    if x.dtype == np.float32:
        with np.errstate(over="ignore"):  # x*x overflows to inf past 1.8e19: erf is +-1
            for i in range(0, flat.size, _ERF_CHUNK):
                _erf_float32_chunk(flat[i:i + _ERF_CHUNK], out[i:i + _ERF_CHUNK])
        return out.reshape(np.shape(x))
    # half precision: the float64 erf (error ~1e-12) then one rounding: the
    # correctly rounded value but for results within 1e-12 of a rounding tie
    flat = flat.astype(np.float64)
    for i in range(0, flat.size, _ERF_CHUNK):
        out[i:i + _ERF_CHUNK] = _erf_float64(flat[i:i + _ERF_CHUNK])
    return out.reshape(np.shape(x))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    # exp(-|x|) never overflows; both branches are accurate in the tails.
    xc = x.astype(_compute_dtype(x), copy=False)
    e = np.exp(-np.abs(xc))
    r = np.where(xc >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
    return r.astype(x.dtype, copy=False)


def maximum_keeps_second() -> bool:
    """Whether ``np.maximum(a, b)`` returns ``b`` when ``a == b`` (+0.0 and
    -0.0), contiguous and strided, short and long: numpy's SIMD and scalar
    loops do. The max-pool kernel relies on it to keep torch's first maximum
    bit for bit, the float32 GELU to give -0.0 at -0.0."""
    for n in (3, 1000):
        neg = np.full(2 * n, -0.0, np.float32)
        pos = np.zeros(2 * n, np.float32)
        for a, b in ((neg[:n], pos[:n]), (neg[::2], pos[::2]), (pos[:n], neg[:n])):
            if not (np.signbit(np.maximum(a, b)) == np.signbit(b)).all():
                return False
    return True


MAXIMUM_KEEPS_SECOND = maximum_keeps_second()


# float32 GELU as x * Phi(x), Phi the normal CDF, from the tail mass
# h = Phi(-|x|) = erfc(|x|/sqrt 2)/2 = w exp(R(w) - x^2/2), w = 1/(C + |x|),
# with R a rational function of degrees (3, 4) in w (the Chebyshev-fitted erfc
# form of Numerical Recipes, t = 1/(1 + |x|/(2 sqrt 2)) = C w, as a rational
# function: its fit error 1.2e-7 against a degree-8 polynomial's 1.3e-7, in 14
# passes instead of 16). Then with r = x h: gelu = x - r for x >= 0 and r below,
# which is max(x - r, r) (x - r >= r exactly when h <= 1/2). No branch, no
# gather, every step an in-place float32 ufunc; unlike 1 + erf(x/sqrt 2) the
# negative tail keeps its relative accuracy (torch's cancels to 0 there).
_GELU_C = 2.0 * math.sqrt(2.0)
_GELU_DEGREES, _GELU_FIT_TOP = (3, 4), 10.0 * math.sqrt(2.0)  # fitted for |x| in [0, 14.1]
_gelu_fit: tuple[np.ndarray, np.ndarray] | None = None


def _gelu_tail_rational() -> tuple[np.ndarray, np.ndarray]:
    """R(w) = P(w)/Q(w), Q monic, approximating log(erfc(a/sqrt 2)/2) + a^2/2
    - log(w), a = 1/w - C, by iteratively reweighted linear least squares at
    Chebyshev nodes in w against math.erfc (a fixed 40 rounds, toward the
    minimax fit), once per process; float32 coefficients (P's and Q's in
    ascending order). Fit error 1.2e-7, tested through the kernel."""
    global _gelu_fit
    if _gelu_fit is None:
        m, n = _GELU_DEGREES
        w_lo, w_hi = 1 / (_GELU_C + _GELU_FIT_TOP), 1 / _GELU_C
        k = np.arange(4000)
        w = w_lo + (np.cos(np.pi * (k + 0.5) / k.size) + 1) / 2 * (w_hi - w_lo)
        a = 1 / w - _GELU_C
        y = np.array([math.log(math.erfc(v * _SQRT_HALF) / 2) for v in a]) + a * a / 2 - np.log(w)
        powers = np.vander(w, max(m, n) + 1, increasing=True)
        weight = np.ones_like(w)
        for step in range(40):  # y Q - P = 0 with Q's constant term 1, weighted by 1/Q
            lhs = np.hstack([powers[:, :m + 1], -y[:, None] * powers[:, 1:n + 1]])
            sol = np.linalg.lstsq(lhs * weight[:, None], y * weight, rcond=None)[0]
            p, q = sol[:m + 1], np.concatenate([[1.0], sol[m + 1:]])
            den = powers[:, :n + 1] @ q
            err = np.abs(powers[:, :m + 1] @ p / den - y)
            weight = 1 / np.abs(den)
            if step > 5:  # Lawson's reweighting: more weight where the error peaks
                weight *= np.sqrt(err / err.max() + 1e-3)
        _gelu_fit = (p / q[-1]).astype(np.float32), (q / q[-1]).astype(np.float32)
    return _gelu_fit


_gelu_lists: tuple[list[float], list[float]] | None = None


def _gelu_fit_lists(num: np.ndarray, den: np.ndarray) -> tuple[list[float], list[float]]:
    """The fit's float32 coefficients as Python floats (the C loop's arguments)."""
    global _gelu_lists
    if _gelu_lists is None:
        _gelu_lists = num.tolist(), den.tolist()
    return _gelu_lists


def _gelu_float32(x: np.ndarray) -> np.ndarray:
    """x * Phi(x) chunk by chunk (temporaries stay in L2), see above: 24 passes
    and one exp per element (was 28 and one exp)."""
    num, den = _gelu_tail_rational()
    flat = np.ascontiguousarray(x).reshape(-1)
    out = np.empty(flat.shape, np.float32)
    native = native_kernels.KERNELS
    if native is not None:  # the same steps per element in one C loop (_kernels.c)
        native.gelu_f32(flat, out, _GELU_C, *_gelu_fit_lists(num, den))
        return out.reshape(np.shape(x))
    n = min(flat.size, _ERF_CHUNK)
    u_buf, w_buf, d_buf = np.empty(n, np.float32), np.empty(n, np.float32), np.empty(n, np.float32)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        # x^2 overflows past 1.8e19 (h is 0 there); -inf gives NaN (-inf * 0), as torch
        for i in range(0, flat.size, _ERF_CHUNK):
            xc, o = flat[i:i + _ERF_CHUNK], out[i:i + _ERF_CHUNK]
            u, w, d = u_buf[:xc.size], w_buf[:xc.size], d_buf[:xc.size]
            np.multiply(xc, xc, out=u)
            u *= np.float32(0.5)  # exact: x^2/2 rounded once
            np.abs(xc, out=w)
            w += np.float32(_GELU_C)
            np.divide(np.float32(1), w, out=w)
            np.multiply(w, num[-1], out=o)  # P(w)
            o += num[-2]
            for c in num[-3::-1]:
                o *= w
                o += c
            np.add(w, den[-2], out=d)  # Q(w), monic
            for c in den[-3::-1]:
                d *= w
                d += c
            o /= d
            o -= u
            np.exp(o, out=o)
            o *= w  # h
            o *= xc  # r = x h
            np.subtract(xc, o, out=d)
            np.maximum(d, o, out=o)  # at -0.0: x - r = +0.0, r = -0.0, the second
            if not MAXIMUM_KEEPS_SECOND:
                np.copysign(o, xc, out=o)  # gelu has x's sign everywhere
    top = np.max(flat) if flat.size else 0
    if not top < np.inf:  # +inf (r = 0 * inf is NaN there: gelu is +inf), or a NaN
        out[flat == np.inf] = np.inf
    return out.reshape(np.shape(x))


def _gelu(x: np.ndarray, approximate: str = "none") -> np.ndarray:
    if approximate != "tanh" and x.dtype == np.float32 and x.ndim:
        return _gelu_float32(x)
    xc = x.astype(_compute_dtype(x), copy=False)
    if approximate == "tanh":
        inner = _SQRT_2_OVER_PI * (xc + 0.044715 * xc * xc * xc)
        r = 0.5 * xc * (1.0 + np.tanh(inner))
    else:
        r = 0.5 * xc * (1.0 + _erf(xc * _SQRT_HALF))
    return r.astype(x.dtype, copy=False)


def _rsqrt(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    r = np.sqrt(x, out=out)  # a numpy scalar (not an array) for 0-d x without out
    return np.divide(x.dtype.type(1), r, out=out)


_ZERO_BLOCK = 1 << 16
_ZEROS: dict[np.dtype, np.ndarray] = {}
_ZEROS_AT: dict[tuple[tuple[int, ...], np.dtype], np.ndarray] = {}  # small shapes


def _trailing_run(x: np.ndarray) -> tuple[int, int]:
    """The elements and the dims of ``x``'s longest run of trailing dims laid
    out C-contiguously (each stride the product of the sizes after it)."""
    run, dims, step = 1, 0, x.itemsize
    for n, stride in zip(reversed(x.shape), reversed(x.strides)):
        if n != 1 and stride != step:
            break
        run, dims, step = run * n, dims + 1, step * n
    return run, dims


def _relu(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    # numpy's maximum against a scalar takes a slow strided loop (2.5-4x slower on
    # this machine than against an array); compare block by block against a
    # shared read-only block of zeros instead. Same values: NaN stays NaN. Small
    # arrays (the scalar's type resolution costs more than the loop) compare
    # against a zero array of their own shape, made once.
    if x.size < 1024 and x.dtype.kind == "f":
        zeros = _ZEROS_AT.get((x.shape, x.dtype))
        if zeros is None:
            if len(_ZEROS_AT) > 256:
                _ZEROS_AT.clear()
            zeros = _ZEROS_AT[x.shape, x.dtype] = _relu_at_shape(x.shape, x.dtype)[1][0]
        return np.maximum(x, zeros, out=out)
    if x.size < 1024 or x.dtype.kind != "f":
        return np.maximum(x, x.dtype.type(0), out=out)
    zeros = _ZEROS.get(x.dtype)
    if zeros is None:
        zeros = _ZEROS[x.dtype] = np.zeros(_ZERO_BLOCK, x.dtype)
        zeros.flags.writeable = False
    if not x.flags.c_contiguous or (out is not None and not out.flags.c_contiguous):
        native = native_kernels.KERNELS
        if native is not None and x.dtype == np.float32 and \
                (out is None or not np.may_share_memory(x, out)):
            # one C loop nest over the merged dims (_kernels.c): contiguous rows,
            # or a transpose in cache-sized tiles (a conv's batch-innermost
            # result written in C order)
            if out is None:
                out = np.empty(x.shape, x.dtype)
            pair = _merged_4d(x, out)
            if pair is not None:
                native.relu4d_f32(*pair)
                return out
        # a view whose trailing dims are one contiguous run (a conv's (O, N, H, W)
        # result seen as (N, O, H, W): runs of H*W): the zeros of one run,
        # broadcast over the leading dims, keep numpy's vector loop (conv1 of
        # bench/cnn.py: 340 -> 180 us); otherwise the scalar
        run, dims = _trailing_run(x)
        if 256 <= run <= _ZERO_BLOCK and dims < x.ndim:
            return np.maximum(x, zeros[:run].reshape(x.shape[x.ndim - dims:]), out=out)
        return np.maximum(x, x.dtype.type(0), out=out)
    if out is None:
        out = np.empty_like(x)
    n = x.size
    if n <= _ZERO_BLOCK:  # one call against a view of the block
        return np.maximum(x, zeros[:n].reshape(x.shape), out=out)
    flat, flat_out = x.reshape(-1), out.reshape(-1)
    for i in range(0, n, _ZERO_BLOCK):
        j = min(i + _ZERO_BLOCK, n)
        np.maximum(flat[i:j], zeros[:j - i], out=flat_out[i:j])
    return out


def _merged_4d(x: np.ndarray, out: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``x`` and ``out`` (one shape) as 4-d views, adjacent dims merged where
    both arrays allow it and leading 1s added; None when more than 4 remain."""
    shape, xs, os_ = [], [], []
    for n, a, b in zip(x.shape, x.strides, out.strides):
        if n == 1:
            continue
        if shape and xs[-1] == a * n and os_[-1] == b * n:
            shape[-1] *= n
            xs[-1], os_[-1] = a, b
        else:
            shape.append(n)
            xs.append(a)
            os_.append(b)
    if len(shape) > 4:
        return None
    pad = 4 - len(shape)
    shape, xs, os_ = [1] * pad + shape, [0] * pad + xs, [0] * pad + os_
    return (np.lib.stride_tricks.as_strided(x, shape, xs),
            np.lib.stride_tricks.as_strided(out, shape, os_))


def _relu_at_shape(shape: tuple[int, ...], dtype: np.dtype
                   ) -> tuple[Callable[..., np.ndarray], tuple[np.ndarray, ...]] | None:
    """relu of a fixed small float shape as numpy's own ``maximum`` against a
    zero array of that shape: what ``_relu`` computes, without its Python frame
    (a generated program calls it directly; see ``fused.FusedProgram``)."""
    n = math.prod(shape)
    if np.dtype(dtype).kind != "f" or n > _ZERO_BLOCK:
        return None
    zeros = np.zeros(shape, dtype)
    zeros.flags.writeable = False
    return np.maximum, (zeros,)


_relu.at_shape = _relu_at_shape  # type: ignore[attr-defined]


def _reciprocal(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    return np.divide(x.dtype.type(1), x, out=out)


def _sign(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    # PyTorch's (x > 0) - (x < 0): 0 at NaN and +0.0 at -0.0, where numpy and
    # JAX keep NaN and the zero's sign
    if x.dtype.kind != "f":
        return np.sign(x, out=out)
    return np.subtract(x > 0, x < 0, out=out, dtype=x.dtype)


def _pow(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``np.power``, with PyTorch's integer semantics where numpy raises: a
    negative integer exponent gives 1 for base 1, +-1 for base -1, else 0."""
    b = np.asarray(b)
    if b.dtype.kind not in "iu" or not (b < 0).any():
        return np.power(a, b, out=out)
    neg = b < 0
    r = np.power(a, np.where(neg, 0, b).astype(b.dtype))
    special = np.where(a == 1, 1, np.where(a == -1, np.where(b % 2 == 0, 1, -1), 0))
    res = np.where(neg, special, r).astype(np.asarray(a).dtype)
    if out is None:
        return res
    np.copyto(out, res)
    return out


def _integer_division_by_zero(b: np.ndarray) -> None:
    if np.asarray(b).dtype.kind in "iu" and not np.all(b):
        raise ZeroDivisionError("integer division by zero (fmod / floor_divide / div "
                                "with rounding_mode on integer tensors)")


def _fmod(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """C's fmod (the result has the sign of ``a``); integers divided by zero
    raise, as PyTorch's CPU kernels do, instead of numpy's silent 0."""
    _integer_division_by_zero(b)
    return np.fmod(a, b, out=out)


def _floor_divide(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None
                  ) -> np.ndarray:
    """floor(a / b) computed as Python's divmod (numpy's floor_divide: from
    fmod, so exact, and the algorithm PyTorch's div_floor uses)."""
    _integer_division_by_zero(b)
    return np.floor_divide(a, b, out=out)


def _convert(x: np.ndarray, dtype: DType, out: np.ndarray | None = None) -> np.ndarray:
    if out is None:
        return x.astype(dtype.np)
    np.copyto(out, x, casting="unsafe")  # the same cast loop as astype, into a buffer
    return out


# ---- rules ----

def _unary_rule(kind: str) -> Callable:
    """kind: 'float' (floating only), 'numeric' (not bool), 'any', 'to_bool',
    'integer' (integers and bool: the bitwise ops)."""
    def infer(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
        (s,), (d,) = shapes, dtypes
        if kind == "float" and d.category != FLOAT:
            raise ShapeError(infer.op, f"expects a floating-point operand, got {d.name} "
                                       "(convert it first)")
        if kind == "integer" and d.category == FLOAT:
            raise ShapeError(infer.op, f"is only defined on integer and bool tensors, "
                                       f"got {d.name}")
        if kind == "numeric" and d.category == BOOL:
            raise ShapeError(infer.op, "is not defined on bool tensors")
        return ((s, bool_ if kind == "to_bool" else d),)
    return infer


def _binary_rule(kind: str) -> Callable:
    """kind: 'arith' (bool allowed), 'numeric' (no bool), 'float', 'compare', 'logical',
    'integer' (integers and bool: the bitwise ops)."""
    def infer(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
        op = infer.op
        shape = broadcast_shapes(op, shapes)
        if kind == "logical":
            return ((shape, bool_),)
        d = same_dtype(op, dtypes)
        if kind == "numeric" and d.category == BOOL:
            raise ShapeError(op, "is not defined on bool tensors")
        if kind == "float" and d.category != FLOAT:
            raise ShapeError(op, f"expects floating-point operands, got {d.name}")
        if kind == "integer" and d.category == FLOAT:
            raise ShapeError(op, f"is only defined on integer and bool tensors, got {d.name}")
        return ((shape, bool_ if kind == "compare" else d),)
    return infer


def _where_rule(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
    if dtypes[0] is not bool_:
        raise ShapeError("where", f"condition must be bool, got {dtypes[0].name}")
    d = same_dtype("where", dtypes[1:])
    return ((broadcast_shapes("where", shapes), d),)


def _convert_rule(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
    return ((shapes[0], attrs["dtype"]),)


_SELECT_BITS = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}


def _where(c: np.ndarray, x: np.ndarray, y: np.ndarray, out: np.ndarray | None = None
           ) -> np.ndarray:
    """np.where(c, x, y), bit for bit (NaN payloads, signed zeros), as a
    bitwise select on the elements' bits: y ^ ((x ^ y) & -c). numpy's own
    where branches per element (7 ns each on a random mask, measured; 1 ns on
    an all-false one); the select is four vectorized integer passes (~0.7 ns),
    one ``and`` with the mask where the other operand is a scalar zero (relu's
    VJP), and a condition that is all false (or all true), the common case of
    the guards in derivative rules, is one copy."""
    if type(x) is not np.ndarray or type(y) is not np.ndarray:
        x, y = np.asarray(x), np.asarray(y)
    dt = x.dtype
    bits = _SELECT_BITS.get(dt.itemsize)
    if bits is None or dt != y.dtype or (out is not None and out.dtype != dt) \
            or c.dtype != np.bool_ or dt.kind not in "biufc":
        r = np.where(c, x, y)
        if out is None:
            return r
        np.copyto(out, r)
        return out
    if out is None:
        out = np.empty(np.broadcast_shapes(c.shape, x.shape, y.shape), dt)
    zero_x = not x.ndim and not x.view(bits)
    zero_y = not zero_x and not y.ndim and not y.view(bits)
    if zero_x or zero_y:  # a select against zero (relu's VJP, masks): one and
        mask = c.astype(bits)  # 0/1, then all ones where the other operand is kept
        if zero_x:
            np.subtract(mask, 1, out=mask)
        else:
            np.negative(mask, out=mask)
        np.bitwise_and((y if zero_x else x).view(bits), mask, out=out.view(bits))
        return out
    hits = np.count_nonzero(c)
    if hits == 0 or hits == c.size:  # one side throughout: a copy
        np.copyto(out, y if hits == 0 else x)
        return out
    on_x, on_y = np.may_share_memory(out, x), np.may_share_memory(out, y)
    if on_x and on_y:  # the select below reads one operand after writing ``out``
        np.copyto(out, np.where(c, x, y))
        return out
    mask = np.negative(c, dtype=bits, casting="unsafe")  # all ones where c
    base, other = y, x
    if on_y:  # the operand read last must not be ``out``: x, with y where not c
        np.invert(mask, out=mask)
        base, other = x, y
    o, b = out.view(bits), base.view(bits)
    np.bitwise_xor(other.view(bits), b, out=o)
    np.bitwise_and(o, mask, out=o)
    np.bitwise_xor(o, b, out=o)
    return out


def _define(name: str, infer: Callable, kernel: Callable, n: int, ufunc: bool,
            attrs: dict | None = None, doc: str = "") -> OpDef:
    infer.op = name  # type: ignore[attr-defined]
    return define(OpDef(name, "elementwise", infer, kernel, n, attrs or {}, ufunc=ufunc,
                        elementwise=True, doc=doc))


# name: (rule kind, kernel, kernel accepts out=)
UNARY: dict[str, tuple[str, Callable, bool]] = {
    "neg": ("numeric", np.negative, True),
    "abs": ("numeric", np.abs, True),
    "sign": ("numeric", _sign, True),
    "square": ("numeric", np.square, True),
    "relu": ("numeric", _relu, True),
    "exp": ("float", np.exp, True),
    "log": ("float", np.log, True),
    "log1p": ("float", np.log1p, True),
    "sqrt": ("float", np.sqrt, True),
    "rsqrt": ("float", _rsqrt, True),
    "sin": ("float", np.sin, True),
    "cos": ("float", np.cos, True),
    "tanh": ("float", np.tanh, True),
    "reciprocal": ("float", _reciprocal, True),
    "sigmoid": ("float", _sigmoid, False),
    "erf": ("float", _erf, False),
    "logical_not": ("to_bool", np.logical_not, True),
    # rounding (integers never reach them: the frontend returns an integer as is)
    "floor": ("float", np.floor, True),
    "ceil": ("float", np.ceil, True),
    "round": ("float", np.rint, True),  # half to even, as PyTorch
    "trunc": ("float", np.trunc, True),
    "expm1": ("float", np.expm1, True),
    "atan": ("float", np.arctan, True),
    "asin": ("float", np.arcsin, True),
    "acos": ("float", np.arccos, True),
    "bitwise_not": ("integer", np.invert, True),  # on bool: logical not
}
BINARY: dict[str, tuple[str, Callable]] = {
    "add": ("arith", np.add),
    "mul": ("arith", np.multiply),
    "maximum": ("arith", np.maximum),
    "minimum": ("arith", np.minimum),
    "sub": ("numeric", np.subtract),
    "pow": ("numeric", _pow),
    "div": ("float", np.true_divide),
    "eq": ("compare", np.equal),
    "ne": ("compare", np.not_equal),
    "lt": ("compare", np.less),
    "le": ("compare", np.less_equal),
    "gt": ("compare", np.greater),
    "ge": ("compare", np.greater_equal),
    "logical_and": ("logical", np.logical_and),
    "logical_or": ("logical", np.logical_or),
    "atan2": ("float", np.arctan2),
    "fmod": ("numeric", _fmod),
    "floor_divide": ("numeric", _floor_divide),
    "bitwise_and": ("integer", np.bitwise_and),
    "bitwise_or": ("integer", np.bitwise_or),
    "bitwise_xor": ("integer", np.bitwise_xor),
}

for _name, (_kind, _kernel, _uf) in UNARY.items():
    _define(_name, _unary_rule(_kind), _kernel, 1, _uf)


def _gelu_rule(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
    if attrs["approximate"] not in ("none", "tanh"):
        raise ShapeError("gelu", f"approximate must be 'none' or 'tanh', "
                                 f"got {attrs['approximate']!r}")
    return _float_unary(shapes, dtypes, attrs)


_float_unary = _unary_rule("float")
_float_unary.op = "gelu"  # type: ignore[attr-defined]
_define("gelu", _gelu_rule, _gelu, 1, False, {"approximate": "str"},
        doc="GELU; approximate is 'none' (erf form) or 'tanh'")


def _gelu_grad_rule(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
    d = same_dtype("gelu_grad", dtypes)
    if d.category != FLOAT:
        raise ShapeError("gelu_grad", f"expects floating-point operands, got {d.name}")
    return ((broadcast_shapes("gelu_grad", shapes), d),)


_GELU_GRAD_CHUNK = 1 << 16


def _gelu_grad(x: np.ndarray, z: np.ndarray, ct: np.ndarray) -> np.ndarray:
    """ct * gelu'(x), gelu'(x) = Phi(x) + x pdf(x) with Phi = z / x (the
    forward's result) and the series 1/2 + x/sqrt(2 pi) + x pdf(x) near 0, as
    ``_gelu_deriv`` (the decomposition) computes it, chunk by chunk: ten
    in-cache passes instead of about fifteen over memory."""
    wide = np.dtype(np.float32) if x.itemsize < 4 else x.dtype
    shape = np.broadcast_shapes(x.shape, z.shape, ct.shape)
    native = native_kernels.KERNELS
    if native is not None and x.dtype == z.dtype == ct.dtype == np.float32 and \
            x.shape == z.shape == ct.shape:  # the same steps per element in C (_kernels.c)
        out = np.empty(shape, np.float32)
        near = _GELU_SERIES_BELOW["float32"]
        native.gelu_grad_f32(np.ascontiguousarray(x), np.ascontiguousarray(z),
                             np.ascontiguousarray(ct), out, float(np.float32(near * near)),
                             float(np.float32(_INV_SQRT_2PI)))
        return out
    xs, zs, gs = (np.ascontiguousarray(np.broadcast_to(v, shape), dtype=wide).reshape(-1)
                  for v in (x, z, ct))
    out = np.empty(xs.shape, wide)
    n = min(xs.size, _GELU_GRAD_CHUNK)
    u_buf, s_buf = np.empty(n, wide), np.empty(n, bool)
    near = _GELU_SERIES_BELOW.get(x.dtype.name, 1e-2)
    near2 = wide.type(near * near)
    c = wide.type(_INV_SQRT_2PI)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        for i in range(0, xs.size, _GELU_GRAD_CHUNK):
            part = slice(i, i + _GELU_GRAD_CHUNK)
            xc, zc, gc, o = xs[part], zs[part], gs[part], out[part]
            u, s = u_buf[:xc.size], s_buf[:xc.size]
            np.multiply(xc, xc, out=u)
            np.less(u, near2, out=s)  # |x| < near (x^2 below near^2: no abs pass)
            u *= wide.type(-0.5)
            np.exp(u, out=u)
            u *= xc
            u *= c  # x pdf(x)
            np.divide(zc, xc, out=o)  # Phi(x) = z / x
            few = np.flatnonzero(s)  # one scan of the mask, not three (any, two picks)
            if few.size:  # the series where z / x is 0/0 or has lost bits
                o[few] = wide.type(0.5) + c * xc[few]
            o += u
            o *= gc
    return out.reshape(shape).astype(x.dtype, copy=False)


define(OpDef("gelu_grad", "elementwise", _gelu_grad_rule, _gelu_grad, 3, elementwise=True,
             decomposition=lambda b, inputs: [b.mul(inputs[2], _gelu_deriv(b, *inputs[:2]))],
             doc="ct * gelu'(x) from x and z = gelu(x) (gelu's exact VJP and JVP)"))
for _name, (_kind, _kernel) in BINARY.items():
    _define(_name, _binary_rule(_kind), _kernel, 2, True)
_define("where", _where_rule, _where, 3, True, doc="select(cond, x, y)")
_define("convert", _convert_rule, _convert, 1, True, {"dtype": "dtype"},
        doc="element type conversion (astype)")


# ---- decompositions: what a backend without the primitive (MAX) runs ----

# Cephes' atan (double precision): |x| reduced to [0, 0.66] by 1/x or
# (x - 1)/(x + 1), then x + x z P(z)/Q(z), z = x²
_ATAN_P = (-8.750608600031904122785e-1, -1.615753718733365076637e1,
           -7.500855792314704667340e1, -1.228866684490136173410e2,
           -6.485021904942025371773e1)
_ATAN_Q = (1.0, 2.485846490142306297962e1, 1.650270098316988542046e2,
           4.328810604912902668951e2, 4.853903996359136964868e2,
           1.945506571482613964425e2)
_TAN_3PI_8 = 2.414213562373095048802
_MOREBITS = 6.123233995736765886130e-17  # pi/2 - float64(pi/2)


def _poly(b, z, coefs: Sequence[float]):
    acc = b.scalar(coefs[0], like=z)
    for c in coefs[1:]:
        acc = b.add(b.mul(acc, z), b.scalar(c, like=z))
    return acc


def _atan_decomposition(b, inputs):
    (x,) = inputs
    s = lambda v: b.scalar(v, like=x)  # noqa: E731
    a = b.abs(x)
    big = b.gt(a, s(_TAN_3PI_8))
    mid = b.logical_and(b.gt(a, s(0.66)), b.logical_not(big))
    # the reduced argument, each branch fed a value it can take (no 1/0)
    inv = b.neg(b.reciprocal(b.where(big, a, s(1))))
    shifted = b.div(b.sub(a, s(1)), b.add(a, s(1)))
    r = b.where(big, inv, b.where(mid, shifted, a))
    base = b.where(big, s(math.pi / 2), b.where(mid, s(math.pi / 4), s(0)))
    extra = b.where(big, s(_MOREBITS), b.where(mid, s(0.5 * _MOREBITS), s(0)))
    z = b.mul(r, r)
    series = b.add(b.mul(b.mul(r, z), b.div(_poly(b, z, _ATAN_P), _poly(b, z, _ATAN_Q))), r)
    y = b.add(base, b.add(series, extra))
    return [b.where(b.lt(x, s(0)), b.neg(y), b.where(b.eq(x, s(0)), x, y))]  # keeps -0.0


def _asin_decomposition(b, inputs):
    """asin(x) = atan(x / sqrt((1 - x)(1 + x))); NaN outside [-1, 1]."""
    (x,) = inputs
    one = b.scalar(1, like=x)
    (r,) = _atan_decomposition(b, [b.div(x, b.sqrt(b.mul(b.sub(one, x), b.add(one, x))))])
    return [r]


def _atan2_decomposition(b, inputs):
    """atan(y / x) moved to its quadrant: +-pi for x < 0 (the sign of y, -0.0
    included), +-pi/2 on the y axis, the IEEE values where both are infinite."""
    y, x = inputs
    s = lambda v: b.scalar(v, like=x)  # noqa: E731
    zero = s(0)
    (a,) = _atan_decomposition(b, [b.div(y, x)])
    y_negative = b.logical_or(b.lt(y, zero),
                              b.logical_and(b.eq(y, zero), b.lt(b.reciprocal(y), zero)))
    pi_signed = b.where(y_negative, s(-math.pi), s(math.pi))
    x_negative = b.logical_or(b.lt(x, zero),
                              b.logical_and(b.eq(x, zero), b.lt(b.reciprocal(x), zero)))
    r = b.where(b.lt(x, zero), b.add(a, pi_signed), a)
    # x == +-0: +-pi/2 by the sign of y; both zero: y for x = +0, +-pi for x = -0
    on_axis = b.where(b.eq(y, zero), b.where(x_negative, pi_signed, y),
                      b.mul(s(math.pi / 2), b.sign(y)))
    r = b.where(b.eq(x, zero), on_axis, r)
    inf = s(math.inf)
    both_inf = b.logical_and(b.eq(b.abs(x), inf), b.eq(b.abs(y), inf))
    corner = b.mul(b.where(x_negative, s(3 * math.pi / 4), s(math.pi / 4)),
                   b.where(y_negative, s(-1), s(1)))
    return [b.where(both_inf, corner, r)]


def _expm1_decomposition(b, inputs):
    """Kahan's ``(u - 1) x / log(u)``, u = exp(x): cancels the rounding of u;
    x itself where u rounds to 1, -1 and inf where u is 0 or inf."""
    (x,) = inputs
    s = lambda v: b.scalar(v, like=x)  # noqa: E731
    u = b.exp(x)
    um1 = b.sub(u, s(1))
    safe = b.logical_and(b.ne(um1, s(0)), b.logical_and(b.ne(um1, s(-1)),
                                                        b.ne(u, s(math.inf))))
    log_u = b.log(b.where(safe, u, s(2)))
    r = b.div(b.mul(um1, x), log_u)
    return [b.where(safe, r, b.where(b.eq(um1, s(0)), x, um1))]


for _name, _decomposition in (("atan", _atan_decomposition), ("asin", _asin_decomposition),
                              ("atan2", _atan2_decomposition),
                              ("expm1", _expm1_decomposition)):
    get_op(_name).decomposition = _decomposition


# ---- derivatives (rules against the builder interface of dialects/ad.py) ----

def _vjp_binary(rule):
    """Binary ops: rule gives the two local cotangents at the broadcast shape;
    they are reduced back to each operand's shape."""
    def vjp(b, cts, inputs, outputs, **attrs):
        (g,), (x, y) = cts, inputs
        gx, gy = rule(b, g, x, y, outputs[0])
        return [None if gx is None else ad.sum_to(b, gx, b.shape(x)),
                None if gy is None else ad.sum_to(b, gy, b.shape(y))]
    return vjp


def _jvp_binary(rule):
    """rule(b, tx, ty, x, y, z) with tx/ty possibly None (zero)."""
    def jvp(b, tangents, inputs, outputs, **attrs):
        tx, ty = tangents
        (x, y), (z,) = inputs, outputs
        return [ad.broadcast(b, rule(b, tx, ty, x, y, z), b.shape(z))]
    return jvp


def _sum_tangents(b, *parts):
    parts = [p for p in parts if p is not None]
    out = parts[0]
    for p in parts[1:]:
        out = b.add(out, p)
    return out


def _pow_dx(b, x, y):
    # y * x^(y-1), zero where y == 0 (PyTorch masks the 0 * inf of x == 0)
    d = b.mul(y, b.pow(x, b.sub(y, b.scalar(1, like=y))))
    return b.where(b.eq(y, b.scalar(0, like=y)), b.scalar(0, like=d), d)


def _pow_dy(b, x, y, z):
    # z * log(x), zero where x == 0 and y >= 0 (PyTorch's mask: for y < 0, 0^y * log 0
    # stays -inf)
    d = b.mul(z, b.log(x))
    at_zero = b.logical_and(b.eq(x, b.scalar(0, like=x)), b.ge(y, b.scalar(0, like=y)))
    return b.where(at_zero, b.scalar(0, like=d), d)


_BINARY_VJP = {
    "add": lambda b, g, x, y, z: (g, g),
    "sub": lambda b, g, x, y, z: (g, b.neg(g)),
    "mul": lambda b, g, x, y, z: (b.mul(g, y), b.mul(g, x)),
    "div": lambda b, g, x, y, z: (b.div(g, y), b.neg(b.div(b.mul(g, z), y))),
    "pow": lambda b, g, x, y, z: (b.mul(g, _pow_dx(b, x, y)), b.mul(g, _pow_dy(b, x, y, z))),
    "maximum": lambda b, g, x, y, z: _minmax_vjp(b, g, x, y, "gt"),
    "minimum": lambda b, g, x, y, z: _minmax_vjp(b, g, x, y, "lt"),
    "atan2": lambda b, g, x, y, z: _atan2_vjp(b, g, x, y),
    # PyTorch: d/da = 1, d/db = -trunc(a / b)
    "fmod": lambda b, g, x, y, z: (g, b.neg(b.mul(g, b.trunc(b.div(x, y))))),
}


def _atan2_vjp(b, g, y, x):
    """atan2(y, x): d/dy = x / (x² + y²), d/dx = -y / (x² + y²); 0 where
    x² + y² is 0 (the origin, or underflow), as PyTorch masks the inf there."""
    den = b.add(b.mul(x, x), b.mul(y, y))
    zero = b.scalar(0, like=x)
    r = b.where(b.eq(den, zero), zero, b.div(g, den))
    return b.mul(r, x), b.neg(b.mul(r, y))


def _atan2_jvp(b, tx, ty, y, x):
    """PyTorch's forward rule, unmasked: ``(t_y x - t_x y) / (x² + y²)``, so
    NaN at the origin (0/0) and inf where x² + y² underflows, as torch's (the
    reverse rule masks them to 0, torch's too)."""
    num = _sum_tangents(b, _mul_t(b, tx, x), None if ty is None else b.neg(b.mul(ty, y)))
    return b.div(num, b.add(b.mul(x, x), b.mul(y, y)))


def _minmax_vjp(b, g, x, y, wins: str):
    """PyTorch's rule: a tie splits the cotangent, otherwise an operand gets
    all of it unless it loses, so where a NaN leaves the pair unordered both
    get it (the NaN's gradient is not dropped)."""
    loses = {"gt": "lt", "lt": "gt"}[wins]
    zero = b.scalar(0, like=x)
    share = b.where(b.eq(x, y), b.scalar(0.5, like=x), b.scalar(1, like=x))
    return (b.mul(g, b.where(b.op(loses, x, y), zero, share)),
            b.mul(g, b.where(b.op(wins, x, y), zero, share)))


def _minmax_jvp(b, tx, ty, x, y, z, wins: str):
    """PyTorch's forward rule: x's tangent where x wins, half of each on a
    tie, else y's (so at a NaN y's: unlike the reverse rule, one operand)."""
    one, half, zero = b.scalar(1, like=x), b.scalar(0.5, like=x), b.scalar(0, like=x)
    mask_x = b.where(b.op(wins, x, y), one, b.where(b.eq(x, y), half, zero))
    tx = ad.instantiate(b, tx, b.shape(z), z)
    ty = ad.instantiate(b, ty, b.shape(z), z)
    return b.add(b.mul(tx, mask_x), b.mul(ty, b.sub(one, mask_x)))


def _mul_t(b, t, v):
    return None if t is None else b.mul(t, v)


_BINARY_JVP = {
    "add": lambda b, tx, ty, x, y, z: _sum_tangents(b, tx, ty),
    "sub": lambda b, tx, ty, x, y, z: _sum_tangents(b, tx, None if ty is None else b.neg(ty)),
    "mul": lambda b, tx, ty, x, y, z: _sum_tangents(b, _mul_t(b, tx, y), _mul_t(b, ty, x)),
    "div": lambda b, tx, ty, x, y, z: b.div(
        _sum_tangents(b, tx, None if ty is None else b.neg(b.mul(ty, z))), y),
    "pow": lambda b, tx, ty, x, y, z: _sum_tangents(
        b, _mul_t(b, tx, _pow_dx(b, x, y)), _mul_t(b, ty, _pow_dy(b, x, y, z))),
    "maximum": lambda b, tx, ty, x, y, z: _minmax_jvp(b, tx, ty, x, y, z, "gt"),
    "minimum": lambda b, tx, ty, x, y, z: _minmax_jvp(b, tx, ty, x, y, z, "lt"),
    "atan2": lambda b, tx, ty, x, y, z: _atan2_jvp(b, tx, ty, x, y),
    "fmod": lambda b, tx, ty, x, y, z: _sum_tangents(
        b, tx, None if ty is None else b.neg(b.mul(ty, b.trunc(b.div(x, y))))),
}


for _name in _BINARY_VJP:
    ad.defvjp(_name, _vjp_binary(_BINARY_VJP[_name]))
    ad.defjvp(_name, _jvp_binary(_BINARY_JVP[_name]))

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


_GELU_SERIES_BELOW = {"float64": 1e-6, "float32": 1e-3}  # half precision: 1e-2


def _gelu_deriv(b, x, z, approximate: str = "none"):
    if approximate == "tanh":
        x2 = b.mul(x, x)
        inner = b.mul(b.scalar(_SQRT_2_OVER_PI, like=x),
                      b.add(x, b.mul(b.scalar(0.044715, like=x), b.mul(x2, x))))
        t = b.tanh(inner)
        dinner = b.mul(b.scalar(_SQRT_2_OVER_PI, like=x),
                       b.add(b.scalar(1, like=x), b.mul(b.scalar(3 * 0.044715, like=x), x2)))
        sech2 = b.sub(b.scalar(1, like=x), b.mul(t, t))
        return b.add(b.mul(b.scalar(0.5, like=x), b.add(b.scalar(1, like=x), t)),
                     b.mul(b.mul(b.scalar(0.5, like=x), x), b.mul(sech2, dinner)))
    # cdf = z / x: the forward's erf, not a second one (erf is most of the
    # cost). Near 0, where z / x is 0/0 or z has lost bits (subnormal), the
    # series 1/2 + x/sqrt(2 pi) instead: its next term, x^3/(6 sqrt(2 pi)), is
    # below the dtype's rounding there.
    near = _GELU_SERIES_BELOW.get(b.dtype(x).name, 1e-2)
    series = b.add(b.scalar(0.5, like=x), b.mul(b.scalar(_INV_SQRT_2PI, like=x), x))
    small = b.lt(b.abs(x), b.scalar(near, like=x))
    # the division never sees 0 (1 where the series is taken): a 0/0 there
    # would reach the second derivative through where's VJP as NaN
    safe = b.where(small, b.scalar(1, like=x), x)
    cdf = b.where(small, series, b.div(z, safe))
    pdf = b.mul(b.scalar(_INV_SQRT_2PI, like=x),
                b.exp(b.mul(b.scalar(-0.5, like=x), b.mul(x, x))))
    return b.add(cdf, b.mul(x, pdf))


_DERIV = {
    "neg": lambda b, x, z: b.scalar(-1, like=x),
    # PyTorch (the spec): 0 at NaN, where sign itself keeps the NaN
    "abs": lambda b, x, z: b.sign(x),  # 0 at NaN and at zero, as PyTorch
    "sign": lambda b, x, z: b.scalar(0, like=x),
    "square": lambda b, x, z: b.mul(b.scalar(2, like=x), x),
    "exp": lambda b, x, z: z,
    "log": lambda b, x, z: b.reciprocal(x),
    "log1p": lambda b, x, z: b.reciprocal(b.add(b.scalar(1, like=x), x)),
    "sqrt": lambda b, x, z: b.div(b.scalar(0.5, like=z), z),
    "rsqrt": lambda b, x, z: b.mul(b.scalar(-0.5, like=z), b.mul(z, b.mul(z, z))),
    "sin": lambda b, x, z: b.cos(x),
    "cos": lambda b, x, z: b.neg(b.sin(x)),
    "tanh": lambda b, x, z: b.sub(b.scalar(1, like=z), b.mul(z, z)),
    "sigmoid": lambda b, x, z: b.mul(z, b.sub(b.scalar(1, like=z), z)),
    "reciprocal": lambda b, x, z: b.neg(b.mul(z, z)),
    "erf": lambda b, x, z: b.mul(b.scalar(_TWO_OVER_SQRT_PI, like=x),
                                 b.exp(b.neg(b.mul(x, x)))),
    "expm1": lambda b, x, z: b.add(z, b.scalar(1, like=z)),  # PyTorch: result + 1
    "atan": lambda b, x, z: b.reciprocal(b.add(b.scalar(1, like=x), b.mul(x, x))),
    "asin": lambda b, x, z: b.rsqrt(b.sub(b.scalar(1, like=x), b.mul(x, x))),
    "acos": lambda b, x, z: b.neg(b.rsqrt(b.sub(b.scalar(1, like=x), b.mul(x, x)))),
}
for _name, _d in _DERIV.items():
    ad.defderiv(_name, _d)
# (their derivatives read the result or nothing: as PyTorch, which saves the
# result or nothing, updating the input in place afterwards is no error)
ad.reads_no_input_values("add", "sub", "neg", "exp", "expm1", "sqrt", "rsqrt", "tanh",
                         "sigmoid", "reciprocal", "relu", "convert")
# (PyTorch saves their result; pow's too unless the exponent is a number: autodiff)
ad.saves_results("exp", "expm1", "sqrt", "rsqrt", "tanh", "sigmoid", "reciprocal", "relu",
                 "pow")


# gelu: the exact form's VJP and JVP are one gelu_grad op (its kernel reads the
# forward's result in one chunked pass); the tanh form multiplies by its derivative

def _gelu_vjp(b, cts, inputs, outputs, approximate):
    (g,), (x,), (z,) = cts, inputs, outputs
    if approximate == "none" and b.dtype(x).category == FLOAT:
        return [b.gelu_grad(x, z, g)]
    return [b.mul(g, _gelu_deriv(b, x, z, approximate))]


def _gelu_jvp(b, tangents, inputs, outputs, approximate):
    (t,), (x,), (z,) = tangents, inputs, outputs
    if approximate == "none" and b.dtype(x).category == FLOAT:
        return [b.gelu_grad(x, z, t)]
    return [b.mul(t, _gelu_deriv(b, x, z, approximate))]


def _gelu_grad_partials(b, x, z):
    """gelu'(x) as gelu_grad computes it (D), and its partial derivatives in x
    and in z (z = gelu(x) is an operand of its own)."""
    near = _GELU_SERIES_BELOW.get(b.dtype(x).name, 1e-2)
    c = b.scalar(_INV_SQRT_2PI, like=x)
    small = b.lt(b.abs(x), b.scalar(near, like=x))
    safe = b.where(small, b.scalar(1, like=x), x)
    d = _gelu_deriv(b, x, z)
    e = b.exp(b.mul(b.scalar(-0.5, like=x), b.mul(x, x)))
    # d/dx [x pdf(x)] = pdf(x) (1 - x^2); d/dx (z / x) = -z / x^2; the series' c
    dxpdf = b.mul(b.mul(c, e), b.sub(b.scalar(1, like=x), b.mul(x, x)))
    ddx = b.add(b.where(small, c, b.neg(b.div(z, b.mul(safe, safe)))), dxpdf)
    ddz = b.where(small, b.scalar(0, like=x), b.reciprocal(safe))
    return d, ddx, ddz


def _gelu_grad_vjp(b, cts, inputs, outputs):
    (g,), (x, z, ct) = cts, inputs
    d, ddx, ddz = _gelu_grad_partials(b, x, z)
    gct = b.mul(g, ct)
    return [b.mul(gct, ddx), b.mul(gct, ddz), b.mul(g, d)]


def _gelu_grad_jvp(b, tangents, inputs, outputs):
    (tx, tz, tct), (x, z, ct) = tangents, inputs
    d, ddx, ddz = _gelu_grad_partials(b, x, z)
    parts = [b.mul(ct, b.mul(t, p)) for t, p in ((tx, ddx), (tz, ddz)) if t is not None]
    if tct is not None:
        parts.append(b.mul(tct, d))
    if not parts:
        return [None]
    out = parts[0]
    for p in parts[1:]:
        out = b.add(out, p)
    return [out]


ad.defvjp("gelu", _gelu_vjp)
ad.defjvp("gelu", _gelu_jvp)
ad.defvjp("gelu_grad", _gelu_grad_vjp)
ad.defjvp("gelu_grad", _gelu_grad_jvp)


def _relu_through(b, ct, z):
    """PyTorch's threshold_backward: 0 where the output is <= 0, else the
    cotangent (or tangent) itself: a NaN output passes it through, and a NaN
    or inf cotangent where the output is 0 gives 0, not 0 * inf. Read off the
    output, so the input has one use and relu fuses with what makes it."""
    return b.where(b.le(z, b.scalar(0, like=z)), b.scalar(0, like=ct), ct)


ad.defvjp("relu", lambda b, cts, inputs, outputs: [_relu_through(b, cts[0], outputs[0])])
ad.defjvp("relu", lambda b, tangents, inputs, outputs: [_relu_through(b, tangents[0],
                                                                      outputs[0])])


def _where_vjp(b, cts, inputs, outputs, **attrs):
    (g,), (c, x, y) = cts, inputs
    zero = b.scalar(0, like=g)
    return [None, ad.sum_to(b, b.where(c, g, zero), b.shape(x)),
            ad.sum_to(b, b.where(c, zero, g), b.shape(y))]


def _where_jvp(b, tangents, inputs, outputs, **attrs):
    _, tx, ty = tangents
    c, x, y = inputs
    tx = ad.instantiate(b, tx, b.shape(x), x)
    ty = ad.instantiate(b, ty, b.shape(y), y)
    return [b.where(c, tx, ty)]


def _convert_vjp(b, cts, inputs, outputs, dtype):
    (g,), (x,) = cts, inputs
    xd = b.dtype(x)
    return [b.convert(g, dtype=xd) if xd.is_floating_point else None]


def _convert_jvp(b, tangents, inputs, outputs, dtype):
    return [b.convert(tangents[0], dtype=dtype) if dtype.is_floating_point else None]


ad.defvjp("where", _where_vjp)
ad.defjvp("where", _where_jvp)
ad.defvjp("convert", _convert_vjp)
ad.defjvp("convert", _convert_jvp)
ad.nondiff("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_not")
# piecewise constant (PyTorch's gradient is zero) or integer-only
ad.nondiff("floor", "ceil", "round", "trunc", "floor_divide", "bitwise_not", "bitwise_and",
           "bitwise_or", "bitwise_xor")

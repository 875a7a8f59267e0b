"""``torch.special`` (``pf.special``): the special functions under torch's
names there. Most are the top-level functions themselves (``expit`` is
``sigmoid``, ``gammaln`` is ``lgamma``, ``psi`` is ``digamma``); the rest are
composites of them, written for the tails torch's kernels are accurate in.
Session 11 added ``i1``/``i1e`` (Cephes, differentiable), ``gammainc``/
``gammaincc`` (float64 on the host, differentiable in x as torch's), the
orthogonal polynomials (recurrences up to the largest degree present),
``spherical_bessel_j0`` and ``modified_bessel_i0/i1``; those torch gives no
gradient, pf gives none either; ``bessel_j0/j1/y0/y1``,
``modified_bessel_k0/k1`` (and scaled) and ``airy_ai`` are torch's kernels
ported line by line (``special_cephes.py``), run on the host without a
gradient, as torch's, and so is ``zeta`` (Hurwitz).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import math_rules as _rules
from . import special_cephes as _cephes
from .composites import sinc, xlog1py, xlogy
from .composites2 import (
    _I0_A,
    _I0_B,
    _chbevl,
    _float,
    _i1e_abs,
    _tiny_half,
    digamma,
    erfc,
    erfinv,
    i0,
    i1,
    lgamma,
    mvlgamma,
    polygamma,
)
from .core import Tensor
from .dialects.dtypes import float64
from .linalg import _not_differentiable
from .ops import (
    TensorLike,
    abs,  # noqa: A004
    as_tensor_arg,
    erf,
    exp,
    exp2,
    expm1,
    isinf,
    isnan,
    log,
    log1p,
    log_softmax,
    logit,
    logsumexp,
    lt,
    round,  # noqa: A004
    sigmoid,
    sin,
    softmax,
    sqrt,
    where,
)

__all__ = [
    "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammaln", "i0",
    "i0e", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr",
    "ndtri", "polygamma", "psi", "round", "sinc", "softmax", "xlog1py", "xlogy",
]

expit = sigmoid
gammaln = lgamma
psi = digamma
multigammaln = mvlgamma

_SQRT1_2 = math.sqrt(0.5)


_INV_SQRT_2PI = 1.0 / math.sqrt(2 * math.pi)


def entr(input: TensorLike) -> Tensor:  # noqa: A002
    """``-x log x`` for x > 0, 0 at 0, -inf for x < 0 (NaN stays NaN).
    Derivative torch's, ``-(1 + log x)`` (inf at 0, NaN below)."""
    x = _float(input)
    return _rules.elementwise("SpecialEntrBackward0", _entr_value, [x],
                              lambda v: [-(1.0 + log(v))])


def _entr_value(input: Tensor) -> Tensor:  # noqa: A002
    x = _float(input)
    pos = where(lt(0.0, x), x, 1.0)
    return where(lt(0.0, x), -pos * log(pos), where(x == 0.0, 0.0,
                                                   where(isnan(x), x, float("-inf"))))


def ndtr(input: TensorLike) -> Tensor:  # noqa: A002
    """The standard normal CDF, ``erfc(-x / sqrt 2) / 2`` (accurate in the left tail)."""
    x = _float(input)
    return 0.5 * erfc(-x * _SQRT1_2)


def ndtri(input: TensorLike) -> Tensor:  # noqa: A002
    """The inverse of ``ndtr``: ``sqrt 2 * erfinv(2p - 1)`` (-inf at 0, inf at
    1), in float64. In the tails, where ``2p - 1`` loses ``p`` (or ``1 - p``),
    the asymptotic guess ``-sqrt(-2 log q - log(-2 log q) - log 2 pi)`` for
    ``q = min(p, 1 - p)`` (exact: Sterbenz) is polished by Newton steps on
    ``log_ndtr(x) = log q``, and mirrored for the right tail.
    Derivative torch's, ``sqrt(2 pi) exp(ndtri(p)^2 / 2)``."""
    x = _float(input)
    return _rules.elementwise("SpecialNdtriBackward0", _ndtri_value, [x],
                              lambda v: [math.sqrt(2 * math.pi) * exp(ndtri(v) ** 2 / 2.0)])


def _ndtri_value(input: Tensor) -> Tensor:  # noqa: A002
    p = _float(input)
    if p.dtype is not float64:
        return ndtri(p.to(float64)).to(p.dtype)
    central = math.sqrt(2.0) * erfinv(2.0 * p - 1.0)
    right = lt(0.5, p)
    q = where(right, 1.0 - p, p)
    tail = lt(0.0, q) & lt(q, 1e-3)
    q = where(tail, q, 1e-3)
    t = -2.0 * log(q)
    x = -sqrt(t - log(t) - math.log(2 * math.pi))
    log_q = log(q)
    for _ in range(4):  # quadratic convergence from a guess within 1%
        log_cdf = log_ndtr(x)
        log_pdf = -0.5 * x * x - 0.5 * math.log(2 * math.pi)
        x = x - (log_cdf - log_q) * exp(log_cdf - log_pdf)
    outside = lt(p, 0.0) | lt(1.0, p)  # (a tiny negative p: 2p - 1 rounds to -1)
    return where(outside, float("nan"), where(tail, where(right, -x, x), central))


def log_ndtr(input: TensorLike) -> Tensor:  # noqa: A002
    """``log(ndtr(x))``: ``log1p(-ndtr(-x))`` for x > 0 (tiny, exact), the log
    of ``ndtr`` down to where it would underflow, and below that the
    asymptotic series ``-x^2/2 - log(-x) - log(2 pi)/2 + log(1 - 1/x^2 +
    3/x^4 - ...)`` (its terms fall below the dtype's epsilon there).
    Derivative torch's, ``exp(-(log_ndtr(x) + x^2/2)) / sqrt(2 pi)``."""
    x = _float(input)
    return _rules.elementwise("SpecialLogNdtrBackward0", _log_ndtr_value, [x],
                              lambda v: [exp(-(log_ndtr(v) + v * v / 2.0)) * _INV_SQRT_2PI])


def _log_ndtr_value(input: Tensor) -> Tensor:  # noqa: A002
    x = _float(input)
    low = -37.0 if x.dtype is float64 else -10.0  # ndtr(low) stays a normal number
    right = where(lt(0.0, x), x, 0.0)
    middle = where(lt(low, x), x, 0.0)
    far = where(lt(low, x), low, x)
    inv2 = 1.0 / (far * far)
    series, term = 1.0 + 0.0 * far, 1.0 + 0.0 * far
    for k in range(1, 12):
        term = term * (-(2 * k - 1)) * inv2
        series = series + term
    tail = -0.5 * far * far - log(-far) - 0.5 * math.log(2 * math.pi) + log(series)
    return where(lt(0.0, x), log1p(-0.5 * erfc(right * _SQRT1_2)),
                 where(lt(low, x), log(0.5 * erfc(-middle * _SQRT1_2)),
                       where(isinf(x), x, tail)))  # (x = -inf: -inf)


def i0e(input: TensorLike) -> Tensor:  # noqa: A002
    """``exp(-|x|) I0(x)``, computed without forming ``I0`` (finite for every x).
    Derivative torch's, ``i1e(x) - sgn(x) i0e(x)``."""
    x = _float(input)
    return _rules.elementwise("SpecialI0EBackward0", _i0e_value, [x],
                              lambda v: [i1e(v) - v.sign() * i0e(v)])


def _i0e_value(input: Tensor) -> Tensor:  # noqa: A002
    x = abs(_float(input))
    small = lt(x, 8.0) | (x == 8.0)
    xs = where(small, x, 0.0)
    xb = where(small, 8.0, x)
    v_small = _chbevl(xs / 2.0 - 2.0, _I0_A)
    v_big = _chbevl(32.0 / xb - 2.0, _I0_B) / sqrt(xb)
    return where(isnan(x), x, where(small, v_small, v_big))


def erfcx(input: TensorLike) -> Tensor:  # noqa: A002
    """``exp(x^2) erfc(x)`` (issue 14, s10-surface14): from 3 on ``1 / (sqrt(pi)
    K(x))`` with the continued fraction ``K`` that ``erfc`` uses there (no
    overflow, no underflow); below, the product (inf below about -26.6, as
    torch's). Narrower floats compute in float64 and round once.
    Derivative torch's, ``2 x erfcx(x) - 2/sqrt(pi)``."""
    x = _float(input)
    return _rules.elementwise("SpecialErfcxBackward0", _erfcx_value, [x],
                              lambda v: [2.0 * v * erfcx(v) - 2.0 / math.sqrt(math.pi)])


def _erfcx_value(input: Tensor) -> Tensor:  # noqa: A002
    x = _float(input)
    if x.dtype is not float64:
        return erfcx(x.double()).to(x.dtype)
    tail = lt(3.0, x) | (x == 3.0)
    xt = where(tail, x, 3.0)  # the unselected branch gets a harmless value (no NaN gradients)
    t = xt
    for k in range(40, 0, -1):
        t = xt + (k / 2) / t
    xs = where(tail, 0.0, x)
    return where(tail, 1.0 / (math.sqrt(math.pi) * t), exp(xs * xs) * erfc(xs))


# ---- session 11: i1/i1e, gammainc/gammaincc, spherical_bessel_j0, polynomials ----

def i1e(input: TensorLike) -> Tensor:  # noqa: A002
    """``exp(-|x|) I1(x)``, odd in x (torch's Cephes kernel).
    Derivative torch's, ``i0e(x) - i1e(x) (sgn(x) + 1/x)``, 1/2 where
    ``|x|`` is at most the dtype's epsilon or NaN."""
    x = _float(input)
    return _rules.elementwise("SpecialI1EBackward0", _i1e_value, [x],
                              lambda v: [_tiny_half(v, i0e(v) - i1e(v) * (v.sign() + 1.0 / v))])


def _i1e_value(input: Tensor) -> Tensor:  # noqa: A002
    x = _float(input)
    out = _i1e_abs(abs(x))
    return where(isnan(x), x, where(lt(x, 0.0), -out, out))


def _igamma_values(a: np.ndarray, x: np.ndarray, upper: bool) -> np.ndarray:
    """Regularized incomplete gamma P(a, x) (or Q = 1 - P) in float64: the
    series where x < a + 1, Lentz's continued fraction for Q elsewhere, and
    for Q with a small ``a`` and x <= 1.1 the series of Q itself (torch's
    ``_igamc_helper_series``: 1 - P cancels there). The boundary values are
    torch's kernel's, in its order: NaN for a < 0 or x < 0; a = 0 gives P = 1
    for x > 0 (else NaN); x = 0 gives P = 0 (whatever a, NaN included); an
    infinite a gives P = 0 (NaN with an infinite x); an infinite x P = 1."""
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    out = np.full(a.shape, np.nan)
    p0, p1 = (1.0, 0.0) if upper else (0.0, 1.0)  # P = 0 and P = 1, as P or as Q
    rest = ~((x < 0) | (a < 0))  # (NaN there)
    for mask, value in (((a == 0) & (x > 0), p1), ((a == 0), np.nan), ((x == 0), p0),
                        (np.isinf(a) & np.isinf(x), np.nan), (np.isinf(a), p0),
                        (np.isinf(x), p1)):
        hit = rest & mask
        out[hit] = value
        rest &= ~hit
    ok = rest & (a > 0) & (x > 0)  # (NaN arguments stay NaN)
    lgam = np.vectorize(math.lgamma, otypes=[np.float64])
    eps, tiny = np.finfo(np.float64).eps, 1e-300
    if upper:
        small_a = ok & (x <= 1.1) & np.where(x <= 0.5, -0.4 / np.log(np.where(x < 1, x, 0.5)) >= a,
                                             x * 1.1 >= a)
        if small_a.any():
            out[small_a] = _igammac_small_a(a[small_a], x[small_a])
            ok &= ~small_a
    near = ok & (a > 1e6) & (np.abs(x - a) < 0.3 * a)  # the series would need ~sqrt(a) terms
    if near.any():
        q = _igammac_temme(a[near], x[near])
        out[near] = q if upper else 1.0 - q
        ok &= ~near
    series = ok & (x < a + 1.0)
    if series.any():
        aa, xx = a[series], x[series]
        ap, term = aa.copy(), 1.0 / aa
        total = term.copy()
        for _ in range(100000):
            ap += 1.0
            term *= xx / ap
            total += term
            if np.all(np.abs(term) < np.abs(total) * eps):
                break
        p = total * np.exp(-xx + aa * np.log(xx) - lgam(aa))
        out[series] = 1.0 - p if upper else p
    frac = ok & ~series
    if frac.any():
        aa, xx = a[frac], x[frac]
        b = xx + 1.0 - aa
        c = np.full(aa.shape, 1.0 / tiny)
        d = 1.0 / b
        h = d.copy()
        for i in range(1, 100000):
            an = -i * (i - aa)
            b += 2.0
            d = an * d + b
            d = np.where(np.abs(d) < tiny, tiny, d)
            c = b + an / c
            c = np.where(np.abs(c) < tiny, tiny, c)
            d = 1.0 / d
            delta = d * c
            h *= delta
            if np.all(np.abs(delta - 1.0) < eps):
                break
        q = np.exp(-xx + aa * np.log(xx) - lgam(aa)) * h
        out[frac] = q if upper else 1.0 - q
    return out


def _zeta_values(top: int) -> np.ndarray:
    """zeta(n) for n = 0 .. top (0 and 1 unused): 1000 terms and the
    Euler-Maclaurin tail (error below 1e-17)."""
    k = np.arange(1, 1001, dtype=np.float64)
    out = np.zeros(top + 1)
    for n in range(2, top + 1):
        big = 1000.0
        out[n] = (np.sum(k ** -n) - big ** -n + big ** (1 - n) / (n - 1) + big ** -n / 2
                  + n * big ** (-n - 1) / 12)
    return out


_ZETA = _zeta_values(42)


def _lgam1p(a: np.ndarray) -> np.ndarray:
    """lgamma(1 + a), accurate for small a (torch's lgam1p: the Taylor series
    ``-gamma a + sum (-a)^n zeta(n) / n`` for |a| <= 1/2)."""
    a = np.asarray(a, np.float64)
    out = np.vectorize(lambda v: math.lgamma(1.0 + v), otypes=[np.float64])(a)
    small = np.abs(a) <= 0.5
    if small.any():
        v = a[small]
        res, fac = -0.5772156649015329 * v, -v
        for n in range(2, 43):
            fac = fac * -v
            res = res + _ZETA[n] * fac / n
        out[small] = res
    return out


def _igammac_temme(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Q(a, x) for a large a and x near a: Temme's uniform expansion
    ``erfc(eta sqrt(a/2)) / 2 + exp(-a eta^2/2) / sqrt(2 pi a) (c0(eta) +
    c1(eta) / a)`` (DLMF 8.12.3), lambda = x / a, eta = sign(lambda - 1)
    sqrt(2 (lambda - 1 - log lambda)); c0 and c1 by their series near
    eta = 0. For a > 1e6 the next term is below 1e-15 (torch's kernel keeps
    25 terms for its wider range)."""
    lm1 = (x - a) / a  # lambda - 1, without rounding lambda first
    # lambda - 1 - log(lambda) = d - log1p(d): its series d^2/2 - d^3/3 + ... for a small d
    half = np.where(np.abs(lm1) < 0.1, 0.0, lm1 - np.log1p(lm1))
    d, power = np.where(np.abs(lm1) < 0.1, lm1, 0.0), None
    power = d * d
    for k in range(2, 30):
        half = half + (-1) ** k * power / k
        power = power * d
    eta = np.sign(lm1) * np.sqrt(2.0 * np.maximum(half, 0.0))
    small = np.abs(eta) < 0.1
    with np.errstate(all="ignore"):
        c0 = np.where(small, -1 / 3 + eta / 12 - 2 * eta ** 2 / 135 + eta ** 3 / 864
                      + 8 * eta ** 4 / 2835, 1.0 / lm1 - 1.0 / eta)
        c1 = np.where(small, -1 / 540 - eta / 288 + eta ** 2 / 378,
                      1.0 / eta ** 3 - 1.0 / lm1 ** 3 - 1.0 / lm1 ** 2 - 1.0 / (12.0 * lm1))
    erfc = np.vectorize(math.erfc, otypes=[np.float64])
    return (0.5 * erfc(eta * np.sqrt(a / 2.0))
            + np.exp(-0.5 * a * eta ** 2) / np.sqrt(2 * np.pi * a) * (c0 + c1 / a))


def _igammac_small_a(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Q(a, x) for x <= 1.1 and a small: ``-expm1(a log x - lgam1p(a)) -
    x^a / Gamma(a) sum_n (-x)^n / (n! (a + n))`` (torch's
    ``_igamc_helper_series``)."""
    eps = np.finfo(np.float64).eps
    fac, total = np.ones_like(x), np.zeros_like(x)
    for n in range(1, 2000):
        fac = fac * -x / n
        term = fac / (a + n)
        total = total + term
        if np.all(np.abs(term) <= eps * np.abs(total)):
            break
    logx = np.log(x)
    lgam = np.vectorize(math.lgamma, otypes=[np.float64])
    return -np.expm1(a * logx - _lgam1p(a)) - np.exp(a * logx - lgam(a)) * total


def _igamma(name: str, upper: bool, input: TensorLike, other: TensorLike) -> Tensor:  # noqa: A002
    from .autograd import Function

    a, x = _float(input), _float(other)
    if a.dtype != x.dtype:
        wide = a.dtype if a.dtype.itemsize >= x.dtype.itemsize else x.dtype
        a, x = a.to(wide), x.to(wide)
    values = _igamma_values(a.detach().numpy(), x.detach().numpy(), upper)
    out = Tensor._leaf(values.astype(a.dtype.np))

    class IncompleteGamma(Function):
        @staticmethod
        def forward(ctx: Any, a_: Tensor, x_: Tensor) -> Tensor:
            ctx.save_for_backward(a_, x_)
            return out

        @staticmethod
        def backward(ctx: Any, grad: Tensor) -> tuple[Any, Any]:
            a_, x_ = ctx.saved_tensors
            if ctx.needs_input_grad[0]:
                raise RuntimeError(f"the derivative for '{name}: input' is not implemented.")
            pos = lt(0.0, x_)
            safe = where(pos, x_, 1.0)
            density = where(pos, exp((a_ - 1.0) * log(safe) - safe - lgamma(a_)), 0.0)
            g = grad * (-density if upper else density)
            return None, _sum_to(g, x_.shape)

    def constant(t: Tensor) -> bool:  # (a lazy operand may be a transform's traced
        return not t.requires_grad and t._node is None  # argument: pf.grad gave 0)

    if constant(a) and constant(x):
        return out

    class OfX(Function):  # a constant ``a``: the gradient in x only
        @staticmethod
        def forward(ctx: Any, x_: Tensor) -> Tensor:
            ctx.save_for_backward(x_)
            return out

        @staticmethod
        def backward(ctx: Any, grad: Tensor) -> Any:
            return IncompleteGamma.backward(_Saved(a, ctx.saved_tensors[0]), grad)[1]

    return OfX.apply(x) if constant(a) else IncompleteGamma.apply(a, x)


class _Saved:
    """The context ``IncompleteGamma.backward`` reads: saved (a, x), a constant."""

    needs_input_grad = (False, True)

    def __init__(self, a: Tensor, x: Tensor):
        self.saved_tensors = (a, x)


def _sum_to(g: Tensor, shape: tuple[int, ...]) -> Tensor:
    """A broadcast gradient summed back to an operand's shape."""
    while g.ndim > len(shape):
        g = g.sum(0)
    for d, n in enumerate(shape):
        if n == 1 and g.shape[d] != 1:
            g = g.sum(d, keepdim=True)
    return g


def gammainc(input: TensorLike, other: TensorLike) -> Tensor:  # noqa: A002
    """The regularized lower incomplete gamma ``P(a, x)``, evaluated on the
    host in float64; differentiable in ``x`` only (as torch)."""
    return _igamma("igamma", False, input, other)


def gammaincc(input: TensorLike, other: TensorLike) -> Tensor:  # noqa: A002
    """The regularized upper incomplete gamma ``Q(a, x) = 1 - P(a, x)``."""
    return _igamma("igammac", True, input, other)


def spherical_bessel_j0(input: TensorLike) -> Tensor:  # noqa: A002
    """``sin(x) / x`` (1 at 0; a Taylor series below |x| = 0.5, as torch's
    kernel). No gradient, as torch's."""
    x = _float(input).detach()
    small = lt(abs(x), 0.5)
    xs = where(small, x, 0.0)
    x2 = xs * xs
    series = 1.0 + x2 * (-1.0 / 6 + x2 * (1.0 / 120 + x2 * (-1.0 / 5040 + x2 * (
        1.0 / 362880 + x2 * (-1.0 / 39916800 + x2 * (1.0 / 6227020800))))))
    xb = where(small, 1.0, x)
    return where(isinf(x), 0.0, where(small, series, sin(xb) / xb))


# ---- orthogonal polynomials of x and (elementwise) degree n, by their recurrences ----

def _polynomial(name: str, x: TensorLike, n: TensorLike, p0: Any, p1: Any,
                step: Any) -> Tensor:
    """``P_n(x)`` with ``P_0 = p0(x)``, ``P_1 = p1(x)``, ``P_{k+1} = step(k, x,
    P_k, P_{k-1})`` up to the largest n present (read from the host); negative
    n gives 0. Not differentiable, as torch's."""
    xt = _float(x).detach()
    nt = as_tensor_arg(n).detach()
    degrees = np.asarray(nt.numpy()).astype(np.int64)  # torch truncates a float degree
    top = int(degrees.max()) if degrees.size else 0
    deg = Tensor._leaf(degrees)
    prev, cur = p0(xt), p1(xt)
    out = where(deg == 0, prev, where(deg == 1, cur, 0.0 * xt))
    for k in range(1, top):
        prev, cur = cur, step(k, xt, cur, prev)
        out = where(deg == k + 1, cur, out)
    return where(deg < 0, 0.0 * out, out)


def chebyshev_polynomial_t(input: TensorLike, n: TensorLike) -> Tensor:  # noqa: A002
    return _polynomial("chebyshev_polynomial_t", input, n, lambda x: 1.0 + 0.0 * x,
                       lambda x: x, lambda k, x, p, q: 2.0 * x * p - q)


def chebyshev_polynomial_u(input: TensorLike, n: TensorLike) -> Tensor:  # noqa: A002
    return _polynomial("chebyshev_polynomial_u", input, n, lambda x: 1.0 + 0.0 * x,
                       lambda x: 2.0 * x, lambda k, x, p, q: 2.0 * x * p - q)


def chebyshev_polynomial_v(input: TensorLike, n: TensorLike) -> Tensor:  # noqa: A002
    return _polynomial("chebyshev_polynomial_v", input, n, lambda x: 1.0 + 0.0 * x,
                       lambda x: 2.0 * x - 1.0, lambda k, x, p, q: 2.0 * x * p - q)


def chebyshev_polynomial_w(input: TensorLike, n: TensorLike) -> Tensor:  # noqa: A002
    return _polynomial("chebyshev_polynomial_w", input, n, lambda x: 1.0 + 0.0 * x,
                       lambda x: 2.0 * x + 1.0, lambda k, x, p, q: 2.0 * x * p - q)


def shifted_chebyshev_polynomial_t(input: TensorLike, n: TensorLike) -> Tensor:  # noqa: A002
    return chebyshev_polynomial_t(2.0 * _float(input) - 1.0, n)


def shifted_chebyshev_polynomial_u(input: TensorLike, n: TensorLike) -> Tensor:  # noqa: A002
    return chebyshev_polynomial_u(2.0 * _float(input) - 1.0, n)


def shifted_chebyshev_polynomial_v(input: TensorLike, n: TensorLike) -> Tensor:  # noqa: A002
    return chebyshev_polynomial_v(2.0 * _float(input) - 1.0, n)


def shifted_chebyshev_polynomial_w(input: TensorLike, n: TensorLike) -> Tensor:  # noqa: A002
    return chebyshev_polynomial_w(2.0 * _float(input) - 1.0, n)


def hermite_polynomial_h(input: TensorLike, n: TensorLike) -> Tensor:  # noqa: A002
    """The physicists' Hermite polynomials: H_{k+1} = 2x H_k - 2k H_{k-1}."""
    return _polynomial("hermite_polynomial_h", input, n, lambda x: 1.0 + 0.0 * x,
                       lambda x: 2.0 * x, lambda k, x, p, q: 2.0 * x * p - 2.0 * k * q)


def hermite_polynomial_he(input: TensorLike, n: TensorLike) -> Tensor:  # noqa: A002
    """The probabilists' Hermite polynomials: He_{k+1} = x He_k - k He_{k-1}."""
    return _polynomial("hermite_polynomial_he", input, n, lambda x: 1.0 + 0.0 * x,
                       lambda x: x, lambda k, x, p, q: x * p - k * q)


def laguerre_polynomial_l(input: TensorLike, n: TensorLike) -> Tensor:  # noqa: A002
    """L_{k+1} = ((2k + 1 - x) L_k - k L_{k-1}) / (k + 1)."""
    return _polynomial("laguerre_polynomial_l", input, n, lambda x: 1.0 + 0.0 * x,
                       lambda x: 1.0 - x,
                       lambda k, x, p, q: ((2 * k + 1 - x) * p - k * q) / (k + 1))


def legendre_polynomial_p(input: TensorLike, n: TensorLike) -> Tensor:  # noqa: A002
    """P_{k+1} = ((2k + 1) x P_k - k P_{k-1}) / (k + 1)."""
    return _polynomial("legendre_polynomial_p", input, n, lambda x: 1.0 + 0.0 * x,
                       lambda x: x, lambda k, x, p, q: ((2 * k + 1) * x * p - k * q) / (k + 1))


def modified_bessel_i0(input: TensorLike) -> Tensor:  # noqa: A002
    """``i0`` without a gradient (torch's modified_bessel_i0 has none)."""
    return i0(_float(input).detach()).detach()


def modified_bessel_i1(input: TensorLike) -> Tensor:  # noqa: A002
    """``i1`` without a gradient (torch's modified_bessel_i1 has none)."""
    return i1(_float(input).detach()).detach()


__all__ += ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
            "chebyshev_polynomial_w", "gammainc", "gammaincc", "hermite_polynomial_h",
            "hermite_polynomial_he", "i1", "i1e", "laguerre_polynomial_l",
            "legendre_polynomial_p", "modified_bessel_i0", "modified_bessel_i1",
            "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
            "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w",
            "spherical_bessel_j0"]


def _igamma_method(self: Tensor, other: TensorLike) -> Tensor:
    return gammainc(self, other)


def _igammac_method(self: Tensor, other: TensorLike) -> Tensor:
    return gammaincc(self, other)


Tensor.igamma = _igamma_method  # type: ignore[attr-defined]  (torch's Tensor.igamma/igammac)
Tensor.igammac = _igammac_method  # type: ignore[attr-defined]


# ---- Bessel and Airy functions torch gives no gradient: torch's kernels, ported ----

def _host_kernel(kernel: Any, input: TensorLike) -> Tensor:  # noqa: A002
    """``kernel`` (a float64 scalar function of ``special_cephes``) on every
    element, evaluated on the host; the result has the input's floating dtype
    (the default one for integers) and no gradient, as torch's."""
    x = _float(input).detach()
    values = np.asarray(x.numpy(), dtype=np.float64)
    with np.errstate(all="ignore"):
        out = np.vectorize(kernel, otypes=[np.float64])(values) if values.size else values
    return Tensor._leaf(np.asarray(out, dtype=x.dtype.np).reshape(values.shape))


def bessel_j0(input: TensorLike) -> Tensor:  # noqa: A002
    """The Bessel function of the first kind, order 0."""
    return _host_kernel(_cephes._bessel_j0_forward, input)


def bessel_j1(input: TensorLike) -> Tensor:  # noqa: A002
    return _host_kernel(_cephes._bessel_j1_forward, input)


def bessel_y0(input: TensorLike) -> Tensor:  # noqa: A002
    """The Bessel function of the second kind, order 0 (NaN below 0, -inf at 0)."""
    return _host_kernel(_cephes._bessel_y0_forward, input)


def bessel_y1(input: TensorLike) -> Tensor:  # noqa: A002
    return _host_kernel(_cephes._bessel_y1_forward, input)


def modified_bessel_k0(input: TensorLike) -> Tensor:  # noqa: A002
    """The modified Bessel function of the second kind, order 0."""
    return _host_kernel(_cephes._modified_bessel_k0_forward, input)


def modified_bessel_k1(input: TensorLike) -> Tensor:  # noqa: A002
    return _host_kernel(_cephes._modified_bessel_k1_forward, input)


def scaled_modified_bessel_k0(input: TensorLike) -> Tensor:  # noqa: A002
    """``exp(x) K0(x)``."""
    return _host_kernel(_cephes._scaled_modified_bessel_k0_forward, input)


def scaled_modified_bessel_k1(input: TensorLike) -> Tensor:  # noqa: A002
    return _host_kernel(_cephes._scaled_modified_bessel_k1_forward, input)


def airy_ai(input: TensorLike) -> Tensor:  # noqa: A002
    """The Airy function Ai."""
    return _host_kernel(_cephes._airy_ai_forward, input)


__all__ += ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1",
            "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
            "scaled_modified_bessel_k1"]


def zeta(input: TensorLike, other: TensorLike) -> Tensor:  # noqa: A002
    """The Hurwitz zeta function ``sum_k (k + q)^-x`` (``input`` is x, ``other``
    q, broadcast): torch's kernel on the host in float64. No derivative: with
    an input that requires grad, backward raises, as torch's."""
    xa, qa = _float(input), _float(other)
    x, q = xa.detach(), qa.detach()
    if x.dtype != q.dtype:
        wide = x.dtype if x.dtype.itemsize >= q.dtype.itemsize else q.dtype
        x, q = x.to(wide), q.to(wide)
    xv, qv = np.broadcast_arrays(np.asarray(x.numpy(), np.float64),
                                 np.asarray(q.numpy(), np.float64))
    with np.errstate(all="ignore"):
        out = np.vectorize(_cephes._zeta, otypes=[np.float64])(xv, qv) if xv.size else xv
    result = Tensor._leaf(np.asarray(out, dtype=x.dtype.np).reshape(xv.shape))
    return _not_differentiable("zeta", [result], [xa, qa])[0]


__all__ += ["zeta"]

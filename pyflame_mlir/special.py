"""``torch.special`` (``pf.special``): the special functions under torch's
names there. Most are the top-level functions themselves (``expit`` is
``sigmoid``, ``gammaln`` is ``lgamma``, ``psi`` is ``digamma``); the rest are
composites of them, written for the tails torch's kernels are accurate in.
Not provided (they raise AttributeError, as any missing name): the Bessel
functions other than ``i0``/``i0e``, the orthogonal polynomials, ``zeta``,
``gammainc``/``gammaincc`` and ``airy_ai``.
"""

from __future__ import annotations

import math

from .composites import sinc, xlog1py, xlogy
from .composites2 import (
    _I0_A,
    _I0_B,
    _chbevl,
    _float,
    digamma,
    erfc,
    erfinv,
    i0,
    lgamma,
    mvlgamma,
    polygamma,
)
from .core import Tensor
from .dialects.dtypes import float64
from .ops import (
    TensorLike,
    abs,  # noqa: A004
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


def entr(input: TensorLike) -> Tensor:  # noqa: A002
    """``-x log x`` for x > 0, 0 at 0, -inf for x < 0 (NaN stays NaN)."""
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
    ``log_ndtr(x) = log q``, and mirrored for the right tail."""
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
    return where(tail, where(right, -x, x), central)


def log_ndtr(input: TensorLike) -> Tensor:  # noqa: A002
    """``log(ndtr(x))``: ``log1p(-ndtr(-x))`` for x > 0 (tiny, exact), the log
    of ``ndtr`` down to where it would underflow, and below that the
    asymptotic series ``-x^2/2 - log(-x) - log(2 pi)/2 + log(1 - 1/x^2 +
    3/x^4 - ...)`` (its terms fall below the dtype's epsilon there)."""
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
    """``exp(-|x|) I0(x)``, computed without forming ``I0`` (finite for every x)."""
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
    torch's). Narrower floats compute in float64 and round once."""
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

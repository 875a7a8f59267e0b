"""``pf.special``: torch.special's names (issue 14's namespace scan). Most
are the op API's functions under their special names (``expit`` is
``sigmoid``, ``gammaln`` is ``lgamma``...); the others are composites of it,
so they differentiate and run on every backend:

- ``erfcx(x) = exp(x^2) erfc(x)``: from 3 on ``1 / (sqrt(pi) K(x))`` with
  the continued fraction ``K`` erfc uses there (no overflow, no underflow);
  below, the product (inf below about -26.6, as torch's).
- ``log_ndtr``: torch's formula, ``log(erfcx(-x/sqrt2) / 2) - x^2/2`` below
  -1 (finite far into the tail), ``log1p(-erfc(x/sqrt2) / 2)`` above.
- ``ndtr(x) = erfc(-x/sqrt2) / 2``, ``ndtri(p) = sqrt2 erfinv(2p - 1)``
  (its relative accuracy degrades for p below ~1e-8, where ``2p - 1``
  rounds), ``entr``, ``xlog1py``.

Narrower floats compute in float64 and round once, as ``erfc`` does.
"""

from __future__ import annotations

import math
from typing import Any

from .composites import sinc, xlogy
from .composites2 import digamma, erfc, erfinv, i0, lgamma, mvlgamma, polygamma
from .core import Tensor
from .dialects.dtypes import default_float, float64
from .ops import (
    as_tensor_arg,
    convert,
    exp,
    exp2,
    expm1,
    ge,
    isnan,
    log,
    log1p,
    log_softmax,
    logit,
    logsumexp,
    lt,
    sigmoid,
    softmax,
    where,
)
from .ops import erf as _erf
from .ops import round as _round

__all__ = ["digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1",
           "gammaln", "i0", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp",
           "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round", "sinc", "softmax",
           "xlog1py", "xlogy"]

erf = _erf
expit = sigmoid
gammaln = lgamma
psi = digamma
multigammaln = mvlgamma
round = _round  # noqa: A001  (torch.special.round)

_SQRT2 = math.sqrt(2.0)


def _f64(input: Any) -> tuple[Tensor, Any]:
    """The input as float64 (integers promote to the default float first) and
    the dtype to round the result to."""
    x = as_tensor_arg(input)
    out = x.dtype if x.dtype.is_floating_point else default_float()
    return (x if x.dtype is float64 else convert(x, float64)), out


def erfcx(input: Any) -> Tensor:  # noqa: A002
    """The scaled complementary error function ``exp(x^2) erfc(x)``."""
    x, out = _f64(input)
    tail = ge(x, 3.0)
    xt = where(tail, x, 3.0)  # the unselected branch gets a harmless value (no NaN gradients)
    t = xt
    for k in range(40, 0, -1):
        t = xt + (k / 2) / t
    xs = where(tail, 0.0, x)
    r = where(tail, 1.0 / (math.sqrt(math.pi) * t), exp(xs * xs) * erfc(xs))
    return convert(r, out)


def ndtr(input: Any) -> Tensor:  # noqa: A002
    """The standard normal CDF, accurate in the lower tail."""
    x, out = _f64(input)
    return convert(erfc(-x / _SQRT2) * 0.5, out)


def ndtri(input: Any) -> Tensor:  # noqa: A002
    """The inverse of ``ndtr`` on (0, 1); -inf at 0, inf at 1, NaN outside."""
    p, out = _f64(input)
    return convert(erfinv(p * 2.0 - 1.0) * _SQRT2, out)


def log_ndtr(input: Any) -> Tensor:  # noqa: A002
    """``log(ndtr(x))``, finite far into the lower tail."""
    x, out = _f64(input)
    low = lt(x, -1.0)
    xl = where(low, x, -1.0)
    xh = where(low, 0.0, x)
    r = where(low, log(erfcx(-xl / _SQRT2) * 0.5) - xl * xl * 0.5,
              log1p(erfc(xh / _SQRT2) * -0.5))
    return convert(r, out)


def entr(input: Any) -> Tensor:  # noqa: A002
    """``-x log x`` for x > 0, 0 at 0, -inf below, NaN at NaN."""
    x = as_tensor_arg(input)
    if not x.dtype.is_floating_point:
        x = convert(x, default_float())
    pos = x > 0
    body = -x * log(where(pos, x, 1.0))
    return where(isnan(x), x, where(pos, body, where(x == 0, 0.0, float("-inf"))))


def xlog1py(input: Any, other: Any) -> Tensor:  # noqa: A002
    """``x log1p(y)``, 0 where x is 0 (unless y is NaN), as torch."""
    x, y = as_tensor_arg(input), as_tensor_arg(other)
    if not x.dtype.is_floating_point and not y.dtype.is_floating_point:
        x = convert(x, default_float())
    safe_y = where(x == 0, 0.0, y)
    r = x * log1p(safe_y)
    return where(isnan(y), y + x * 0, where(x == 0, 0.0 * r, r))


_ = (exp2, expm1, i0, log_softmax, logit, logsumexp, polygamma, sinc, softmax, xlogy)  # names

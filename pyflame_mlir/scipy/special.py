"""``jax.scipy.special`` on pyflame: SciPy's argument conventions (``axis``,
``keepdims``, ``b`` and ``return_sign`` of ``logsumexp``), JAX's dtypes;
the functions themselves are ``pf.special``'s (one home per function)."""

from __future__ import annotations

import math
from typing import Any

from .. import creation, ops, special
from ..core import Tensor
from ..numpy import _axis, _t

__all__ = ["betaln", "digamma", "entr", "erf", "erfc", "erfinv", "expit", "factorial",
           "gamma", "gammainc", "gammaincc", "gammaln", "i0", "i0e", "i1", "i1e", "kl_div",
           "log_ndtr", "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr", "ndtri",
           "polygamma", "rel_entr", "softmax", "xlog1py", "xlogy", "zeta"]


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False,
              return_sign: bool = False) -> Any:
    """``log(sum(b * exp(a)))`` over ``axis`` (all axes when None), stable;
    with ``return_sign``, ``(log|s|, sign(s))``, else NaN where the weighted
    sum is negative (SciPy's and JAX's convention)."""
    x = _t(a)
    axes = _axis(x, axis)
    if b is None and not return_sign:
        return ops.logsumexp(x, list(axes), keepdim=keepdims) if axes else x
    m = ops.amax(x, list(axes), keepdim=True) if axes else x
    m = ops.where(ops.isfinite(m), m, creation.zeros_like(m)).detach()
    e = ops.exp(x - m)
    if b is not None:
        e = e * _t(b)
    s = ops.sum(e, list(axes), keepdim=True) if axes else e
    sign = ops.sign(s)
    out = ops.log(ops.abs(s)) + m
    if not return_sign:
        out = ops.where(sign < 0, creation.full_like(out, math.nan), out)
    if not keepdims and axes:
        out, sign = ops.squeeze(out, axes), ops.squeeze(sign, axes)
    return (out, sign) if return_sign else out


def softmax(x: Any, axis: Any = None) -> Tensor:
    t = _t(x)
    axes = _axis(t, axis)
    return ops.exp(t - logsumexp(t, axes, keepdims=True))


def log_softmax(x: Any, axis: Any = None) -> Tensor:
    t = _t(x)
    return t - logsumexp(t, _axis(t, axis), keepdims=True)


def _unary(f: Any) -> Any:
    def g(x: Any) -> Tensor:
        return f(_t(x))
    g.__name__ = g.__qualname__ = f.__name__
    g.__doc__ = f"``{f.__name__}`` (``pf.special``'s) of an array-like."
    return g


def _binary(f: Any) -> Any:
    def g(x: Any, y: Any) -> Tensor:
        return f(_t(x), _t(y))
    g.__name__ = g.__qualname__ = f.__name__
    g.__doc__ = f"``{f.__name__}`` (``pf.special``'s) of two array-likes."
    return g


erf, erfc, erfinv, expit, logit = (_unary(f) for f in (
    ops.erf, special.erfc, special.erfinv, special.expit, ops.logit))
gammaln, digamma, ndtr, ndtri, log_ndtr, entr = (_unary(f) for f in (
    special.gammaln, special.digamma, special.ndtr, special.ndtri, special.log_ndtr,
    special.entr))
i0, i0e, i1, i1e = (_unary(f) for f in (special.i0, special.i0e, special.i1, special.i1e))
xlogy, xlog1py, zeta = (_binary(f) for f in (special.xlogy, special.xlog1py, special.zeta))
gammainc, gammaincc = _binary(special.gammainc), _binary(special.gammaincc)


def gamma(x: Any) -> Tensor:
    """Gamma(x), with its sign (``exp(gammaln(x))`` alone loses it for x < 0)."""
    t = _t(x)
    neg_odd = (t < 0) & (ops.remainder(ops.floor(t), 2) == 1)
    return ops.where(neg_odd, -1.0, 1.0) * ops.exp(special.gammaln(t))


def betaln(a: Any, b: Any) -> Tensor:
    x, y = _t(a), _t(b)
    return special.gammaln(x) + special.gammaln(y) - special.gammaln(x + y)


def polygamma(n: Any, x: Any) -> Tensor:
    if isinstance(n, Tensor):
        if n.ndim:
            raise NotImplementedError("polygamma: an array of orders n is not supported; "
                                      "pass an integer")
        n = n.item()
    if int(n) != n or n < 0:
        raise ValueError(f"polygamma: n must be a non-negative integer, got {n}")
    return special.polygamma(int(n), _t(x))


def multigammaln(a: Any, d: int) -> Tensor:
    return special.multigammaln(_t(a), int(d))


def factorial(n: Any, exact: bool = False) -> Tensor:
    if exact:
        raise ValueError("factorial: exact=True is not supported (JAX's rule)")
    t = _t(n)
    return ops.where(t < 0, 0.0, ops.exp(special.gammaln(t + 1)))


def rel_entr(p: Any, q: Any) -> Tensor:
    """``p log(p/q)`` for p, q > 0; 0 at p == 0 (q >= 0); inf elsewhere."""
    x, y = _t(p), _t(q)
    both = (x > 0) & (y > 0)
    safe_x, safe_y = ops.where(both, x, 1.0), ops.where(both, y, 1.0)
    val = safe_x * ops.log(safe_x / safe_y)
    return ops.where(both, val, ops.where((x == 0) & (y >= 0), 0.0, math.inf))


def kl_div(p: Any, q: Any) -> Tensor:
    """``p log(p/q) - p + q`` for p, q > 0; q at p == 0 (q >= 0); inf elsewhere."""
    x, y = _t(p), _t(q)
    both = (x > 0) & (y > 0)
    safe_x, safe_y = ops.where(both, x, 1.0), ops.where(both, y, 1.0)
    val = safe_x * ops.log(safe_x / safe_y) - safe_x + safe_y
    return ops.where(both, val, ops.where((x == 0) & (y >= 0), y, math.inf))

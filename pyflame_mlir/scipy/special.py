"""``jax.scipy.special`` on pyflame: SciPy's argument conventions (``axis``,
``keepdims``, ``b`` and ``return_sign`` of ``logsumexp``), JAX's dtypes;
the functions themselves are ``pf.special``'s (one home per function)."""

from __future__ import annotations

import math
from typing import Any

from .. import ops, special
from ..core import Tensor
from ..nn.jax_nn import logsumexp as _nn_logsumexp
from ..numpy import _axis, _inexact, _t

__all__ = ["betaln", "digamma", "entr", "erf", "erfc", "erfinv", "expit", "factorial",
           "gamma", "gammainc", "gammaincc", "gammaln", "i0", "i0e", "i1", "i1e", "kl_div",
           "log_ndtr", "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr", "ndtri",
           "polygamma", "rel_entr", "softmax", "xlog1py", "xlogy", "zeta"]


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False,
              return_sign: bool = False, where: Any = None) -> Any:
    """``jax.nn.logsumexp`` (pf.nn's: one definition) on JAX's dtypes of
    ``a`` and ``b`` (an integer ``a`` is the default float)."""
    x = _t(a)
    if not x.dtype.is_floating_point:
        x = _inexact(x)
    return _nn_logsumexp(x, axis, None if b is None else _t(b), keepdims, return_sign,
                         None if where is None else _t(where))


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

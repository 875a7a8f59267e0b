"""``jax.scipy.stats`` on pyflame: each distribution a namespace of
functions of ``(x, *shape parameters, loc=0, scale=1)`` as SciPy's, composites
of pyflame ops (differentiable in x and the parameters). Out-of-support
points give SciPy's values (``-inf`` log densities, 0 or 1 cdfs)."""

from __future__ import annotations

import math
import types
from typing import Any

from .. import indexing, ops
from .. import special as _special
from ..core import Tensor
from ..linalg import cholesky, solve_triangular
from ..numpy import _t
from .special import betaln, gammaln, xlog1py, xlogy

__all__ = ["bernoulli", "beta", "cauchy", "expon", "gamma", "laplace", "logistic",
           "multivariate_normal", "norm", "poisson", "t", "uniform"]

_LOG_2PI = math.log(2 * math.pi)


def _std(x: Any, loc: Any, scale: Any) -> tuple[Tensor, Tensor]:
    s = _t(scale)
    return (_t(x) - _t(loc)) / s, s


def _namespace(name: str, **fns: Any) -> types.SimpleNamespace:
    for k, f in fns.items():
        f.__name__, f.__qualname__ = k, f"{name}.{k}"
    return types.SimpleNamespace(**fns)


# ---- norm ----

def _norm_logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Tensor:
    z, s = _std(x, loc, scale)
    return -0.5 * z * z - ops.log(s) - 0.5 * _LOG_2PI


def _norm_cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Tensor:
    return _special.ndtr(_std(x, loc, scale)[0])


def _norm_logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Tensor:
    return _special.log_ndtr(_std(x, loc, scale)[0])


def _norm_ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Tensor:
    return _special.ndtri(_t(q)) * _t(scale) + _t(loc)


norm = _namespace(
    "norm", logpdf=_norm_logpdf,
    pdf=lambda x, loc=0, scale=1: ops.exp(_norm_logpdf(x, loc, scale)),
    cdf=_norm_cdf, logcdf=_norm_logcdf,
    sf=lambda x, loc=0, scale=1: _special.ndtr(-_std(x, loc, scale)[0]),
    logsf=lambda x, loc=0, scale=1: _special.log_ndtr(-_std(x, loc, scale)[0]),
    ppf=_norm_ppf,
    isf=lambda q, loc=0, scale=1: _norm_ppf(1 - _t(q), loc, scale))


# ---- multivariate_normal ----

def _mvn_logpdf(x: Any, mean: Any, cov: Any, allow_singular: Any = None) -> Tensor:
    if allow_singular:
        raise NotImplementedError("multivariate_normal.logpdf: allow_singular=True is not "
                                  "supported (JAX's rule)")
    xt, m, c = _t(x), _t(mean), _t(cov)
    if c.ndim < 2:
        raise ValueError(f"multivariate_normal.logpdf: cov must be a matrix, got shape "
                         f"{list(c.shape)} (JAX takes a full covariance)")
    n = c.shape[-1]
    chol = cholesky(c)
    d = (xt - m).unsqueeze(-1)
    z = solve_triangular(chol, d, upper=False).squeeze(-1)
    log_det = ops.log(indexing.diagonal(chol, 0, -2, -1)).sum(-1)
    return -0.5 * (z * z).sum(-1) - log_det - 0.5 * n * _LOG_2PI


multivariate_normal = _namespace(
    "multivariate_normal", logpdf=_mvn_logpdf,
    pdf=lambda x, mean, cov: ops.exp(_mvn_logpdf(x, mean, cov)))


# ---- logistic, laplace, cauchy, uniform, expon ----

def _logistic_logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Tensor:
    z, s = _std(x, loc, scale)
    return -z - 2 * ops.softplus(-z) - ops.log(s)


logistic = _namespace(
    "logistic", logpdf=_logistic_logpdf,
    pdf=lambda x, loc=0, scale=1: ops.exp(_logistic_logpdf(x, loc, scale)),
    cdf=lambda x, loc=0, scale=1: ops.sigmoid(_std(x, loc, scale)[0]),
    sf=lambda x, loc=0, scale=1: ops.sigmoid(-_std(x, loc, scale)[0]),
    ppf=lambda q, loc=0, scale=1: ops.logit(_t(q)) * _t(scale) + _t(loc))


def _laplace_logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Tensor:
    z, s = _std(x, loc, scale)
    return -ops.abs(z) - ops.log(2 * s)


def _laplace_cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Tensor:
    z = _std(x, loc, scale)[0]
    return ops.where(z < 0, 0.5 * ops.exp(z), 1 - 0.5 * ops.exp(-z))


laplace = _namespace(
    "laplace", logpdf=_laplace_logpdf,
    pdf=lambda x, loc=0, scale=1: ops.exp(_laplace_logpdf(x, loc, scale)),
    cdf=_laplace_cdf)


def _cauchy_logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Tensor:
    z, s = _std(x, loc, scale)
    return -math.log(math.pi) - ops.log(s) - ops.log1p(z * z)


cauchy = _namespace(
    "cauchy", logpdf=_cauchy_logpdf,
    pdf=lambda x, loc=0, scale=1: ops.exp(_cauchy_logpdf(x, loc, scale)),
    cdf=lambda x, loc=0, scale=1: 0.5 + ops.atan(_std(x, loc, scale)[0]) / math.pi)


def _uniform_logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Tensor:
    xt, lo, s = _t(x), _t(loc), _t(scale)
    inside = (xt >= lo) & (xt <= lo + s)
    return ops.where(inside, -ops.log(s) + 0 * xt, -math.inf)


uniform = _namespace(
    "uniform", logpdf=_uniform_logpdf,
    pdf=lambda x, loc=0, scale=1: ops.exp(_uniform_logpdf(x, loc, scale)))


def _expon_logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Tensor:
    z, s = _std(x, loc, scale)
    return ops.where(z < 0, -math.inf, -z - ops.log(s))


expon = _namespace(
    "expon", logpdf=_expon_logpdf,
    pdf=lambda x, loc=0, scale=1: ops.exp(_expon_logpdf(x, loc, scale)))


# ---- gamma, beta, t ----

def _gamma_logpdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Tensor:
    z, s = _std(x, loc, scale)
    at = _t(a)
    val = xlogy(at - 1, z) - z - gammaln(at) - ops.log(s)
    return ops.where(z < 0, -math.inf, val)


gamma = _namespace(
    "gamma", logpdf=_gamma_logpdf,
    pdf=lambda x, a, loc=0, scale=1: ops.exp(_gamma_logpdf(x, a, loc, scale)))


def _beta_logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Tensor:
    z, s = _std(x, loc, scale)
    at, bt = _t(a), _t(b)
    val = xlogy(at - 1, z) + xlog1py(bt - 1, -z) - betaln(at, bt) - ops.log(s)
    return ops.where((z < 0) | (z > 1), -math.inf, val)


beta = _namespace(
    "beta", logpdf=_beta_logpdf,
    pdf=lambda x, a, b, loc=0, scale=1: ops.exp(_beta_logpdf(x, a, b, loc, scale)))


def _t_logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Tensor:
    z, s = _std(x, loc, scale)
    v = _t(df)
    return (gammaln((v + 1) / 2) - gammaln(v / 2) - 0.5 * ops.log(v * math.pi) - ops.log(s)
            - (v + 1) / 2 * ops.log1p(z * z / v))


t = _namespace(
    "t", logpdf=_t_logpdf,
    pdf=lambda x, df, loc=0, scale=1: ops.exp(_t_logpdf(x, df, loc, scale)))


# ---- discrete: bernoulli, poisson ----

def _bernoulli_logpmf(k: Any, p: Any, loc: Any = 0) -> Tensor:
    kt, pt = _t(k) - _t(loc), _t(p)
    val = xlogy(kt, pt) + xlog1py(1 - kt, -pt)
    return ops.where((kt == 0) | (kt == 1), val, -math.inf)


bernoulli = _namespace(
    "bernoulli", logpmf=_bernoulli_logpmf,
    pmf=lambda k, p, loc=0: ops.exp(_bernoulli_logpmf(k, p, loc)))


def _poisson_logpmf(k: Any, mu: Any, loc: Any = 0) -> Tensor:
    kt, m = _t(k) - _t(loc), _t(mu)
    val = xlogy(kt, m) - m - gammaln(kt + 1)
    return ops.where((kt < 0) | (kt != ops.floor(kt)), -math.inf, val)


poisson = _namespace(
    "poisson", logpmf=_poisson_logpmf,
    pmf=lambda k, mu, loc=0: ops.exp(_poisson_logpmf(k, mu, loc)))

"""``kl_divergence(p, q)`` through a registry keyed by the two types
(``register_kl``), dispatching on the most specific registered pair."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..composites2 import digamma, lgamma
from ..core import Tensor
from ..ops import broadcast_to, eq, softplus, where
from ..ops import log as _log
from .continuous import (
    Beta,
    Dirichlet,
    Exponential,
    Gamma,
    Laplace,
    MultivariateNormal,
    Normal,
    Uniform,
    solve_tril,
)
from .discrete import Bernoulli, Categorical, OneHotCategorical
from .distribution import Distribution, sum_rightmost
from .wrappers import Independent

__all__ = ["kl_divergence", "register_kl"]

KLFn = Callable[[Any, Any], Tensor]
_KL_REGISTRY: dict[tuple[type, type], KLFn] = {}


def register_kl(type_p: type, type_q: type) -> Callable[[KLFn], KLFn]:
    """Decorator: ``fn(p, q)`` computes KL(p || q) for these two types (and
    their subclasses, unless a more specific pair is registered)."""
    if not (isinstance(type_p, type) and issubclass(type_p, Distribution)):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not (isinstance(type_q, type) and issubclass(type_q, Distribution)):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fn: KLFn) -> KLFn:
        _KL_REGISTRY[type_p, type_q] = fn
        return fn
    return decorator


def _dispatch(type_p: type, type_q: type) -> KLFn | None:
    best: tuple[int, int] | None = None
    found = None
    for i, sp in enumerate(type_p.__mro__):
        for j, sq in enumerate(type_q.__mro__):
            fn = _KL_REGISTRY.get((sp, sq))
            if fn is not None and (best is None or (i + j, i) < (best[0] + best[1], best[0])):
                best, found = (i, j), fn
    return found


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """KL(p || q), batched over the two distributions' broadcast batch shape."""
    fn = _dispatch(type(p), type(q))
    if fn is None:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{type(p).__name__} and q type {type(q).__name__}")
    return fn(p, q)


def _inf_where(cond: Tensor, value: Tensor, fill: float) -> Tensor:
    return where(cond, fill, value)


def _kl_normal_normal(p: Normal, q: Normal) -> Tensor:
    var_ratio = (p.scale / q.scale) ** 2
    t1 = ((p.loc - q.loc) / q.scale) ** 2
    return 0.5 * (var_ratio + t1 - 1 - _log(var_ratio))


def _kl_bernoulli_bernoulli(p: Bernoulli, q: Bernoulli) -> Tensor:
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = where(eq(p.probs, 0), 0.0, _inf_where(eq(q.probs, 0), t1, math.inf))
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = where(eq(p.probs, 1), 0.0, _inf_where(eq(q.probs, 1), t2, math.inf))
    return t1 + t2


def _kl_categorical_categorical(p: Categorical, q: Categorical) -> Tensor:
    t = p.probs * (p.logits - q.logits)
    t = where(eq(p.probs, 0), 0.0, _inf_where(eq(q.probs, 0), t, math.inf))
    return t.sum(-1)


def _kl_onehot_onehot(p: OneHotCategorical, q: OneHotCategorical) -> Tensor:
    return _kl_categorical_categorical(p._categorical, q._categorical)  # noqa: SLF001


def _kl_uniform_uniform(p: Uniform, q: Uniform) -> Tensor:
    result = _log((q.high - q.low) / (p.high - p.low))
    outside = (q.low > p.low) | (q.high < p.high)
    return where(outside, math.inf, result)


def _kl_laplace_laplace(p: Laplace, q: Laplace) -> Tensor:
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -_log(scale_ratio)
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * (-loc_abs_diff / p.scale).exp()
    return t1 + t2 + t3 - 1


def _kl_exponential_exponential(p: Exponential, q: Exponential) -> Tensor:
    rate_ratio = q.rate / p.rate
    return rate_ratio - 1 - _log(rate_ratio)


def _kl_gamma_gamma(p: Gamma, q: Gamma) -> Tensor:
    t1 = q.concentration * _log(p.rate / q.rate)
    t2 = lgamma(q.concentration) - lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


def _kl_dirichlet_dirichlet(p: Dirichlet, q: Dirichlet) -> Tensor:
    sum_p = p.concentration.sum(-1)
    sum_q = q.concentration.sum(-1)
    t1 = lgamma(sum_p) - lgamma(sum_q)
    t2 = (lgamma(p.concentration) - lgamma(q.concentration)).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = digamma(p.concentration) - digamma(sum_p).unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


def _kl_beta_beta(p: Beta, q: Beta) -> Tensor:
    return _kl_dirichlet_dirichlet(p._dirichlet, q._dirichlet)  # noqa: SLF001


def _kl_mvn_mvn(p: MultivariateNormal, q: MultivariateNormal) -> Tensor:
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different "
                         "event shapes cannot be computed")
    n = p.event_shape[0]
    lp, lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril  # noqa: SLF001
    half_term1 = q._half_log_det() - p._half_log_det()  # noqa: SLF001
    batch = tuple(np.broadcast_shapes(lq.shape[:-2], lp.shape[:-2]))
    term2 = (solve_tril(broadcast_to(lq, batch + (n, n)), lp) ** 2).sum((-2, -1))
    diff = (q.loc - p.loc).unsqueeze(-1)
    term3 = (solve_tril(lq, diff) ** 2).sum((-2, -1))
    return half_term1 + 0.5 * (term2 + term3 - n)


def _kl_independent_independent(p: Independent, q: Independent) -> Tensor:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError("KL between Independents with different event dims is not "
                                  "implemented")
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


for _pair, _fn in (((Normal, Normal), _kl_normal_normal),
                   ((Bernoulli, Bernoulli), _kl_bernoulli_bernoulli),
                   ((Categorical, Categorical), _kl_categorical_categorical),
                   ((OneHotCategorical, OneHotCategorical), _kl_onehot_onehot),
                   ((Uniform, Uniform), _kl_uniform_uniform),
                   ((Laplace, Laplace), _kl_laplace_laplace),
                   ((Exponential, Exponential), _kl_exponential_exponential),
                   ((Gamma, Gamma), _kl_gamma_gamma),
                   ((Dirichlet, Dirichlet), _kl_dirichlet_dirichlet),
                   ((Beta, Beta), _kl_beta_beta),
                   ((MultivariateNormal, MultivariateNormal), _kl_mvn_mvn),
                   ((Independent, Independent), _kl_independent_independent)):
    register_kl(*_pair)(_fn)

"""More of torch.distributions' families, with torch's formulas:
``Poisson``, ``Geometric``, ``Binomial``, ``NegativeBinomial``, ``Multinomial``
(discrete);
``LogNormal``, ``HalfNormal``, ``Cauchy``, ``HalfCauchy``, ``Gumbel``,
``StudentT``, ``Chi2``, ``Weibull``, ``Pareto``; ``RelaxedBernoulli`` and
``RelaxedOneHotCategorical`` (the Concrete / Gumbel-softmax relaxations);
``MixtureSameFamily`` (a mixture of one batched family).

Samplers without an inverse-CDF or location-scale form (Poisson, Binomial,
NegativeBinomial, StudentT and Chi2's gamma draw) draw with numpy's samplers
from pyflame's generator, on the evaluated parameters: their samples carry no
gradient and those families have no ``rsample`` (torch's implicit
reparameterization of the gamma draw is not implemented, as for ``Gamma``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import creation
from ..composites import xlogy
from ..composites2 import digamma, lgamma
from ..core import Tensor
from ..creation import full, rand, zeros_like
from ..dialects.dtypes import DType
from ..nn.functional import binary_cross_entropy_with_logits
from ..ops import abs as _abs
from ..ops import (
    atan,
    broadcast_to,
    clamp,
    expm1,
    floor,
    ge,
    log1p,
    log_softmax,
    logsigmoid,
    logsumexp,
    sigmoid,
    tan,
    where,
)
from ..ops import exp as _exp
from ..ops import log as _log
from . import constraints
from .continuous import Gamma, Normal, _LocationScale
from .discrete import Categorical, _one_of, clamp_probs, logits_to_probs, probs_to_logits
from .distribution import Distribution, broadcast_all, lazy_property, nan_full
from .transforms import AbsTransform, ExpTransform, SigmoidTransform
from .wrappers import TransformedDistribution

__all__ = ["Binomial", "Cauchy", "Chi2", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal",
           "LogNormal", "MixtureSameFamily", "Multinomial", "NegativeBinomial", "Pareto", "Poisson",
           "RelaxedBernoulli", "RelaxedOneHotCategorical", "StudentT", "Weibull"]

_EULER_GAMMA = 0.57721566490153286060


def _uniform(shape: tuple[int, ...], dt: DType) -> Tensor:
    return rand(*shape, dtype=dt) if shape else rand(dtype=dt)


def _host_draw(draw: np.ndarray, dt: DType) -> Tensor:
    return Tensor._leaf(np.asarray(draw).astype(dt.np))  # noqa: SLF001


def _np_params(shape: tuple[int, ...], *params: Tensor) -> list[np.ndarray]:
    """The evaluated parameters, broadcast to ``shape`` (host draws)."""
    return [np.broadcast_to(p.detach().numpy().astype(np.float64), shape) for p in params]


def _full(shape: Sequence[int], value: float, dt: DType) -> Tensor:
    return full(tuple(shape), value, dtype=dt)


# ---- discrete ----

class Poisson(Distribution):
    arg_constraints = {"rate": constraints.nonnegative}  # noqa: RUF012
    support = constraints.nonnegative_integer

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, (), validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Poisson:
        return self._expanded(batch_shape, {"rate": self.rate})

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return floor(self.rate)

    @property
    def variance(self) -> Tensor:
        return self.rate

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        (rate,) = _np_params(shape, self.rate)
        return _host_draw(creation.default_generator.np.poisson(rate), self.rate.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        self._maybe_validate(value)
        rate, value = broadcast_all(self.rate, value)
        return xlogy(value, rate) - rate - lgamma(value + 1)


class _BinaryParams(Distribution):
    """``probs`` or ``logits`` (one of them given, the other derived)."""

    def _set_binary(self, probs: Any, logits: Any, *others: Any) -> tuple[Tensor, ...]:
        _one_of(type(self).__name__, probs, logits)
        if probs is not None:
            out = broadcast_all(probs, *others)
            self.probs = out[0]
        else:
            out = broadcast_all(logits, *others)
            self.logits = out[0]
        return out

    @property
    def _param(self) -> Tensor:
        return self.__dict__["probs"] if "probs" in self.__dict__ else self.__dict__["logits"]

    @property
    def _param_name(self) -> str:
        return "probs" if "probs" in self.__dict__ else "logits"

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> tuple[int, ...]:
        return self._param.shape


class Geometric(_BinaryParams):
    """The number of failures before the first success (torch's)."""

    arg_constraints = {"probs": constraints.interval(0.0, 1.0),  # noqa: RUF012
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        (p,) = self._set_binary(probs, logits)
        super().__init__(p.shape, (), validate_args)
        if probs is not None and self._validate_args:
            self._check(constraints.positive, self.probs, "parameter probs")

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Geometric:
        return self._expanded(batch_shape, {self._param_name: self._param})

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Tensor:
        return zeros_like(self.probs)

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        p = broadcast_to(self.probs.detach(), shape)
        tiny = float(np.finfo(p.dtype.np).tiny)
        u = clamp(_uniform(shape, p.dtype), min=tiny)
        return floor(_log(u) / log1p(-p))

    def log_prob(self, value: Tensor) -> Tensor:
        self._maybe_validate(value)
        value, probs = broadcast_all(value, self.probs)
        # torch: probs 1 at value 0 gives log 1 = 0 (not 0 * -inf)
        safe = where((probs == 1) & (value == 0), 0.0, probs)
        return value * log1p(-safe) + _log(probs)

    def entropy(self) -> Tensor:
        return binary_cross_entropy_with_logits(self.logits, self.probs,
                                                reduction="none") / self.probs


def _clamp_by_zero(x: Tensor) -> Tensor:
    # max(x, 0) with the gradient 1/2 at 0 (torch's)
    return (clamp(x, min=0) + x - clamp(x, max=0)) / 2


class Binomial(_BinaryParams):
    arg_constraints = {"total_count": constraints.nonnegative_integer,  # noqa: RUF012
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count: Any = 1, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        p, self.total_count = self._set_binary(probs, logits, total_count)
        self.total_count = self.total_count.to(p.dtype)
        super().__init__(p.shape, (), validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Binomial:
        return self._expanded(batch_shape, {self._param_name: self._param,
                                            "total_count": self.total_count})

    @property
    def support(self) -> constraints.Constraint:  # type: ignore[override]
        return _IntegerUpTo(self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        return clamp(floor((self.total_count + 1) * self.probs), max=self.total_count)

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        n, p = _np_params(shape, self.total_count, self.probs)
        draw = creation.default_generator.np.binomial(n.astype(np.int64), p)
        return _host_draw(draw, self.probs.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        self._maybe_validate(value)
        n, logits = self.total_count, self.logits
        log_factorial_n = lgamma(n + 1)
        log_factorial_k = lgamma(value + 1)
        log_factorial_nmk = lgamma(n - value + 1)
        normalize_term = (n * _clamp_by_zero(logits) + n * log1p(_exp(-_abs(logits)))
                          - log_factorial_n)
        return value * logits - log_factorial_k - log_factorial_nmk - normalize_term

    def _max_count(self) -> int:
        counts = np.unique(self.total_count.detach().numpy())
        if counts.size != 1:
            raise NotImplementedError("Inhomogeneous total count not supported by "
                                      "`enumerate_support`.")
        return int(counts[0])

    def enumerate_support(self, expand: bool = True) -> Tensor:
        n = self._max_count()
        values = creation.arange(1 + n, dtype=self._param.dtype)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        return broadcast_to(values, (n + 1, *self._batch_shape)) if expand else values

    def entropy(self) -> Tensor:
        values = self.enumerate_support(expand=False)
        log_prob = self.log_prob(values)
        return -(_exp(log_prob) * log_prob).sum(0)


class _IntegerUpTo(constraints.Constraint):
    """The integers ``0..upper`` (``upper`` a tensor: Binomial's total counts)."""

    is_discrete = True

    def __init__(self, upper: Tensor) -> None:
        self.upper = upper

    def check(self, value: Tensor) -> Tensor:
        return (value % 1 == 0) & (value >= 0) & (value <= self.upper)


class NegativeBinomial(_BinaryParams):
    """The number of successes before ``total_count`` failures, ``probs`` the
    probability of a success (torch's)."""

    arg_constraints = {"total_count": constraints.greater_than_eq(0),  # noqa: RUF012
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        p, self.total_count = self._set_binary(probs, logits, total_count)
        self.total_count = self.total_count.to(p.dtype)
        super().__init__(p.shape, (), validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> NegativeBinomial:
        return self._expanded(batch_shape, {self._param_name: self._param,
                                            "total_count": self.total_count})

    @property
    def mean(self) -> Tensor:
        return self.total_count * _exp(self.logits)

    @property
    def mode(self) -> Tensor:
        return clamp(floor((self.total_count - 1) * _exp(self.logits)), min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / sigmoid(-self.logits)

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        n, p = _np_params(shape, self.total_count, self.probs)
        gen = creation.default_generator.np
        # the gamma-Poisson mixture (torch's); numpy's negative_binomial needs n > 0
        rate = gen.standard_gamma(np.where(n > 0, n, 1.0)) * p / (1 - p)
        draw = np.where(n > 0, gen.poisson(rate), 0)
        return _host_draw(draw, self.probs.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        self._maybe_validate(value)
        n = self.total_count
        log_unnormalized = n * logsigmoid(-self.logits) + value * logsigmoid(self.logits)
        log_normalization = -lgamma(n + value) + lgamma(1.0 + value) + lgamma(n)
        log_normalization = where(n + value == 0.0, 0.0, log_normalization)
        return log_unnormalized - log_normalization


# ---- continuous ----

class LogNormal(TransformedDistribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}  # noqa: RUF012
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        super().__init__(Normal(loc, scale, validate_args=validate_args), ExpTransform(),
                         validate_args=validate_args)

    @property
    def loc(self) -> Tensor:
        return self.base_dist.loc

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale

    @property
    def mean(self) -> Tensor:
        return _exp(self.loc + self.scale ** 2 / 2)

    @property
    def mode(self) -> Tensor:
        return _exp(self.loc - self.scale ** 2)

    @property
    def variance(self) -> Tensor:
        scale_sq = self.scale ** 2
        return expm1(scale_sq) * _exp(2 * self.loc + scale_sq)

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() + self.loc


class _Folded(TransformedDistribution):
    """``|X|`` for ``X`` centred at 0 (HalfNormal, HalfCauchy): the density
    doubles on ``[0, inf)``."""

    arg_constraints = {"scale": constraints.positive}  # noqa: RUF012
    support = constraints.nonnegative
    has_rsample = True

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale

    @property
    def mode(self) -> Tensor:
        return self.scale * 0

    def log_prob(self, value: Tensor) -> Tensor:
        self._maybe_validate(value)
        lp = self.base_dist.log_prob(value) + math.log(2)
        return where(ge(value, 0), lp, -math.inf)

    def cdf(self, value: Tensor) -> Tensor:
        self._maybe_validate(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: Tensor) -> Tensor:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() - math.log(2)


class HalfNormal(_Folded):
    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        super().__init__(Normal(0, scale, validate_args=False), AbsTransform(),
                         validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self) -> Tensor:
        return self.scale ** 2 * (1 - 2 / math.pi)


class Cauchy(_LocationScale):
    @property
    def mean(self) -> Tensor:
        return nan_full(self._extended_shape(), self.loc.dtype)

    @property
    def variance(self) -> Tensor:
        return _full(self._extended_shape(), math.inf, self.loc.dtype)

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        u = _uniform(self._extended_shape(sample_shape), self.loc.dtype)
        return self.loc + tan(math.pi * (u - 0.5)) * self.scale

    def log_prob(self, value: Tensor) -> Tensor:
        self._maybe_validate(value)
        return -math.log(math.pi) - _log(self.scale) \
            - log1p(((value - self.loc) / self.scale) ** 2)

    def cdf(self, value: Tensor) -> Tensor:
        self._maybe_validate(value)
        return atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value: Tensor) -> Tensor:
        return tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self) -> Tensor:
        return math.log(4 * math.pi) + _log(self.scale)


class HalfCauchy(_Folded):
    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        super().__init__(Cauchy(0, scale, validate_args=False), AbsTransform(),
                         validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return _full(self._extended_shape(), math.inf, self.scale.dtype)

    @property
    def variance(self) -> Tensor:
        return _full(self._extended_shape(), math.inf, self.scale.dtype)


class Gumbel(_LocationScale):
    @property
    def mean(self) -> Tensor:
        return self.loc + self.scale * _EULER_GAMMA

    @property
    def stddev(self) -> Tensor:
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev ** 2

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        dt = self.loc.dtype
        fi = np.finfo(dt.np)
        # torch's base: Uniform(tiny, 1 - eps)
        u = _uniform(self._extended_shape(sample_shape), dt) * (1 - float(fi.eps) - float(
            fi.tiny)) + float(fi.tiny)
        return self.loc - self.scale * _log(-_log(u))

    def log_prob(self, value: Tensor) -> Tensor:
        self._maybe_validate(value)
        y = (self.loc - value) / self.scale
        return (y - _exp(y)) - _log(self.scale)

    def cdf(self, value: Tensor) -> Tensor:
        self._maybe_validate(value)
        return _exp(-_exp((self.loc - value) / self.scale))

    def icdf(self, value: Tensor) -> Tensor:
        return self.loc - self.scale * _log(-_log(value))

    def entropy(self) -> Tensor:
        return _log(self.scale) + (1 + _EULER_GAMMA)


class StudentT(Distribution):
    arg_constraints = {"df": constraints.positive, "loc": constraints.real,  # noqa: RUF012
                       "scale": constraints.positive}
    support = constraints.real

    def __init__(self, df: Any, loc: Any = 0.0, scale: Any = 1.0,
                 validate_args: bool | None = None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        super().__init__(self.df.shape, (), validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> StudentT:
        return self._expanded(batch_shape, {"df": self.df, "loc": self.loc,
                                            "scale": self.scale})

    @property
    def mean(self) -> Tensor:
        return where(self.df <= 1, math.nan, self.loc)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        df = self.df
        finite = self.scale ** 2 * df / (df - 2)
        return where(df > 2, finite, where(df > 1, math.inf, math.nan))

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        df, loc, scale = _np_params(shape, self.df, self.loc, self.scale)
        gen = creation.default_generator.np
        x = gen.standard_normal(shape)
        z = 2.0 * gen.standard_gamma(0.5 * df)  # chi2(df)
        return _host_draw(loc + scale * x / np.sqrt(z / df), self.df.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        self._maybe_validate(value)
        df = self.df
        y = (value - self.loc) / self.scale
        z = (_log(self.scale) + 0.5 * _log(df) + 0.5 * math.log(math.pi) + lgamma(0.5 * df)
             - lgamma(0.5 * (df + 1.0)))
        return -0.5 * (df + 1.0) * log1p(y ** 2.0 / df) - z

    def entropy(self) -> Tensor:
        df = self.df
        lbeta = lgamma(0.5 * df) + math.lgamma(0.5) - lgamma(0.5 * (df + 1))
        return (_log(self.scale) + 0.5 * (df + 1) * (digamma(0.5 * (df + 1)) - digamma(0.5 * df))
                + 0.5 * _log(df) + lbeta)


class Chi2(Gamma):
    arg_constraints = {"df": constraints.positive}  # noqa: RUF012

    def __init__(self, df: Any, validate_args: bool | None = None) -> None:
        (df,) = broadcast_all(df)
        super().__init__(0.5 * df, 0.5, validate_args)

    @property
    def df(self) -> Tensor:
        return self.concentration * 2

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Chi2:
        return self._expanded(batch_shape, {"concentration": self.concentration,
                                            "rate": self.rate})


class Weibull(Distribution):
    arg_constraints = {"scale": constraints.positive,  # noqa: RUF012
                       "concentration": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, scale: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.scale, self.concentration = broadcast_all(scale, concentration)
        super().__init__(self.scale.shape, (), validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Weibull:
        return self._expanded(batch_shape, {"scale": self.scale,
                                            "concentration": self.concentration})

    @property
    def mean(self) -> Tensor:
        return self.scale * _exp(lgamma(1 + 1 / self.concentration))

    @property
    def mode(self) -> Tensor:
        k = self.concentration  # NaN for k < 1, as torch's
        return self.scale * ((k - 1) / k) ** k.reciprocal()

    @property
    def variance(self) -> Tensor:
        k = self.concentration
        return self.scale ** 2 * (_exp(lgamma(1 + 2 / k)) - _exp(2 * lgamma(1 + 1 / k)))

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        u = _uniform(self._extended_shape(sample_shape), self.scale.dtype)
        return self.scale * (-log1p(-u)) ** (1 / self.concentration)

    def log_prob(self, value: Tensor) -> Tensor:
        self._maybe_validate(value)
        k, lam = self.concentration, self.scale
        z = value / lam
        return _log(k / lam) + (k - 1) * _log(z) - z ** k

    def cdf(self, value: Tensor) -> Tensor:
        self._maybe_validate(value)
        return -expm1(-((value / self.scale) ** self.concentration))

    def icdf(self, value: Tensor) -> Tensor:
        return self.scale * (-log1p(-value)) ** (1 / self.concentration)

    def entropy(self) -> Tensor:
        k = self.concentration
        return _EULER_GAMMA * (1 - 1 / k) + _log(self.scale / k) + 1


class Pareto(Distribution):
    arg_constraints = {"alpha": constraints.positive,  # noqa: RUF012
                       "scale": constraints.positive}
    has_rsample = True

    def __init__(self, scale: Any, alpha: Any, validate_args: bool | None = None) -> None:
        self.scale, self.alpha = broadcast_all(scale, alpha)
        super().__init__(self.scale.shape, (), validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Pareto:
        return self._expanded(batch_shape, {"scale": self.scale, "alpha": self.alpha})

    @property
    def support(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.greater_than_eq(self.scale)

    @property
    def mean(self) -> Tensor:
        a = clamp(self.alpha, min=1)  # inf for alpha <= 1 (torch's)
        return a * self.scale / (a - 1)

    @property
    def mode(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        a = clamp(self.alpha, min=2)  # inf for alpha <= 2 (torch's)
        return self.scale ** 2 * a / ((a - 1) ** 2 * (a - 2))

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        u = _uniform(self._extended_shape(sample_shape), self.scale.dtype)
        return self.scale * _exp(-log1p(-u) / self.alpha)

    def log_prob(self, value: Tensor) -> Tensor:
        self._maybe_validate(value)
        return _log(self.alpha) + self.alpha * _log(self.scale) \
            - (self.alpha + 1) * _log(value)

    def cdf(self, value: Tensor) -> Tensor:
        self._maybe_validate(value)
        return 1 - (self.scale / value) ** self.alpha

    def icdf(self, value: Tensor) -> Tensor:
        return self.scale * _exp(-log1p(-value) / self.alpha)

    def entropy(self) -> Tensor:
        return _log(self.scale / self.alpha) + (1 + self.alpha.reciprocal())


# ---- relaxed (Concrete) distributions ----

class LogitRelaxedBernoulli(_BinaryParams):
    arg_constraints = {"probs": constraints.unit_interval,  # noqa: RUF012
                       "logits": constraints.real}
    support = constraints.real
    has_rsample = True

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        (p,) = self._set_binary(probs, logits)
        (self.temperature,) = broadcast_all(temperature)
        if self.temperature.dtype != p.dtype:
            self.temperature = self.temperature.to(p.dtype)
        super().__init__(p.shape, (), validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None
               ) -> LogitRelaxedBernoulli:
        return self._expanded(batch_shape, {self._param_name: self._param},
                              temperature=self.temperature)

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(broadcast_to(self.probs, shape))
        u = clamp_probs(_uniform(shape, probs.dtype))
        return (_log(u) - log1p(-u) + _log(probs) - log1p(-probs)) / self.temperature

    def log_prob(self, value: Tensor) -> Tensor:
        self._maybe_validate(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value * self.temperature
        return _log(self.temperature) + diff - 2 * log1p(_exp(diff))


class _RelaxedTransformed(TransformedDistribution):
    """A relaxed distribution as a transform of its base: ``expand`` keeps the
    transforms; temperature, logits and probs are the base's."""

    @property
    def temperature(self) -> Tensor:
        return self.base_dist.temperature

    @property
    def logits(self) -> Tensor:
        return self.base_dist.logits

    @property
    def probs(self) -> Tensor:
        return self.base_dist.probs


class RelaxedBernoulli(_RelaxedTransformed):
    """``sigmoid`` of a LogitRelaxedBernoulli draw: the binary Concrete."""

    arg_constraints = {"probs": constraints.unit_interval,  # noqa: RUF012
                       "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        base = LogitRelaxedBernoulli(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)



class ExpRelaxedCategorical(Distribution):
    arg_constraints = {"probs": constraints.simplex,  # noqa: RUF012
                       "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature: Any, probs: Tensor | None = None,
                 logits: Tensor | None = None, validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits, validate_args=validate_args)
        dt = self._categorical._param.dtype
        (self.temperature,) = broadcast_all(temperature)
        if self.temperature.dtype != dt:
            self.temperature = self.temperature.to(dt)
        param_shape = self._categorical._param.shape
        super().__init__(param_shape[:-1], param_shape[-1:], validate_args=False)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None
               ) -> ExpRelaxedCategorical:
        new = type(self).__new__(type(self))
        new._categorical = self._categorical.expand(batch_shape)
        new.temperature = self.temperature
        Distribution.__init__(new, tuple(batch_shape), self._event_shape, validate_args=False)
        return new

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = clamp_probs(_uniform(shape, self.logits.dtype))
        gumbels = -_log(-_log(u))
        scores = (self.logits + gumbels) / self.temperature
        return scores - logsumexp(scores, -1, keepdim=True)

    def log_prob(self, value: Tensor) -> Tensor:
        k = self._categorical._num_events
        self._maybe_validate(value)
        logits, value = broadcast_all(self.logits, value)
        log_scale = math.lgamma(k) - _log(self.temperature) * -(k - 1)
        score = logits - value * self.temperature
        score = (score - logsumexp(score, -1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(_RelaxedTransformed):
    """``exp`` of an ExpRelaxedCategorical draw: the Concrete / Gumbel-softmax
    distribution on the simplex."""

    arg_constraints = {"probs": constraints.simplex,  # noqa: RUF012
                       "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature: Any, probs: Tensor | None = None,
                 logits: Tensor | None = None, validate_args: bool | None = None) -> None:
        base = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)



# ---- mixtures ----

class MixtureSameFamily(Distribution):
    """``p(x) = sum_k pi_k p_k(x)``: ``mixture_distribution`` a Categorical
    over the rightmost batch dim of ``component_distribution`` (torch's)."""

    arg_constraints: dict = {}  # noqa: RUF012
    has_rsample = False

    def __init__(self, mixture_distribution: Categorical, component_distribution: Distribution,
                 validate_args: bool | None = None) -> None:
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError("The Mixture distribution needs to be an instance of "
                             "torch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution need to be an instance of "
                             "torch.distributions.Distribution")
        mdbs = mixture_distribution.batch_shape
        cdbs = component_distribution.batch_shape[:-1]
        for size1, size2 in zip(reversed(mdbs), reversed(cdbs), strict=False):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mdbs}) is not "
                                 f"compatible with `component_distribution.batch_shape`"
                                 f"({cdbs})")
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._num_component = km
        event_shape = component_distribution.event_shape
        self._event_ndims = len(event_shape)
        super().__init__(cdbs, event_shape, validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> MixtureSameFamily:
        batch_shape = tuple(batch_shape)
        comp = self._component_distribution.expand(batch_shape + (self._num_component,))
        mix = self._mixture_distribution.expand(batch_shape)
        return MixtureSameFamily(mix, comp, validate_args=False)

    @property
    def support(self) -> constraints.Constraint | None:  # type: ignore[override]
        return self._component_distribution.support

    @property
    def mixture_distribution(self) -> Categorical:
        return self._mixture_distribution

    @property
    def component_distribution(self) -> Distribution:
        return self._component_distribution

    def _pad(self, x: Tensor) -> Tensor:
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x: Tensor) -> Tensor:
        dist_batch_ndims = len(self._batch_shape)
        cat_batch_ndims = len(self._mixture_distribution.batch_shape)
        pad_ndims = 0 if cat_batch_ndims == 1 else dist_batch_ndims - cat_batch_ndims
        xs = x.shape
        return x.reshape(*xs[:-1], *([1] * pad_ndims), *xs[-1:], *([1] * self._event_ndims))

    @property
    def mean(self) -> Tensor:
        probs = self._pad_mixture_dimensions(self._mixture_distribution.probs)
        return (probs * self._component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self) -> Tensor:
        probs = self._pad_mixture_dimensions(self._mixture_distribution.probs)
        comp = self._component_distribution
        mean_cond_var = (probs * comp.variance).sum(-1 - self._event_ndims)
        var_cond_mean = (probs * (comp.mean - self._pad(self.mean)) ** 2.0).sum(
            -1 - self._event_ndims)
        return mean_cond_var + var_cond_mean

    def cdf(self, x: Tensor) -> Tensor:
        x = self._pad(x)
        cdf_x = self._component_distribution.cdf(x)
        return (cdf_x * self._mixture_distribution.probs).sum(-1)

    def log_prob(self, x: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(x)
        x = self._pad(x)
        log_prob_x = self._component_distribution.log_prob(x)
        log_mix_prob = log_softmax(self._mixture_distribution.logits, -1)
        return logsumexp(log_prob_x + log_mix_prob, -1)

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        sample_len = len(tuple(sample_shape))
        gather_dim = sample_len + len(self._batch_shape)
        es = self._event_shape
        mix_sample = self._mixture_distribution.sample(sample_shape)
        mix_shape = mix_sample.shape
        comp_samples = self._component_distribution.sample(sample_shape)
        idx = mix_sample.reshape(*mix_shape, *([1] * (len(es) + 1)))
        idx = idx.repeat(*([1] * len(mix_shape)), 1, *es)
        return comp_samples.detach().gather(gather_dim, idx).squeeze(gather_dim)


class _Multinomial(constraints.Constraint):
    """Nonnegative integer counts summing to at most ``upper`` (torch's check)."""

    is_discrete = True
    event_dim = 1

    def __init__(self, upper: int) -> None:
        self.upper = upper

    def check(self, value: Tensor) -> Tensor:
        return ((value >= 0) & (value % 1 == 0)).all(-1) & (value.sum(-1) <= self.upper)


class Multinomial(Distribution):
    """Counts of ``total_count`` categorical draws (torch's)."""

    arg_constraints = {"probs": constraints.simplex,  # noqa: RUF012
                       "logits": constraints.real_vector}

    def __init__(self, total_count: int = 1, probs: Tensor | None = None,
                 logits: Tensor | None = None, validate_args: bool | None = None) -> None:
        if not isinstance(total_count, int | np.integer):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = int(total_count)
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=self.total_count, probs=self.probs)
        param_shape = self._categorical.param_shape
        super().__init__(self._categorical.batch_shape, param_shape[-1:], validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Multinomial:
        new = type(self).__new__(type(self))
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(total_count=self.total_count, probs=new._categorical.probs)
        Distribution.__init__(new, tuple(batch_shape), self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def support(self) -> constraints.Constraint:  # type: ignore[override]
        return _Multinomial(self.total_count)

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def param_shape(self) -> tuple[int, ...]:
        return self._categorical.param_shape

    @property
    def mean(self) -> Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        p = np.broadcast_to(self.probs.detach().numpy().astype(np.float64), shape)
        flat = p.reshape(-1, shape[-1])
        gen = creation.default_generator.np
        draws = np.stack([gen.multinomial(self.total_count, row / row.sum()) for row in flat])
        return _host_draw(draws.reshape(shape), self.probs.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        self._maybe_validate(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = lgamma(value.sum(-1) + 1)
        log_factorial_xs = lgamma(value + 1).sum(-1)
        # a count of 0 for a category of probability 0: 0 * -inf counts 0
        logits = where((value == 0) & (logits == -math.inf), 0.0, logits)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)

    def entropy(self) -> Tensor:
        n = float(self.total_count)
        term1 = n * self._categorical.entropy() - math.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = _exp(self._binomial.log_prob(support))
        weights = lgamma(support + 1)
        return term1 + (binomial_probs * weights).sum(0).sum(-1)

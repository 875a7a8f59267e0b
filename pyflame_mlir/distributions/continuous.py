"""Continuous families: ``Normal``, ``Uniform``, ``Laplace``, ``Exponential``,
``Gamma``, ``Beta``, ``Dirichlet``, ``MultivariateNormal`` (torch's formulas).

``Gamma``, ``Beta`` and ``Dirichlet`` draw with numpy's gamma sampler from
pyflame's generator, which evaluates their parameters: their samples carry no
gradient and they have no ``rsample`` (torch's implicit reparameterization
of the gamma draw is not implemented)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import creation
from .. import linalg as _linalg
from ..composites import xlogy
from ..composites2 import digamma, erfinv, lgamma
from ..core import Tensor
from ..creation import eye, rand, randn, zeros_like
from ..dialects.dtypes import DType
from ..ops import abs as _abs
from ..ops import (
    broadcast_to,
    clamp,
    erf,
    le,
    log1p,
    logical_and,
    lt,
    matmul,
    sign,
    stack,
    where,
)
from ..ops import exp as _exp
from ..ops import log as _log
from ..reductions import all as _all
from . import constraints
from .distribution import Distribution, broadcast_all, lazy_property, nan_full

__all__ = ["Beta", "Dirichlet", "Exponential", "Gamma", "Laplace", "MultivariateNormal",
           "Normal", "Uniform"]

_LOG_SQRT_2PI = math.log(math.sqrt(2 * math.pi))


def _rand(shape: tuple[int, ...], dt: DType) -> Tensor:
    return rand(*shape, dtype=dt) if shape else rand(dtype=dt)


def _randn(shape: tuple[int, ...], dt: DType) -> Tensor:
    return randn(*shape, dtype=dt) if shape else randn(dtype=dt)


class _LocationScale(Distribution):
    """A real location-scale family: ``loc`` is its mean and its mode."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}  # noqa: RUF012
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, (), validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Any:
        return self._expanded(batch_shape, {"loc": self.loc, "scale": self.scale})

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc


class Normal(_LocationScale):
    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.scale ** 2

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        eps = _randn(self._extended_shape(sample_shape), self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value: Tensor) -> Tensor:
        self._maybe_validate(value)
        return -((value - self.loc) ** 2) / (2 * self.scale ** 2) - _log(self.scale) \
            - _LOG_SQRT_2PI

    def cdf(self, value: Tensor) -> Tensor:
        self._maybe_validate(value)
        return 0.5 * (1 + erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value: Tensor) -> Tensor:
        return self.loc + self.scale * erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + _log(self.scale)


class Uniform(Distribution):
    arg_constraints = {"low": constraints.real, "high": constraints.real}  # noqa: RUF012
    has_rsample = True

    def __init__(self, low: Any, high: Any, validate_args: bool | None = None) -> None:
        self.low, self.high = broadcast_all(low, high)
        super().__init__(self.low.shape, (), validate_args)
        if self._validate_args and (self._force_validate or not (self.low.is_lazy
                                                                or self.high.is_lazy)):
            if not bool(_all(lt(self.low, self.high)).item()):
                raise ValueError(f"Uniform: expected low < high everywhere (parameters low "
                                 f"and high of shape {list(self.low.shape)}), found "
                                 f"low >= high:\nlow={self.low.numpy()}\nhigh={self.high.numpy()}")

    @property
    def support(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.half_open_interval(self.low, self.high)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Uniform:
        return self._expanded(batch_shape, {"low": self.low, "high": self.high})

    @property
    def mean(self) -> Tensor:
        return (self.high + self.low) / 2

    @property
    def mode(self) -> Tensor:
        return nan_full(self._batch_shape, self.low.dtype)

    @property
    def stddev(self) -> Tensor:
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self) -> Tensor:
        return (self.high - self.low) ** 2 / 12

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        u = _rand(self._extended_shape(sample_shape), self.low.dtype)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value: Tensor) -> Tensor:
        self._maybe_validate(value)
        inside = logical_and(le(self.low, value), lt(value, self.high)).to(self.low.dtype)
        return _log(inside) - _log(self.high - self.low)

    def cdf(self, value: Tensor) -> Tensor:
        self._maybe_validate(value)
        return clamp((value - self.low) / (self.high - self.low), 0, 1)

    def icdf(self, value: Tensor) -> Tensor:
        return value * (self.high - self.low) + self.low

    def entropy(self) -> Tensor:
        return _log(self.high - self.low)


class Laplace(_LocationScale):
    @property
    def variance(self) -> Tensor:
        return 2 * self.scale ** 2

    @property
    def stddev(self) -> Tensor:
        return 2 ** 0.5 * self.scale

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        eps = float(np.finfo(self.loc.dtype.np).eps)
        # u uniform on [eps - 1, 1), as torch: log1p(-|u|) stays finite
        u = _rand(self._extended_shape(sample_shape), self.loc.dtype) * (2 - eps) + (eps - 1)
        return self.loc - self.scale * sign(u) * log1p(-_abs(u))

    def log_prob(self, value: Tensor) -> Tensor:
        self._maybe_validate(value)
        return -_log(2 * self.scale) - _abs(value - self.loc) / self.scale

    def cdf(self, value: Tensor) -> Tensor:
        self._maybe_validate(value)
        z = value - self.loc
        return 0.5 - 0.5 * sign(z) * (_exp(-_abs(z) / self.scale) - 1)

    def icdf(self, value: Tensor) -> Tensor:
        term = value - 0.5
        return self.loc - self.scale * sign(term) * log1p(-2 * _abs(term))

    def entropy(self) -> Tensor:
        return 1 + _log(2 * self.scale)


class Exponential(Distribution):
    arg_constraints = {"rate": constraints.positive}  # noqa: RUF012
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, (), validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Exponential:
        return self._expanded(batch_shape, {"rate": self.rate})

    @property
    def mean(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def mode(self) -> Tensor:
        return zeros_like(self.rate)

    @property
    def stddev(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def variance(self) -> Tensor:
        return self.rate ** -2

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        u = _rand(self._extended_shape(sample_shape), self.rate.dtype)
        return -log1p(-u) / self.rate

    def log_prob(self, value: Tensor) -> Tensor:
        self._maybe_validate(value)
        return _log(self.rate) - self.rate * value

    def cdf(self, value: Tensor) -> Tensor:
        self._maybe_validate(value)
        return 1 - _exp(-self.rate * value)

    def icdf(self, value: Tensor) -> Tensor:
        return -log1p(-value) / self.rate

    def entropy(self) -> Tensor:
        return 1.0 - _log(self.rate)


def _standard_gamma(concentration: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Gamma(concentration, 1) draws of ``shape`` from pyflame's generator
    (numpy's sampler, on the evaluated concentration; clamped to the
    smallest normal number, as torch)."""
    conc = np.broadcast_to(concentration.numpy().astype(np.float64), shape)
    draw = creation.default_generator.np.standard_gamma(conc)  # the generator pf.manual_seed seeds
    dt = concentration.dtype.np
    return Tensor._leaf(np.maximum(draw, np.finfo(dt).tiny).astype(dt))  # noqa: SLF001


class Gamma(Distribution):
    arg_constraints = {"concentration": constraints.positive,  # noqa: RUF012
                       "rate": constraints.positive}
    support = constraints.nonnegative

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.shape, (), validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Gamma:
        return self._expanded(batch_shape, {"concentration": self.concentration,
                                            "rate": self.rate})

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return clamp((self.concentration - 1) / self.rate, min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate ** 2

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        return _standard_gamma(self.concentration, shape) / broadcast_to(self.rate.detach(),
                                                                         shape)

    def log_prob(self, value: Tensor) -> Tensor:
        self._maybe_validate(value)
        c, r = self.concentration, self.rate
        return xlogy(c, r) + xlogy(c - 1, value) - r * value - lgamma(c)

    def entropy(self) -> Tensor:
        c = self.concentration
        return c - _log(self.rate) + lgamma(c) + (1.0 - c) * digamma(c)


class Dirichlet(Distribution):
    arg_constraints = {"concentration": constraints.positive}  # noqa: RUF012  (elementwise)
    support = constraints.simplex

    def __init__(self, concentration: Tensor, validate_args: bool | None = None) -> None:
        if not isinstance(concentration, Tensor) or concentration.ndim < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Dirichlet:
        return self._expanded(batch_shape, {"concentration": self.concentration})

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self) -> Tensor:
        c = self.concentration
        cm1 = clamp(c - 1, min=0)
        interior = cm1 / cm1.sum(-1, keepdim=True)
        # every concentration < 1: the mode is the vertex of the largest one (torch)
        vertex = (c == c.amax(-1, keepdim=True)).to(c.dtype)
        return where(_all(c < 1, -1, keepdim=True), vertex, interior)

    @property
    def variance(self) -> Tensor:
        c = self.concentration
        c0 = c.sum(-1, keepdim=True)
        return c * (c0 - c) / (c0 ** 2 * (c0 + 1))

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        g = _standard_gamma(self.concentration, self._extended_shape(sample_shape))
        return g / g.sum(-1, keepdim=True)

    def log_prob(self, value: Tensor) -> Tensor:
        self._maybe_validate(value)
        c = self.concentration
        return xlogy(c - 1.0, value).sum(-1) + lgamma(c.sum(-1)) - lgamma(c).sum(-1)

    def entropy(self) -> Tensor:
        c = self.concentration
        k = c.shape[-1]
        a0 = c.sum(-1)
        return (lgamma(c).sum(-1) - lgamma(a0) - (k - a0) * digamma(a0)
                - ((c - 1.0) * digamma(c)).sum(-1))


class Beta(Distribution):
    arg_constraints = {"concentration1": constraints.positive,  # noqa: RUF012
                       "concentration0": constraints.positive}
    support = constraints.unit_interval

    def __init__(self, concentration1: Any, concentration0: Any,
                 validate_args: bool | None = None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        self._dirichlet = Dirichlet(stack([self.concentration1, self.concentration0], -1),
                                    validate_args=validate_args)
        super().__init__(self._dirichlet.batch_shape, (), validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Beta:
        shape = tuple(batch_shape)
        return Beta(broadcast_to(self.concentration1, shape),
                    broadcast_to(self.concentration0, shape), validate_args=False)

    @property
    def mean(self) -> Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Tensor:
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self) -> Tensor:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total ** 2 * (total + 1))

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        return self._dirichlet.sample(sample_shape)[..., 0]

    def log_prob(self, value: Tensor) -> Tensor:
        self._maybe_validate(value)
        return self._dirichlet.log_prob(stack([value, 1.0 - value], -1))

    def entropy(self) -> Tensor:
        return self._dirichlet.entropy()


# ---- the multivariate normal ----

def solve_tril(lower: Tensor, rhs: Tensor) -> Tensor:
    """``X`` with ``lower @ X == rhs`` (lower triangular; batch dims broadcast)."""
    return _linalg.solve_triangular(lower, rhs, upper=False)


def _batch_mahalanobis(scale_tril: Tensor, diff: Tensor) -> Tensor:
    """``|L^-1 diff|^2`` over the last dim."""
    x = solve_tril(scale_tril, diff.unsqueeze(-1))
    return (x ** 2).sum((-2, -1))


def _cholesky(matrix: Tensor, what: str) -> Tensor:
    del what
    return _linalg.cholesky(matrix)


class MultivariateNormal(Distribution):
    arg_constraints = {"loc": constraints.real_vector,  # noqa: RUF012
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Tensor, covariance_matrix: Tensor | None = None,
                 precision_matrix: Tensor | None = None, scale_tril: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        matrix = given[0]
        if matrix.ndim < 2:
            raise ValueError("scale_tril, covariance_matrix or precision_matrix must be at "
                             "least two-dimensional, with optional leading batch dimensions")
        n = loc.shape[-1]
        if matrix.shape[-2:] != (n, n):
            raise ValueError(f"MultivariateNormal: loc of shape {list(loc.shape)} needs "
                             f"{n}x{n} matrices, got shape {list(matrix.shape)}")
        batch_shape = tuple(np.broadcast_shapes(matrix.shape[:-2], loc.shape[:-1]))
        full_shape = batch_shape + (n, n)
        if scale_tril is not None:
            self.scale_tril = broadcast_to(scale_tril, full_shape)
        elif covariance_matrix is not None:
            self.covariance_matrix = broadcast_to(covariance_matrix, full_shape)
        else:
            assert precision_matrix is not None
            self.precision_matrix = broadcast_to(precision_matrix, full_shape)
        self.loc = broadcast_to(loc, batch_shape + (n,))
        super().__init__(batch_shape, (n,), validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = _cholesky(covariance_matrix, "covariance_matrix")
        else:
            # torch's _precision_to_scale_tril: the factor of the flipped precision,
            # inverted (a triangular solve against the identity)
            assert precision_matrix is not None
            flipped = _cholesky(precision_matrix.flip((-2, -1)), "precision_matrix")
            l_inv = flipped.flip((-2, -1)).transpose(-2, -1)
            self._unbroadcasted_scale_tril = solve_tril(l_inv, _eye(n, loc.dtype))

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> MultivariateNormal:
        shape = tuple(batch_shape)
        n = self._event_shape[0]
        return MultivariateNormal(broadcast_to(self.loc, shape + (n,)),
                                  scale_tril=broadcast_to(self._unbroadcasted_scale_tril,
                                                          shape + (n, n)),
                                  validate_args=False)

    @lazy_property
    def scale_tril(self) -> Tensor:
        return broadcast_to(self._unbroadcasted_scale_tril,
                            self._batch_shape + self._event_shape * 2)

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        lower = self._unbroadcasted_scale_tril
        return broadcast_to(matmul(lower, lower.transpose(-1, -2)),
                            self._batch_shape + self._event_shape * 2)

    @lazy_property
    def precision_matrix(self) -> Tensor:
        lower = self._unbroadcasted_scale_tril
        inv = solve_tril(lower, _eye(lower.shape[-1], lower.dtype))
        return broadcast_to(matmul(inv.transpose(-1, -2), inv),
                            self._batch_shape + self._event_shape * 2)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return broadcast_to((self._unbroadcasted_scale_tril ** 2).sum(-1),
                            self._batch_shape + self._event_shape)

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        eps = _randn(self._extended_shape(sample_shape), self.loc.dtype)
        return self.loc + matmul(self._unbroadcasted_scale_tril, eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self) -> Tensor:
        return _log(self._unbroadcasted_scale_tril.diagonal(0, -2, -1)).sum(-1)

    def log_prob(self, value: Tensor) -> Tensor:
        self._maybe_validate(value)
        n = self._event_shape[0]
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (n * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self) -> Tensor:
        n = self._event_shape[0]
        h = 0.5 * n * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return broadcast_to(h, self._batch_shape)


def _eye(n: int, dt: DType) -> Tensor:
    return eye(n, dtype=dt)




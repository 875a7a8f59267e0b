"""``Independent`` (batch dims reinterpreted as event dims) and
``TransformedDistribution`` (a base distribution pushed through transforms)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core import Tensor
from . import constraints
from .distribution import Distribution, sum_rightmost
from .transforms import ComposeTransform, Transform

__all__ = ["Independent", "TransformedDistribution"]


class _IndependentConstraint(constraints.Constraint):
    def __init__(self, base: constraints.Constraint, ndims: int) -> None:
        self.base, self.ndims = base, ndims
        self.is_discrete = base.is_discrete
        self.event_dim = base.event_dim + ndims

    def check(self, value: Tensor) -> Tensor:
        ok = self.base.check(value)
        for _ in range(self.ndims):
            ok = ok.all(-1)
        return ok


class Independent(Distribution):
    arg_constraints: dict = {}  # noqa: RUF012

    def __init__(self, base_distribution: Distribution, reinterpreted_batch_ndims: int,
                 validate_args: bool | None = None) -> None:
        n = reinterpreted_batch_ndims
        shape = base_distribution.batch_shape + base_distribution.event_shape
        if n > len(base_distribution.batch_shape):
            raise ValueError(f"Expected reinterpreted_batch_ndims <= "
                             f"len(base_distribution.batch_shape), actual {n} vs "
                             f"{len(base_distribution.batch_shape)}")
        event_dim = n + len(base_distribution.event_shape)
        self.base_dist, self.reinterpreted_batch_ndims = base_distribution, n
        super().__init__(shape[:len(shape) - event_dim], shape[len(shape) - event_dim:],
                         validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Independent:
        n = self.reinterpreted_batch_ndims
        base = self.base_dist.expand(tuple(batch_shape) + self._event_shape[:n])
        return Independent(base, n, validate_args=False)

    @property
    def has_rsample(self) -> bool:  # type: ignore[override]
        return self.base_dist.has_rsample

    @property
    def support(self) -> constraints.Constraint:  # type: ignore[override]
        assert self.base_dist.support is not None
        return _IndependentConstraint(self.base_dist.support, self.reinterpreted_batch_ndims)

    @property
    def mean(self) -> Tensor:
        return self.base_dist.mean

    @property
    def mode(self) -> Tensor:
        return self.base_dist.mode

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value: Tensor) -> Tensor:
        return sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self) -> Tensor:
        return sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def __repr__(self) -> str:
        return f"Independent({self.base_dist!r}, {self.reinterpreted_batch_ndims})"


class TransformedDistribution(Distribution):
    """``y = t_n(...t_1(x))`` for ``x ~ base_distribution``; ``log_prob(y)``
    is the base's ``log_prob(x)`` minus each transform's log |det J|."""

    arg_constraints: dict = {}  # noqa: RUF012

    def __init__(self, base_distribution: Distribution,
                 transforms: Transform | Sequence[Transform],
                 validate_args: bool | None = None) -> None:
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list | tuple) and all(isinstance(t, Transform)
                                                        for t in transforms):
            self.transforms = list(transforms)
        else:
            raise ValueError(f"transforms must be a Transform or a list of Transforms, got "
                             f"{transforms!r}")
        self.base_dist = base_distribution
        base_event = len(base_distribution.event_shape)
        chain = ComposeTransform(self.transforms)
        if chain.event_dim > base_event + len(base_distribution.batch_shape):
            raise ValueError(f"base_distribution needs at least {chain.event_dim} dims, has "
                             f"{base_event + len(base_distribution.batch_shape)}")
        event_dim = max(chain.event_dim, base_event)
        shape = base_distribution.batch_shape + base_distribution.event_shape
        cut = len(shape) - event_dim
        super().__init__(shape[:cut], shape[cut:], validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None
               ) -> TransformedDistribution:
        """The same family (a LogNormal stays one), over an expanded base."""
        base_batch = tuple(batch_shape) + self._event_shape[
            :len(self._event_shape) - len(self.base_dist.event_shape)]
        new = type(self).__new__(type(self))
        TransformedDistribution.__init__(new, self.base_dist.expand(base_batch),
                                         self.transforms, validate_args=False)
        return new

    @property
    def has_rsample(self) -> bool:  # type: ignore[override]
        return self.base_dist.has_rsample

    @property
    def support(self) -> constraints.Constraint | None:  # type: ignore[override]
        return self.transforms[-1].codomain if self.transforms else self.base_dist.support

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        x = self.base_dist.sample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        x = self.base_dist.rsample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self._event_shape)
        total: Tensor | None = None
        y = value
        for t in reversed(self.transforms):
            x = t.inv(y)
            term = sum_rightmost(t.log_abs_det_jacobian(x, y), event_dim - t.event_dim)
            total = -term if total is None else total - term
            y = x
        base = sum_rightmost(self.base_dist.log_prob(y),
                             event_dim - len(self.base_dist.event_shape))
        return base if total is None else base + total

    def _monotonize_cdf(self, value: Tensor) -> Tensor:
        """``value`` or ``1 - value`` per element as the chain of transforms
        increases or decreases there (torch)."""
        sign: Any = 1
        for t in self.transforms:
            sign = sign * t.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value: Tensor) -> Tensor:
        for t in reversed(self.transforms):
            value = t.inv(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value: Tensor) -> Tensor:
        x = self.base_dist.icdf(self._monotonize_cdf(value))
        for t in self.transforms:
            x = t(x)
        return x

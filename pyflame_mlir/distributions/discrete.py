"""Discrete families: ``Bernoulli``, ``Categorical``, ``OneHotCategorical``,
each from ``probs`` or ``logits`` (the other is derived on first use), with
torch's conversions (``probs_to_logits`` clamps to the float's eps)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core import Tensor
from ..creation import arange, rand
from ..dialects.dtypes import int64
from ..indexing import gather, one_hot
from ..nn.functional import binary_cross_entropy_with_logits
from ..ops import broadcast_to, clamp, eq, ge, log1p, logsumexp, lt, sigmoid, softmax, where
from ..ops import log as _log
from . import constraints
from .distribution import Distribution, broadcast_all, lazy_property, nan_full

__all__ = ["Bernoulli", "Categorical", "OneHotCategorical", "clamp_probs", "logits_to_probs",
           "probs_to_logits"]


def clamp_probs(probs: Tensor) -> Tensor:
    """``probs`` clamped to ``[eps, 1 - eps]`` of its dtype (torch)."""
    eps = float(np.finfo(probs.dtype.np).eps)
    return clamp(probs, eps, 1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    ps = clamp_probs(probs)
    return _log(ps) - log1p(-ps) if is_binary else _log(ps)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    return sigmoid(logits) if is_binary else softmax(logits, -1)


def _one_of(name: str, probs: Any, logits: Any) -> None:
    if (probs is None) == (logits is None):
        raise ValueError(f"{name}: either `probs` or `logits` must be specified, but not both.")


class Bernoulli(Distribution):
    arg_constraints = {"probs": constraints.unit_interval,  # noqa: RUF012
                       "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        _one_of("Bernoulli", probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            shape = self.probs.shape
        else:
            (self.logits,) = broadcast_all(logits)
            shape = self.logits.shape
        super().__init__(shape, (), validate_args)

    @property
    def _param(self) -> Tensor:
        return self.__dict__["probs"] if "probs" in self.__dict__ else self.__dict__["logits"]

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Bernoulli:
        name = "probs" if "probs" in self.__dict__ else "logits"
        return self._expanded(batch_shape, {name: self._param})

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> tuple[int, ...]:
        return self._param.shape

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        p = self.probs
        return where(eq(p, 0.5), math.nan, ge(p, 0.5).to(p.dtype))

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        p = broadcast_to(self.probs.detach(), shape)
        u = rand(*shape, dtype=p.dtype) if shape else rand(dtype=p.dtype)
        return lt(u, p).to(p.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        self._maybe_validate(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Tensor:
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = arange(2, dtype=self._param.dtype).reshape((-1,) + (1,) * len(self._batch_shape))
        return broadcast_to(values, (2, *self._batch_shape)) if expand else values


class Categorical(Distribution):
    arg_constraints = {"probs": constraints.simplex,  # noqa: RUF012
                       "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        _one_of(type(self).__name__, probs, logits)
        param = probs if probs is not None else logits
        if not isinstance(param, Tensor) or param.ndim < 1:
            raise ValueError("`probs` or `logits` parameter must be at least one-dimensional.")
        if probs is not None:
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            assert logits is not None
            self.logits = logits - logsumexp(logits, -1, keepdim=True)
        self._num_events = param.shape[-1]
        super().__init__(param.shape[:-1], (), validate_args)

    @property
    def _param(self) -> Tensor:
        return self.__dict__["probs"] if "probs" in self.__dict__ else self.__dict__["logits"]

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Categorical:
        name = "probs" if "probs" in self.__dict__ else "logits"
        return self._expanded(batch_shape, {name: self._param}, _num_events=self._num_events)

    @property
    def support(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits)

    @property
    def param_shape(self) -> tuple[int, ...]:
        return self._param.shape

    @property
    def mean(self) -> Tensor:
        return nan_full(self._batch_shape, self._param.dtype)

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(-1)

    @property
    def variance(self) -> Tensor:
        return nan_full(self._batch_shape, self._param.dtype)

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        """Inverse-CDF draws: the count of cumulative probabilities below a
        uniform number (int64, as torch)."""
        shape = self._extended_shape(sample_shape)
        cdf = self.probs.detach().cumsum(-1)
        u = rand(*shape, dtype=cdf.dtype) if shape else rand(dtype=cdf.dtype)
        below = lt(cdf, (u * cdf[..., -1:].squeeze(-1)).unsqueeze(-1))
        return clamp(below.to(int64).sum(-1), max=self._num_events - 1)

    def log_prob(self, value: Tensor) -> Tensor:
        self._maybe_validate(value)
        value = value.to(int64).unsqueeze(-1)
        shape = tuple(np.broadcast_shapes(value.shape, self.logits.shape))
        index = broadcast_to(value, shape[:-1] + (1,))
        log_pmf = broadcast_to(self.logits, shape)
        return gather(log_pmf, -1, index).squeeze(-1)

    def entropy(self) -> Tensor:
        min_real = float(np.finfo(self.logits.dtype.np).min)
        logits = clamp(self.logits, min=min_real)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = arange(self._num_events, dtype=int64).reshape(
            (-1,) + (1,) * len(self._batch_shape))
        return broadcast_to(values, (self._num_events, *self._batch_shape)) if expand else values


class OneHotCategorical(Distribution):
    arg_constraints = {"probs": constraints.simplex,  # noqa: RUF012
                       "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits, validate_args=validate_args)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> OneHotCategorical:
        new = type(self).__new__(type(self))
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, tuple(batch_shape), self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def param_shape(self) -> tuple[int, ...]:
        return self._categorical.param_shape

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        return one_hot(self.probs.argmax(-1), self._event_shape[0]).to(self.probs.dtype)

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        idx = self._categorical.sample(sample_shape)
        return one_hot(idx, self._event_shape[0]).to(self.probs.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        self._maybe_validate(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self) -> Tensor:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        n = self._event_shape[0]
        values = one_hot(arange(n, dtype=int64), n).to(self.probs.dtype)
        values = values.reshape((n,) + (1,) * len(self._batch_shape) + (n,))
        return broadcast_to(values, (n, *self._batch_shape, n)) if expand else values

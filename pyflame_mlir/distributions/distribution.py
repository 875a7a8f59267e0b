"""``pf.distributions.Distribution``: torch.distributions' base class.

Lazy like the rest of pyflame: ``log_prob``, ``entropy``, ``cdf``... record
ops, and ``rsample`` builds ``loc + scale * eps`` from a host-drawn ``eps``
(``pf.randn``, pyflame's generator: ``pf.manual_seed``), so gradients flow
through the parameters. Draws differ from torch's generator's.

Argument validation follows torch's defaults (on unless
``Distribution.set_default_validate_args(False)`` or ``validate_args=False``),
with one difference that keeps recording cheap: a constraint is checked on
the values that are already computed (host data, realized tensors, Python
numbers). A lazy value (one a graph would have to run for) is checked only
when ``validate_args=True`` is passed explicitly, which evaluates it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core import Tensor
from ..creation import full
from ..creation import tensor as _tensor
from ..dialects.dtypes import DType, default_float
from ..ops import broadcast_to
from ..reductions import all as _all
from .constraints import Constraint

__all__ = ["Distribution", "broadcast_all", "lazy_property", "sum_rightmost"]

_DEFAULT_VALIDATE = True


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, int):
        return (shape,)
    return tuple(int(d) for d in shape)


def broadcast_all(*values: Any) -> tuple[Tensor, ...]:
    """Tensors of one broadcast shape; Python numbers take the dtype of the
    tensors among ``values`` (the default float if none), as torch."""
    dt: DType | None = next((v.dtype for v in values if isinstance(v, Tensor)), None)
    if dt is None or not dt.is_floating_point:
        dt = default_float() if dt is None else dt
    ts = []
    for v in values:
        if isinstance(v, Tensor):
            ts.append(v)
        elif isinstance(v, int | float | bool | np.number):
            ts.append(_tensor(float(v) if dt.is_floating_point else v, dtype=dt))
        else:
            raise ValueError(f"Input arguments must all be instances of numbers or Tensor, "
                             f"got {type(v).__name__}")
    shape = tuple(np.broadcast_shapes(*(t.shape for t in ts)))
    return tuple(t if t.shape == shape else broadcast_to(t, shape) for t in ts)


def sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """``value`` summed over its ``dim`` rightmost dimensions."""
    if dim == 0:
        return value
    return value.reshape(*value.shape[:value.ndim - dim], -1).sum(-1)


class lazy_property:  # noqa: N801  (torch's name)
    """A property computed on first use and then kept on the instance
    (``Bernoulli(logits=...).probs``), as torch's ``lazy_property``."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.__doc__ = fn.__doc__
        self.name = fn.__name__

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        value = self.fn(instance)
        instance.__dict__[self.name] = value
        return value


def _is_computed(v: Any) -> bool:
    return not isinstance(v, Tensor) or not v.is_lazy


class Distribution:
    """The base: ``batch_shape`` (independent distributions side by side),
    ``event_shape`` (one draw), and the methods each family overrides."""

    has_rsample = False
    has_enumerate_support = False
    arg_constraints: dict[str, Constraint] = {}  # noqa: RUF012  (torch's class attribute)
    support: Constraint | None = None

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        if value not in (True, False):
            raise ValueError("set_default_validate_args expects a bool")
        global _DEFAULT_VALIDATE
        _DEFAULT_VALIDATE = value

    def __init__(self, batch_shape: Sequence[int] = (), event_shape: Sequence[int] = (),
                 validate_args: bool | None = None) -> None:
        self._batch_shape = _shape(batch_shape)
        self._event_shape = _shape(event_shape)
        self._validate_args = _DEFAULT_VALIDATE if validate_args is None else validate_args
        self._force_validate = bool(validate_args)
        if self._validate_args:
            for param, constraint in self.arg_constraints.items():
                if param not in self.__dict__ and isinstance(
                        getattr(type(self), param, None), lazy_property):
                    continue  # derived from the parameter given (probs from logits)
                value = getattr(self, param)
                if value is None:
                    continue
                self._check(constraint, value, f"parameter {param}")

    def _check(self, constraint: Constraint, value: Any, what: str) -> None:
        if not (self._force_validate or _is_computed(value)):
            return
        if not isinstance(value, Tensor):
            value = _tensor(value)
        ok = constraint.check(value)
        if not bool(_all(ok).item()):
            raise ValueError(
                f"Expected {what} ({type(value).__name__} of shape {tuple(value.shape)}) of "
                f"distribution {self!r} to satisfy the constraint {constraint!r}, but found "
                f"invalid values:\n{value.numpy()}")

    # ---- shapes ----
    @property
    def batch_shape(self) -> tuple[int, ...]:
        return self._batch_shape

    @property
    def event_shape(self) -> tuple[int, ...]:
        return self._event_shape

    def _extended_shape(self, sample_shape: Sequence[int] = ()) -> tuple[int, ...]:
        return _shape(sample_shape) + self._batch_shape + self._event_shape

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Distribution:
        raise NotImplementedError(f"{type(self).__name__}.expand is not implemented")

    def _expanded(self, batch_shape: Sequence[int], params: dict[str, Tensor],
                  **kwargs: Any) -> Distribution:
        """A new instance with ``params`` broadcast to ``batch_shape`` (+ the
        event dims each parameter has beyond it)."""
        batch_shape = _shape(batch_shape)
        new = type(self).__new__(type(self))
        for name, v in params.items():
            tail = v.shape[len(self._batch_shape):]
            setattr(new, name, broadcast_to(v, batch_shape + tail))
        for name, v in kwargs.items():
            setattr(new, name, v)
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    # ---- statistics ----
    @property
    def mean(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement mean")

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement variance")

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    # ---- sampling and densities ----
    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        """A draw of shape ``sample_shape + batch_shape + event_shape``,
        detached from the parameters."""
        return self.rsample(sample_shape).detach()

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        raise NotImplementedError(
            f"{type(self).__name__} has no reparameterized sampler (rsample): use sample(), "
            "whose draws carry no gradient")

    def sample_n(self, n: int) -> Tensor:
        return self.sample((n,))

    def log_prob(self, value: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement log_prob")

    def cdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement cdf")

    def icdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement icdf")

    def entropy(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement entropy")

    def perplexity(self) -> Tensor:
        return self.entropy().exp()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement enumerate_support")

    def _validate_sample(self, value: Any) -> None:
        """torch's checks of a value passed to log_prob/cdf: a Tensor whose
        shape broadcasts with the batch and event shapes, inside the support."""
        if not isinstance(value, Tensor):
            raise ValueError(f"The value argument to log_prob must be a Tensor, got "
                             f"{type(value).__name__}")
        n = len(self._event_shape)
        if value.shape[value.ndim - n:] != self._event_shape if n else False:
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{tuple(value.shape)} vs {self._event_shape}.")
        actual = value.shape[:value.ndim - n]
        expected = self._batch_shape
        for i, j in zip(reversed(actual), reversed(expected), strict=False):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{tuple(value.shape)} vs {self._extended_shape()}.")
        if self.support is not None:
            self._check(self.support, value, "value")

    def _maybe_validate(self, value: Any) -> None:
        if self._validate_args:
            self._validate_sample(value)

    def __repr__(self) -> str:  # shapes only: a repr never evaluates
        def show(v: Any) -> str:
            return f"shape {list(v.shape)}" if isinstance(v, Tensor) else repr(v)
        args = ", ".join(f"{k}: {show(self.__dict__[k])}" for k in self.arg_constraints
                         if k in self.__dict__)
        return f"{type(self).__name__}({args})"


def nan_full(shape: Sequence[int], dt: DType) -> Tensor:
    return full(tuple(shape), math.nan, dtype=dt)


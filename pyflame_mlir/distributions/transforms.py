"""Bijections for ``TransformedDistribution`` (torch.distributions.transforms):
``ExpTransform``, ``AffineTransform``, ``SigmoidTransform``, ``TanhTransform``,
``ComposeTransform`` and their ``.inv``. ``cache_size=1`` keeps the last
``(x, y)`` pair, so ``log_prob`` of a value just sampled inverts nothing
(the SAC policy's tanh-squashed Normal relies on it: ``atanh`` of a value
rounded to 1 would be inf)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..core import Tensor
from ..ops import abs as _abs
from ..ops import atanh, broadcast_to, sigmoid, softplus, tanh
from ..ops import exp as _exp
from ..ops import log as _log
from . import constraints
from .discrete import clamp_probs
from .distribution import sum_rightmost

__all__ = ["AbsTransform", "AffineTransform", "ComposeTransform", "ExpTransform",
           "PowerTransform", "SigmoidTransform", "TanhTransform", "Transform"]


class Transform:
    """``y = t(x)``, ``x = t.inv(y)``, ``t.log_abs_det_jacobian(x, y)``."""

    domain: constraints.Constraint = constraints.real
    codomain: constraints.Constraint = constraints.real
    sign = 1

    def __init__(self, cache_size: int = 0) -> None:
        if cache_size not in (0, 1):
            raise ValueError(f"cache_size must be 0 or 1, got {cache_size}")
        self._cache_size = cache_size
        self._cached: tuple[Tensor, Tensor] | None = None

    @property
    def event_dim(self) -> int:
        return self.domain.event_dim

    @property
    def inv(self) -> Transform:
        return _InverseTransform(self)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        new._cache_size, new._cached = cache_size, None
        return new

    def __call__(self, x: Tensor) -> Tensor:
        if self._cache_size and self._cached is not None and self._cached[0] is x:
            return self._cached[1]
        y = self._call(x)
        if self._cache_size:
            self._cached = (x, y)
        return y

    def _inv_call(self, y: Tensor) -> Tensor:
        if self._cache_size and self._cached is not None and self._cached[1] is y:
            return self._cached[0]
        x = self._inverse(y)
        if self._cache_size:
            self._cached = (x, y)
        return x

    def _call(self, x: Tensor) -> Tensor:
        raise NotImplementedError

    def _inverse(self, y: Tensor) -> Tensor:
        raise NotImplementedError

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        raise NotImplementedError

    def __repr__(self) -> str:
        return type(self).__name__ + "()"


class _InverseTransform(Transform):
    def __init__(self, transform: Transform) -> None:
        super().__init__(transform._cache_size)
        self._inv = transform

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return self._inv.codomain

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return self._inv.domain

    @property
    def sign(self) -> int:  # type: ignore[override]
        return self._inv.sign

    @property
    def inv(self) -> Transform:
        return self._inv

    def __call__(self, x: Tensor) -> Tensor:
        return self._inv._inv_call(x)

    def _inv_call(self, y: Tensor) -> Tensor:
        return self._inv(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -self._inv.log_abs_det_jacobian(y, x)


class ComposeTransform(Transform):
    def __init__(self, parts: Sequence[Transform], cache_size: int = 0) -> None:
        super().__init__(cache_size)
        self.parts = list(parts)

    @property
    def event_dim(self) -> int:
        return max((p.event_dim for p in self.parts), default=0)

    def _call(self, x: Tensor) -> Tensor:
        for part in self.parts:
            x = part(x)
        return x

    def _inverse(self, y: Tensor) -> Tensor:
        for part in reversed(self.parts):
            y = part.inv(y)
        return y

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        if not self.parts:
            return x * 0
        terms = []
        for part in self.parts:
            y_part = part(x)
            terms.append(sum_rightmost(part.log_abs_det_jacobian(x, y_part),
                                       self.event_dim - part.event_dim))
            x = y_part
        total = terms[0]
        for t in terms[1:]:
            total = total + t
        return total


class ExpTransform(Transform):
    codomain = constraints.positive

    def _call(self, x: Tensor) -> Tensor:
        return _exp(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return _log(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return x


class AffineTransform(Transform):
    """``y = loc + scale * x`` (elementwise over ``event_dim`` trailing dims)."""

    def __init__(self, loc: Any, scale: Any, event_dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size)
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    @property
    def event_dim(self) -> int:
        return self._event_dim

    @property
    def sign(self) -> Any:  # type: ignore[override]
        if isinstance(self.scale, int | float):
            return 1 if self.scale > 0 else -1 if self.scale < 0 else 0
        return self.scale.sign()

    def _call(self, x: Tensor) -> Tensor:
        return self.loc + self.scale * x

    def _inverse(self, y: Tensor) -> Tensor:
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        if isinstance(self.scale, int | float):
            result = x * 0 + math.log(abs(self.scale))
        else:
            result = broadcast_to(_log(_abs(self.scale)), x.shape) if \
                self.scale.shape != x.shape else _log(_abs(self.scale))
        return sum_rightmost(result, self._event_dim)


class SigmoidTransform(Transform):
    codomain = constraints.unit_interval

    def _call(self, x: Tensor) -> Tensor:
        return clamp_probs(sigmoid(x))

    def _inverse(self, y: Tensor) -> Tensor:
        y = clamp_probs(y)
        return _log(y) - _log(1 - y)  # torch: y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -softplus(-x) - softplus(x)


class TanhTransform(Transform):
    codomain = constraints.interval(-1.0, 1.0)

    def _call(self, x: Tensor) -> Tensor:
        return tanh(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return atanh(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        # log(1 - tanh(x)^2), stably (torch's formula)
        return 2.0 * (math.log(2.0) - x - softplus(-2.0 * x))


class AbsTransform(Transform):
    """``y = |x|`` (not a bijection: ``inv`` gives the nonnegative root, and
    it has no log |det J|, as torch's)."""

    codomain = constraints.nonnegative

    def _call(self, x: Tensor) -> Tensor:
        return _abs(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return y


class PowerTransform(Transform):
    """``y = x ** exponent`` on the positive reals."""

    domain = constraints.positive
    codomain = constraints.positive

    def __init__(self, exponent: Any, cache_size: int = 0) -> None:
        super().__init__(cache_size)
        self.exponent = exponent

    @property
    def sign(self) -> Any:  # type: ignore[override]
        if isinstance(self.exponent, int | float):
            return 1 if self.exponent > 0 else -1 if self.exponent < 0 else 0
        return self.exponent.sign()

    def _call(self, x: Tensor) -> Tensor:
        return x ** self.exponent

    def _inverse(self, y: Tensor) -> Tensor:
        return y ** (1 / self.exponent)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return _log(_abs(self.exponent * y / x))

"""The supports and parameter domains of ``pf.distributions`` (torch's
``torch.distributions.constraints``): ``check(value)`` records a boolean
tensor, true where ``value`` satisfies the constraint."""

from __future__ import annotations

from ..core import Tensor
from ..ops import abs as _abs
from ..ops import eq, ge, gt, isfinite, le, logical_and, logical_or, lt
from ..reductions import all as _all

__all__ = ["Constraint", "boolean", "finite", "greater_than", "greater_than_eq",
           "half_open_interval", "integer_interval", "interval", "lower_cholesky", "nonnegative",
           "nonnegative_integer", "one_hot", "positive", "positive_definite", "positive_integer",
           "real", "real_vector", "simplex", "unit_interval"]


class Constraint:
    """A region of values; ``event_dim`` dimensions on the right make one event."""

    is_discrete = False
    event_dim = 0

    def check(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def __repr__(self) -> str:
        return type(self).__name__.lstrip("_") + "()"


class _Real(Constraint):
    def check(self, value: Tensor) -> Tensor:
        return eq(value, value)  # false only at NaN


class _RealVector(_Real):
    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        return _all(super().check(value), -1)


class _GreaterThan(Constraint):
    def __init__(self, lower_bound: float | Tensor, *, strict: bool = True) -> None:
        self.lower_bound, self.strict = lower_bound, strict

    def check(self, value: Tensor) -> Tensor:
        return gt(value, self.lower_bound) if self.strict else ge(value, self.lower_bound)

    def __repr__(self) -> str:
        kind = "GreaterThan" if self.strict else "GreaterThanEq"
        return f"{kind}(lower_bound={self.lower_bound})"


class _Interval(Constraint):
    def __init__(self, lower_bound: float | Tensor, upper_bound: float | Tensor, *,
                 upper_open: bool = False) -> None:
        self.lower_bound, self.upper_bound, self.upper_open = lower_bound, upper_bound, upper_open

    def check(self, value: Tensor) -> Tensor:
        upper = lt(value, self.upper_bound) if self.upper_open else le(value, self.upper_bound)
        return logical_and(ge(value, self.lower_bound), upper)

    def __repr__(self) -> str:
        return f"Interval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerInterval(_Interval):
    is_discrete = True

    def check(self, value: Tensor) -> Tensor:
        return logical_and(eq(value % 1, 0), super().check(value))


class _IntegerGreaterThanEq(Constraint):
    is_discrete = True

    def __init__(self, lower_bound: int) -> None:
        self.lower_bound = lower_bound

    def check(self, value: Tensor) -> Tensor:
        return logical_and(eq(value % 1, 0), ge(value, self.lower_bound))

    def __repr__(self) -> str:
        return f"IntegerGreaterThan(lower_bound={self.lower_bound})"


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value: Tensor) -> Tensor:
        return logical_or(eq(value, 0), eq(value, 1))


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        is_bool = _all(logical_or(eq(value, 0), eq(value, 1)), -1)
        return logical_and(is_bool, eq(value.sum(-1), 1))


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        return logical_and(_all(ge(value, 0), -1), lt(_abs(value.sum(-1) - 1), 1e-6))


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        lower = _all(_all(eq(value.tril(), value), -1), -1)
        diag = value.diagonal(0, -2, -1)
        return logical_and(lower, _all(gt(diag, 0), -1))


class _PositiveDefinite(Constraint):
    """Symmetric with a positive diagonal: the part checkable without a
    decomposition (torch also checks the eigenvalues, which needs one)."""

    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        sym = _all(_all(eq(value, value.transpose(-1, -2)), -1), -1)
        return logical_and(sym, _all(gt(value.diagonal(0, -2, -1), 0), -1))


class _Finite(Constraint):
    def check(self, value: Tensor) -> Tensor:
        return isfinite(value)


real = _Real()
real_vector = _RealVector()
positive = _GreaterThan(0.0)
nonnegative = _GreaterThan(0.0, strict=False)
nonnegative_integer = _IntegerGreaterThanEq(0)
positive_integer = _IntegerGreaterThanEq(1)
unit_interval = _Interval(0.0, 1.0)
boolean = _Boolean()
one_hot = _OneHot()
simplex = _Simplex()
lower_cholesky = _LowerCholesky()
positive_definite = _PositiveDefinite()
finite = _Finite()


def greater_than(lower_bound: float | Tensor) -> Constraint:
    return _GreaterThan(lower_bound)


def greater_than_eq(lower_bound: float | Tensor) -> Constraint:
    return _GreaterThan(lower_bound, strict=False)


def interval(lower_bound: float | Tensor, upper_bound: float | Tensor) -> Constraint:
    return _Interval(lower_bound, upper_bound)


def half_open_interval(lower_bound: float | Tensor, upper_bound: float | Tensor) -> Constraint:
    return _Interval(lower_bound, upper_bound, upper_open=True)


def integer_interval(lower_bound: int, upper_bound: int) -> Constraint:
    return _IntegerInterval(lower_bound, upper_bound)


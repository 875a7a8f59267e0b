"""erf and gelu on the PE, from the functions a PE has (issue #16).

CSL's ``<math>`` library has no erf (``../../docs/ARCHITECTURE.md``), so
``legalize-for-wse`` rewrites ``pyflame.erf`` and ``pyflame.gelu`` (and so
their VJPs, which call erf) into ops the grid runs: DSD multiply-adds, one
``exp_f32`` and one reciprocal per element, and a select between two branches.

erf(x), f32:

* ``|x| < 0.5``: the odd Taylor series ``x P(x²)`` to the x¹³ term (truncation
  below 5e-10 there), so tiny x keep their relative accuracy;
* ``|x| >= 0.5``: Abramowitz & Stegun 7.1.26,
  ``sign(x) (1 - t (a1 + t (a2 + ... a5 t)) exp(-x²))``, ``t = 1 / (1 + p |x|)``,
  absolute error at most 1.5e-7 in exact arithmetic (erf >= 0.52 there).

Bound, documented and tested against float64 erf (``test_grid_ops.py``):
absolute error below ``ERF_ABS_ERROR`` = 4e-7 for every finite f32 x; ±inf
give ±1, NaN stays NaN.

gelu: ``approximate='tanh'`` is ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x³)))``
with ``tanh_f32`` (no approximation beyond torch's own); the exact form is
``0.5 x (1 + erf(x / sqrt 2))`` with the erf above, so its error is at most
``0.5 |x| ERF_ABS_ERROR`` plus rounding.

The rules are written against the builder interface of ``dialects/ad.py``
(``b.mul(...)``), as decompositions in the op table are.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

ERF_ABS_ERROR = 4e-7
_TAYLOR = tuple(2 / math.sqrt(math.pi) * (-1) ** n / (math.factorial(n) * (2 * n + 1))
                for n in range(7))
_AS_P = 0.3275911
_AS_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
_SQRT_HALF = math.sqrt(0.5)
_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)


def _horner(b: Any, t: Any, coeffs: tuple[float, ...]) -> Any:
    """coeffs[0] + t (coeffs[1] + t (...))."""
    acc = b.scalar(coeffs[-1], like=t)
    for c in reversed(coeffs[:-1]):
        acc = b.add(b.mul(acc, t), b.scalar(c, like=t))
    return acc


def erf_on_pe(b: Any, x: Any) -> Any:
    """erf(x) from abs, exp, reciprocal, multiply-adds and a select."""
    a = b.abs(x)
    small = b.mul(x, _horner(b, b.mul(x, x), _TAYLOR))
    t = b.reciprocal(b.add(b.mul(a, b.scalar(_AS_P, like=x)), b.scalar(1.0, like=x)))
    tail = b.mul(b.mul(t, _horner(b, t, _AS_A)), b.exp(b.neg(b.mul(x, x))))
    large = b.mul(b.sign(x), b.sub(b.scalar(1.0, like=x), tail))
    return b.where(b.lt(a, b.scalar(0.5, like=x)), small, large)


def gelu_on_pe(b: Any, x: Any, approximate: str = "none") -> Any:
    half_x = b.mul(x, b.scalar(0.5, like=x))
    if approximate == "tanh":
        cube = b.mul(b.mul(x, x), x)
        inner = b.mul(b.add(x, b.mul(cube, b.scalar(0.044715, like=x))),
                      b.scalar(_SQRT_2_OVER_PI, like=x))
        g = b.tanh(inner)
    else:
        g = erf_on_pe(b, b.mul(x, b.scalar(_SQRT_HALF, like=x)))
    return b.mul(half_x, b.add(g, b.scalar(1.0, like=x)))


# pyflame op -> its rewrite for the PE: rule(b, *inputs, **attrs) -> the one result
ON_PE: dict[str, Callable[..., Any]] = {
    "erf": lambda b, x: erf_on_pe(b, x),
    "gelu": gelu_on_pe,
}

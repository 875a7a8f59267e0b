"""More of torch's surface (issue 14, "bring your PyTorch model"), written from
the op API as ``composites.py`` is: every backend and autodiff take these with
no new rule.

The special functions without a numpy ufunc are series and rational
approximations in float64/float32 arithmetic of the input's dtype:
``lgamma`` (Lanczos, g=7, with the reflection formula below 1/2),
``digamma``/``polygamma`` (recurrence up to x >= 10, then the asymptotic
series; reflection below 1/2 for n = 0 and 1), ``erfinv`` (Giles' single
precision approximation, then Newton steps on ``erf``; the last one is the only
one gradients see, which makes the gradient exactly ``1/erf'(x)``), ``erfc``
(``1 - erf`` where that loses nothing, the continued fraction in the tail) and
``i0`` (Cephes' Chebyshev expansions, as numpy's ``i0``).
"""

from __future__ import annotations

import builtins
import itertools
import math
from collections import namedtuple
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import math_rules as _rules
from .composites import diff as _diff
from .core import Tensor, detach, geometry, is_inference, record
from .creation import full, ones, tensor, zeros
from .creation import multinomial as _multinomial
from .dialects import OPS
from .dialects.dtypes import DType, bool_, default_float, float32, float64, int32, int64
from .dialects.dtypes import dtype as to_dtype
from .dialects.opdef import ShapeError, fmt_shape, normalize_dim
from .indexing import diag, diagonal, flip, index_select, movedim, narrow, scatter, tensor_split
from .inplace import _in_place
from .ops import (
    TensorLike,
    _cast,
    _promote,
    abs,
    as_tensor_arg,
    autocast_policy,
    cat,
    convert,
    eq,
    erf,
    exp,
    exp2,
    expand,
    floor,
    ge,
    gt,
    isfinite,
    isnan,
    log,
    logical_and,
    logical_or,
    lt,
    matmul,
    maximum,
    minimum,
    ne,
    reshape,
    round,
    sin,
    split,
    sqrt,
    sum,
    tan,
    transpose,
    vector_norm,
    view,
    where,
)
from .ops import floor_divide as _floor_divide
from .ops import remainder as _remainder
from .ops import sub as _sub
from .reductions import any as _any
from .reductions import cumsum as _cumsum

# ---- helpers ----


def _float(x: TensorLike) -> Tensor:
    """``x`` as a float tensor: integers and bools become float32 (torch's default)."""
    t = as_tensor_arg(x)
    return t if t.dtype.is_floating_point else convert(t, default_float())


def _float_pair(a: TensorLike, b: TensorLike) -> tuple[Tensor, Tensor]:
    dt = _promote([a, b])
    if not dt.is_floating_point:
        dt = default_float()
    return _cast(a, dt), _cast(b, dt)


def _polyval(coefs: Sequence[float], x: Tensor) -> Tensor:
    """Horner: ``coefs[0] * x**(n-1) + ... + coefs[-1]``."""
    acc: Any = coefs[0]
    for c in coefs[1:]:
        acc = acc * x + c
    return acc if isinstance(acc, Tensor) else x * 0.0 + acc


# ---- elementwise ----


def signbit(input: TensorLike) -> Tensor:  # noqa: A002
    """True where the sign bit is set: negative values and -0.0 (the sign of a
    NaN is not visible to comparisons: NaN gives False)."""
    x = as_tensor_arg(input)
    if x.dtype == bool_:
        return ne(x, x)
    if not x.dtype.is_floating_point:
        return lt(x, 0)
    # -0.0: 1/x is -inf
    return logical_or(lt(x, 0.0), logical_and(eq(x, 0.0), lt(1.0 / x, 0.0)))


def copysign(input: TensorLike, other: TensorLike) -> Tensor:  # noqa: A002
    """``|input|`` with the sign of ``other`` (-0.0 counts as negative)."""
    a, b = _float_pair(input, other)
    # torch's derivative: copysign(a, b) / a for a (0 at a == 0; NaN at +-inf and NaN),
    # none for b
    return _rules.elementwise(
        "CopysignBackward0", lambda x, y: where(signbit(y), -abs(x), abs(x)), [a, b],
        lambda x, y: [where(eq(x, 0.0), 0.0, where(signbit(y), -abs(x), abs(x)) / x), None])


def _nan_ignoring_pick(name: str, keep_input: Callable[[Tensor, Tensor], Tensor],
                       forward_tie_to_input: bool, input: TensorLike,  # noqa: A002
                       other: TensorLike) -> Tensor:
    """``input`` where ``keep_input(input, other)`` or ``other`` is NaN, else
    ``other``: fmax/fmin's value, and torch's gradient (all of it to ``input``
    on a tie, not split as maximum's). torch's forward rule gives a tie the
    tangent of ``other`` for fmax, of ``input`` for fmin
    (``forward_tie_to_input``)."""
    dt = _promote([input, other])
    a, b = _cast(input, dt), _cast(other, dt)
    if not dt.is_floating_point:
        return where(keep_input(a, b), a, b)

    def first(x: Tensor, y: Tensor) -> Tensor:  # where the result is input's
        return logical_or(keep_input(x, y), isnan(y))

    def forward_first(x: Tensor, y: Tensor) -> Tensor:  # torch's forward mask
        return first(x, y) if forward_tie_to_input else logical_and(first(x, y), ne(x, y))
    one = ones((), dtype=dt)
    return _rules.elementwise(
        name, lambda x, y: where(first(x, y), x, y), [a, b],
        lambda x, y: [where(first(x, y), one, 0.0), where(first(x, y), 0.0, one)],
        tangent=lambda t, x, y: where(forward_first(x, y), t[0], t[1]))


def fmax(input: TensorLike, other: TensorLike) -> Tensor:  # noqa: A002
    """Elementwise maximum that ignores a NaN when the other value is a number."""
    return _nan_ignoring_pick("FmaxBackward0", ge, False, input, other)


def fmin(input: TensorLike, other: TensorLike) -> Tensor:  # noqa: A002
    """Elementwise minimum that ignores a NaN when the other value is a number."""
    return _nan_ignoring_pick("FminBackward0", _le, True, input, other)


def heaviside(input: TensorLike, values: TensorLike) -> Tensor:  # noqa: A002
    """0 below zero, ``values`` at zero, 1 above (torch: both of one dtype)."""
    x, v = as_tensor_arg(input), as_tensor_arg(values)
    if x.dtype != v.dtype:
        raise RuntimeError(f"heaviside is not yet implemented for tensors with different "
                           f"dtypes ({x.dtype.name} and {v.dtype.name})")
    step = convert(gt(x, 0), x.dtype)
    return where(eq(x, 0), v, step)


def float_power(input: TensorLike, exponent: TensorLike) -> Tensor:  # noqa: A002
    """``input ** exponent`` in float64 (torch.float_power)."""
    return _cast(input, float64) ** _cast(exponent, float64)


def ldexp(input: TensorLike, other: TensorLike) -> Tensor:  # noqa: A002
    """``input * 2 ** other``."""
    a, b = _float_pair(input, other)
    return a * exp2(b)


def erfc(input: TensorLike) -> Tensor:  # noqa: A002
    """``1 - erf(x)``; its derivative is torch's ``-2/sqrt(pi) exp(-x^2)``
    (math_rules.py: -0 at +inf, where the tail's steps give NaN)."""
    x = _float(input)
    return _rules.elementwise("ErfcBackward0", _erfc_value, [x],
                              lambda v: [-_TWO_OVER_SQRT_PI * exp(-(v * v))])


_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _erfc_value(input: TensorLike) -> Tensor:  # noqa: A002
    """``1 - erf(x)``, accurate in the tail: below 3 the subtraction turns
    ``erf``'s absolute error (1e-16 in float64) into a relative one of at most
    1e-16/erfc(3) = 5e-12; from 3 on, the continued fraction
    ``exp(-x^2)/sqrt(pi) / (x + 1/2/(x + 1/(x + 3/2/(x + ...))))``. Narrower
    floats are computed in float64 (float32's erf would leave 1e-3 near 3)."""
    x = _float(input)
    if x.dtype != float64:
        return convert(_erfc_value(convert(x, float64)), x.dtype)
    tail = ge(x, 3.0)
    xt = where(tail, x, 3.0)  # the unselected branch gets a harmless value (no NaN gradients)
    t = xt
    for k in range(40, 0, -1):
        t = xt + (k / 2) / t
    cf = exp(-(xt * xt)) / (math.sqrt(math.pi) * t)
    return where(tail, cf, 1.0 - erf(where(tail, 0.0, x)))


_GILES_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                  0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_GILES_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
               -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def erfinv(input: TensorLike) -> Tensor:  # noqa: A002
    """The inverse of ``erf`` on (-1, 1); +-inf at +-1, NaN beyond. Its
    derivative is torch's ``sqrt(pi)/2 exp(erfinv(x)^2)`` (math_rules.py):
    +inf at +-1, NaN beyond."""
    y = _float(input)
    half_sqrt_pi = math.sqrt(math.pi) / 2
    return _rules.elementwise("ErfinvBackward0", _erfinv_value, [y],
                              lambda v, r: [half_sqrt_pi * exp(r * r)],
                              jvp=lambda v: [half_sqrt_pi * exp(erfinv(v) ** 2)],
                              with_result=True)


def _erfinv_value(y: Tensor) -> Tensor:
    a = abs(y)
    inside = lt(a, 1.0)
    ys = detach(where(inside, y, 0.0))  # the starting guess is a constant to autodiff
    w = -log((1.0 - ys) * (1.0 + ys))
    central = lt(w, 5.0)
    wc = where(central, w, 5.0) - 2.5
    wt = sqrt(where(central, 5.0, w)) - 3.0
    x = ys * where(central, _polyval(_GILES_CENTRAL, wc), _polyval(_GILES_TAIL, wt))
    two_over_sqrt_pi = 2.0 / math.sqrt(math.pi)
    x = x - (erf(x) - ys) / (two_over_sqrt_pi * exp(-(x * x)))  # Newton, on the constant
    x = detach(x)
    yin = where(inside, y, 0.0)
    x = x - (erf(x) - yin) / (two_over_sqrt_pi * exp(-(x * x)))  # Newton: d/dy = 1/erf'(x)
    edge = where(eq(a, 1.0), where(gt(y, 0.0), float("inf"), float("-inf")), float("nan"))
    return where(inside, x, edge)


_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012,
            9.9843695780195716e-6, 1.5056327351493116e-7)
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
_EULER_GAMMA = 0.5772156649015329


def _lgamma_right(x: Tensor) -> Tensor:
    """log|Gamma(x)| for x >= 1/2 (Lanczos)."""
    z = x - 1.0
    acc = z * 0.0 + _LANCZOS[0]
    for i, c in enumerate(_LANCZOS[1:], start=1):
        acc = acc + c / (z + float(i))
    t = z + (_LANCZOS_G + 0.5)
    return _HALF_LOG_2PI + (z + 0.5) * log(t) - t + log(acc)


def _sin_pi_abs(x: Tensor) -> Tensor:
    """|sin(pi x)|, exact at integers (the argument reduced to [-1/2, 1/2] first)."""
    r = x - round(detach(x))
    return abs(sin(math.pi * r))


def lgamma(input: TensorLike) -> Tensor:  # noqa: A002
    """log|Gamma(x)|: +inf at the poles (0, -1, -2, ...) and at +-inf. Its
    derivative is ``digamma(x)`` (torch's, math_rules.py): -inf at +0, +inf
    at -0 and at +inf, NaN at the negative integers, -inf and NaN."""
    x = _float(input)
    return _rules.elementwise("LgammaBackward0", _lgamma_value, [x],
                              lambda v: [digamma(v)])


def _lgamma_value(x: Tensor) -> Tensor:
    right = ge(x, 0.5)
    xr = where(right, x, 0.5)
    xl = where(right, 0.5, x)
    finite_l = logical_and(lt(xl, float("inf")), gt(xl, float("-inf")))
    xl = where(finite_l, xl, 0.25)
    left = math.log(math.pi) - log(_sin_pi_abs(xl)) - _lgamma_right(1.0 - xl)
    left = where(finite_l, left, float("inf"))
    big = eq(xr, float("inf"))
    val_r = where(big, float("inf"), _lgamma_right(where(big, 2.0, xr)))
    # near 0, -log|x| - gamma x (sin(pi x) of a subnormal x loses its digits)
    tiny = logical_and(lt(abs(x), 1e-8), ne(x, 0.0))
    xt = where(tiny, x, 1e-8)
    left = where(tiny, -log(abs(xt)) - _EULER_GAMMA * xt, left)
    # exactly 0 at 1 and 2 (Lanczos: 1e-16), with its derivative kept (digamma)
    one_or_two = logical_or(eq(x, 1.0), eq(x, 2.0))
    return where(isnan(x), x, where(one_or_two, val_r - detach(val_r), where(right, val_r, left)))


# B_2k / (2k) for the asymptotic series of digamma
_DIGAMMA_SERIES = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)
_BERNOULLI_2K = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)
_SHIFT_TO = 10.0


def _digamma_right(x: Tensor) -> Tensor:
    """psi(x) for x >= 1/2: recurrence up to 10, then the asymptotic series."""
    acc = x * 0.0
    for _ in range(10):
        small = lt(x, _SHIFT_TO)
        acc = acc - where(small, 1.0 / x, 0.0)
        x = where(small, x + 1.0, x)
    inv2 = 1.0 / (x * x)
    series = inv2 * 0.0
    for c in reversed(_DIGAMMA_SERIES):
        series = (series + c) * inv2
    return acc + log(x) - 0.5 / x - series


def digamma(input: TensorLike) -> Tensor:  # noqa: A002
    """psi(x) = d/dx lgamma(x): -inf at 0 (torch), NaN at the negative integers.
    Its derivative is ``polygamma(1, x)`` (torch's, math_rules.py): +inf at
    the poles (torch's float64 kernel gives a large finite number at the
    negative integers, 6.6e32 at -1: the limit is +inf), NaN at -inf."""
    x = _float(input)
    return _rules.elementwise("DigammaBackward0", _digamma_value, [x],
                              lambda v: [polygamma(1, v)])


def _digamma_value(x: Tensor) -> Tensor:
    right = ge(x, 0.5)
    xr = where(right, x, 0.5)
    xl = where(right, 0.5, x)
    at_pole = eq(xl, floor(xl))
    xl_safe = where(at_pole, 0.25, xl)
    r = xl_safe - round(detach(xl_safe))
    left = _digamma_right(1.0 - xl_safe) - math.pi / tan(math.pi * r)
    # torch: -inf at +0.0, +inf at -0.0 (the limit from that side), NaN at -1, -2, ...
    pole = where(eq(xl, 0.0), where(signbit(xl), float("inf"), float("-inf")), float("nan"))
    left = where(at_pole, pole, left)
    inf_r = eq(xr, float("inf"))
    val_r = where(inf_r, float("inf"), _digamma_right(where(inf_r, 1.0, xr)))
    return where(isnan(x), x, where(right, val_r, left))


def _polygamma_right(n: int, x: Tensor, shifts: int) -> Tensor:
    """psi^(n)(x), n >= 1: ``shifts`` recurrence steps (while x < 10), then the
    asymptotic series ``(-1)^(n+1) [(n-1)!/x^n + n!/(2 x^(n+1))
    + sum_k B_2k (2k+n-1)!/((2k)! x^(2k+n))]``."""
    sign = 1.0 if n % 2 else -1.0
    fact_n = math.factorial(n)
    acc = x * 0.0
    for _ in range(shifts):
        small = lt(x, _SHIFT_TO)
        acc = acc + where(small, sign * fact_n / x ** float(n + 1), 0.0)
        x = where(small, x + 1.0, x)
    inv = 1.0 / x
    series = math.factorial(n - 1) * inv ** float(n) + fact_n / 2 * inv ** float(n + 1)
    for k, b in enumerate(_BERNOULLI_2K, start=1):
        coef = b * math.factorial(2 * k + n - 1) / math.factorial(2 * k)
        series = series + coef * inv ** float(2 * k + n)
    return acc + sign * series


def polygamma(n: int, input: TensorLike) -> Tensor:  # noqa: A002
    """The n-th derivative of digamma. For n >= 2 the recurrence covers
    x >= -20; further left the result is NaN (raise-free but never a wrong
    number)."""
    if not isinstance(n, int | np.integer) or n < 0:
        raise RuntimeError(f"polygamma(n, x) does not support negative n, got n={n}")
    n = int(n)
    if n == 0:
        return digamma(input)
    x = _float(input)
    at_pole = logical_and(_le(x, 0.0), eq(x, floor(x)))
    inf_r = eq(x, float("inf"))
    if n == 1:  # reflection: psi1(x) + psi1(1 - x) = pi^2 / sin^2(pi x)
        right = ge(x, 0.5)
        xr = where(logical_or(right, inf_r), where(inf_r, 1.0, x), 0.5)
        xl = where(logical_or(right, at_pole), 0.25, x)
        s = sin(math.pi * (xl - round(detach(xl))))
        left = math.pi ** 2 / (s * s) - _polygamma_right(1, 1.0 - xl, 10)
        val = where(right, _polygamma_right(1, xr, 10), left)
    else:
        far = lt(x, -20.0)
        xs = where(logical_or(logical_or(far, at_pole), inf_r), 1.0, x)
        val = _polygamma_right(n, xs, 31)
        val = where(far, float("nan"), val)
    val = where(inf_r, 0.0 if n == 1 else float("nan"), val)  # (torch's NaN for n >= 2)
    val = where(at_pole, float("inf") if n % 2 else float("-inf"), val)
    val = where(eq(x, float("-inf")), float("nan"), val)  # (floor(-inf) is -inf: no pole)
    return where(isnan(x), x, val)


def _le(a: Tensor, b: float) -> Tensor:
    return logical_or(lt(a, b), eq(a, b))


def mvlgamma(input: TensorLike, p: int) -> Tensor:  # noqa: A002
    """The multivariate log-gamma of dimension ``p``; every element must be
    greater than (p - 1)/2 (torch checks the values: they are evaluated)."""
    x = _float(input)
    if p < 1:
        raise RuntimeError(f"mvlgamma: p has to be greater than or equal to 1, got {p}")
    if x.numel() and not bool(np.all(x.numpy() > (p - 1) / 2)):
        raise RuntimeError(f"All elements must be greater than (p-1)/2 = {(p - 1) / 2}")
    out = x * 0.0 + p * (p - 1) / 4 * math.log(math.pi)
    for j in range(p):
        out = out + lgamma(x - j / 2)
    return out


_I0_A = (-4.4153416464793395e-18, 3.3307945188222384e-17, -2.431279846547955e-16,
         1.715391285555133e-15, -1.1685332877993451e-14, 7.676185498604936e-14,
         -4.856446783111929e-13, 2.95505266312964e-12, -1.726826291441556e-11,
         9.675809035373237e-11, -5.189795601635263e-10, 2.6598237246823866e-09,
         -1.300025009986248e-08, 6.046995022541919e-08, -2.670793853940612e-07,
         1.1173875391201037e-06, -4.4167383584587505e-06, 1.6448448070728896e-05,
         -5.754195010082104e-05, 0.00018850288509584165, -0.0005763755745385824,
         0.0016394756169413357, -0.004324309995050576, 0.010546460394594998,
         -0.02373741480589947, 0.04930528423967071, -0.09490109704804764,
         0.17162090152220877, -0.3046826723431984, 0.6767952744094761)
_I0_B = (-7.233180487874754e-18, -4.830504485944182e-18, 4.46562142029676e-17,
         3.461222867697461e-17, -2.8276239805165836e-16, -3.425485619677219e-16,
         1.7725601330565263e-15, 3.8116806693526224e-15, -9.554846698828307e-15,
         -4.150569347287222e-14, 1.54008621752141e-14, 3.8527783827421426e-13,
         7.180124451383666e-13, -1.7941785315068062e-12, -1.3215811840447713e-11,
         -3.1499165279632416e-11, 1.1889147107846439e-11, 4.94060238822497e-10,
         3.3962320257083865e-09, 2.266668990498178e-08, 2.0489185894690638e-07,
         2.8913705208347567e-06, 6.889758346916825e-05, 0.0033691164782556943,
         0.8044904110141088)


def _chbevl(x: Tensor, coefs: Sequence[float]) -> Tensor:
    b0: Any = x * 0.0 + coefs[0]
    b1: Any = 0.0
    b2: Any = 0.0
    for c in coefs[1:]:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + c
    return 0.5 * (b0 - b2)


def i0(input: TensorLike) -> Tensor:  # noqa: A002
    """The modified Bessel function of the first kind, order 0; its derivative
    is ``i1(x)`` (torch's, math_rules.py)."""
    x = _float(input)

    return _rules.elementwise("I0Backward0", _i0_value, [x], lambda v: [i1(v)])


def _i0_value(input: Tensor) -> Tensor:  # noqa: A002
    x = abs(input)
    small = _le(x, 8.0)
    xs = where(small, x, 0.0)
    xb = where(small, 8.0, x)
    big_ok = lt(xb, float("inf"))
    xb = where(big_ok, xb, 8.0)
    v_small = exp(xs) * _chbevl(xs / 2.0 - 2.0, _I0_A)
    # exp(x) / sqrt(x) as exp(x/2) * (exp(x/2) / sqrt(x)): finite up to where I0 itself is
    half = exp(xb / 2.0)
    v_big = half * (half * _chbevl(32.0 / xb - 2.0, _I0_B) / sqrt(xb))
    v_big = where(big_ok, v_big, float("nan"))  # torch's kernel: NaN at +-inf
    return where(isnan(x), x, where(small, v_small, v_big))


# (session 12: i1 moved here from special.py: i0's derivative)
# Cephes' Chebyshev coefficients (torch's calc_i1/calc_i1e, double precision)
_I1_A = (2.77791411276104639959e-18, -2.11142121435816608115e-17, 1.55363195773620046921e-16,
         -1.10559694773538630805e-15, 7.60068429473540693410e-15, -5.04218550472791168711e-14,
         3.22379336594557470981e-13, -1.98397439776494371520e-12, 1.17361862988909016308e-11,
         -6.66348972350202774223e-11, 3.62559028155211703701e-10, -1.88724975172282928790e-9,
         9.38153738649577178388e-9, -4.44505912879632808065e-8, 2.00329475355213526229e-7,
         -8.56872026469545474066e-7, 3.47025130813767847674e-6, -1.32731636560394358279e-5,
         4.78156510755005422638e-5, -1.61760815825896745588e-4, 5.12285956168575772895e-4,
         -1.51357245063125314899e-3, 4.15642294431288815669e-3, -1.05640848946261981558e-2,
         2.47264490306265168283e-2, -5.29459812080949914269e-2, 1.02643658689847095384e-1,
         -1.76416518357834055153e-1, 2.52587186443633654823e-1)
_I1_B = (7.51729631084210481353e-18, 4.41434832307170791151e-18, -4.65030536848935832153e-17,
         -3.20952592199342395980e-17, 2.96262899764595013876e-16, 3.30820231092092828324e-16,
         -1.88035477551078244854e-15, -3.81440307243700780478e-15, 1.04202769841288027642e-14,
         4.27244001671195135429e-14, -2.10154184277266431302e-14, -4.08355111109219731823e-13,
         -7.19855177624590851209e-13, 2.03562854414708950722e-12, 1.41258074366137813316e-11,
         3.25260358301548823856e-11, -1.89749581235054123450e-11, -5.58974346219658380687e-10,
         -3.83538038596423702205e-9, -2.63146884688951950684e-8, -2.51223623787020892529e-7,
         -3.88256480887769039346e-6, -1.10588938762623716291e-4, -9.76109749136146840777e-3,
         7.78576235018280120474e-1)


def _tiny_half(x: Tensor, d: Tensor) -> Tensor:
    """``d`` where ``|x|`` exceeds the dtype's epsilon, else 1/2 (torch's
    i1/i1e backward: the limit at 0, and what NaN gets there too)."""
    eps = float(np.finfo(x.dtype.np).eps)
    return where(lt(eps, abs(x)), d, 0.5)


def _i1e_abs(x: Tensor) -> Tensor:
    """``exp(-x) I1(x)`` for x >= 0 (Cephes: Chebyshev on [0, 8] and in 1/x beyond)."""
    small = lt(x, 8.0) | (x == 8.0)
    xs = where(small, x, 0.0)
    xb = where(small, 8.0, x)
    return where(small, _chbevl(xs / 2.0 - 2.0, _I1_A) * xs,
                 _chbevl(32.0 / xb - 2.0, _I1_B) / sqrt(xb))


def i1(input: TensorLike) -> Tensor:  # noqa: A002
    """The modified Bessel function of the first kind, order 1 (odd in x).
    Derivative torch's, ``i0(x) - i1(x) / x``, 1/2 where ``|x|`` is at
    most the dtype's epsilon or NaN."""
    x = _float(input)
    return _rules.elementwise("SpecialI1Backward0", _i1_value, [x],
                              lambda v: [_tiny_half(v, i0(v) - i1(v) / v)])


def _i1_value(input: Tensor) -> Tensor:  # noqa: A002
    x = _float(input)
    ax = abs(x)
    big_ok = lt(ax, float("inf"))
    safe = where(big_ok, ax, 0.0)
    half = exp(safe / 2.0)  # exp(x) as two halves: finite up to where I1 itself is
    out = half * (half * _i1e_abs(safe))
    out = where(big_ok, out, float("nan"))  # torch's kernel: NaN at +-inf (as i0's)
    return where(isnan(x), x, where(lt(x, 0.0), -out, out))


Frexp = namedtuple("Frexp", ["mantissa", "exponent"])


def frexp(input: TensorLike) -> Frexp:  # noqa: A002
    """``input = mantissa * 2**exponent`` with 0.5 <= |mantissa| < 1 (0, inf and
    NaN: the value itself and exponent 0, as torch)."""
    x = as_tensor_arg(input)
    if not x.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes, got "
                           f"{x.dtype.name}")
    a = abs(x)
    regular = logical_and(gt(a, 0.0), lt(a, float("inf")))
    safe = where(regular, a, 1.0)
    e = floor(log(safe) / math.log(2.0)) + 1.0
    # two factors: 2**-e alone overflows for subnormal x
    half = floor(e / 2.0)
    m = where(regular, x, 1.0) * exp2(-half) * exp2(-(e - half))
    m_abs = abs(m)
    too_big, too_small = ge(m_abs, 1.0), lt(m_abs, 0.5)  # log's rounding: one step off
    m = where(too_big, m / 2.0, where(too_small, m * 2.0, m))
    e = where(too_big, e + 1.0, where(too_small, e - 1.0, e))
    return Frexp(where(regular, m, x), convert(where(regular, e, 0.0), int32))


def _gcd_steps(dt: DType) -> int:
    # Euclid's worst case is consecutive Fibonacci numbers: F(k) < 2**bits
    return 48 if dt.itemsize <= 4 else 94


def gcd(input: TensorLike, other: TensorLike) -> Tensor:  # noqa: A002
    """The greatest common divisor of integers (Euclid, unrolled to its worst case)."""
    dt = _promote([input, other])
    if dt.is_floating_point or dt == bool_:
        raise RuntimeError(f"gcd is only defined for integer dtypes, got {dt.name}")
    a, b = abs(_cast(input, dt)), abs(_cast(other, dt))
    for _ in range(_gcd_steps(dt)):
        nz = ne(b, 0)
        r = a - (a // where(nz, b, 1)) * where(nz, b, 1)
        a, b = where(nz, b, a), where(nz, r, 0)
    return a


def lcm(input: TensorLike, other: TensorLike) -> Tensor:  # noqa: A002
    """The least common multiple of integers (0 where either is 0)."""
    dt = _promote([input, other])
    g = gcd(input, other)
    a, b = abs(_cast(input, dt)), abs(_cast(other, dt))
    return where(eq(g, 0), 0, (a // where(eq(g, 0), 1, g)) * b)


# ---- comparisons with a Python answer ----


def isclose(input: TensorLike, other: TensorLike, rtol: float = 1e-05,  # noqa: A002
            atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    """``|input - other| <= atol + rtol * |other|`` (equal infinities are close)."""
    a, b = as_tensor_arg(input), as_tensor_arg(other)
    if a.dtype != b.dtype:
        raise RuntimeError(f"isclose: {a.dtype.name} did not match {b.dtype.name}")
    if a.dtype == bool_:
        return eq(a, b)
    if not a.dtype.is_floating_point:
        dt = float64
        a, b = convert(a, dt), convert(b, dt)
    finite = logical_and(isfinite(a), isfinite(b))  # infinities are close only when equal
    close = logical_or(eq(a, b), logical_and(finite, _le(abs(a - b), atol + rtol * abs(b))))
    if equal_nan:
        close = logical_or(close, logical_and(isnan(a), isnan(b)))
    return close


def allclose(input: TensorLike, other: TensorLike, rtol: float = 1e-05,  # noqa: A002
             atol: float = 1e-08, equal_nan: bool = False) -> bool:
    return bool(isclose(input, other, rtol, atol, equal_nan).numpy().all())


def equal(input: TensorLike, other: TensorLike) -> bool:  # noqa: A002
    """True when both have one shape and equal elements (a Python bool)."""
    a, b = as_tensor_arg(input), as_tensor_arg(other)
    if a.shape != b.shape:
        return False
    return bool(eq(a, b).numpy().all())


def dist(input: TensorLike, other: TensorLike, p: float = 2) -> Tensor:  # noqa: A002
    """The p-norm of ``input - other`` (broadcast)."""
    a, b = _float_pair(input, other)
    return vector_norm(a - b, ord=p)


# ---- products ----


def inner(input: TensorLike, other: TensorLike) -> Tensor:  # noqa: A002
    """Sum over the last dimensions: shape ``input.shape[:-1] + other.shape[:-1]``."""
    a, b = as_tensor_arg(input), as_tensor_arg(other)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    if a.shape[-1] != b.shape[-1]:
        raise ShapeError("inner", f"last dimensions differ: {fmt_shape(a.shape)} and "
                                  f"{fmt_shape(b.shape)}")
    k = a.shape[-1]
    out = matmul(reshape(a, (-1, k)), transpose(reshape(b, (-1, k)), 0, 1))
    return reshape(out, a.shape[:-1] + b.shape[:-1])


def vdot(input: TensorLike, other: TensorLike) -> Tensor:  # noqa: A002
    a, b = as_tensor_arg(input), as_tensor_arg(other)
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.shape != b.shape:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src "
                           f"[{b.shape[0]}] to have the same number of elements")
    if a.dtype != b.dtype:
        raise RuntimeError(f"vdot: expected both vectors to have same dtype, but found "
                           f"{a.dtype.name} and {b.dtype.name}")
    return sum(a * b)


def vander(x: TensorLike, N: int | None = None, increasing: bool = False) -> Tensor:  # noqa: N803
    """``torch.vander``: the columns are powers of the vector ``x``
    (``x^(N-1) .. x^0``, or ascending with ``increasing``)."""
    v = as_tensor_arg(x)
    if v.ndim != 1:
        raise RuntimeError(f"x must be a one-dimensional tensor, got {v.ndim} dimensions")
    n = v.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    if v.dtype.is_bool or (v.dtype.category == 1 and v.dtype.itemsize < 8):
        v = convert(v, int64)  # torch computes integers (and bools) in int64
    powers = [ones(v.shape[0], dtype=v.dtype) if k == 0 else v ** k for k in range(n)]
    if not increasing:
        powers.reverse()
    if not powers:
        return zeros(v.shape[0], 0, dtype=v.dtype)
    return cat([reshape(p, (v.shape[0], 1)) for p in powers], 1)


@autocast_policy("fp32")
def trace(input: TensorLike) -> Tensor:  # noqa: A002
    """The sum of a matrix's diagonal (integers sum as int64, as torch)."""
    x = as_tensor_arg(input)
    if x.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {x.ndim}")
    d = diagonal(x)
    if not x.dtype.is_floating_point:
        d = convert(d, int64)
    return sum(d)


def matrix_power(input: TensorLike, n: int) -> Tensor:  # noqa: A002
    """``A @ A @ ... @ A`` (|n| factors, by squaring) of A, or for n < 0 of
    its inverse (``solve(A, I)``, linalg.inv's)."""
    a = as_tensor_arg(input)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but "
                           f"they are {fmt_shape(a.shape)}")
    eye = _eye_like(a)
    if n < 0:
        if not a.dtype.is_floating_point:
            raise RuntimeError(f"linalg.matrix_power: a negative exponent inverts A, which "
                               f"needs a floating point dtype, got {a.dtype.name}")
        a, n = record(OPS["solve"], (a, eye), {}), -n
    result: Tensor | None = None
    base = a
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return eye if result is None else result


def _eye_like(a: Tensor) -> Tensor:
    k = a.shape[-1]
    return expand(tensor(np.eye(k, dtype=a.dtype.np)), a.shape)


def multi_dot(tensors: Sequence[TensorLike]) -> Tensor:
    """``A @ B @ ...`` (the first may be 1-D, as the last)."""
    ts = [as_tensor_arg(t) for t in tensors]
    if len(ts) < 2:
        raise RuntimeError("multi_dot(): expected at least 2 tensors but got "
                           f"{len(ts)}")
    for i, t in enumerate(ts):
        if t.ndim != 2 and not (t.ndim == 1 and i in (0, len(ts) - 1)):
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
    out = ts[0]
    for t in ts[1:]:
        out = matmul(out, t)
    return out


def cov(input: TensorLike, *, correction: int = 1, fweights: TensorLike | None = None,  # noqa: A002
        aweights: TensorLike | None = None) -> Tensor:
    """The covariance of the variables in ``input``'s rows (observations in columns)."""
    x = as_tensor_arg(input)
    if x.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got "
                           f"an input with {x.ndim} dimensions")
    x = _float(x) if not x.dtype.is_floating_point else x
    x2 = reshape(x, (1, -1)) if x.ndim < 2 else x
    n_obs = x2.shape[1]
    w: Tensor | None = None
    if fweights is not None:
        w = convert(as_tensor_arg(fweights), x2.dtype)
    if aweights is not None:
        aw = convert(as_tensor_arg(aweights), x2.dtype)
        w = aw if w is None else w * aw
    if w is None:
        mean = sum(x2, 1, keepdim=True) / float(n_obs)
        fact: Any = float(n_obs - correction)
        xc = x2 - mean
        c = matmul(xc, transpose(xc, 0, 1)) / builtins.max(fact, 0.0)
    else:
        if w.shape != (n_obs,):
            raise RuntimeError(f"cov(): expected weights of shape ({n_obs},), got "
                               f"{fmt_shape(w.shape)}")
        w_sum = sum(w)
        mean = sum(x2 * w, 1, keepdim=True) / w_sum
        if correction == 0:
            fact = w_sum
        elif aweights is None:
            fact = w_sum - correction
        else:
            fact = w_sum - correction * sum(w * convert(as_tensor_arg(aweights), x2.dtype)) / w_sum
        fact = where(gt(fact, 0.0), fact, 0.0)
        xc = x2 - mean
        c = matmul(xc * w, transpose(xc, 0, 1)) / fact
    return reshape(c, ()) if c.shape == (1, 1) else c  # one variable: a scalar (torch)


def corrcoef(input: TensorLike) -> Tensor:  # noqa: A002
    """Pearson correlation coefficients of the rows (clipped to [-1, 1])."""
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = diagonal(c)
    s = sqrt(d)
    r = c / reshape(s, (-1, 1)) / reshape(s, (1, -1))
    return minimum(maximum(r, -1.0), 1.0)


# ---- shape helpers ----


def ravel(input: TensorLike) -> Tensor:  # noqa: A002
    return reshape(input, (-1,))


def unflatten(input: TensorLike, dim: int, sizes: Sequence[int]) -> Tensor:  # noqa: A002
    """Dimension ``dim`` split into ``sizes`` (one -1 allowed)."""
    x = as_tensor_arg(input)
    d = normalize_dim("unflatten", dim, x.ndim)
    sizes = tuple(int(s) for s in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    known = math.prod(s for s in sizes if s != -1)
    if sizes.count(-1) > 1 or (-1 not in sizes and known != x.shape[d]) or (
            -1 in sizes and (known == 0 or x.shape[d] % known)):
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                           f"size of dim {dim} ({x.shape[d]}) in the input tensor")
    if -1 in sizes:
        sizes = tuple(x.shape[d] // known if s == -1 else s for s in sizes)
    return reshape(x, x.shape[:d] + sizes + x.shape[d + 1:])


def positive(input: TensorLike) -> Tensor:  # noqa: A002
    x = as_tensor_arg(input)
    if x.dtype == bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return x


def rot90(input: TensorLike, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:  # noqa: A002
    """Rotation by 90 degrees ``k`` times in the plane ``dims`` (from the first
    towards the second)."""
    x = as_tensor_arg(input)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if x.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {x.ndim}")
    d0, d1 = (normalize_dim("rot90", d, x.ndim) for d in dims)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    k %= 4
    if k == 1:
        return transpose(flip(x, [d1]), d0, d1)
    if k == 2:
        return flip(x, [d0, d1])
    if k == 3:
        return flip(transpose(x, d0, d1), [d1])
    return x


def renorm(input: TensorLike, p: float, dim: int, maxnorm: float) -> Tensor:  # noqa: A002
    """Each slice along ``dim`` whose p-norm exceeds ``maxnorm`` scaled down to it."""
    x = as_tensor_arg(input)
    if p <= 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported, got p={p}")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    d = normalize_dim("renorm", dim, x.ndim)
    others = [i for i in range(x.ndim) if i != d]
    norm = vector_norm(x, ord=p, dim=others, keepdim=True)
    factor = where(gt(norm, maxnorm), maxnorm / (norm + 1e-7), 1.0)
    return x * factor


def sum_to_size(input: TensorLike, *size: Any) -> Tensor:  # noqa: A002
    x = as_tensor_arg(input)
    shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], Sequence) else size
    shape = tuple(int(s) for s in shape)
    lead = x.ndim - len(shape)
    if lead < 0 or any(s not in (1, n) for s, n in zip(shape, x.shape[lead:])):
        raise RuntimeError(f"size {{{list(shape)}}} is not expandable to size "
                           f"{{{list(x.shape)}}}.")
    out = sum(x, tuple(range(lead)), keepdim=False) if lead else x
    dims = tuple(i for i, (s, n) in enumerate(zip(shape, out.shape)) if s == 1 and n != 1)
    return sum(out, dims, keepdim=True) if dims else out


def split_with_sizes(input: TensorLike, split_sizes: Sequence[int], dim: int = 0  # noqa: A002
                     ) -> list[Tensor]:
    x = as_tensor_arg(input)
    d = normalize_dim("split_with_sizes", dim, x.ndim)
    if builtins.sum(split_sizes) != x.shape[d]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to "
                           f"{x.shape[d]} (input tensor's size at dimension {dim}), but got "
                           f"split_sizes={list(split_sizes)}")
    return list(split(x, list(split_sizes), d))


def _directional_split(name: str, x: Tensor, sections: Any, dim: int, min_ndim: int
                       ) -> tuple[Tensor, ...]:
    if x.ndim < min_ndim:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_ndim} dimension, "
                           f"but got a tensor with {x.ndim} dimensions!")
    if isinstance(sections, int | np.integer) and (sections == 0 or x.shape[dim] % sections):
        raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the "
                           f"size of the dimension {x.shape[dim]} is not divisible by the "
                           f"split_size {sections}!")
    return tensor_split(x, sections, dim)


def hsplit(input: TensorLike, indices_or_sections: Any) -> tuple[Tensor, ...]:  # noqa: A002
    x = as_tensor_arg(input)
    return _directional_split("hsplit", x, indices_or_sections, 1 if x.ndim > 1 else 0, 1)


def vsplit(input: TensorLike, indices_or_sections: Any) -> tuple[Tensor, ...]:  # noqa: A002
    return _directional_split("vsplit", as_tensor_arg(input), indices_or_sections, 0, 2)


def dsplit(input: TensorLike, indices_or_sections: Any) -> tuple[Tensor, ...]:  # noqa: A002
    return _directional_split("dsplit", as_tensor_arg(input), indices_or_sections, 2, 3)


def diagflat(input: TensorLike, offset: int = 0) -> Tensor:  # noqa: A002
    return diag(reshape(input, (-1,)), offset)


# ---- scatters of a view's values ----


def _scatter_positions(name: str, x: Tensor, src: Tensor, pos: np.ndarray) -> Tensor:
    if tuple(pos.shape) != src.shape:
        raise RuntimeError(f"{name}: expected src to have a size equal to the slice of "
                           f"self. src size = {list(src.shape)}, slice size = "
                           f"{list(pos.shape)}")
    flat = reshape(x, (-1,))
    idx = tensor(np.ascontiguousarray(pos.reshape(-1), dtype=np.int64))
    out = scatter(flat, 0, idx, reshape(convert(src, x.dtype), (-1,)))
    return reshape(out, x.shape)


def _ids(x: Tensor) -> np.ndarray:
    return np.arange(x.numel(), dtype=np.int64).reshape(x.shape)


def slice_scatter(input: TensorLike, src: TensorLike, dim: int = 0,  # noqa: A002
                  start: int | None = None, end: int | None = None, step: int = 1) -> Tensor:
    """``input`` with ``input[..., start:end:step, ...] = src`` (a new tensor)."""
    x, s = as_tensor_arg(input), as_tensor_arg(src)
    d = normalize_dim("slice_scatter", dim, x.ndim)
    pos = _ids(x)[(slice(None),) * d + (slice(start, end, step),)]
    return _scatter_positions("slice_scatter", x, s, pos)


def select_scatter(input: TensorLike, src: TensorLike, dim: int, index: int) -> Tensor:  # noqa: A002
    x, s = as_tensor_arg(input), as_tensor_arg(src)
    d = normalize_dim("select_scatter", dim, x.ndim)
    if not -x.shape[d] <= index < x.shape[d]:
        raise IndexError(f"select_scatter(): index {index} out of range for tensor of size "
                         f"{list(x.shape)} at dimension {dim}")
    pos = _ids(x)[(slice(None),) * d + (index,)]
    return _scatter_positions("select_scatter", x, s, pos)


def diagonal_scatter(input: TensorLike, src: TensorLike, offset: int = 0,  # noqa: A002
                     dim1: int = 0, dim2: int = 1) -> Tensor:
    x, s = as_tensor_arg(input), as_tensor_arg(src)
    a = normalize_dim("diagonal_scatter", dim1, x.ndim)
    b = normalize_dim("diagonal_scatter", dim2, x.ndim)
    pos = np.diagonal(_ids(x), offset, a, b)
    return _scatter_positions("diagonal_scatter", x, s, pos)


def unique_consecutive(input: TensorLike, return_inverse: bool = False,  # noqa: A002
                       return_counts: bool = False, dim: int | None = None) -> Any:
    """Each run of equal consecutive values collapsed to one (evaluated now: the
    length depends on the values)."""
    v = as_tensor_arg(input).numpy()
    if dim is None:
        flat = v.reshape(-1)
        starts = np.ones(flat.shape, bool)
        starts[1:] = flat[1:] != flat[:-1]
        vals = flat[starts]
        inv = (np.cumsum(starts) - 1).reshape(v.shape)
    else:
        d = normalize_dim("unique_consecutive", dim, v.ndim)
        moved = np.moveaxis(v, d, 0).reshape(v.shape[d], -1)
        starts = np.ones(v.shape[d], bool)
        starts[1:] = np.any(moved[1:] != moved[:-1], axis=1)
        vals = np.compress(starts, v, axis=d)
        inv = np.cumsum(starts) - 1
    counts = np.diff(np.append(np.flatnonzero(starts), starts.size))
    out: list[Tensor] = [tensor(np.ascontiguousarray(vals))]
    if return_inverse:
        out.append(tensor(inv.astype(np.int64)))
    if return_counts:
        out.append(tensor(counts.astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


# ---- Tensor-only members ----


def _new_dtype(self: Tensor, dtype: Any) -> DType:
    return self.dtype if dtype is None else to_dtype(dtype)


def _size_arg(size: tuple) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], Sequence):
        size = tuple(size[0])
    return tuple(int(s) for s in size)


def _finish_new(t: Tensor, requires_grad: bool) -> Tensor:
    return t.requires_grad_(True) if requires_grad else t


def _new_zeros(self: Tensor, *size: Any, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, **_: Any) -> Tensor:
    return _finish_new(zeros(_size_arg(size), dtype=_new_dtype(self, dtype)), requires_grad)


def _new_ones(self: Tensor, *size: Any, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, **_: Any) -> Tensor:
    return _finish_new(ones(_size_arg(size), dtype=_new_dtype(self, dtype)), requires_grad)


def _new_full(self: Tensor, size: Sequence[int], fill_value: Any, *, dtype: Any = None,
              device: Any = None, requires_grad: bool = False, **_: Any) -> Tensor:
    return _finish_new(full(tuple(size), fill_value, dtype=_new_dtype(self, dtype)),
                       requires_grad)


def _new_tensor(self: Tensor, data: Any, dtype: Any = None, device: Any = None,
                requires_grad: bool = False, **_: Any) -> Tensor:
    if isinstance(data, Tensor):
        data = data.numpy()
    return _finish_new(tensor(np.array(data, dtype=_new_dtype(self, dtype).np)), requires_grad)


def _stride(self: Tensor, dim: int | None = None) -> tuple[int, ...] | int:
    strides = geometry(self)[1]
    if dim is None:
        return tuple(strides)
    return strides[normalize_dim("stride", dim, self.ndim)]


def _imag(self: Tensor) -> Tensor:
    raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")


def _adjoint(self: Tensor) -> Tensor:
    if self.ndim < 2:
        raise RuntimeError(f"tensor.adjoint() is only supported on matrices or batches of "
                           f"matrices. Got {self.ndim}-D tensor.")
    return transpose(self, -2, -1)


def _conj_transposed(self: Tensor) -> Tensor:
    if self.ndim == 2:
        return transpose(self, 0, 1)
    if self.ndim == 0:
        return self
    raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got "
                       f"{self.ndim}-D tensor.")


def _identity(self: Tensor) -> Tensor:
    """For real tensors: conj, resolve_conj, resolve_neg and real are the tensor itself."""
    return self


_SURFACE_METHODS: dict[str, Any] = {
    "expand_as": lambda self, other: expand(self, other.shape),
    "view_as": lambda self, other: view(self, other.shape),
    "reshape_as": lambda self, other: reshape(self, other.shape),
    "type_as": lambda self, other: convert(self, other.dtype),
    "new_zeros": _new_zeros, "new_ones": _new_ones, "new_full": _new_full,
    "new_empty": _new_zeros, "new_tensor": _new_tensor,
    "mm": matmul, "where": lambda self, condition, y: where(condition, self, y),
    "multinomial": _multinomial, "stride": _stride,
    "get_device": lambda self: -1,
    "conj": _identity, "resolve_conj": _identity, "resolve_neg": _identity,
    "conj_physical": _identity, "adjoint": _adjoint,
    "is_conj": lambda self: False, "is_neg": lambda self: False,
    "is_complex": lambda self: False,
}
_SURFACE_PROPERTIES: dict[str, Any] = {
    "nbytes": lambda self: self.numel() * self.dtype.itemsize,
    "itemsize": lambda self: self.dtype.itemsize,
    "real": _identity, "imag": _imag, "mH": _adjoint, "H": _conj_transposed,
}
# functions of this module that torch also has as Tensor methods (objects, not names:
# dead-code checks see the uses)
FUNCTION_METHODS = {fn.__name__: fn for fn in (
    signbit, copysign, fmax, fmin, heaviside, float_power, ldexp, erfc, erfinv, lgamma, digamma,
    polygamma, mvlgamma, i0, frexp, gcd, lcm, isclose, allclose, equal, dist, inner, vdot, trace,
    ravel, unflatten, positive, rot90, renorm, sum_to_size, split_with_sizes, hsplit, vsplit,
    dsplit, diagflat, slice_scatter, select_scatter, diagonal_scatter, cov, corrcoef,
    matrix_power, unique_consecutive,
)}
# cheap in-place forms torch has
_IN_PLACE = ("copysign fmax fmin heaviside float_power ldexp erfc erfinv lgamma digamma "
             "polygamma mvlgamma i0 gcd lcm renorm").split()


def _polygamma_method(self: Tensor, n: int) -> Tensor:
    return polygamma(n, self)


def _set_tensor_methods() -> None:
    api = globals()
    for name, fn in FUNCTION_METHODS.items():
        setattr(Tensor, name, fn)
    Tensor.polygamma = _polygamma_method  # type: ignore[attr-defined]  (x.polygamma(n))
    for name in _IN_PLACE:
        fn = _polygamma_method if name == "polygamma" else api[name]
        setattr(Tensor, f"{name}_", _in_place(fn, f"{name}_"))
    for name, fn in _SURFACE_METHODS.items():
        setattr(Tensor, name, fn)
    for name, fn in _SURFACE_PROPERTIES.items():
        setattr(Tensor, name, property(fn))


_set_tensor_methods()


def conj(input: TensorLike) -> Tensor:  # noqa: A002
    return as_tensor_arg(input)


resolve_conj = resolve_neg = conj_physical = real = conj


def adjoint(input: TensorLike) -> Tensor:  # noqa: A002
    return _adjoint(as_tensor_arg(input))


def imag(input: TensorLike) -> Tensor:  # noqa: A002
    return _imag(as_tensor_arg(input))


def is_complex(input: TensorLike) -> bool:  # noqa: A002
    return False


# (pf.trace is the tracer of jit.py: the matrix trace is the method only)
__all__ = [*(n for n in FUNCTION_METHODS if n != "trace"), "multi_dot", "conj", "resolve_conj",
           "resolve_neg", "conj_physical", "real", "imag", "adjoint", "is_complex", "Frexp"]


# ---- the in-place forms torch has of existing methods ----

_IN_PLACE_OF_METHODS = (
    "abs absolute acos acosh arccos arccosh arcsin arcsinh arctan arctan2 arctanh asin asinh "
    "atan atan2 atanh addbmm addmm addmv addr baddbmm bitwise_and bitwise_not bitwise_or "
    "bitwise_xor ceil clamp_max clamp_min clip cos cosh divide eq erf exp exp2 expm1 fix floor "
    "floor_divide fmod frac ge greater greater_equal gt le lerp less less_equal log log10 "
    "log1p log2 logical_and logical_not logical_or logical_xor logit lt multiply nan_to_num ne "
    "neg negative not_equal pow reciprocal relu remainder round rsqrt sgn sigmoid sign sin sinh "
    "sqrt square subtract tan tanh true_divide trunc swapaxes swapdims").split()
_SHAPE_CHANGING = {"swapaxes", "swapdims"}


def _checked_in_place(name: str) -> Any:
    method = getattr(Tensor, name)

    def fn(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        out = method(self, *args, **kwargs)
        if out.dtype.is_floating_point and not self.dtype.is_floating_point:
            raise RuntimeError(f"{name}_: result type {out.dtype.name} can't be cast to the "
                               f"desired output type {self.dtype.name}")
        return out
    fn.__name__ = name
    return fn


def _set_in_place_methods() -> None:
    for name in _IN_PLACE_OF_METHODS:
        if name in _SHAPE_CHANGING or hasattr(Tensor, f"{name}_") or not hasattr(Tensor, name):
            continue
        setattr(Tensor, f"{name}_", _in_place(_checked_in_place(name), f"{name}_"))


_set_in_place_methods()


def _ifloordiv(self: Tensor, other: Any) -> Tensor:
    return self.floor_divide_(other)


def _imod(self: Tensor, other: Any) -> Tensor:
    return self.remainder_(other)


def _ipow(self: Tensor, other: Any) -> Tensor:
    return self.pow_(other)


# ``x //= 2``, ``x %= 3``, ``x **= 2`` update ``x`` in place as PyTorch's
# (without these Python rebinds the name to a new tensor: a view's base and
# other references to ``x`` would silently keep the old values)
for _dunder, _method in (("__ifloordiv__", _ifloordiv), ("__imod__", _imod),
                         ("__ipow__", _ipow)):
    setattr(Tensor, _dunder, _method)


# ---- predicates and small members ----

_PREDICATES: dict[str, Any] = {
    "is_floating_point": lambda self: self.dtype.is_floating_point,
    "is_signed": lambda self: self.dtype != bool_ and np.dtype(self.dtype.np).kind != "u",
    "is_same_size": lambda self, other: self.shape == other.shape,
    "is_inference": is_inference, "is_cpu": property(lambda self: True),
    "is_cuda": property(lambda self: False), "is_sparse": property(lambda self: False),
    "is_quantized": property(lambda self: False), "is_meta": property(lambda self: False),
    "is_nested": property(lambda self: False), "storage_offset": lambda self: geometry(self)[2],
}


def _is_nonzero(self: Tensor) -> bool:
    if self.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous"
                           if self.numel() else "Boolean value of Tensor with no values is "
                           "ambiguous")
    return bool(self.item())


def _set_predicates() -> None:
    for name, member in _PREDICATES.items():
        if not hasattr(Tensor, name):
            setattr(Tensor, name, member)
    if not hasattr(Tensor, "is_nonzero"):
        Tensor.is_nonzero = _is_nonzero  # type: ignore[attr-defined]


_set_predicates()


def is_floating_point(input: TensorLike) -> bool:  # noqa: A002
    return as_tensor_arg(input).dtype.is_floating_point


def is_nonzero(input: TensorLike) -> bool:  # noqa: A002
    return _is_nonzero(as_tensor_arg(input))


def isreal(input: TensorLike) -> Tensor:  # noqa: A002
    """All True: no complex dtypes here."""
    return ones(as_tensor_arg(input).shape, dtype=bool_)


Tensor.isreal = isreal  # type: ignore[attr-defined]


__all__ += ["is_floating_point", "is_nonzero", "isreal", "vander"]


# ---- branch surface3: nextafter ----

def nextafter(input: TensorLike, other: TensorLike) -> Tensor:  # noqa: A002
    """The next representable value after ``input`` towards ``other`` (C's
    nextafter): ``input`` plus one unit in the last place, found from
    ``frexp``'s exponent (a power of two: the sum is exact); half a unit when
    stepping towards zero from a power of two; subnormal units below the
    normal range. Derivatives torch's (2.13): 1 for ``input`` (0 where it equals
    ``other``), 0 for ``other``."""
    dt = _promote([input, other])
    if dt not in (float32, float64):
        raise RuntimeError(f"nextafter: only float32 and float64 are supported, got "
                           f"{dt.name}")
    a, b = _cast(input, dt), _cast(other, dt)
    return _rules.elementwise("NextafterBackward0", _nextafter_value, [a, b],
                              lambda x, y: [convert(ne(x, y), dt), zeros((), dtype=dt)])


def _nextafter_value(a: Tensor, b: Tensor) -> Tensor:
    info = np.finfo(a.dtype.np)
    digits, min_exp = info.nmant + 1, info.minexp + 1  # frexp's exponent of the tiniest normal
    m, e = frexp(a)
    e = maximum(convert(e, a.dtype), float(min_exp))
    k = e - digits
    half = floor(k / 2.0)
    unit = exp2(half) * exp2(k - half)  # two factors: 2**k alone underflows in float32
    power_of_two = logical_and(eq(abs(m), 0.5), gt(e, float(min_exp)))
    away = eq(lt(a, b), gt(a, 0.0))  # the step grows |input|
    step = where(logical_or(away, ~power_of_two), unit, unit * 0.5)
    stepped = a + where(lt(a, b), step, -step)
    stepped = where(eq(stepped, 0.0), a * 0.0, stepped)  # towards zero: zero of a's sign
    tiniest = float(np.nextafter(a.dtype.np.type(0), a.dtype.np.type(1)))
    from_zero = where(gt(b, 0.0), _cast(tiniest, a.dtype), _cast(-tiniest, a.dtype))
    biggest = _cast(float(info.max), a.dtype)
    from_inf = where(gt(a, 0.0), biggest, -biggest)
    out = where(eq(a, 0.0), from_zero, where(isfinite(a), stepped, from_inf))
    out = where(eq(a, b), b, out)
    return where(logical_or(isnan(a), isnan(b)), a + b, out)


Tensor.nextafter = nextafter  # type: ignore[attr-defined]
Tensor.nextafter_ = _in_place(nextafter, "nextafter_")  # type: ignore[attr-defined]
__all__ += ["nextafter"]


# ---- branch surface3: the OpInfo ops not mapped before (stacking, isin, trapezoid,
# combinations, unravel_index, rsub, angle, Tensor.unfold) ----

def _atleast(name: str, nd: int, tensors: tuple, place: Callable[[Tensor], Tensor]) -> Any:
    if len(tensors) == 1 and isinstance(tensors[0], list | tuple):
        return tuple(place(as_tensor_arg(t)) if as_tensor_arg(t).ndim < nd
                     else as_tensor_arg(t) for t in tensors[0])
    out = tuple(place(as_tensor_arg(t)) if as_tensor_arg(t).ndim < nd else as_tensor_arg(t)
                for t in tensors)
    if not out:
        raise TypeError(f"{name}() expects at least one tensor")
    return out[0] if len(out) == 1 else out


def atleast_1d(*tensors: Any) -> Any:
    return _atleast("atleast_1d", 1, tensors, lambda t: reshape(t, (1,)))


def atleast_2d(*tensors: Any) -> Any:
    return _atleast("atleast_2d", 2, tensors, lambda t: reshape(t, (1, t.numel())))


def atleast_3d(*tensors: Any) -> Any:
    def place(t: Tensor) -> Tensor:
        return reshape(t, (1, 1, 1) if t.ndim == 0 else
                       (1, t.shape[0], 1) if t.ndim == 1 else (*t.shape, 1))
    return _atleast("atleast_3d", 3, tensors, place)


def _sequence(name: str, tensors: Any) -> list[Tensor]:
    if isinstance(tensors, Tensor) or not isinstance(tensors, Sequence) or not tensors:
        raise TypeError(f"{name}(): expects a non-empty sequence of tensors")
    return [as_tensor_arg(t) for t in tensors]


def hstack(tensors: Sequence[TensorLike]) -> Tensor:
    ts = list(atleast_1d(_sequence("hstack", tensors)))
    return cat(ts, 0 if ts[0].ndim == 1 else 1)


def vstack(tensors: Sequence[TensorLike]) -> Tensor:
    return cat(list(atleast_2d(_sequence("vstack", tensors))), 0)


row_stack = vstack


def dstack(tensors: Sequence[TensorLike]) -> Tensor:
    return cat(list(atleast_3d(_sequence("dstack", tensors))), 2)


def column_stack(tensors: Sequence[TensorLike]) -> Tensor:
    ts = [reshape(t, (t.numel(), 1)) if t.ndim <= 1 else t
          for t in _sequence("column_stack", tensors)]
    return cat(ts, 1)


def isin(elements: TensorLike, test_elements: TensorLike, *, assume_unique: bool = False,
         invert: bool = False) -> Tensor:
    """Whether each of ``elements`` is among ``test_elements`` (a comparison
    of every pair: NaN is in nothing, as torch's)."""
    del assume_unique  # torch's speed hint: the answer is the same
    e, t = as_tensor_arg(elements), as_tensor_arg(test_elements)
    found = _any(eq(reshape(e, (*e.shape, 1)), reshape(t, (t.numel(),))), -1) if t.numel() \
        else zeros(e.shape, dtype=bool_)
    return ~found if invert else found


def _trapezoid_steps(name: str, y: Tensor, x: TensorLike | None, dx: float | None, d: int
                     ) -> tuple[Tensor, Tensor | float]:
    """(the mean of neighbouring samples, the steps) along ``d``."""
    n = y.shape[d]
    lo = narrow(y, d, 0, n - 1)
    hi = narrow(y, d, 1, n - 1)
    mid = (lo + hi) / 2.0
    if x is None:
        return mid, 1.0 if dx is None else float(dx)
    xs = as_tensor_arg(x)
    if xs.ndim == 1:
        if xs.shape[0] != n:
            raise ShapeError(name, f"x {list(xs.shape)} must have as many samples as y has "
                                   f"along dim {d} ({n})")
        steps = _diff(xs)
        return mid, reshape(steps, tuple(n - 1 if i == d else 1 for i in range(y.ndim)))
    return mid, _diff(xs, dim=d)


def _float_of(y: TensorLike) -> Tensor:
    t = as_tensor_arg(y)
    return t if t.dtype.is_floating_point else convert(t, default_float())


def trapezoid(y: TensorLike, x: TensorLike | None = None, *, dx: float | None = None,
              dim: int = -1) -> Tensor:
    """The trapezoidal rule along ``dim`` (sample points ``x`` or spacing ``dx``)."""
    t = _float_of(y)
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received both x and dx")
    d = normalize_dim("trapezoid", dim, t.ndim)
    if t.shape[d] == 0:
        return sum(t, d)
    mid, steps = _trapezoid_steps("trapezoid", t, x, dx, d)
    return sum(mid * steps, d)


def trapz(y: TensorLike, x: TensorLike | None = None, *, dx: float | None = None,
          dim: int = -1) -> Tensor:
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y: TensorLike, x: TensorLike | None = None, *,
                         dx: float | None = None, dim: int = -1) -> Tensor:
    t = _float_of(y)
    if x is not None and dx is not None:
        raise TypeError("cumulative_trapezoid() received both x and dx")
    d = normalize_dim("cumulative_trapezoid", dim, t.ndim)
    if t.shape[d] == 0:
        return t
    mid, steps = _trapezoid_steps("cumulative_trapezoid", t, x, dx, d)
    return _cumsum(mid * steps, d)


def combinations(input: TensorLike, r: int = 2, with_replacement: bool = False  # noqa: A002
                 ) -> Tensor:
    """The length-``r`` combinations of a 1-D tensor's elements, one per row
    (itertools' order), gathered at host-computed positions."""
    x = as_tensor_arg(input)
    if x.ndim != 1:
        raise ShapeError("combinations", f"expects a 1-D input, got {fmt_shape(x.shape)}")
    if r < 0:
        raise ValueError(f"combinations: expected a non-negative r, got {r}")
    if r == 0:
        return reshape(narrow(x, 0, 0, 0), (0,))
    pick = itertools.combinations_with_replacement if with_replacement \
        else itertools.combinations
    rows = np.array(list(pick(range(x.shape[0]), r)), np.int64).reshape(-1, r)
    return reshape(index_select(x, 0, tensor(rows.reshape(-1))), (rows.shape[0], r))


def unravel_index(indices: TensorLike, shape: Any) -> tuple[Tensor, ...]:
    """The coordinates in ``shape`` of flat ``indices`` (wrapping, as torch's)."""
    idx = as_tensor_arg(indices)
    if idx.dtype.is_floating_point or idx.dtype is bool_:
        raise TypeError(f"unravel_index: expected 'indices' to be an integer tensor, got "
                        f"{idx.dtype.name}")
    dims = (int(shape),) if isinstance(shape, int | np.integer) else tuple(int(s) for s in shape)
    if builtins.any(s < 0 for s in dims):
        raise ValueError(f"unravel_index: 'shape' cannot have negative values, got {dims}")
    if math.prod(dims) == 0 and idx.numel():
        raise ValueError("unravel_index: 'shape' cannot contain a zero when indices is not "
                         "empty")
    idx = convert(idx, int64)
    strides = [math.prod(dims[i + 1:]) for i in range(len(dims))]
    return tuple(_remainder(_floor_divide(idx, st), s) for st, s in zip(strides, dims))


def rsub(input: TensorLike, other: TensorLike, *, alpha: Any = 1) -> Tensor:  # noqa: A002
    """``other - alpha * input``."""
    return _sub(other, input, alpha=alpha)


def angle(input: TensorLike) -> Tensor:  # noqa: A002
    """The argument of a real number: pi below zero, else 0 (NaN stays)."""
    x = _float_of(input)
    zero = _cast(0, x.dtype)
    # a NaN stays; the gradient is 0 everywhere (torch's angle of a real input),
    # but the result is still connected to x, so it requires grad as torch's
    connected = where(isfinite(x), x * 0.0, zero)
    return where(isnan(x), detach(x), where(lt(x, 0.0), connected + math.pi, connected))


def _unfold_method(self: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """Tensor.unfold: every window of ``size`` elements, ``step`` apart, along
    ``dimension``, as a new last dim."""
    d = normalize_dim("unfold", dimension, builtins.max(self.ndim, 1))
    n = self.shape[d] if self.ndim else 1
    if step <= 0:
        raise ValueError(f"unfold: step is {step} but must be > 0")
    if size < 0 or size > n:
        raise ShapeError("unfold", f"maximum size for tensor at dimension {d} is {n} but "
                                   f"size is {size}")
    x = reshape(self, (1,)) if self.ndim == 0 else self
    count = (n - size) // step + 1
    at = (np.arange(count)[:, None] * step + np.arange(size)[None, :]).reshape(-1)
    picked = index_select(x, d, tensor(at.astype(np.int64)))
    picked = reshape(picked, (*x.shape[:d], count, size, *x.shape[d + 1:]))
    out = movedim(picked, d + 1, -1)
    return reshape(out, (size,)) if self.ndim == 0 else out


Tensor.unfold = _unfold_method  # type: ignore[attr-defined]
Tensor.angle = angle  # type: ignore[attr-defined]  (torch has no isin/rsub methods, no angle_)
__all__ += ["atleast_1d", "atleast_2d", "atleast_3d", "hstack", "vstack", "row_stack",
            "dstack", "column_stack", "isin", "trapezoid", "trapz", "cumulative_trapezoid",
            "combinations", "unravel_index", "rsub", "angle"]

"""The op API (PyTorch names and semantics). Each function normalizes its
arguments (dims, shapes, PyTorch type promotion with ``convert`` ops and
scalar constants) and records canonical ``pyflame`` ops. Shape rules live in
``dialects/``; nothing here re-derives them.

The unary and binary elementwise wrappers are made from the op table (one
per op of ``dialects/elementwise.py``'s ``UNARY``/``BINARY``, its rule kind
saying how operands are promoted); ops with their own argument handling are
written out. At import this module sets Tensor's operators and op methods on
core's ``Tensor`` (``_set_tensor_methods``, JAX's ``_set_tensor_method``).

This module shadows ``sum``, ``max``, ``min``, ``abs``, ``pow`` and ``round``
on purpose (they are the op names); the Python builtins are used as
``builtins.X``.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import sys
from collections import namedtuple
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import saved
from .core import (
    CONFIG,
    COUNTERS,
    NO_ATTRS,
    OpNode,
    Tensor,
    as_view,
    constant_value,
    current_graph,
    geometry,
    hand_out,
    is_contiguous,
    mark_multi_output,
    number_key,
    outside_pyflame,
    record,
    requires_grad,
    reshape_strides,
    share,
    tensor_method,
)
from .dialects import OPS
from .dialects.dtypes import (
    BOOL,
    FLOAT,
    INT,
    TORCH_TYPE_NAMES,
    DType,
    bfloat16,
    bool_,
    default_float,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    result_type,
    uint8,
)
from .dialects.dtypes import dtype as to_dtype
from .dialects.elementwise import BINARY, UNARY
from .dialects.opdef import OpDef, ShapeError, fmt_shape, normalize_dim
from .segment import (  # noqa: F401  (jax.ops' names: pf.ops.segment_sum, ...)
    segment_max,
    segment_min,
    segment_prod,
    segment_sum,
)
from .torch_api import call_with_out

Scalar = int | float | bool
TensorLike = Any  # Tensor | Scalar | np.ndarray

ValuesIndices = namedtuple("ValuesIndices", ["values", "indices"])

_CONSTANT, _CONVERT, _MATMUL, _SUB = OPS["constant"], OPS["convert"], OPS["matmul"], OPS["sub"]


def _is_tensor(x: object) -> bool:
    return isinstance(x, Tensor)


# ---- autocast (torch.autocast's op policy; ``pf.amp`` switches it) ----

# The autocast dtype while a ``pf.autocast`` region is active and no policy
# function is running; None otherwise. A policy function clears it for its
# body, so the ops it is made of run in the dtypes it chose (torch casts at
# the outermost listed op only, as its dispatcher does).
AUTOCAST: list[DType | None] = [None]


def _autocast_arg(x: Any, target: DType) -> Any:
    """torch's eligibility: floating tensors other than float64 are cast."""
    if isinstance(x, Tensor) and x.dtype is not target and x.dtype is not float64 \
            and x.dtype.is_floating_point:
        return convert(x, target)
    return x


def autocast_policy(kind: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark a function with its place in torch's CPU autocast lists (measured
    against torch 2.13): "lower" casts its floating tensor arguments to the
    autocast dtype (matmuls, convolutions, linear, attention), "fp32" to
    float32 (losses, reductions prone to overflow, linear algebra), "none"
    keeps their dtypes (ops torch leaves alone that we build from a listed
    one, as ``mv`` from ``matmul``). Outside autocast: one check, no cost."""
    if kind not in ("lower", "fp32", "none"):
        raise ValueError(f"autocast_policy: unknown kind {kind!r}")

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            dt = AUTOCAST[0]
            if dt is None:
                return fn(*args, **kwargs)
            target = dt if kind == "lower" else float32 if kind == "fp32" else None
            if target is not None:
                args = tuple(_autocast_arg(a, target) for a in args)
                kwargs = {k: _autocast_arg(v, target) for k, v in kwargs.items()}
            AUTOCAST[0] = None
            try:
                return fn(*args, **kwargs)
            finally:
                AUTOCAST[0] = dt
        return run
    return decorate


def scalar(v: Scalar, dt: DType) -> Tensor:
    """A Python number as a 0-d constant of dtype ``dt`` (part of the hash)."""
    return record(_CONSTANT, (), {"value": constant_value(v, dt)})


_OPERANDS: dict[tuple, Tensor] = {}


def _scalar_operand(v: int | float, dt: DType) -> Tensor:
    """The constant a Python number becomes as the operand of a binary op:
    one shared promise per (dtype, exact value), so ``lr * g`` in every step
    records one op, not two. Only ever an operand, never handed to the user
    (who could realize it or make it require grad); not a graph-scope op.
    A promise in eager mode too: the op reading it then runs with it as a
    constant of its graph, as in lazy mode (a backend may need to see it,
    e.g. the csl backend lowers ``x ** 2`` only for a constant exponent)."""
    k = (dt, number_key(v))
    t = _OPERANDS.get(k)
    if t is None:
        if len(_OPERANDS) > 4096:
            _OPERANDS.clear()
        # the constant op's promise, made here rather than by ``record``, which
        # realizes in eager mode: switching the process-wide CONFIG.eager off
        # around it would make another thread record lazily in that instant
        attrs = {"value": constant_value(v, dt)}
        specs = _CONSTANT.check([], [], attrs)
        node = OpNode(_CONSTANT, (), attrs, specs)
        node.nograd = False  # a constant: tracing into it is always right
        (shape, d), = specs
        t = _OPERANDS[k] = Tensor._promise(node, 0, shape, d)
        COUNTERS.ops_recorded += 1  # (counted as ``record`` counts it)
        current_graph().ops_recorded += 1
    return t


def as_tensor_arg(x: TensorLike) -> Tensor:
    """Tensors pass through; numpy arrays become leaves; scalars constants."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, np.ndarray):
        return Tensor._leaf(x)  # shares memory, as from_numpy (an unsupported dtype raises)
    if isinstance(x, bool | int | float | np.number | np.bool_):
        return scalar(x, result_type([], [], [x]))
    raise TypeError(f"expected a Tensor, a numpy array or a Python number, got "
                    f"{type(x).__name__}")


def _promote(args: Sequence[TensorLike]) -> DType:
    dims, zero, scalars = [], [], []
    for a in args:
        if _is_tensor(a):
            (dims if a.shape else zero).append(a.dtype)
        elif isinstance(a, np.ndarray):
            (dims if a.shape else zero).append(to_dtype(a.dtype))
        elif a is not None:
            scalars.append(a)
    return result_type(dims, zero, scalars)


def _cast(x: TensorLike, dt: DType) -> Tensor:
    if _is_tensor(x):
        return x if x.dtype is dt else record(_CONVERT, (x,), {"dtype": dt})
    if isinstance(x, np.ndarray):
        return _cast(as_tensor_arg(x), dt)
    if type(x) is int and dt.category == INT:
        x = _wrapped_int(x, dt)
    return scalar(x, dt)


def _wrapped_int(v: int, dt: DType) -> int:
    """A Python int operand of an integer tensor's op, as PyTorch converts it:
    a C cast from 64 bits (``uint8_tensor + 300`` adds 44); past 64 bits, an error."""
    info = np.iinfo(dt.np)
    if info.min <= v <= info.max:
        return v
    if not -(1 << 63) <= v < (1 << 64):
        raise RuntimeError(f"int too big to convert: the Python integer {v} does not fit in "
                           "64 bits")
    return int(np.array(v, dtype=np.int64 if v < (1 << 63) else np.uint64).astype(dt.np))


def convert(x: TensorLike, dt: Any) -> Tensor:
    return _cast(x, to_dtype(dt))


def _floating(x: TensorLike) -> Tensor:
    """Math that needs floats promotes integers to the default float (PyTorch)."""
    t = as_tensor_arg(x)
    return t if t.dtype.is_floating_point else _cast(t, default_float())


# ---- elementwise ----

# The wrappers whose first line records their op on Tensor operands as they are
# when all have one dtype of these categories: (op, categories). Their Tensor
# methods and operators record that case without a Python frame when the C
# extension is built (``core.tensor_method``).
_DIRECT: dict[Callable[..., Tensor], tuple[OpDef, tuple[int, ...]]] = {}
_ANY_CATEGORY = (BOOL, INT, FLOAT)


def _unary(op: OpDef, float_only: bool) -> Callable[[TensorLike], Tensor]:
    def fn(x: TensorLike) -> Tensor:
        if type(x) is Tensor and (not float_only or x.dtype.category == FLOAT):
            return record(op, (x,), NO_ATTRS)  # (the category, not the property: the hot path)
        return record(op, (_floating(x) if float_only else as_tensor_arg(x),), NO_ATTRS)
    fn.__name__ = fn.__qualname__ = op.name
    fn.__doc__ = f"Elementwise {op.name} (records pyflame.{op.name})."
    _DIRECT[fn] = (op, (FLOAT,) if float_only else _ANY_CATEGORY)
    return fn


def _binary(op: OpDef, to_float: bool) -> Callable[[TensorLike, TensorLike], Tensor]:
    def fn(a: TensorLike, b: TensorLike) -> Tensor:
        ta, tb = type(a), type(b)
        if ta is Tensor:
            if tb is Tensor and a.dtype is b.dtype and \
                    (not to_float or a.dtype.category == FLOAT):
                return record(op, (a, b), NO_ATTRS)  # no promotion needed: the common case
            if (tb is float or tb is int) and a.dtype.category == FLOAT:
                return record(op, (a, _scalar_operand(b, a.dtype)), NO_ATTRS)  # b takes a's dtype
        elif tb is Tensor and (ta is float or ta is int) and b.dtype.category == FLOAT:
            return record(op, (_scalar_operand(a, b.dtype), b), NO_ATTRS)
        if not _is_tensor(a) and not _is_tensor(b):
            a = as_tensor_arg(a)
        dt = _promote((a, b))
        if to_float and not dt.is_floating_point:
            dt = default_float()
        return record(op, (_cast(a, dt), _cast(b, dt)), NO_ATTRS)
    fn.__name__ = fn.__qualname__ = op.name
    fn.__doc__ = f"Elementwise {op.name} with broadcasting and type promotion."
    _DIRECT[fn] = (op, (FLOAT,) if to_float else _ANY_CATEGORY)
    return fn


def _logical(op: OpDef) -> Callable[[TensorLike, TensorLike], Tensor]:
    def fn(a: TensorLike, b: TensorLike) -> Tensor:
        # any dtypes: no promotion
        return record(op, (as_tensor_arg(a), as_tensor_arg(b)), NO_ATTRS)
    fn.__name__ = fn.__qualname__ = op.name
    fn.__doc__ = f"Elementwise {op.name} of the truth values (bool result)."
    return fn


def _elementwise_wrapper(op: OpDef, kind: str) -> Callable[..., Tensor]:
    """The wrapper of an elementwise op without attributes, from its rule kind
    (``dialects/elementwise.py``): "float" ops promote integers to the default
    float, "logical" ones take any operands, the rest promote as PyTorch."""
    if op.num_inputs == 1:
        return _unary(op, float_only=kind == "float")
    if kind == "logical":
        return _logical(op)
    return _binary(op, to_float=kind == "float")


# one wrapper per unary and binary op of the table; the ones with their own
# argument checks (square, sub, pow below) are replaced but keep theirs inside
ELEMENTWISE: dict[str, Callable[..., Tensor]] = {
    name: _elementwise_wrapper(OPS[name], kind)
    for name, (kind, *_) in [*UNARY.items(), *BINARY.items()]
}
globals().update(ELEMENTWISE)
# the table-made wrappers the composites below call, bound by name for readers and linters
(cos, eq, exp, floor_divide, fmod, gt, log, log1p, logical_and, logical_not, lt, mul, ne, neg,
 sigmoid, sign, sin, sqrt, tanh) = (
    ELEMENTWISE[_n] for _n in ("cos eq exp floor_divide fmod gt log log1p logical_and "
                               "logical_not lt mul ne neg sigmoid sign sin sqrt tanh").split())


def square(x: TensorLike) -> Tensor:
    """Elementwise square; bool squares as int64 (PyTorch: ``pow(x, 2)``)."""
    t = as_tensor_arg(x)
    return record(OPS["square"], (_cast(t, int64) if t.dtype is bool_ else t,), NO_ATTRS)


def gelu(x: TensorLike, approximate: str = "none") -> Tensor:
    return record(OPS["gelu"], (_floating(x),), {"approximate": approximate})


def _is_bool(v: TensorLike) -> bool:
    if _is_tensor(v):
        return v.dtype is bool_
    if isinstance(v, np.ndarray):
        return v.dtype == np.bool_
    return isinstance(v, bool | np.bool_)


def sub(a: TensorLike, b: TensorLike, *, alpha: Scalar = 1) -> Tensor:
    """``a - alpha * b``; like PyTorch, refuses bool operands (use ``~`` / logical ops)."""
    if type(a) is Tensor and type(b) is Tensor and a.dtype is b.dtype \
            and a.dtype is not bool_ and alpha == 1:
        return record(_SUB, (a, b), NO_ATTRS)
    if _is_bool(a) or _is_bool(b):
        raise ShapeError("sub", "subtraction with a bool operand is not supported; for "
                                "masks use ~ or logical_not / logical_xor")
    return ELEMENTWISE["sub"](a, b if alpha == 1 else _alpha_times("sub", alpha, a, b))


_DIRECT[sub] = (_SUB, (INT, FLOAT))  # (bool_ is the one dtype of category BOOL)


def pow(a: TensorLike, b: TensorLike) -> Tensor:
    if isinstance(b, int | np.integer) and not isinstance(b, bool) and b < 0 \
            and not _promote((a, b)).is_floating_point:
        raise ShapeError("pow", f"integers to negative integer powers are not allowed "
                                f"(exponent {b}); use a float exponent or base")
    return ELEMENTWISE["pow"](a, b)


subtract, multiply, true_divide = sub, ELEMENTWISE["mul"], ELEMENTWISE["div"]


def where(condition: TensorLike, x: TensorLike, y: TensorLike) -> Tensor:
    cond = as_tensor_arg(condition)
    if cond.dtype is not bool_:
        raise TypeError(f"where: condition must be a bool tensor, got {cond.dtype.name}")
    if not _is_tensor(x) and not _is_tensor(y):
        x = as_tensor_arg(x)
    dt = _promote((x, y))
    return record(OPS["where"], (cond, _cast(x, dt), _cast(y, dt)), NO_ATTRS)


def clamp(x: TensorLike, min: TensorLike | None = None, max: TensorLike | None = None
          ) -> Tensor:
    """``where(x < min, min, x)`` then ``where(y > max, max, y)``, as PyTorch:
    NaN propagates, ``min > max`` gives ``max`` everywhere, and on a bound
    the gradient goes to ``x`` (not split as maximum/minimum would). At a NaN
    ``x`` the gradient is 0 (PyTorch's ``min <= x <= max`` mask): the NaN is
    then a constant."""
    if min is None and max is None:
        raise ValueError("clamp: at least one of min and max must be given")
    dt = _promote((x, min, max))
    x = out = _cast(x, dt)
    for bound, beyond in ((min, ELEMENTWISE["lt"]), (max, ELEMENTWISE["gt"])):
        if bound is None:
            continue
        b = _cast(bound, dt)
        try:
            take = beyond(out, b)
        except ShapeError as e:  # name the op the user called
            raise ShapeError("clamp", e.reason) from None
        if dt.is_floating_point and (_is_tensor(bound) or isinstance(bound, np.ndarray)
                                     or bound != bound):
            take = ELEMENTWISE["logical_or"](take, ELEMENTWISE["ne"](b, b))  # NaN propagates
        out = where(take, b, out)
    if dt.is_floating_point:
        out = where(ELEMENTWISE["ne"](x, x), _cast(float("nan"), dt), out)
    return out


clip = clamp


# ---- math (issue 14): rounding, division modes, inverse and hyperbolic trig,
# activations, tests of special values; composites of the primitives above
# unless the table has the op (floor, atan2, fmod, bitwise_*...)

_LN2 = 0.6931471805599453
_LN10 = 2.302585092994046


def _same(x: Tensor) -> Tensor:
    """A new tensor with ``x``'s value (an identity convert: PyTorch returns a
    copy where rounding an integer changes nothing)."""
    return record(_CONVERT, (x,), {"dtype": x.dtype})


def _rounding(name: str) -> Callable[[TensorLike], Tensor]:
    op = OPS[name]

    def fn(x: TensorLike) -> Tensor:
        t = as_tensor_arg(x)
        if t.dtype.is_floating_point:
            return record(op, (t,), NO_ATTRS)
        if t.dtype is bool_:
            raise ShapeError(name, "is not defined on bool tensors")
        return _same(t)  # integers are already whole
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name}; integer tensors are returned unchanged (a copy)."
    return fn


floor, ceil, trunc = _rounding("floor"), _rounding("ceil"), _rounding("trunc")
fix = trunc
_round_half_even = _rounding("round")


def round(x: TensorLike, *, decimals: int = 0) -> Tensor:  # noqa: A001
    """Round half to even; with ``decimals`` PyTorch's ``round(x * 10^d) / 10^d``
    (``d < 0``: ``round(x / 10^-d) * 10^-d``)."""
    t = as_tensor_arg(x)
    if decimals == 0 or not t.dtype.is_floating_point:
        if decimals != 0 and t.dtype.category == 1:
            raise ShapeError("round", "decimals is not supported on integer tensors")
        return _round_half_even(t)
    if decimals > 0:
        k = 10.0 ** decimals
        return div(_round_half_even(mul(t, k)), k)
    k = 10.0 ** -decimals
    return mul(_round_half_even(div(t, k)), k)


def frac(x: TensorLike) -> Tensor:
    """``x - trunc(x)`` (sign of x); gradient 1, as PyTorch."""
    t = _floating_only("frac", x)
    return sub(t, trunc(t))


def _floating_only(name: str, x: TensorLike) -> Tensor:
    t = as_tensor_arg(x)
    if not t.dtype.is_floating_point:
        raise ShapeError(name, f"expects a floating-point tensor, got {t.dtype.name}")
    return t


def remainder(a: TensorLike, b: TensorLike) -> Tensor:
    """Python's ``%``: the result has the sign of the divisor (``fmod`` then one
    correction); gradient 1 w.r.t. ``a`` and ``-floor(a / b)`` w.r.t. ``b``."""
    r = fmod(a, b)
    bt = _cast(b, r.dtype)
    zero = _scalar_operand(0, r.dtype)
    wrong_sign = logical_and(ne(r, zero), ne(lt(r, zero), lt(bt, zero)))
    return where(wrong_sign, add(r, bt), r)


def div(a: TensorLike, b: TensorLike, *, rounding_mode: str | None = None) -> Tensor:
    """True division, or PyTorch's ``rounding_mode`` "trunc" / "floor" (exact on
    integers, which then stay integers)."""
    if rounding_mode is None:
        return true_divide(a, b)
    if rounding_mode == "floor":
        return floor_divide(a, b)
    if rounding_mode != "trunc":
        raise ValueError(f"div: rounding_mode must be None, 'trunc' or 'floor', got "
                         f"{rounding_mode!r}")
    dt = _promote((a, b))
    if dt.is_floating_point:
        return trunc(true_divide(a, b))
    if dt is bool_:
        raise ShapeError("div", "trunc division is not defined on bool tensors")
    ta, tb = _cast(a, dt), _cast(b, dt)
    q = floor_divide(ta, tb)  # floor, then +1 where the exact quotient was negative
    zero = _scalar_operand(0, dt)
    inexact_negative = logical_and(ne(fmod(ta, tb), zero), ne(lt(ta, zero), lt(tb, zero)))
    return add(q, _cast(inexact_negative, dt))


divide = div


def add(a: TensorLike, b: TensorLike, *, alpha: Scalar = 1) -> Tensor:
    return ELEMENTWISE["add"](a, b if alpha == 1 else _alpha_times("add", alpha, a, b))


def _alpha_times(name: str, alpha: Scalar, a: TensorLike, b: TensorLike) -> Tensor:
    """``alpha * b`` for add/sub; a float alpha with integer operands raises (PyTorch)."""
    if isinstance(alpha, float) and not _promote((a, b)).is_floating_point:
        raise ShapeError(name, f"for integral input tensors, alpha must not be a float "
                               f"(got {alpha})")
    return mul(b, alpha)


def exp2(x: TensorLike) -> Tensor:
    """``2 ** x`` through ``pow`` (exact at integers); PyTorch's exp2 saves
    its result only (``saved``)."""
    t = _floating(x)
    first = saved.start()
    return saved.composite(pow(_scalar_operand(2, t.dtype), t), first, result=True, op="exp2")


def log2(x: TensorLike) -> Tensor:
    return mul(log(x), 1 / _LN2)


def log10(x: TensorLike) -> Tensor:
    return mul(log(x), 1 / _LN10)


def tan(x: TensorLike) -> Tensor:
    """``sin / cos``; PyTorch's tan saves its result only (``saved``)."""
    t = _floating(x)
    first = saved.start()
    return saved.composite(div(sin(t), cos(t)), first, result=True, op="tan")


def sinh(x: TensorLike) -> Tensor:
    """``(expm1(x) - expm1(-x)) / 2``: accurate near 0."""
    t = _floating(x)
    first = saved.start()  # (PyTorch's sinh saves its input: ``saved``)
    return saved.composite(mul(sub(expm1(t), expm1(neg(t))), 0.5), first, (t,), op="sinh")


def cosh(x: TensorLike) -> Tensor:
    """``exp(|x| - ln 2) + exp(-|x| - ln 2)``: no overflow below the result's."""
    a = abs(_floating(x))
    return add(exp(sub(a, _LN2)), exp(sub(neg(a), _LN2)))


def _guarded(big: Tensor, t: Tensor, safe: Scalar, small: Callable[[Tensor], Tensor],
             large: Callable[[Tensor], Tensor]) -> Tensor:
    """``where(big, large(t), small(t))`` with each branch fed ``safe`` where it
    is not taken, so no inf/NaN of the unused branch reaches a gradient."""
    s = _scalar_operand(safe, t.dtype)
    return where(big, large(where(big, t, s)), small(where(big, s, t)))


_HUGE = 2.0 ** 28  # past it, x² overflows float32's intermediates; log(2x) is exact enough


def _odd(t: Tensor, f: Callable[[Tensor], Tensor]) -> Tensor:
    """``f(x)`` for x >= 0 and ``-f(-x)`` below, for an odd ``f`` accurate on
    x >= 0 only; each branch fed 0 where it is not taken (gradient 1 at 0 kept)."""
    negative = lt(t, 0.0)
    return where(negative, neg(f(where(negative, neg(t), 0.0))), f(where(negative, 0.0, t)))


def asinh(x: TensorLike) -> Tensor:
    """Odd: ``log1p(x + x²/(1 + sqrt(1 + x²)))`` for x >= 0; ``log(2|x|)``
    signed for huge |x| (its derivative 1/|x|: torch's ``rsqrt(x² + 1)``, 0 at
    +-inf, as no ``sign(x) * log`` chain gives)."""
    t = _floating(x)

    def f(v: Tensor) -> Tensor:
        return log1p(add(v, div(mul(v, v), add(sqrt(add(mul(v, v), 1.0)), 1.0))))

    def large(v: Tensor) -> Tensor:
        negative = lt(v, 0.0)
        r = add(log(where(negative, neg(v), v)), _LN2)
        return where(negative, neg(r), r)
    return _guarded(gt(abs(t), _HUGE), t, 1.0, lambda v: _odd(v, f), large)


def acosh(x: TensorLike) -> Tensor:
    """``log1p(u + sqrt(2u + u²))`` with ``u = x - 1``; ``log(2x)`` for huge x.
    The derivative is torch's ``rsqrt(x² - 1)`` at the edges too: infinite at
    +-1 (there ``log(x + sqrt(x² - 1))``, whose chain gives it), positive
    below -1 where the value is NaN (``NaN - acosh(-x)``), 0 at +-inf."""
    t = _floating(x)

    def small(v: Tensor) -> Tensor:
        u = sub(v, 1.0)
        return log1p(add(u, sqrt(add(mul(u, 2.0), mul(u, u)))))

    def inner(v: Tensor) -> Tensor:
        return _guarded(gt(v, _HUGE), v, 2.0, small, lambda w: add(log(w), _LN2))

    def unit(v: Tensor) -> Tensor:  # at x = +-1 only
        return log(add(v, sqrt(sub(mul(v, v), 1.0))))

    def reflected(v: Tensor) -> Tensor:  # below -1: NaN, derivative rsqrt(x² - 1)
        return add(neg(inner(neg(v))), float("nan"))

    def rest(v: Tensor) -> Tensor:
        return _guarded(lt(v, -1.0), v, 2.0, inner, reflected)
    return _guarded(eq(abs(t), 1.0), t, 2.0, rest, unit)


def atanh(x: TensorLike) -> Tensor:
    """Odd: ``log1p(2x / (1 - x)) / 2`` for 0 <= x < 1 (log1p of a positive
    value: well conditioned up to x = 1). The derivative is torch's
    ``1 / (1 - x²)`` at the edges too: at +-1 ``(log1p(x) - log1p(-x)) / 2``
    (infinite derivative, where the first form's chain gives NaN), beyond
    them (a NaN value) ``log1p(2 / (1 - x) - 2) / 2`` made odd (no
    cancellation in its derivative: -0 at +-inf)."""
    t = _floating(x)

    def inside(v: Tensor) -> Tensor:
        return _odd(v, lambda w: mul(log1p(div(mul(w, 2.0), sub(1.0, w))), 0.5))

    def unit(v: Tensor) -> Tensor:
        return mul(sub(log1p(v), log1p(neg(v))), 0.5)

    def beyond(v: Tensor) -> Tensor:  # x > 1 and NaN
        return mul(log1p(sub(div(2.0, sub(1.0, v)), 2.0)), 0.5)

    def edge(v: Tensor) -> Tensor:
        return _guarded(eq(abs(v), 1.0), v, 2.0, lambda w: _odd(w, beyond), unit)
    return _guarded(logical_not(lt(abs(t), 1.0)), t, 0.0, inside, edge)


arccos, arcsin, arctan, arctan2 = ELEMENTWISE["acos"], ELEMENTWISE["asin"], \
    ELEMENTWISE["atan"], ELEMENTWISE["atan2"]
arccosh, arcsinh, arctanh = acosh, asinh, atanh
absolute, negative = ELEMENTWISE["abs"], ELEMENTWISE["neg"]
sgn = ELEMENTWISE["sign"]  # torch.sgn: sign for real tensors (no complex dtypes here)
greater, greater_equal, less, less_equal, not_equal = ELEMENTWISE["gt"], ELEMENTWISE["ge"], \
    ELEMENTWISE["lt"], ELEMENTWISE["le"], ELEMENTWISE["ne"]
expm1 = ELEMENTWISE["expm1"]


def logical_xor(a: TensorLike, b: TensorLike) -> Tensor:
    return ne(logical_not(logical_not(a)), logical_not(logical_not(b)))


# ---- activations (PyTorch's nn.functional forms; nn.functional re-exports them) ----

def softplus(x: TensorLike, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log1p(exp(beta x)) / beta``, and ``x`` itself where ``beta x > threshold``."""
    t = _floating_only("softplus", x)
    bx = mul(t, beta)
    linear = gt(bx, threshold)
    soft = log1p(exp(where(linear, 0.0, bx)))
    return where(linear, t, soft if beta == 1 else div(soft, beta))


def silu(x: TensorLike) -> Tensor:
    t = _floating_only("silu", x)
    return mul(t, sigmoid(t))


def mish(x: TensorLike) -> Tensor:
    t = _floating_only("mish", x)
    return mul(t, tanh(softplus(t)))


def hardtanh(x: TensorLike, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """``clamp(x, min_val, max_val)``; integer tensors stay integers (the bounds
    are cast, as PyTorch). The derivative is torch's: 0 at and beyond the
    limits, 1 between them and at NaN (``x <= min || x >= max ? 0 : 1``)."""
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val ({min_val}) cannot be greater than max_val "
                         f"({max_val})")
    t = as_tensor_arg(x)
    if not t.dtype.is_floating_point:
        return clamp(t, int(min_val), int(max_val))
    lo, hi = _scalar_operand(min_val, t.dtype), _scalar_operand(max_val, t.dtype)
    return where(ELEMENTWISE["le"](t, min_val), lo, where(ELEMENTWISE["ge"](t, max_val), hi, t))


def relu6(x: TensorLike) -> Tensor:
    return hardtanh(x, 0.0, 6.0)


def leaky_relu(x: TensorLike, negative_slope: float = 0.01) -> Tensor:
    t = as_tensor_arg(x)
    return where(gt(t, 0), t, mul(t, negative_slope))


def elu(x: TensorLike, alpha: float = 1.0) -> Tensor:
    """``alpha * expm1(x)`` for x <= 0, ``x`` above and at NaN (derivative 1
    there, as torch's ``x <= 0 ? ... : 1``)."""
    t = _floating_only("elu", x)
    negative = ELEMENTWISE["le"](t, 0.0)
    return where(negative, mul(_expm1_exp_derivative(where(negative, t, 0.0)), alpha), t)


def _expm1_exp_derivative(v: Tensor) -> Tensor:
    """``expm1(v)`` for v <= 0 whose derivative is ``exp(v)`` (torch's
    ``elu_backward``), not expm1's ``result + 1``, which cancels for v << 0:
    ``exp(v) - 1`` below -1 (within an ulp of expm1 there)."""
    far = lt(v, -1.0)
    return where(far, sub(exp(v), 1.0), expm1(v))


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(x: TensorLike) -> Tensor:
    return mul(elu(x, _SELU_ALPHA), _SELU_SCALE)


def celu(x: TensorLike, alpha: float = 1.0) -> Tensor:
    if alpha == 0:
        raise ValueError("celu: ZeroDivisionError, alpha cannot be 0")
    t = _floating_only("celu", x)
    negative = ELEMENTWISE["le"](t, 0.0)
    return where(negative, mul(_expm1_exp_derivative(div(where(negative, t, 0.0), alpha)),
                               alpha), t)


def hardsigmoid(x: TensorLike) -> Tensor:
    """``clamp(x + 3, 0, 6) / 6``; derivative 1/6 strictly inside (-3, 3), 0
    at and beyond the limits and at NaN (torch's)."""
    t = _floating_only("hardsigmoid", x)
    inside = logical_and(gt(t, -3.0), lt(t, 3.0))
    outside = where(ELEMENTWISE["le"](t, -3.0), _scalar_operand(0.0, t.dtype),
                    where(ELEMENTWISE["ge"](t, 3.0), _scalar_operand(1.0, t.dtype),
                          _scalar_operand(float("nan"), t.dtype)))
    return where(inside, div(add(where(inside, t, 0.0), 3.0), 6.0), outside)


def hardswish(x: TensorLike) -> Tensor:
    """``x * relu6(x + 3) / 6``; its derivative is torch's: 0 at and below -3,
    ``x/3 + 1/2`` inside, 1 from 3 on and at NaN (the value ``x`` there)."""
    t = _floating_only("hardswish", x)
    below = ELEMENTWISE["le"](t, -3.0)
    inside = logical_and(logical_not(below), lt(t, 3.0))
    v = where(inside, t, 0.0)  # the inside branch fed 0 elsewhere (no inf * 0 in its gradient)
    # below -3: t * 0, as torch's t * relu6(t + 3) / 6 (-0.0, and NaN at -inf)
    return where(below, mul(t, 0.0), where(inside, div(mul(v, add(v, 3.0)), 6.0), t))


def logsigmoid(x: TensorLike) -> Tensor:
    """``x - log1p(exp(x))`` below 0, ``-log1p(exp(-x))`` from 0 on: each
    branch reads exp of a non-positive number, and the derivative at 0 is
    1/2 (``min(x, 0) - log1p(exp(-|x|))`` has 0 there: |x|'s derivative)."""
    t = _floating_only("logsigmoid", x)
    negative = lt(t, 0.0)
    tn, tp = where(negative, t, 0.0), where(negative, 0.0, t)
    return where(negative, sub(tn, log1p(exp(tn))), neg(log1p(exp(neg(tp)))))


def logit(x: TensorLike, eps: float | None = None) -> Tensor:
    # log t - log(1 - t): its gradient 1/t + 1/(1 - t) is torch's 1/(t (1 - t)),
    # infinite (not NaN, as log(t / (1 - t))'s chain gives) at 0 and 1
    t = _floating(x)
    if eps is not None:
        t = clamp(t, eps, 1.0 - eps)
        return sub(log(t), log1p(neg(t)))
    # outside [0, 1] the value is NaN and so is torch's gradient (log's would be
    # finite): a factor NaN there, 1 inside (a where of t * NaN would put 0 * NaN
    # into the gradient of every element)
    outside = ne(t, clamp(t, 0.0, 1.0))  # (NaN too)
    return mul(sub(log(t), log1p(neg(t))), where(outside, float("nan"), 1.0))


# ---- special values ----

def isnan(x: TensorLike) -> Tensor:
    t = as_tensor_arg(x)
    return ne(t, t)


def isinf(x: TensorLike) -> Tensor:
    t = as_tensor_arg(x)
    if not t.dtype.is_floating_point:
        return ne(t, t)  # all False
    return eq(abs(t), float("inf"))


def isposinf(x: TensorLike) -> Tensor:
    t = as_tensor_arg(x)
    return eq(t, float("inf")) if t.dtype.is_floating_point else ne(t, t)


def isneginf(x: TensorLike) -> Tensor:
    t = as_tensor_arg(x)
    return eq(t, float("-inf")) if t.dtype.is_floating_point else ne(t, t)


def isfinite(x: TensorLike) -> Tensor:
    t = as_tensor_arg(x)
    if not t.dtype.is_floating_point:
        return eq(t, t)  # all True
    return lt(abs(t), float("inf"))


def nan_to_num(x: TensorLike, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Tensor:
    """NaN to ``nan``, +-inf to ``posinf``/``neginf`` (default: the dtype's
    largest/lowest finite value)."""
    t = as_tensor_arg(x)
    if not t.dtype.is_floating_point:
        return _same(t)
    info = np.finfo(t.dtype.np)
    hi = float(info.max) if posinf is None else posinf
    lo = float(info.min) if neginf is None else neginf
    out = where(isnan(t), _cast(nan, t.dtype), t)
    out = where(isposinf(t), _cast(hi, t.dtype), out)
    return where(isneginf(t), _cast(lo, t.dtype), out)


def clamp_min(x: TensorLike, min: TensorLike) -> Tensor:  # noqa: A002
    return clamp(x, min=min)


def clamp_max(x: TensorLike, max: TensorLike) -> Tensor:  # noqa: A002
    return clamp(x, max=max)


def lerp(input: TensorLike, end: TensorLike, weight: TensorLike) -> Tensor:  # noqa: A002
    """PyTorch's two-sided form: ``start + w (end - start)`` for ``|w| < 0.5``,
    ``end - (end - start)(1 - w)`` otherwise (exact at w = 1)."""
    start = _floating_only("lerp", input)
    e = _cast(end, start.dtype)
    w = _cast(weight, start.dtype) if _is_tensor(weight) else weight
    diff = sub(e, start)
    low = lt(abs(w), 0.5) if _is_tensor(w) else builtins.abs(w) < 0.5
    if isinstance(low, bool):
        return add(start, mul(w, diff)) if low else sub(e, mul(diff, sub(1.0, w)))
    return where(low, add(start, mul(w, diff)), sub(e, mul(diff, sub(1.0, w))))


# ---- products ----

def _check_rank(name: str, t: Tensor, ndim: int, what: str) -> None:
    if t.ndim != ndim:
        raise ShapeError(name, f"{what} must be {ndim}-D, got {fmt_shape(t.shape)}")


@autocast_policy("lower")
def bmm(input: TensorLike, mat2: TensorLike) -> Tensor:  # noqa: A002
    a, b = as_tensor_arg(input), as_tensor_arg(mat2)
    _check_rank("bmm", a, 3, "batch1")
    _check_rank("bmm", b, 3, "batch2")
    if a.shape[0] != b.shape[0]:
        raise ShapeError("bmm", f"batch sizes differ: {fmt_shape(a.shape)} and "
                                f"{fmt_shape(b.shape)}")
    return matmul(a, b)


@autocast_policy("none")
def mv(input: TensorLike, vec: TensorLike) -> Tensor:  # noqa: A002
    a, v = as_tensor_arg(input), as_tensor_arg(vec)
    _check_rank("mv", a, 2, "input")
    _check_rank("mv", v, 1, "vec")
    return matmul(a, v)


@autocast_policy("none")
def dot(input: TensorLike, tensor: TensorLike) -> Tensor:  # noqa: A002
    a, b = as_tensor_arg(input), as_tensor_arg(tensor)
    _check_rank("dot", a, 1, "input")
    _check_rank("dot", b, 1, "tensor")
    if a.dtype is not b.dtype:
        raise ShapeError("dot", f"expects both tensors of one dtype, got {a.dtype.name} and "
                                f"{b.dtype.name}")
    return matmul(a, b)



def outer(input: TensorLike, vec2: TensorLike) -> Tensor:  # noqa: A002
    a, b = as_tensor_arg(input), as_tensor_arg(vec2)
    _check_rank("outer", a, 1, "input")
    _check_rank("outer", b, 1, "vec2")
    return mul(reshape(a, (a.shape[0], 1)), reshape(b, (1, b.shape[0])))


ger = outer


def _add_scaled(name: str, bias: TensorLike, product: Tensor, beta: Scalar, alpha: Scalar
                ) -> Tensor:
    """``beta * bias + alpha * product``; with beta == 0 the bias is ignored
    (its NaN does not propagate), as PyTorch; on integer tensors the scalars
    are cast to the integer type first, as PyTorch does."""
    if not product.dtype.is_floating_point:
        beta, alpha = int(beta), int(alpha)
    out = product if alpha == 1 else mul(product, alpha)
    if beta == 0:
        t = as_tensor_arg(bias)
        _broadcasts_to(name, t.shape, out.shape)
        return out
    return add(out, bias if beta == 1 else mul(bias, beta))


def _add_product(name: str, bias: TensorLike, x: Tensor, y: Tensor,
                 product: Callable[[Tensor, Tensor], Tensor], beta: Scalar, alpha: Scalar
                 ) -> Tensor:
    """``beta * bias + alpha * product(x, y)``. In bfloat16/float16 it rounds
    once, as torch's BLAS updates: the float32 accumulation scaled and added
    to the bias in float32 (rounding the product first loses ulps where the
    bias cancels it)."""
    dt = x.dtype
    if (dt is bfloat16 or dt is float16) and y.dtype is dt and isinstance(bias, Tensor) \
            and bias.dtype is dt:
        return _cast(_add_scaled(name, _cast(bias, float32),
                                 product(_cast(x, float32), _cast(y, float32)), beta, alpha),
                     dt)
    return _add_scaled(name, bias, product(x, y), beta, alpha)


def _broadcasts_to(name: str, small: tuple[int, ...], big: tuple[int, ...]
                              ) -> None:
    try:
        if np.broadcast_shapes(small, big) != tuple(big):
            raise ValueError
    except ValueError:
        raise ShapeError(name, f"input of shape {fmt_shape(small)} does not broadcast to "
                               f"the product's {fmt_shape(big)}") from None


@autocast_policy("lower")
def addmm(input: TensorLike, mat1: TensorLike, mat2: TensorLike, *,  # noqa: A002
          beta: Scalar = 1, alpha: Scalar = 1) -> Tensor:
    a, b = as_tensor_arg(mat1), as_tensor_arg(mat2)
    _check_rank("addmm", a, 2, "mat1")
    _check_rank("addmm", b, 2, "mat2")
    return _add_product("addmm", input, a, b, matmul, beta, alpha)


@autocast_policy("none")
def addmv(input: TensorLike, mat: TensorLike, vec: TensorLike, *,  # noqa: A002
          beta: Scalar = 1, alpha: Scalar = 1) -> Tensor:
    return _add_product("addmv", input, as_tensor_arg(mat), as_tensor_arg(vec), mv, beta, alpha)


@autocast_policy("lower")
def baddbmm(input: TensorLike, batch1: TensorLike, batch2: TensorLike, *,  # noqa: A002
            beta: Scalar = 1, alpha: Scalar = 1) -> Tensor:
    return _add_product("baddbmm", input, as_tensor_arg(batch1), as_tensor_arg(batch2), bmm,
                        beta, alpha)


@autocast_policy("lower")
def addbmm(input: TensorLike, batch1: TensorLike, batch2: TensorLike, *,  # noqa: A002
           beta: Scalar = 1, alpha: Scalar = 1) -> Tensor:
    x, y = as_tensor_arg(batch1), as_tensor_arg(batch2)
    if (x.dtype is bfloat16 or x.dtype is float16) and x.ndim == 3 and x.shape[0] > 0:
        # torch's addbmm: one addmm per batch, each rounded (beta on the first)
        out = input
        for i in range(x.shape[0]):
            out = _add_product("addbmm", out, x[i], y[i], matmul, beta if i == 0 else 1,
                               alpha)
        return out
    return _add_product("addbmm", input, x, y, lambda p, q: sum(bmm(p, q), 0), beta, alpha)


@autocast_policy("none")
def addr(input: TensorLike, vec1: TensorLike, vec2: TensorLike, *,  # noqa: A002
         beta: Scalar = 1, alpha: Scalar = 1) -> Tensor:
    return _add_scaled("addr", input, outer(vec1, vec2), beta, alpha)  # (torch rounds both)


# ---- bitwise (``& | ^ ~``): on bool tensors the logical ops, as PyTorch ----

def _bitwise(name: str, on_bool: Callable[[Tensor, Tensor], Tensor]
             ) -> Callable[[TensorLike, TensorLike], Tensor]:
    op = OPS[name]

    def fn(input: TensorLike, other: TensorLike) -> Tensor:  # noqa: A002
        if not _is_tensor(input) and not _is_tensor(other):
            input = as_tensor_arg(input)
        dt = _promote((input, other))
        a, b = _cast(input, dt), _cast(other, dt)
        if dt is bool_:
            return on_bool(a, b)
        return record(op, (a, b), NO_ATTRS)  # floats raise in the shape rule, naming the op
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name} of integer or bool tensors (bool: the logical op)."
    return fn


bitwise_and = _bitwise("bitwise_and", ELEMENTWISE["logical_and"])
bitwise_or = _bitwise("bitwise_or", ELEMENTWISE["logical_or"])
bitwise_xor = _bitwise("bitwise_xor", ELEMENTWISE["ne"])


def bitwise_not(input: TensorLike) -> Tensor:  # noqa: A002
    t = as_tensor_arg(input)
    if t.dtype is bool_:
        return logical_not(t)
    return record(OPS["bitwise_not"], (t,), NO_ATTRS)


# ---- bit shifts (``<< >>``, issue 14): composites of pow, mul and floor_divide ----

def _shift(name: str, left: bool) -> Callable[[TensorLike, TensorLike], Tensor]:
    """torch's CPU kernels: ``x << s = x * 2^s`` wrapping (an unsigned shift),
    ``x >> s`` arithmetic (``floor(x / 2^s)``); a shift amount that is negative
    or at least the bit width gives 0 (``<<``) or the sign fill, -1 or 0 (``>>``)."""
    def fn(input: TensorLike, other: TensorLike) -> Tensor:  # noqa: A002
        if not _is_tensor(input) and not _is_tensor(other):
            input = as_tensor_arg(input)
        dt = _promote((input, other))
        if dt.category != 1:
            raise TypeError(f"{name}: expects integer operands (torch: \"{'l' if left else 'r'}"
                            f"shift_cpu\" not implemented for '{dt.name}'), got {dt.name}")
        a, amount = _cast(input, dt), _cast(other, dt)
        bits = dt.itemsize * 8
        unsigned = dt.np.kind == "u"  # its >> by bits - 1 is a division (no sign to fill)
        valid = logical_and(amount >= 0, amount < (bits if left or unsigned else bits - 1))
        power = ELEMENTWISE["pow"](scalar(2, dt), where(valid, amount, scalar(0, dt)))
        if left:
            return where(valid, ELEMENTWISE["mul"](a, power), scalar(0, dt))
        fill = scalar(0, dt) if unsigned else where(a < 0, scalar(-1, dt), scalar(0, dt))
        return where(valid, ELEMENTWISE["floor_divide"](a, power), fill)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``torch.{name}``: elementwise {'left' if left else 'right'} shift of "
                  "integer tensors.")
    return fn


bitwise_left_shift = _shift("bitwise_left_shift", True)
bitwise_right_shift = _shift("bitwise_right_shift", False)


# ---- reductions ----

def _dims(op: str, x: Tensor, dim: int | Sequence[int] | None) -> tuple[int, ...]:
    if dim is None:
        return tuple(range(x.ndim))
    if type(dim) is int and x.shape:
        n = len(x.shape)
        return (dim % n,) if -n <= dim < n else (normalize_dim(op, dim, n),)  # (raises)
    many = isinstance(dim, Sequence | np.ndarray) and not isinstance(dim, str)
    raw = tuple(dim) if many else (dim,)  # a bad dim (1.5) fails in normalize_dim
    if not raw:
        return tuple(range(x.ndim))
    dims = [normalize_dim(op, d, x.ndim) for d in raw]
    if len(set(dims)) != len(dims):
        raise ShapeError(op, f"dim {list(raw)} names a dimension more than once")
    return tuple(sorted(dims)) if x.ndim else ()


def sum(x: TensorLike, dim: int | Sequence[int] | None = None, keepdim: bool = False,
        dtype: Any = None) -> Tensor:
    t = as_tensor_arg(x) if dtype is None else convert(x, dtype)
    out = record(OPS["sum"], (t,), {"dims": _dims("sum", t, dim), "keepdim": keepdim})
    return out if dtype is None else _cast(out, t.dtype)  # sum(int32, dtype=int32) is int32


def mean(x: TensorLike, dim: int | Sequence[int] | None = None, keepdim: bool = False,
         dtype: Any = None) -> Tensor:
    t = as_tensor_arg(x) if dtype is None else convert(x, dtype)
    if not t.dtype.is_floating_point:
        raise ShapeError("mean", f"could not infer output dtype: input dtype must be "
                                 f"floating point, got {t.dtype.name} (pass dtype=)")
    return record(OPS["mean"], (t,), {"dims": _dims("mean", t, dim), "keepdim": keepdim})


def _extreme(name: str, arg_name: str, elementwise):
    op = OPS[name]

    def fn(x: TensorLike, dim: Any = None, keepdim: bool = False):
        if _is_tensor(dim) or isinstance(dim, float):
            return elementwise(x, dim)  # torch.max(a, b)
        t = as_tensor_arg(x)
        first = saved.start()
        if isinstance(dim, int | np.integer):  # torch returns (values, indices), and
            # the derivative of values goes to the index returned
            values = record(op, (t,), {"dims": _dims(name, t, dim), "keepdim": keepdim,
                                       "ties": "first"})
            values = saved.composite(values, first, op=name)  # (torch saves the indices only)
            src = _cast(t, int32) if t.dtype is bool_ else t  # (argmax refuses bool)
            return ValuesIndices(values, _arg(arg_name, src, int(dim), keepdim))
        return saved.composite(record(op, (t,), {"dims": _dims(name, t, dim),
                                                 "keepdim": keepdim}), first, (t,), True, name)
    fn.__name__ = name
    fn.__doc__ = (f"{name} over dims; with an int ``dim`` returns (values, indices) like "
                  f"PyTorch; with a tensor second argument it is elementwise.")
    return fn


def _arg(name: str, x: TensorLike, dim: int | None, keepdim: bool) -> Tensor:
    t = as_tensor_arg(x)
    d = None if dim is None else (normalize_dim(name, dim, t.ndim) if t.ndim else None)
    return record(OPS[name], (t,), {"dim": d, "keepdim": keepdim})


max = _extreme("max", "argmax", ELEMENTWISE["maximum"])
min = _extreme("min", "argmin", ELEMENTWISE["minimum"])


def amax(x: TensorLike, dim: int | Sequence[int] | None = None, keepdim: bool = False
         ) -> Tensor:
    t = as_tensor_arg(x)
    first = saved.start()  # (PyTorch's amax saves its input and its result)
    return saved.composite(record(OPS["max"], (t,), {"dims": _dims("max", t, dim),
                                                     "keepdim": keepdim}), first, (t,), True,
                           "amax")


def amin(x: TensorLike, dim: int | Sequence[int] | None = None, keepdim: bool = False
         ) -> Tensor:
    t = as_tensor_arg(x)
    first = saved.start()  # (PyTorch's amin saves its input and its result)
    return saved.composite(record(OPS["min"], (t,), {"dims": _dims("min", t, dim),
                                                     "keepdim": keepdim}), first, (t,), True,
                           "amin")


def argmax(x: TensorLike, dim: int | None = None, keepdim: bool = False) -> Tensor:
    return _arg("argmax", x, dim, keepdim)


def argmin(x: TensorLike, dim: int | None = None, keepdim: bool = False) -> Tensor:
    return _arg("argmin", x, dim, keepdim)


# ---- linear algebra ----

def matmul(a: TensorLike, b: TensorLike) -> Tensor:
    if AUTOCAST[0] is not None:
        return _autocast_matmul(a, b)
    if type(a) is Tensor and type(b) is Tensor and a.dtype is b.dtype:
        return record(_MATMUL, (a, b), NO_ATTRS)
    if not (_is_tensor(a) or isinstance(a, np.ndarray)) or \
            not (_is_tensor(b) or isinstance(b, np.ndarray)):
        raise TypeError("matmul: both operands must be tensors")
    dt = _promote((a, b))
    return record(OPS["matmul"], (_cast(a, dt), _cast(b, dt)), NO_ATTRS)


_autocast_matmul = autocast_policy("lower")(matmul)
mm = matmul


# ---- shape ops ----

def _shape_arg(shape: tuple) -> tuple[int, ...]:
    if len(shape) == 1 and not isinstance(shape[0], int | np.integer):
        shape = tuple(shape[0])
    return tuple(int(d) for d in shape)


def reshape(x: TensorLike, *shape: Any) -> Tensor:
    """A view of ``x`` where its elements' layout allows one, else a copy (PyTorch)."""
    return _reshape(x, shape, strict=False)


def view(x: TensorLike, *shape: Any) -> Tensor:
    """A view of ``x`` in a new shape; raises where the layout allows none (PyTorch)."""
    if len(shape) == 1 and (isinstance(shape[0], DType | str) or _is_dtype_like(shape[0])):
        raise NotImplementedError(f"view({shape[0]}): reinterpreting the bytes as another "
                                  "dtype is not supported; use .to(dtype) to convert the values")
    return _reshape(x, shape, strict=True)


def _is_dtype_like(v: Any) -> bool:
    """A numpy or torch dtype, or a numpy scalar type (``np.float64``)."""
    return type(v).__name__ == "dtype" or (isinstance(v, type) and issubclass(v, np.generic))


def _reshape(x: TensorLike, shape: tuple, strict: bool) -> Tensor:
    t = as_tensor_arg(x)
    new = list(_shape_arg(shape))
    if new.count(-1) > 1:
        raise ShapeError("reshape", f"only one dimension can be inferred, got {new}")
    if -1 in new:
        known = 1
        for d in new:
            if d != -1:
                known *= d
        n = t.numel()
        if known == 0 or n % known:
            raise ShapeError("reshape", f"cannot reshape {fmt_shape(t.shape)} ({n} elements) "
                                        f"to {new}")
        new[new.index(-1)] = n // known
    target = tuple(new)
    if target == t.shape and not requires_grad(t):
        return t  # (one that requires grad gets its own node: a hook on it is its own)
    out = record(OPS["reshape"], (t,), {"shape": target})
    sizes, strides, offset = geometry(t)
    new_strides = reshape_strides(sizes, strides, target)
    if new_strides is None:  # PyTorch copies (reshape) or raises (view)
        if strict:
            raise RuntimeError(f"view size is not compatible with input tensor's size and "
                               f"stride (at least one dimension spans across two contiguous "
                               f"subspaces): view {fmt_shape(t.shape)} as {list(target)}. "
                               "Use .reshape(...) instead.")
        return out
    return as_view(t, out, lambda p: record(OPS["reshape"], (p,), {"shape": target}),
                   target, new_strides, offset)


def flatten(x: TensorLike, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    t = as_tensor_arg(x)
    if t.ndim == 0:
        return reshape(t, (1,))
    s = normalize_dim("flatten", start_dim, t.ndim)
    e = normalize_dim("flatten", end_dim, t.ndim)
    if s > e:
        raise ShapeError("flatten", f"start_dim {start_dim} comes after end_dim {end_dim}")
    n = 1
    for d in t.shape[s:e + 1]:
        n *= d
    return reshape(t, t.shape[:s] + (n,) + t.shape[e + 1:])


def squeeze(x: TensorLike, dim: int | Sequence[int] | None = None) -> Tensor:
    t = as_tensor_arg(x)
    if dim is None:
        dims = set(range(t.ndim))
    else:
        raw = (dim,) if isinstance(dim, int | np.integer) else tuple(dim)
        dims = set(_dims("squeeze", t, raw)) if raw else set()  # squeeze(()): no-op
    return reshape(t, tuple(d for i, d in enumerate(t.shape) if not (i in dims and d == 1)))


def unsqueeze(x: TensorLike, dim: int) -> Tensor:
    t = as_tensor_arg(x)
    d = normalize_dim("unsqueeze", dim, t.ndim + 1)
    return reshape(t, t.shape[:d] + (1,) + t.shape[d:])


def permute(x: TensorLike, *dims: Any) -> Tensor:
    t = as_tensor_arg(x)
    perm = tuple(normalize_dim("permute", d, t.ndim) for d in _shape_arg(dims))
    if perm == tuple(range(t.ndim)):
        if len(perm) != t.ndim:
            raise ShapeError("permute", f"{list(dims)} does not permute {fmt_shape(t.shape)}")
        return t
    out = record(OPS["permute"], (t,), {"perm": perm})
    sizes, strides, offset = geometry(t)
    return as_view(t, out, lambda p: record(OPS["permute"], (p,), {"perm": perm}),
                   tuple(sizes[d] for d in perm), tuple(strides[d] for d in perm), offset)


def transpose(x: TensorLike, dim0: int = 0, dim1: int = 1) -> Tensor:
    t = as_tensor_arg(x)
    a, b = normalize_dim("transpose", dim0, t.ndim), normalize_dim("transpose", dim1, t.ndim)
    if t.ndim == 0:
        return t
    perm = list(range(t.ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return permute(t, tuple(perm))


swapaxes = transpose


def _transpose_method(self: Tensor, *axes: Any, **dims: Any) -> Tensor:
    """``Tensor.transpose``: torch's two dims swapped (``x.transpose(0, 2)``,
    ``dim0=``/``dim1=``), and jax.Array's (numpy's) forms that torch refuses:
    no axes reverses them all, a tuple, or one axis or three and more (as
    many as dims), permutes. Two axes are always torch's swap (numpy's
    ``x.transpose(0, 1)`` of a matrix is the identity permutation)."""
    if dims or len(axes) == 2:
        return transpose(self, *axes, **dims)
    if not axes:
        return permute(self, tuple(range(self.ndim - 1, -1, -1)))
    if len(axes) == 1 and isinstance(axes[0], list | tuple):
        axes = tuple(axes[0])
    if len(axes) != self.ndim:
        raise ShapeError("permute", f"transpose{tuple(axes)}: axes don't match the array's "
                                    f"{self.ndim} dims (torch's form swaps two dims)")
    return permute(self, tuple(axes))


def broadcast_to(x: TensorLike, *shape: Any) -> Tensor:
    t = as_tensor_arg(x)
    target = _shape_arg(shape)
    if target == t.shape:
        return t
    out = record(OPS["broadcast_to"], (t,), {"shape": target})
    sizes, strides, offset = geometry(t)
    lead = len(target) - len(sizes)
    if lead < 0:  # (the shape rule raised already)
        return out
    expanded = (0,) * lead + tuple(0 if n == 1 and m != 1 else s for n, m, s in
                                   zip(sizes, target[lead:], strides))
    return as_view(t, out, lambda p: record(OPS["broadcast_to"], (p,), {"shape": target}),
                   target, expanded, offset)


def expand(x: TensorLike, *sizes: Any) -> Tensor:
    """Like ``broadcast_to``, with ``-1`` meaning 'keep this dimension'."""
    t = as_tensor_arg(x)
    target = list(_shape_arg(sizes))
    off = len(target) - t.ndim
    if off < 0:
        raise ShapeError("broadcast_to", f"cannot expand {fmt_shape(t.shape)} to fewer "
                                         f"dimensions {target}")
    for i, d in enumerate(target):
        if d == -1:
            if i < off:
                raise ShapeError("broadcast_to", "-1 is not allowed in a new leading "
                                                 "dimension")
            target[i] = t.shape[i - off]
    return broadcast_to(t, tuple(target))


def cat(tensors: Sequence[TensorLike], dim: int = 0) -> Tensor:
    if not tensors:
        raise ShapeError("concat", "expects a non-empty sequence of tensors")
    ts = [as_tensor_arg(t) for t in tensors]
    dt = _promote(ts)
    d = normalize_dim("concat", dim, ts[0].ndim)
    cast = [_cast(t, dt) for t in ts]
    if len(cast) == 1:  # a new tensor, as PyTorch's cat: writing it leaves the input alone
        return cast[0] if cast[0] is not ts[0] else _same(ts[0])
    return record(OPS["concat"], tuple(cast), {"dim": d})


concat = concatenate = cat


def stack(tensors: Sequence[TensorLike], dim: int = 0) -> Tensor:
    if not tensors:
        raise ShapeError("concat", "stack expects a non-empty sequence of tensors")
    ts = [as_tensor_arg(t) for t in tensors]
    for t in ts[1:]:
        if t.shape != ts[0].shape:
            raise ShapeError("concat", "stack expects tensors of one shape, got "
                             + ", ".join(fmt_shape(x.shape) for x in ts))
    d = normalize_dim("concat", dim, ts[0].ndim + 1)
    return cat([unsqueeze(t, d) for t in ts], d)


def _split_sizes(x: Tensor, sizes: Sequence[int], dim: int) -> list[Tensor]:
    d = normalize_dim("split", dim, x.ndim)
    if len(sizes) == 1:
        if sizes[0] != x.shape[d]:
            raise ShapeError("split", f"sizes {list(sizes)} must sum to {x.shape[d]}, "
                                      f"dimension {d} of {fmt_shape(x.shape)}")
        return [x]
    outs = record(OPS["split"], (x,), {"sizes": tuple(sizes), "dim": d})
    geo = geometry(x)
    start = 0
    for out, k in zip(outs, sizes):
        lead = (slice(None),) * d + (slice(start, start + k),)
        as_view(x, out, lambda p, lead=lead: _slice(p, lead, p.shape)[0],
                *_slice_geometry(geo, x.shape, lead))
        start += k
    return list(outs)


def split(x: TensorLike, split_size_or_sections: int | Sequence[int], dim: int = 0
          ) -> list[Tensor]:
    t = as_tensor_arg(x)
    d = normalize_dim("split", dim, t.ndim)
    if isinstance(split_size_or_sections, int | np.integer):
        k, n = int(split_size_or_sections), t.shape[d]
        if k <= 0:
            raise ShapeError("split", f"split size must be positive, got {k}")
        sizes = [k] * (n // k) + ([n % k] if n % k else [])
        return mark_multi_output(_split_sizes(t, sizes or [0], d), "Split")
    return mark_multi_output(_split_sizes(t, [int(s) for s in split_size_or_sections], d),
                             "SplitWithSizes")


def chunk(x: TensorLike, chunks: int, dim: int = 0) -> list[Tensor]:
    t = as_tensor_arg(x)
    if chunks <= 0:
        raise ShapeError("split", f"chunk expects a positive number of chunks, got {chunks}")
    n = t.shape[normalize_dim("split", dim, t.ndim)]
    if n == 0:  # PyTorch: ``chunks`` empty pieces
        return mark_multi_output(_split_sizes(t, [0] * chunks, dim), "Split")
    return split(t, builtins.max(-(-n // chunks), 1), dim)


def getitem(x: Tensor, index: Any) -> Tensor:
    """Basic indexing: ints, slices with positive steps, None and Ellipsis."""
    items = index if isinstance(index, tuple) else (index,)
    for it in items:
        if isinstance(it, bool) or not (it is None or it is Ellipsis or isinstance(it, slice)
                                        or isinstance(it, int | np.integer)):
            what = f"a {type(it).__name__}" if _is_tensor(it) else repr(it)  # (no eval)
            raise TypeError(f"index {what}: only ints, slices, None and Ellipsis are "
                            "supported (advanced indexing is not)")
    n_real = builtins.sum(1 for it in items if it is not None and it is not Ellipsis)
    if builtins.sum(1 for it in items if it is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if n_real > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
    if Ellipsis in items:
        i = items.index(Ellipsis)
        items = items[:i] + (slice(None),) * (x.ndim - n_real) + items[i + 1:]
    else:
        items = items + (slice(None),) * (x.ndim - n_real)
    out, out_shape = _slice(x, items, x.shape)
    if out is not x:
        out = as_view(x, out, lambda p: _slice(p, items, p.shape)[0],
                      *_slice_geometry(geometry(x), x.shape, items))
    return reshape(out, out_shape)


def _slice(x: Tensor, items: tuple, shape: tuple[int, ...]) -> tuple[Tensor, tuple[int, ...]]:
    """``x`` sliced by the basic index ``items`` (ints kept as size-1 dims),
    and the shape of ``x[items]`` (ints dropped, Nones added)."""
    start, limit, stride, out_shape = _slice_bounds(items, shape)
    out = x
    if start != [0] * len(shape) or limit != list(shape) or stride != [1] * len(shape):
        out = record(OPS["slice"], (x,), {"start": tuple(start), "limit": tuple(limit),
                                          "stride": tuple(stride)})
    return out, tuple(out_shape)


def _slice_bounds(items: tuple, shape: tuple[int, ...]
                  ) -> tuple[list[int], list[int], list[int], list[int]]:
    start, limit, stride, out_shape = [], [], [], []
    d = 0
    for it in items:
        if it is None:
            out_shape.append(1)
            continue
        size = shape[d]
        if isinstance(it, slice):
            a, b, k = it.indices(size)
            if k <= 0:
                raise ValueError("step must be greater than zero")  # (torch's message)
            b = builtins.max(a, b)
            start.append(a), limit.append(b), stride.append(k)
            out_shape.append((b - a + k - 1) // k)
        else:
            i = int(it)
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for dimension {d} with size "
                                 f"{size}")
            i %= size
            start.append(i), limit.append(i + 1), stride.append(1)
        d += 1
    for _ in range(d, len(shape)):  # (a shorter index: the rest whole)
        start.append(0), limit.append(shape[len(start) - 1]), stride.append(1)
        out_shape.append(shape[len(start) - 1])
    return start, limit, stride, out_shape


def _slice_geometry(geo: tuple, shape: tuple[int, ...], items: tuple
                    ) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """The geometry of ``_slice``'s result (its ints kept as size-1 dims)."""
    sizes, strides, offset = geo
    start, limit, stride, _ = _slice_bounds(items, shape)
    new_sizes = tuple((b - a + k - 1) // k for a, b, k in zip(start, limit, stride))
    for a, s in zip(start, strides):
        offset += a * s
    return new_sizes, tuple(s * k for s, k in zip(strides, stride)), offset


# ---- the softmax family ----

def softmax(x: TensorLike, dim: int, dtype: Any = None) -> Tensor:
    t = _floating(x) if dtype is None else convert(x, dtype)
    d = normalize_dim("softmax", dim, t.ndim)
    if t.ndim == 0:  # one element: exp(x - x) (NaN for inf/NaN), gradient 0, as PyTorch
        return exp(sub(t, t))
    return record(OPS["softmax"], (t,), {"dim": d})


def log_softmax(x: TensorLike, dim: int, dtype: Any = None) -> Tensor:
    t = _floating(x) if dtype is None else convert(x, dtype)
    d = normalize_dim("log_softmax", dim, t.ndim)
    if t.ndim == 0:  # 0, NaN for inf/NaN; gradient 0 (NaN there), as PyTorch
        return log(exp(sub(t, t)))
    return record(OPS["log_softmax"], (t,), {"dim": d})


def logsumexp(x: TensorLike, dim: int | Sequence[int], keepdim: bool = False) -> Tensor:
    t = _floating(x)
    return record(OPS["logsumexp"], (t,), {"dims": _dims("logsumexp", t, dim),
                                           "keepdim": keepdim})


# ---- einsum: a composite of permute / reshape / matmul / sum ----

def _einsum_operand_labels(name: str, spec: str, t: Tensor, ell: str) -> list[str]:
    """The labels of one operand, the ellipsis expanded to ``ell``'s last
    ``ndim - len(named)`` letters (right-aligned, broadcasting as PyTorch)."""
    if "..." in spec:
        head, tail = spec.split("...")
        n = t.ndim - len(head) - len(tail)
        if n < 0:
            raise ShapeError(name, f"operand {spec!r} has more labels than the "
                                   f"{t.ndim} dimensions of {fmt_shape(t.shape)}")
        return [*head, *ell[len(ell) - n:], *tail] if n else [*head, *tail]
    if len(spec) != t.ndim:
        raise ShapeError(name, f"operand {spec!r} has {len(spec)} labels for the {t.ndim} "
                               f"dimensions of {fmt_shape(t.shape)}")
    return list(spec)


def _einsum_diagonal(t: Tensor, labels: list[str]) -> tuple[Tensor, list[str]]:
    """Repeated labels within one operand (``ii``): keep the diagonal, by a mask and a sum."""
    while len(set(labels)) != len(labels):
        lab = next(c for c in labels if labels.count(c) > 1)
        i = labels.index(lab)
        j = labels.index(lab, i + 1)
        if t.shape[i] != t.shape[j]:
            raise ShapeError("einsum", f"label {lab!r} is repeated over dimensions of sizes "
                                       f"{t.shape[i]} and {t.shape[j]}")
        n = t.shape[i]
        shape = [1] * t.ndim
        shape[i], shape[j] = n, n
        from_ = record(OPS["iota"], (), {"shape": (n, n), "dim": 0, "dtype": int64})
        to = record(OPS["iota"], (), {"shape": (n, n), "dim": 1, "dtype": int64})
        mask = reshape(eq(from_, to), tuple(shape))
        t = sum(where(mask, t, _scalar_operand(0, t.dtype) if t.dtype is not bool_
                      else False), j)
        labels = labels[:j] + labels[j + 1:]
    return t, labels


def _einsum_pair(a: Tensor, la: list[str], b: Tensor, lb: list[str], keep: set[str]
                 ) -> tuple[Tensor, list[str]]:
    """Contract two operands: shared kept labels are batch dims, shared others
    are summed by one batched matmul, the rest stay."""
    batch = [c for c in la if c in lb and c in keep]
    contract = [c for c in la if c in lb and c not in keep]
    left = [c for c in la if c not in lb]
    right = [c for c in lb if c not in la]
    sizes: dict[str, int] = {}
    for t, ls in ((a, la), (b, lb)):
        for c, n in zip(ls, t.shape):
            if sizes.get(c, 1) != 1 and n != 1 and sizes[c] != n:
                raise ShapeError("einsum", f"label {c!r} has sizes {sizes[c]} and {n}")
            sizes[c] = builtins.max(sizes.get(c, 1), n)

    def arrange(t: Tensor, ls: list[str], order: list[str], groups: list[list[str]]
                ) -> Tensor:
        t = permute(t, tuple(ls.index(c) for c in order))
        full = tuple(sizes[c] if c in batch or c in contract else t.shape[i]
                     for i, c in enumerate(order))
        t = broadcast_to(t, full)
        return reshape(t, tuple(_prod(sizes[c] if c in batch or c in contract
                                      else t.shape[order.index(c)] for c in g)
                                for g in groups))
    a3 = arrange(a, la, batch + left + contract, [batch, left, contract])
    b3 = arrange(b, lb, batch + contract + right, [batch, contract, right])
    out = matmul(a3, b3)
    shape = tuple(sizes[c] for c in batch) + tuple(a.shape[la.index(c)] for c in left) \
        + tuple(b.shape[lb.index(c)] for c in right)
    return reshape(out, shape), batch + left + right


def _prod(xs: Any) -> int:
    n = 1
    for x in xs:
        n *= x
    return n


def _einsum_sublists(first: Any, rest: tuple) -> tuple[str, tuple]:
    """torch's sublist format as an equation and its operands: operand,
    sublist, operand, sublist, ..., and an optional output sublist last."""
    args = (first, *rest)
    out = args[-1] if len(args) % 2 else None
    pairs = args[:-1] if len(args) % 2 else args
    ops_, subs = pairs[0::2], pairs[1::2]
    if not ops_ or any(not isinstance(sub, list | tuple) for sub in subs) or (
            out is not None and not isinstance(out, list | tuple)):
        raise ShapeError("einsum", "the sublist format alternates operands and sublists "
                                   "(and may end with an output sublist)")

    def letters(sub: Any) -> str:
        s = ""
        for v in sub:
            if v is Ellipsis:
                s += "..."
            elif isinstance(v, int) and 0 <= v < 52:
                s += chr(ord("a") + v) if v < 26 else chr(ord("A") + v - 26)
            else:
                raise ShapeError("einsum", f"sublist labels are integers in [0, 52), got {v!r}")
        return s
    eq = ",".join(letters(s) for s in subs)
    if out is not None:
        eq += "->" + letters(out)
    return eq, tuple(ops_)


def einsum(equation: str, *operands: Any) -> Tensor:
    """``torch.einsum``: any number of operands (or one list of them), ``...``,
    implicit output (labels seen once, sorted, after the ellipsis dims).
    Operands are contracted left to right, labels no later operand or the
    output needs being summed as early as possible. Also torch's sublist
    format: ``einsum(a, [0, 1], b, [1, 2], [0, 2])`` (``...`` as Ellipsis)."""
    if not isinstance(equation, str):
        equation, operands = _einsum_sublists(equation, operands)
    if len(operands) == 1 and isinstance(operands[0], list | tuple):
        operands = tuple(operands[0])
    ts = [as_tensor_arg(o) for o in operands]
    eq_ = equation.replace(" ", "")
    lhs, arrow, rhs = eq_.partition("->")
    specs = lhs.split(",")
    if len(specs) != len(ts):
        raise ShapeError("einsum", f"{equation!r} names {len(specs)} operands, got {len(ts)}")
    named = {c for c in eq_ if c.isalpha()}
    if any(not (c.isalpha() or c in ".,->") for c in eq_):
        raise ShapeError("einsum", f"invalid character in {equation!r}: labels are letters")
    n_ell = builtins.max([t.ndim - len(s.replace("...", "")) for s, t in zip(specs, ts)
                          if "..." in s], default=0)
    ell = "".join(chr(c) for c in range(0x100, 0x200) if chr(c) not in named)[:n_ell]
    labels = [_einsum_operand_labels("einsum", s, t, ell) for s, t in zip(specs, ts)]
    if arrow:
        head, _, tail = rhs.partition("...")
        out = [*head, *ell, *tail] if "..." in rhs else list(rhs)
        if len(set(out)) != len(out) or any(c not in {x for ls in labels for x in ls}
                                            for c in out):
            raise ShapeError("einsum", f"output {rhs!r} repeats a label or names one no "
                                       "operand has")
    else:
        seen = [c for ls in labels for c in ls]
        out = [*ell] + sorted(c for c in set(seen) if seen.count(c) == 1 and c not in ell)
    dt = _promote(ts)
    ts = [_cast(t, dt) for t in ts]
    pairs = [_einsum_diagonal(t, ls) for t, ls in zip(ts, labels)]
    acc, acc_l = None, []
    for k, (t, ls) in enumerate(pairs):
        later = set(out).union(*(set(p[1]) for p in pairs[k + 1:]))
        # sum what only this operand has and nothing after needs
        alone = [i for i, c in enumerate(ls) if c not in later and c not in acc_l]
        if alone:
            t = sum(t, alone)
            ls = [c for i, c in enumerate(ls) if i not in alone]
        if acc is None:
            acc, acc_l = t, ls
        else:
            acc, acc_l = _einsum_pair(acc, acc_l, t, ls, later)
        gone = [i for i, c in enumerate(acc_l) if c not in later]
        if gone:
            acc = sum(acc, gone)
            acc_l = [c for i, c in enumerate(acc_l) if i not in gone]
    assert acc is not None
    return permute(acc, tuple(acc_l.index(c) for c in out)) if acc_l != out else acc


# ---- norms (``pf.linalg`` re-exports them) ----

def vector_norm(x: TensorLike, ord: float | str = 2, dim: Any = None,  # noqa: A002
                keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """``torch.linalg.vector_norm``: ord 0 (count of nonzeros), inf, -inf, or any
    p (``sum(|x|^p)^(1/p)``); the 2-norm's gradient at 0 is 0, as PyTorch.
    Checked by autograd as torch's one op, which saves its input and result."""
    first = saved.start()
    t = as_tensor_arg(x)
    return saved.composite(_vector_norm(t, ord, dim, keepdim, dtype=dtype), first, (t,), True,
                           "linalg.vector_norm")


def _vector_norm(x: TensorLike, ord: float | str = 2, dim: Any = None,  # noqa: A002
                keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    t = as_tensor_arg(x) if dtype is None else convert(x, dtype)
    if not t.dtype.is_floating_point:
        raise ShapeError("vector_norm", f"expects a floating-point input, got "
                                        f"{t.dtype.name}")
    if isinstance(ord, str):
        raise ShapeError("vector_norm", f"ord must be a number, got {ord!r}")
    dims = _dims("vector_norm", t, dim)
    if t.numel() == 0 and ord < 0:
        raise ShapeError("vector_norm", f"cannot compute the {ord} norm of an empty tensor")
    a = abs(t)
    if ord == float("inf"):
        if t.numel() == 0 and dims and any(t.shape[d] == 0 for d in dims):
            raise ShapeError("vector_norm", "cannot compute the inf norm over an empty "
                                            "dimension")
        return amax(a, dims, keepdim)
    if ord == float("-inf"):
        return amin(a, dims, keepdim)
    if ord == 0:
        return sum(convert(ne(t, 0.0), t.dtype), dims, keepdim)
    if ord == 1:
        return sum(a, dims, keepdim)
    if ord == 2:
        s = sum(mul(t, t), dims, keepdim)
        zero = eq(s, 0.0)
        return where(zero, 0.0, sqrt(where(zero, 1.0, s)))
    # |x|^p is fed 1 at x == 0 (no inf * 0 in the gradient); for p < 0 a zero
    # makes the norm 0 with gradient 0 (PyTorch's mask where the norm is 0)
    at_zero = eq(a, 0.0)
    s = sum(where(at_zero, 0.0, pow(where(at_zero, 1.0, a), float(ord))), dims, keepdim)
    if ord > 0:
        zero = eq(s, 0.0)
        return where(zero, 0.0, pow(where(zero, 1.0, s), 1.0 / ord))
    any_zero = gt(amax(convert(at_zero, t.dtype), dims, keepdim), 0.0)
    return where(any_zero, 0.0, pow(where(any_zero, 1.0, s), 1.0 / ord))


def matrix_norm(x: TensorLike, ord: float | str = "fro", dim: tuple[int, int] = (-2, -1),
                keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """``torch.linalg.matrix_norm`` for ord 'fro', 1, -1, inf, -inf ('nuc' and
    +-2 need singular values: refused)."""
    t = as_tensor_arg(x) if dtype is None else convert(x, dtype)
    if t.ndim < 2:
        raise ShapeError("matrix_norm", f"expects at least 2 dimensions, got "
                                        f"{fmt_shape(t.shape)}")
    d0, d1 = (normalize_dim("matrix_norm", d, t.ndim) for d in dim)
    if d0 == d1:
        raise ShapeError("matrix_norm", f"dims must be different, got {list(dim)}")
    if ord == "fro":
        return vector_norm(t, 2, (d0, d1), keepdim)
    if ord in (1, -1, float("inf"), float("-inf")):
        inner, outer_ = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = sum(abs(t), inner, True)
        r = (amax if ord > 0 else amin)(sums, outer_, True)
        return r if keepdim else squeeze(r, (d0, d1))
    raise ShapeError("matrix_norm", f"ord {ord!r} is not supported (needs singular values)")


def linalg_norm(x: TensorLike, ord: float | str | None = None, dim: Any = None,
                keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """``torch.linalg.norm``: a vector norm over one dim (or the flattened input
    when ord is None), a matrix norm over two."""
    t = as_tensor_arg(x) if dtype is None else convert(x, dtype)
    if isinstance(dim, int | np.integer):
        dim = (int(dim),)
    if dim is None and ord is not None:
        if t.ndim not in (1, 2):
            raise ShapeError("linalg.norm", f"with ord and dim=None the input must be 1-D or "
                                            f"2-D, got {fmt_shape(t.shape)}")
        dim = tuple(range(t.ndim))
    if ord is None:
        return vector_norm(t, 2, dim, keepdim)
    if len(dim) == 2:
        return matrix_norm(t, ord, tuple(dim), keepdim)
    if isinstance(ord, str):
        raise ShapeError("linalg.norm", f"ord {ord!r} needs two dims, got {list(dim)}")
    return vector_norm(t, ord, dim, keepdim)


def norm(input: TensorLike, p: float | str | None = "fro", dim: Any = None,  # noqa: A002
         keepdim: bool = False, dtype: Any = None) -> Tensor:
    """``torch.norm``: 'fro' (or None) is the 2-norm over ``dim`` (all dims by
    default); a number p a vector norm."""
    t = as_tensor_arg(input) if dtype is None else convert(input, dtype)
    if p == "nuc":
        raise ShapeError("norm", "the nuclear norm is not supported (needs singular values)")
    if p is None or p == "fro":
        return vector_norm(t, 2, dim, keepdim)
    if isinstance(p, str):
        raise ShapeError("norm", f"p must be 'fro', 'nuc' or a number, got {p!r}")
    return vector_norm(t, p, dim, keepdim)


# ---- torch's Tensor API around the data (devices, sizes, interop) ----

_DEVICE_TYPES = {"reference": "cpu", "mlir": "cpu", "max": "cpu", "csl": "wse"}


class device:  # noqa: N801  (torch.device)
    """Where tensors compute: the current backend's device (``cpu`` for the
    reference, mlir and MAX-on-CPU backends, ``wse`` for csl). Compares equal
    to its string form (``t.device == "cpu"``)."""

    __slots__ = ("type", "index")

    def __init__(self, type: str | device, index: int | None = None) -> None:  # noqa: A002
        if isinstance(type, device):
            type, index = type.type, type.index if index is None else index
        name, _, idx = str(type).partition(":")
        self.type = name
        self.index = int(idx) if idx else index

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            other = device(other)
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and (self.index or 0) == (other.index or 0)

    def __hash__(self) -> int:
        return hash((self.type, self.index or 0))

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        index = "" if self.index is None else f", index={self.index}"
        return f"device(type={self.type!r}{index})"


def current_device() -> device:
    return device(_DEVICE_TYPES.get(CONFIG.backend, CONFIG.backend))


def _check_device(dev: Any) -> None:
    want, here = device(dev), current_device()
    if want != here and want.type != "cpu":  # host data is always reachable
        raise ValueError(f"device {str(want)!r} is not available: tensors compute on the "
                         f"current backend's device {str(here)!r} ({CONFIG.backend!r}; choose "
                         "the backend with pf.set_backend)")


def clone(x: TensorLike, *, memory_format: Any = None) -> Tensor:
    """A new tensor with ``x``'s value; gradients flow through it."""
    return _same(as_tensor_arg(x))


def _names_dtype(text: str) -> bool:
    try:
        to_dtype(text)
    except (TypeError, ValueError, KeyError):
        return False
    return True


def to(self: Tensor, *args: Any, dtype: Any = None, device: Any = None,
       non_blocking: bool = False, copy: bool = False, memory_format: Any = None) -> Tensor:
    """``t.to(dtype)``, ``t.to(device[, dtype])``, ``t.to(other)`` (then
    ``non_blocking, copy`` positionally, as PyTorch); ``copy=True`` always makes
    a new tensor. Devices other than the current backend's raise."""
    flags = []
    for a in args:
        if isinstance(a, bool):
            flags.append(a)
        elif isinstance(a, Tensor):
            dtype = a.dtype
        elif isinstance(a, str) and _names_dtype(a):  # ``t.to("float64")``
            dtype = a
        elif isinstance(a, str) or type(a).__name__ == "device":
            device = a
        else:
            dtype = a
    if len(flags) > 2:
        raise TypeError(f"to() takes at most two bool arguments (non_blocking, copy), got "
                        f"{len(flags)}")
    if len(flags) == 2:
        copy = flags[1]  # (flags[0] is non_blocking: nothing to wait for here)
    if device is not None:
        _check_device(device)
    out = self if dtype is None else convert(self, dtype)
    return clone(out) if copy and out is self else out


_BY_TORCH_TYPE_NAME = {f"torch.{v}Tensor": k for k, v in TORCH_TYPE_NAMES.items()}


def _type(self: Tensor, dtype: Any = None, non_blocking: bool = False) -> Tensor | str:
    """``x.type()``: PyTorch's type name ('torch.FloatTensor'); ``x.type(t)``
    converts to ``t``: a dtype, or a type name or legacy class ('torch.DoubleTensor')."""
    if dtype is None:
        return f"torch.{TORCH_TYPE_NAMES[self.dtype]}Tensor"
    dtype = getattr(dtype, "legacy_dtype", dtype)  # pf.DoubleTensor
    if isinstance(dtype, str) and dtype.startswith("torch."):
        if dtype not in _BY_TORCH_TYPE_NAME:
            raise ValueError(f"type(): invalid type {dtype!r} (no CUDA here; CPU types are "
                             f"{', '.join(_BY_TORCH_TYPE_NAME)})")
        dtype = _BY_TORCH_TYPE_NAME[dtype]
    return convert(self, dtype)


def _format(self: Tensor, spec: str) -> str:
    """torch's ``Tensor.__format__``: a 0-d tensor formats as its Python number
    with any spec (``f"loss {loss}"`` prints ``loss 0.6931471824645996``)."""
    if self.ndim == 0:
        return format(self.item(), spec)
    if spec:  # object.__format__'s refusal, as torch's
        raise TypeError("unsupported format string passed to Tensor.__format__")
    return str(self)


def _dlpack(self: Tensor, **kwargs: Any) -> Any:
    arr = hand_out(self)  # the consumer shares its memory from now on (PyTorch)
    if self.dtype is bfloat16:
        raise BufferError("bfloat16 tensors cannot be exported through DLPack by numpy; "
                          "convert to float32 first")
    try:
        return arr.__dlpack__(**kwargs)
    except BufferError:  # a read-only buffer the consumer's DLPack version cannot flag
        return np.array(arr, copy=True).__dlpack__(**kwargs)


def _dlpack_device(self: Tensor) -> tuple[int, int]:
    return (1, 0)  # kDLCPU: values live in host memory


def from_dlpack(ext: Any) -> Tensor:
    """A leaf sharing memory with a DLPack producer (a torch or numpy array on
    the CPU), as ``from_numpy`` shares an array's."""
    arr = np.from_dlpack(ext)
    t = Tensor._leaf(arr)
    return share(t, arr) if outside_pyflame(sys._getframe(1)) else t


_DATA_METHODS: dict[str, Any] = {
    "to": to, "type": _type, "clone": clone, "__format__": _format,
    "__dlpack__": _dlpack, "__dlpack_device__": _dlpack_device,
    "ndimension": lambda self: self.ndim, "nelement": lambda self: self.numel(),
    "element_size": lambda self: self.dtype.itemsize,
    "contiguous": lambda self, *a, **k: self if is_contiguous(self) else _same(self),
    "is_contiguous": lambda self, *a, **k: is_contiguous(self), "cpu": lambda self, *a, **k: self,
    "device": property(lambda self: current_device()),
    "cuda": lambda self, *a, **k: _no_cuda("Tensor.cuda()"),
    "pin_memory": lambda self, *a, **k: self,  # host memory is what the backends read
}


def _no_cuda(what: str) -> Any:
    raise RuntimeError(f"{what}: pyflame has no CUDA device (pf.cuda.is_available() is "
                       "False); GPUs run through the MAX backend: pf.set_backend('max')")


# ---- Tensor methods ----

# Functions that are also Tensor methods (``x.relu()``, ``x.sum(1)``): every
# table-made elementwise wrapper, and these
METHODS = (*ELEMENTWISE, *(
    "gelu matmul clamp clip sum mean max min amax amin argmax argmin reshape view flatten "
    "squeeze unsqueeze permute transpose swapaxes broadcast_to expand split chunk softmax "
    "log_softmax logsumexp "
    # issue 14's math
    "floor ceil round trunc fix frac fmod remainder floor_divide div divide true_divide add sub "
    "subtract multiply exp2 log2 log10 expm1 tan sinh cosh asinh acosh atanh asin acos atan "
    "atan2 arccos arcsin arctan arctan2 arccosh arcsinh arctanh absolute negative greater "
    "greater_equal less less_equal not_equal logical_xor bitwise_and bitwise_or bitwise_xor "
    "bitwise_not isnan isinf isfinite isposinf isneginf nan_to_num clamp_min clamp_max lerp "
    "logit addmm addmv baddbmm addbmm addr bmm mv dot outer ger norm "
    "softplus hardtanh relu6 leaky_relu elu selu celu hardsigmoid hardswish mish silu "
    "logsigmoid sgn "
    "bitwise_left_shift bitwise_right_shift").split())  # issue 14 (s10-surface14)

_BINARY_OPERATORS = {"add": "add", "sub": "sub", "mul": "mul", "truediv": "div", "pow": "pow",
                     "matmul": "matmul", "and": "bitwise_and", "or": "bitwise_or",
                     "xor": "bitwise_xor", "floordiv": "floor_divide",
                     "mod": "remainder",
                     "lshift": "bitwise_left_shift", "rshift": "bitwise_right_shift",
                     }  # ``__add__`` and ``__radd__``: add
_OPERATORS = {"__neg__": "neg", "__abs__": "abs", "__invert__": "bitwise_not",
              "__eq__": "eq", "__ne__": "ne",
              "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge",
              "__getitem__": "getitem"}
_CONVERSIONS = {"float": float32, "double": float64, "half": float16, "int": int32,
                "long": int64, "bool": bool_, "bfloat16": bfloat16, "short": int16,
                "char": int8, "byte": uint8}


def _reflected(fn: Callable[[TensorLike, TensorLike], Tensor]) -> Callable[..., Tensor]:
    def method(self: Tensor, other: TensorLike) -> Tensor:
        return fn(other, self)
    return method


def _converter(dt: DType) -> Callable[[Tensor], Tensor]:
    def method(self: Tensor) -> Tensor:
        return convert(self, dt)
    method.__name__ = dt.name
    return method


def _astype(self: Tensor, dtype: Any) -> Tensor:
    """``Tensor.astype`` (JAX's array method): Python's ``float`` is the
    default float dtype, as JAX without 64-bit mode takes it (``.to(float)``
    is torch's: float64)."""
    return convert(self, default_float() if dtype is float else dtype)


def _transposed(self: Tensor) -> Tensor:
    return permute(self, tuple(range(self.ndim - 1, -1, -1)))


def _set_tensor_methods() -> None:
    """Ops that are also methods or operators share one definition: this
    module's functions, set on core's Tensor class."""
    api = globals()

    def method(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
        direct = _DIRECT.get(fn)
        return fn if direct is None else tensor_method(fn, *direct)

    for name in METHODS:
        setattr(Tensor, name, method(api[name]))
    for dunder, name in _BINARY_OPERATORS.items():
        fn = ELEMENTWISE[name] if name in ("add", "div") else api[name]  # (no alpha/mode)
        setattr(Tensor, f"__{dunder}__", method(fn))
        setattr(Tensor, f"__r{dunder}__", _reflected(fn))
    for dunder, name in _OPERATORS.items():
        setattr(Tensor, dunder, method(api[name]))
    for name, dt in _CONVERSIONS.items():
        setattr(Tensor, name, _converter(dt))
    Tensor.transpose = _transpose_method  # type: ignore[method-assign]
    Tensor.astype = _astype
    for name, member in _DATA_METHODS.items():
        setattr(Tensor, name, member)
    Tensor.T = property(_transposed)


_set_tensor_methods()


def _with_out(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """``fn`` taking torch's ``out=`` (``torch_api.call_with_out``): the
    namespace's function of a table-made op (``pf.add(a, b, out=c)``; its
    Tensor method takes none, as torch's)."""
    def op_function(*args: Any, out: Any = None, **kwargs: Any) -> Tensor:
        if out is None:
            return fn(*args, **kwargs)
        return call_with_out(fn, args, kwargs, out)
    sig = inspect.signature(fn)
    op_function.__signature__ = sig.replace(parameters=[  # type: ignore[attr-defined]
        *sig.parameters.values(),
        inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None)])
    for name in ("__name__", "__qualname__", "__doc__", "__module__"):
        setattr(op_function, name, getattr(fn, name))
    op_function.__wrapped__ = fn  # type: ignore[attr-defined]  (inspect.unwrap: one definition)
    return op_function


def _op_functions() -> None:
    """The namespace's functions of the table-made elementwise ops (and the
    ones written here that record one op in their common case: ``_DIRECT``)
    take ``out=`` themselves, so ``torch_api.accept_torch_names`` leaves them
    as they are; with the C extension each is a native method object
    (``core.tensor_method``): ``pf.add(a, b)`` records as ``a + b`` does,
    without a Python frame, and calls the function for everything else
    (``out=``, scalars, promotion)."""
    api = globals()
    for name, fn in list(api.items()):
        if name.startswith("_") or not callable(fn):
            continue
        direct = _DIRECT.get(fn)
        if direct is None and fn is not ELEMENTWISE.get(name):
            continue
        f = _with_out(fn)
        api[name] = f if direct is None else tensor_method(f, *direct)


_DIRECT[add] = (OPS["add"], _ANY_CATEGORY)  # add(a, b): ELEMENTWISE["add"](a, b) as it is
_op_functions()

# ``from .ops import *`` (pf's namespace): the op API defined here, not this
# module's imports (numpy, typing, the op table) nor its internal helpers
_INTERNAL = {"as_tensor_arg", "constant_value", "scalar"}
__all__ = [name for name, value in globals().items()
           if not name.startswith("_") and name not in _INTERNAL and callable(value)
           and getattr(value, "__module__", None) == __name__]

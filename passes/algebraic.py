"""``algebraic-simplify``: identities that make a program smaller.

By default only rewrites that give identical IEEE results fire, Inf and
signed zeros included, and NaN stays NaN (its sign and payload, which IEEE
leaves unspecified for arithmetic, may differ: ``x + -NaN`` vs ``x - NaN``):

- ``x + (-0.0)``, ``x - 0.0``, ``x * 1``, ``x / 1``, ``x ** 1`` -> ``x``
  (integers: ``x + 0``, ``x - 0``, and also ``x * 0 -> 0``, ``x - x -> 0``)
- ``x + neg(y) -> x - y``, ``x - neg(y) -> x + y``
- ``neg(neg x)``, ``logical_not(logical_not x)`` -> ``x``; ``abs(neg x) -> abs x``;
  ``abs``, ``relu``, ``sign`` are idempotent; ``maximum(x, x)``, ``minimum(x, x)``,
  ``where(c, x, x)`` -> ``x``
- ``permute(permute x)`` -> one permute (none if the composition is the
  identity), ``reshape(reshape x)`` -> one reshape, ``reshape`` of a
  ``keepdim`` reduction that drops just the kept 1s -> the reduction without it, ``broadcast_to`` of
  ``broadcast_to`` -> one, and no-op ``reshape``/``permute``/``broadcast_to``/
  ``slice``/``concat``/``convert`` and reductions over no dimension -> ``x``
- ``convert(convert(x, wide), type(x)) -> x`` when the first conversion is exact

``x + 0.0 -> x`` is *not* exact (``-0.0 + 0.0`` is ``+0.0``) and neither is
``x * 0 -> 0`` (``NaN * 0`` is NaN, ``inf * 0`` is NaN) nor ``x - x -> 0``:
those, with ``x / x -> 1``, ``exp(log x)``/``log(exp x)`` -> ``x``,
``reciprocal(reciprocal x)`` -> ``x``, ``sqrt(square x) -> abs x``,
``neg(a - b) -> b - a`` and ``log(softmax x) -> log_softmax x``, fire only
with ``fast-math=true``.

``expand-mean=true`` rewrites ``mean(x)`` to ``sum(x) / numel`` (for
backends that have no mean). It adds ops, so it is off by default.
No rule adds an op otherwise. One forward sweep per block: a rule sees the
already simplified producers of its operands, so chains collapse in one run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from ..dialects.dtypes import FLOAT, DType
from ..dialects.opdef import numel
from ..dialects.pyflame import (  # type: ignore[attr-defined]  (generated op classes)
    AbsOp,
    ConvertOp,
    ExpOp,
    LogicalNotOp,
    LogOp,
    NegOp,
    PermuteOp,
    PyflameOp,
    ReciprocalOp,
    SliceOp,
    SoftmaxOp,
    SquareOp,
    SubOp,
    op_class,
)
from .common import (
    PyflamePass,
    attr,
    blocks_of,
    constant_array,
    defining,
    make_constant,
    new_op,
    replace_op,
    spec,
    splat_scalar,
)

# Largest splat a rule may create (x * 0 -> 0 under fast-math): constants
# are stored in full in the IR.
NEW_SPLAT_LIMIT = 1 << 16
REDUCTIONS = ("sum", "mean", "max", "min")
REDUCTION_CLASSES = frozenset(op_class(n) for n in REDUCTIONS)




def _is_float(d: DType) -> bool:
    return d.category == FLOAT


def _is_zero(s_: Simplifier, v: SSAValue, sign: int | None) -> bool:
    """``v`` is a constant of zeros; for floats ``sign`` picks ``+0.0`` (1),
    ``-0.0`` (-1) or either (None)."""
    s = s_.splat(v)
    if s is None or s != 0:
        return False
    if sign is None or not _is_float(spec(v)[1]):
        return True
    return bool(np.signbit(s)) == (sign < 0)


def _is_one(s_: Simplifier, v: SSAValue) -> bool:
    s = s_.splat(v)
    return s is not None and s == 1


# (from, to) conversions that keep every value: converting back restores it
_EXACT_WIDENINGS = frozenset({
    ("int32", "int64"), ("int32", "float64"),
    ("float16", "float32"), ("float16", "float64"),
    ("bfloat16", "float32"), ("bfloat16", "float64"), ("float32", "float64"),
})


def _exact_widening(src: DType, mid: DType) -> bool:
    """Every value of ``src`` converts to ``mid`` and back unchanged."""
    return src is mid or src.category == 0 or (src.name, mid.name) in _EXACT_WIDENINGS


Rule = Callable[["Simplifier", PyflameOp], "SSAValue | None"]
RULES: dict[type[PyflameOp], list[Rule]] = {}


def rule(*names: str) -> Callable[[Rule], Rule]:
    """Register a rule for the named ops, keyed by their op classes (an
    unknown name fails at import)."""
    classes = [op_class(n) for n in names]

    def register(fn: Rule) -> Rule:
        for cls in classes:
            RULES.setdefault(cls, []).append(fn)
        return fn
    return register


_NOT_SEEN = object()


@dataclass
class Simplifier:
    """The options of one run, and what it learned about constants."""

    fast_math: bool
    expand_mean: bool
    splats: dict[SSAValue, object] = field(default_factory=dict)

    def splat(self, v: SSAValue) -> np.generic | None:
        """The element of a constant whose elements are all equal, else None."""
        hit = self.splats.get(v, _NOT_SEEN)
        if hit is _NOT_SEEN:
            arr = constant_array(v)
            hit = self.splats[v] = None if arr is None else splat_scalar(arr)
        return hit  # type: ignore[return-value]

    def same_type(self, v: SSAValue, op: PyflameOp) -> SSAValue | None:
        """``v`` if it can stand for ``op``'s result (same type), else None."""
        return v if v.type == op.results[0].type else None

    def zeros_like(self, op: PyflameOp, fill: float) -> SSAValue | None:
        shape, d = spec(op.results[0])
        for v in op.operands:  # reuse an operand that already is that constant
            if v.type == op.results[0].type:
                s = self.splat(v)
                if s is not None and s == fill and not (_is_float(spec(v)[1])
                                                        and np.signbit(s)):
                    return v
        if numel(shape) > NEW_SPLAT_LIMIT:
            return None
        return make_constant(np.asarray(fill, dtype=d.np), (shape, d), op)


# ---- arithmetic identities ----

@rule("add")
def _add_zero(s: Simplifier, op: PyflameOp) -> SSAValue | None:
    a, b = op.operands
    sign = None if s.fast_math else -1  # x + (+0.0) turns -0.0 into +0.0
    if _is_zero(s, b, sign):
        return s.same_type(a, op)
    if _is_zero(s, a, sign):
        return s.same_type(b, op)
    return None


@rule("add")
def _add_neg(s: Simplifier, op: PyflameOp) -> SSAValue | None:
    a, b = op.operands
    for x, y in ((a, b), (b, a)):
        n = defining(y, NegOp)
        if n is not None:
            return new_op("sub", [x, n.operands[0]], {}, [spec(op.results[0])], op).results[0]
    return None


@rule("sub")
def _sub(s: Simplifier, op: PyflameOp) -> SSAValue | None:
    a, b = op.operands
    if _is_zero(s, b, None if s.fast_math else 1):  # x - (+0.0) is exact
        return s.same_type(a, op)
    if a is b and (s.fast_math or not _is_float(spec(a)[1])):
        return s.zeros_like(op, 0)
    n = defining(b, NegOp)
    if n is not None:
        return new_op("add", [a, n.operands[0]], {}, [spec(op.results[0])], op).results[0]
    return None


@rule("mul")
def _mul(s: Simplifier, op: PyflameOp) -> SSAValue | None:
    a, b = op.operands
    if _is_one(s, b):
        return s.same_type(a, op)
    if _is_one(s, a):
        return s.same_type(b, op)
    if s.fast_math or not _is_float(spec(op.results[0])[1]):
        if _is_zero(s, a, None) or _is_zero(s, b, None):
            return s.zeros_like(op, 0)
    return None


@rule("div")
def _div(s: Simplifier, op: PyflameOp) -> SSAValue | None:
    a, b = op.operands
    if _is_one(s, b):
        return s.same_type(a, op)
    if s.fast_math and a is b:
        return s.zeros_like(op, 1)
    return None


@rule("pow")
def _pow_one(s: Simplifier, op: PyflameOp) -> SSAValue | None:
    a, b = op.operands
    return s.same_type(a, op) if _is_one(s, b) else None


@rule("maximum", "minimum")
def _same_operands(s: Simplifier, op: PyflameOp) -> SSAValue | None:
    a, b = op.operands
    return s.same_type(a, op) if a is b else None


@rule("where")
def _where_same(s: Simplifier, op: PyflameOp) -> SSAValue | None:
    _, x, y = op.operands
    return s.same_type(x, op) if x is y else None


# ---- pairs of unary ops ----

INVOLUTIONS = {NegOp: NegOp, LogicalNotOp: LogicalNotOp}
FAST_MATH_INVERSES = {ExpOp: LogOp, LogOp: ExpOp, ReciprocalOp: ReciprocalOp}


@rule("neg", "logical_not")
def _involution(s: Simplifier, op: PyflameOp) -> SSAValue | None:
    inner = defining(op.operands[0], INVOLUTIONS[type(op)])
    return s.same_type(inner.operands[0], op) if inner is not None else None


@rule("exp", "log", "reciprocal")
def _inverse(s: Simplifier, op: PyflameOp) -> SSAValue | None:
    if not s.fast_math:
        return None  # exp(log x) rounds twice and log of a negative is NaN
    inner = defining(op.operands[0], FAST_MATH_INVERSES[type(op)])
    return s.same_type(inner.operands[0], op) if inner is not None else None


@rule("abs", "relu", "sign")
def _idempotent(s: Simplifier, op: PyflameOp) -> SSAValue | None:
    x = op.operands[0]
    if defining(x, type(op)) is not None:
        return x
    if isinstance(op, AbsOp):
        n = defining(x, NegOp)
        if n is not None:
            return new_op("abs", [n.operands[0]], {}, [spec(op.results[0])], op).results[0]
    return None


@rule("neg")
def _neg_sub(s: Simplifier, op: PyflameOp) -> SSAValue | None:
    inner = defining(op.operands[0], SubOp)
    if not s.fast_math or inner is None:
        return None  # -(a - a) is -0.0 but a - a is +0.0
    a, b = inner.operands
    return new_op("sub", [b, a], {}, [spec(op.results[0])], op).results[0]


@rule("sqrt")
def _sqrt_square(s: Simplifier, op: PyflameOp) -> SSAValue | None:
    inner = defining(op.operands[0], SquareOp)
    if not s.fast_math or inner is None:
        return None  # square overflows where abs does not
    return new_op("abs", [inner.operands[0]], {}, [spec(op.results[0])], op).results[0]


@rule("log")
def _log_softmax(s: Simplifier, op: PyflameOp) -> SSAValue | None:
    inner = defining(op.operands[0], SoftmaxOp)
    if not s.fast_math or inner is None:
        return None  # log_softmax rounds differently (better)
    return new_op("log_softmax", [inner.operands[0]], inner.py_attrs(),
                  [spec(op.results[0])], op).results[0]


# ---- shape ops ----

@rule("permute")
def _permute(s: Simplifier, op: PyflameOp) -> SSAValue | None:
    perm = tuple(attr(op, "perm"))
    x = op.operands[0]
    inner = defining(x, PermuteOp)
    if inner is not None:  # out[i] = mid[p2[i]] = x[p1[p2[i]]]
        p1 = attr(inner, "perm")
        perm = tuple(p1[i] for i in perm)
        x = inner.operands[0]
    if perm == tuple(range(len(perm))):
        return s.same_type(x, op)
    if inner is None:
        return None
    return new_op("permute", [x], {"perm": perm}, [spec(op.results[0])], op).results[0]


@rule("reshape", "broadcast_to")
def _reshape_like(s: Simplifier, op: PyflameOp) -> SSAValue | None:
    x = op.operands[0]
    if x.type == op.results[0].type:
        return x
    inner = defining(x, type(op))
    if inner is None:
        return None
    src = inner.operands[0]
    if src.type == op.results[0].type:
        return src
    return new_op(op.OPDEF.name, [src], op.py_attrs(), [spec(op.results[0])], op).results[0]


@rule("reshape")
def _reshape_of_kept_dims(s: Simplifier, op: PyflameOp) -> SSAValue | None:
    """A reshape that only drops the 1s a ``keepdim`` reduction kept is that
    reduction without ``keepdim`` (the shape of every bias gradient)."""
    x = op.operands[0]
    inner = x.owner
    if not isinstance(inner, PyflameOp) or type(inner) not in REDUCTION_CLASSES \
            or not x.has_one_use():
        return None
    attrs = inner.py_attrs()
    if not attrs["keepdim"]:
        return None
    src_shape, _ = spec(inner.operands[0])
    out = spec(op.results[0])
    if out[0] != tuple(n for i, n in enumerate(src_shape) if i not in attrs["dims"]):
        return None
    return new_op(inner.OPDEF.name, [inner.operands[0]], {**attrs, "keepdim": False},
                  [out], op).results[0]


@rule("slice", "concat")
def _noop_shape(s: Simplifier, op: PyflameOp) -> SSAValue | None:
    if len(op.operands) != 1:
        return None
    x = op.operands[0]
    if isinstance(op, SliceOp):
        a = op.py_attrs()
        if any(k != 1 for k in a["stride"]) or any(v != 0 for v in a["start"]):
            return None
    return s.same_type(x, op)


@rule("convert")
def _convert(s: Simplifier, op: PyflameOp) -> SSAValue | None:
    x = op.operands[0]
    if x.type == op.results[0].type:
        return x
    inner = defining(x, ConvertOp)
    if inner is not None:
        src = inner.operands[0]
        if src.type == op.results[0].type and _exact_widening(spec(src)[1], spec(x)[1]):
            return src
    return None


@rule(*REDUCTIONS)
def _reduce_nothing(s: Simplifier, op: PyflameOp) -> SSAValue | None:
    if attr(op, "dims"):
        return None
    return s.same_type(op.operands[0], op)


@rule("mean")
def _expand_mean(s: Simplifier, op: PyflameOp) -> SSAValue | None:
    if not s.expand_mean:
        return None
    attrs = op.py_attrs()
    x = op.operands[0]
    shape, d = spec(x)
    count = 1
    for i in attrs["dims"]:
        count *= shape[i]
    out_spec = spec(op.results[0])
    total = new_op("sum", [x], attrs, [out_spec], op).results[0]
    n = make_constant(np.asarray(count, dtype=d.np), ((), d), op)
    return new_op("div", [total, n], {}, [out_spec], op).results[0]


@dataclass(frozen=True)
class AlgebraicSimplification(PyflamePass):
    """Algebraic identities; IEEE-exact unless fast-math is set."""

    name = "algebraic-simplify"

    fast_math: bool = False
    """Also rewrites that change IEEE results (x*0 -> 0, x-x -> 0, exp(log x) -> x, ...)."""

    expand_mean: bool = False
    """Rewrite mean(x) to sum(x) / numel (adds ops)."""

    def run(self, ctx: Context, module: ModuleOp) -> dict[str, int]:
        # a hand-written forward sweep rather than xDSL's pattern walker: rules
        # erase the producers that died (replace_op) outside the walker's
        # worklist, and one sweep is the contract fixed-point counts on
        simplifier = Simplifier(self.fast_math, self.expand_mean)
        rewritten = removed = 0
        for block in list(blocks_of(module)):
            op = block.first_op
            while op is not None:
                nxt = op.next_op
                rules = RULES.get(type(op))  # type: ignore[arg-type]
                for r in rules or ():
                    value = r(simplifier, op)
                    if value is not None:
                        rewritten += 1
                        removed += replace_op(op, [value])
                        break
                op = nxt
        return {"rewritten": rewritten, "removed": removed}


__all__ = ["RULES", "AlgebraicSimplification"]

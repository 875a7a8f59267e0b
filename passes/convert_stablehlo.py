"""``convert-stablehlo-to-pyflame``: the StableHLO ops JAX prints, as ``pyflame`` ops.

Each ``stablehlo`` op (``dialects/stablehlo.py`` parses them) becomes the
``pyflame`` ops that compute what the StableHLO specification says it
computes, built through ``IRBuilder`` (so every op's own shape rule checks
it, and its semantics stay in its op-table entry): ``dot_general`` is a
transpose/reshape/``matmul``, ``broadcast_in_dim`` a ``permute``/``reshape``/
``broadcast_to``, ``reduce`` of ``add``/``multiply``/``maximum``/``minimum``
a ``sum``/``prod``/``max``/``min`` combined with its init value. Where the
nearest pyflame op differs on some inputs, the rule composes ops that agree
everywhere (``sign`` keeps NaN and the zero's sign, ``round_nearest_afz``
rounds ties away from zero, integer ``divide`` truncates). Each result's type
is checked against the type the text declares.

An op this pass cannot convert (an unsupported op, operands StableHLO itself
rejects, a multi-operand ``reduce``, ``dynamic_slice`` at indices that are not
constants) raises ``StablehloError`` naming the op and the rule; nothing is
guessed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, IntegerAttr, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from ..dialects.data import DenseValue
from ..dialects.decomp import mT
from ..dialects.dtypes import BOOL, FLOAT, INT, DType, bool_, int64
from ..dialects.opdef import ShapeError
from ..dialects.pyflame import OP_CLASSES
from ..dialects.stablehlo import (
    CHLO_COMPOSITE,
    CHLO_UNARY,
    ComparisonDirectionAttr,
    ComparisonTypeAttr,
    DotDimensionNumbersAttr,
    StablehloOp,
    _reduce_applies,
)
from .common import IRBuilder, PyflamePass, constant_array


class StablehloError(DiagnosticException, ValueError):
    """A StableHLO op with no pyflame meaning (or operands the spec rejects)."""

    def __init__(self, op: Operation, message: str):
        loc = op.location
        where = (f"{loc.filename.data}:{loc.line.data}:{loc.column.data}: "
                 if isinstance(loc, FileLineColLoc) else "")
        super().__init__(f"{where}'{op.name}' {message}")
        self.op = op
        self.reason = message


Rule = Callable[[IRBuilder, StablehloOp], list[SSAValue]]

# elementwise ops that are one pyflame op on every element type they take
_SAME = {"abs": "abs", "negate": "neg", "exponential": "exp",
         "exponential_minus_one": "expm1", "log": "log", "log_plus_one": "log1p",
         "tanh": "tanh", "logistic": "sigmoid", "sqrt": "sqrt", "rsqrt": "rsqrt",
         "sine": "sin", "cosine": "cos", "floor": "floor", "ceil": "ceil",
         "round_nearest_even": "round", "power": "pow", "atan2": "atan2",
         "maximum": "maximum", "minimum": "minimum", "remainder": "fmod"}
# by operand kind: (float, integer, bool); None: not defined there
_BY_KIND: dict[str, tuple[str | None, str | None, str | None]] = {
    "add": ("add", "add", "logical_or"),  # on i1 the spec's add is or, multiply is and
    "subtract": ("sub", "sub", None),
    "multiply": ("mul", "mul", "logical_and"),
    "and": (None, "bitwise_and", "logical_and"),
    "or": (None, "bitwise_or", "logical_or"),
    "xor": (None, "bitwise_xor", "bitwise_xor"),
    "not": (None, "bitwise_not", "logical_not"),
}


def _kind(d: DType) -> int:
    return 2 if d.category == BOOL else 1 if d.category != FLOAT else 0


def _same_shapes(b: IRBuilder, op: StablehloOp, scalar_ok: Sequence[int] = ()) -> None:
    """StableHLO's elementwise ops take operands of the result's shape (select's
    predicate and clamp's bounds may be scalars); the pyflame ops broadcast, so
    a mismatch is refused here rather than broadcast."""
    out = b.shape(op.results[0])
    for i, v in enumerate(op.operands):
        s = b.shape(v)
        if s != out and not (i in scalar_ok and s == ()):
            raise StablehloError(op, f"operand {i} has shape {list(s)}, the result "
                                     f"{list(out)}: the operands of an elementwise op have "
                                     "the result's shape")


def _elementwise(b: IRBuilder, op: StablehloOp) -> list[SSAValue]:
    _same_shapes(b, op)
    short = op.name.split(".", 1)[1]
    xs = list(op.operands)
    d = b.dtype(xs[0])
    if op.name.startswith("chlo."):  # erf, square, asin, acos, atan: the pyflame ops
        return [b.op(short, *xs)]
    if short in _SAME:
        return [b.op(_SAME[short], *xs)]
    if short in _BY_KIND:
        name = _BY_KIND[short][_kind(d)]
        if name is None:
            raise StablehloError(op, f"is not defined on {d.name} tensors")
        return [b.op(name, *xs)]
    x = xs[0]
    if short == "divide":
        if d.category == FLOAT:
            return [b.div(*xs)]
        if d.category == BOOL:
            raise StablehloError(op, "is not defined on bool tensors")
        # integer division truncates toward zero: a - fmod(a, b) is an exact multiple
        # of b, so its floor division is exact (division by zero raises)
        return [b.floor_divide(b.sub(x, b.fmod(*xs)), xs[1])]
    if short == "sign":
        if d.category != FLOAT:
            return [b.sign(x)]
        # the spec keeps NaN and the sign of zero, pyflame.sign gives 0 for both
        keep = b.logical_or(b.ne(x, x), b.eq(x, b.scalar(0, like=x)))
        return [b.where(keep, x, b.sign(x))]
    if short == "is_finite":  # x - x is 0 for finite x, NaN for infinities and NaN
        return [b.eq(b.sub(x, x), b.scalar(0, like=x))]
    if short == "tan":
        return [b.div(b.sin(x), b.cos(x))]
    if short == "round_nearest_afz":  # x - trunc(x) is exact: ties are found exactly
        t = b.trunc(x)
        tie = b.ge(b.abs(b.sub(x, t)), b.scalar(0.5, like=x))
        return [b.where(tie, b.add(t, b.sign(x)), t)]
    raise StablehloError(op, "is not supported (no pyflame op computes it)")


def _int_constant(b: IRBuilder, values: Sequence[int], d: DType) -> SSAValue:
    """A 1-D constant of ``values`` wrapped into ``d``'s bits (2**31 is -2**31
    in int32), or a scalar for one value."""
    bits = np.dtype(d.np).itemsize * 8
    unsigned = np.asarray(values, dtype=object) % (1 << bits)
    arr = np.asarray([int(v) for v in unsigned], dtype=f"u{bits // 8}").view(d.np)
    shape = () if len(values) == 1 else (len(values),)
    return b.op("constant", value=DenseValue(arr.reshape(shape), shape, d))


def _table(b: IRBuilder, values: Sequence[int], at: SSAValue, d: DType) -> SSAValue:
    """``values[at]`` elementwise (``at`` in range), as ``d``."""
    s = b.shape(at)
    n = int(np.prod(s, dtype=np.int64))
    at = at if b.dtype(at) is int64 else b.convert(at, dtype=int64)
    got = b.gather(_int_constant(b, values, d), b.reshape(at, shape=(n,)), dim=0)
    return b.reshape(got, shape=s)


def _shift(b: IRBuilder, op: StablehloOp) -> list[SSAValue]:
    """The shifts on two's complement integers, by composition: ``a << s`` is
    ``a * 2**s`` (wrapping), arithmetic ``a >> s`` the floor division by
    ``2**s`` (the sign bit itself: ``a < 0`` gives -1), logical ``a >> s`` that
    masked to the low ``bits - s`` bits; an amount outside [0, bits) shifts
    everything out (0; the sign for the arithmetic shift), as the spec says."""
    _same_shapes(b, op)
    a, amount = op.operands
    d = b.dtype(a)
    if d.category != INT:
        raise StablehloError(op, f"is not defined on {d.name} tensors")
    bits = np.dtype(d.np).itemsize * 8
    signed = not d.name.startswith("u")
    short = op.name.split(".", 1)[1]
    zero = b.scalar(0, like=a)
    inside = b.logical_and(b.ge(amount, zero), b.lt(amount, b.scalar(bits, like=a)))
    at = b.minimum(b.maximum(amount, zero), b.scalar(bits - 1, like=a))
    if short == "shift_left":
        return [b.where(inside, b.mul(a, _table(b, [1 << k for k in range(bits)], at, d)),
                        zero)]
    if short == "shift_right_arithmetic" and signed:
        sign = b.where(b.lt(a, zero), b.scalar(-1, like=a), zero)
        at = b.minimum(at, b.scalar(bits - 2, like=a))  # (2**(bits-1) does not fit)
        shifted = b.floor_divide(a, _table(b, [1 << k for k in range(bits - 1)], at, d))
        top = b.logical_or(b.logical_not(inside), b.eq(amount, b.scalar(bits - 1, like=a)))
        return [b.where(top, sign, shifted)]
    if not signed:  # a logical shift; the arithmetic one fills in the top bit
        powers = [1 << k for k in range(bits)]
        logical = b.where(inside, b.floor_divide(a, _table(b, powers, at, d)), zero)
        if short == "shift_right_logical":
            return [logical]
        top = b.ge(a, b.scalar(1 << (bits - 1), like=a))
        fill = b.where(inside, _table(b, [(1 << bits) - (1 << (bits - k)) for k in range(bits)],
                                      at, d), b.scalar((1 << bits) - 1, like=a))
        return [b.bitwise_or(logical, b.where(top, fill, zero))]
    # logical on signed: the arithmetic shift keeps the low bits - s bits right
    at_low = b.minimum(at, b.scalar(bits - 2, like=a))
    shifted = b.floor_divide(a, _table(b, [1 << k for k in range(bits - 1)], at_low, d))
    top = b.where(b.lt(a, zero), b.scalar(1, like=a), zero)  # a >>> (bits - 1)
    shifted = b.where(b.eq(amount, b.scalar(bits - 1, like=a)), top, shifted)
    masks = [(1 << (bits - k)) - 1 for k in range(bits)]
    return [b.where(inside, b.bitwise_and(shifted, _table(b, masks, at, d)), zero)]


def _shift_right_by(b: IRBuilder, x: SSAValue, k: int) -> SSAValue:
    """``x`` arithmetically shifted right by the constant ``k`` (0 < k < bits - 1)."""
    return b.floor_divide(x, b.scalar(1 << k, like=x))


def _popcount(b: IRBuilder, a: SSAValue) -> SSAValue:
    """The set bits of each element (two's complement), by the SWAR sums of
    bit pairs, nibbles and bytes; the masks clear what an arithmetic shift
    brings in at the top, and after the nibble step every value is
    non-negative."""
    d = b.dtype(a)
    bits = np.dtype(d.np).itemsize * 8

    def mask(byte: int) -> SSAValue:
        return _int_constant(b, [int.from_bytes(bytes([byte]) * (bits // 8), "little")], d)

    x = b.sub(a, b.bitwise_and(_shift_right_by(b, a, 1), mask(0x55)))
    x = b.add(b.bitwise_and(x, mask(0x33)), b.bitwise_and(_shift_right_by(b, x, 2), mask(0x33)))
    x = b.bitwise_and(b.add(x, _shift_right_by(b, x, 4)), mask(0x0F))
    k = 8
    while k < bits:  # the bytes' counts summed into the lowest byte
        x = b.add(x, _shift_right_by(b, x, k))
        k *= 2
    return b.bitwise_and(x, b.scalar(0xFF, like=a)) if bits > 8 else x


def _bit_count(b: IRBuilder, op: StablehloOp) -> list[SSAValue]:
    """``popcnt`` (set bits) and ``count_leading_zeros`` (bits - the set bits of
    the value with every bit below its highest set: 0 for a negative value)."""
    _same_shapes(b, op)
    a = op.operands[0]
    d = b.dtype(a)
    if d.category != INT:
        raise StablehloError(op, f"is not defined on {d.name} tensors")
    if op.name.endswith("popcnt"):
        return [_popcount(b, a)]
    bits = np.dtype(d.np).itemsize * 8
    zero = b.scalar(0, like=a)
    x = b.maximum(a, zero) if not d.name.startswith("u") else a
    k = 1
    while k < bits:
        x = b.bitwise_or(x, _shift_right_by(b, x, k) if k < bits - 1 else zero)
        k *= 2
    count = b.sub(b.scalar(bits, like=a), _popcount(b, x))
    return [count if d.name.startswith("u") else b.where(b.lt(a, zero), zero, count)]


# (exponent bits, mantissa bits) -> the pyflame type of that format
_FORMATS = {(5, 10): "float16", (8, 7): "bfloat16", (8, 23): "float32", (11, 52): "float64"}


def _reduce_precision(b: IRBuilder, op: StablehloOp) -> list[SSAValue]:
    """``reduce_precision`` to the formats of f16, bf16, f32, f64: the value
    rounded (to nearest even) to that type and back; where the format has
    fewer exponent bits, a result below its smallest normal number is
    flushed to zero, or becomes it where the mantissa rounding reached it (as
    XLA rounds the mantissa first); other formats are refused."""
    from ..dialects.dtypes import dtype as dtype_named

    x = op.operands[0]
    d = b.dtype(x)
    e, m = (_int_prop(op, k) for k in ("exponent_bits", "mantissa_bits"))
    if d.category != FLOAT or (e, m) not in _FORMATS:
        raise StablehloError(op, f"to e{e}m{m} on {d.name} is not supported: only the "
                                 "formats of float16 (e5m10), bfloat16 (e8m7), float32 (e8m23) "
                                 "and float64 (e11m52) on floating-point tensors")
    finfo = ml_dtypes.finfo(d.np)
    own_e = int(np.log2(finfo.maxexp)) + 1
    if e >= own_e and m >= finfo.nmant:
        return [x]
    target = dtype_named(_FORMATS[(e, m)])
    r = b.convert(b.convert(x, dtype=target), dtype=d)
    if e >= own_e:
        return [r]
    tiny = 2.0 ** (2 - 2 ** (e - 1))  # the smallest normal number of the format
    up = tiny * (1 - 2.0 ** (-2 - m))  # from here the mantissa rounds up to it
    size = b.abs(x)
    rounded_up = b.where(b.lt(x, b.scalar(0, like=x)), b.scalar(-tiny, like=x),
                         b.scalar(tiny, like=x))
    small = b.where(b.ge(size, b.scalar(up, like=x)), rounded_up,
                    b.mul(x, b.scalar(0, like=x)))  # (+-0.0: the sign kept)
    return [b.where(b.lt(size, b.scalar(tiny, like=x)), small, r)]


def _complex_part(b: IRBuilder, op: StablehloOp) -> list[SSAValue]:
    raise StablehloError(op, "is not supported: pyflame has no complex element type")


def _bitcast_convert(b: IRBuilder, op: StablehloOp) -> list[SSAValue]:
    x, out = op.operands[0], op.results[0]
    if x.type == out.type:
        return [x]
    raise StablehloError(op, f"from {x.type} to {out.type} is not supported: no pyflame op "
                             "reinterprets an element's bits as another type")


def _select(b: IRBuilder, op: StablehloOp) -> list[SSAValue]:
    _same_shapes(b, op, scalar_ok=(0,))
    return [b.where(*op.operands)]


def _clamp(b: IRBuilder, op: StablehloOp) -> list[SSAValue]:
    _same_shapes(b, op, scalar_ok=(0, 2))
    lo, x, hi = op.operands
    return [b.minimum(b.maximum(x, lo), hi)]


def _constant(b: IRBuilder, op: StablehloOp) -> list[SSAValue]:
    new = OP_CLASSES["constant"].create(attributes={"value": op.properties["value"]},
                                        result_types=[op.results[0].type])
    b.emit(new)
    return [new.results[0]]


def _int_prop(op: StablehloOp, key: str) -> int:
    value = op.properties[key]
    assert isinstance(value, IntegerAttr)
    return value.value.data


def _iota(b: IRBuilder, op: StablehloOp) -> list[SSAValue]:
    shape, d = b.shape(op.results[0]), b.dtype(op.results[0])
    return [b.iota(shape=shape, dim=_int_prop(op, "iota_dimension"), dtype=d)]


def _broadcast_in_dim(b: IRBuilder, op: StablehloOp) -> list[SSAValue]:
    x = op.operands[0]
    dims = op.prop_ints("broadcast_dimensions")
    s, out = b.shape(x), b.shape(op.results[0])
    if len(dims) != len(s) or len(set(dims)) != len(dims) or \
            any(not 0 <= d < len(out) for d in dims) or \
            any(n not in (1, out[d]) for n, d in zip(s, dims)):
        raise StablehloError(op, f"dims = {list(dims)} do not map operand {list(s)} into "
                                 f"the result {list(out)} (each operand dimension is 1 or "
                                 "the size of the result dimension it names)")
    order = sorted(range(len(dims)), key=lambda i: dims[i])
    if order != list(range(len(dims))):
        x = b.permute(x, perm=tuple(order))
        s, dims = tuple(s[i] for i in order), tuple(dims[i] for i in order)
    placed = [1] * len(out)
    for n, d in zip(s, dims):
        placed[d] = n
    if tuple(placed) != s:
        x = b.reshape(x, shape=tuple(placed))
    return [x if tuple(placed) == out else b.broadcast_to(x, shape=out)]


def _reshape(b: IRBuilder, op: StablehloOp) -> list[SSAValue]:
    x, out = op.operands[0], b.shape(op.results[0])
    return [x if b.shape(x) == out else b.reshape(x, shape=out)]


def _transpose(b: IRBuilder, op: StablehloOp) -> list[SSAValue]:
    return [b.permute(op.operands[0], perm=op.prop_ints("permutation"))]


def _reverse(b: IRBuilder, op: StablehloOp) -> list[SSAValue]:
    x = op.operands[0]
    s = b.shape(x)
    for d in sorted(set(op.prop_ints("dimensions"))):
        if not 0 <= d < len(s):
            raise StablehloError(op, f"dimension {d} is out of range for rank {len(s)}")
        if s[d] < 2:
            continue
        last = b.op("constant", value=DenseValue(np.asarray(s[d] - 1, np.int64), (), int64))
        x = b.gather(x, b.sub(last, b.iota(shape=s, dim=d, dtype=int64)), dim=d)
    return [x]


def _convert(b: IRBuilder, op: StablehloOp) -> list[SSAValue]:
    x, d = op.operands[0], b.dtype(op.results[0])
    return [x if b.dtype(x) is d else b.convert(x, dtype=d)]


_COMPARE = {"EQ": "eq", "NE": "ne", "GE": "ge", "GT": "gt", "LE": "le", "LT": "lt"}


def _compare(b: IRBuilder, op: StablehloOp) -> list[SSAValue]:
    _same_shapes(b, op)
    direction = op.properties["comparison_direction"]
    assert isinstance(direction, ComparisonDirectionAttr)
    kind = op.properties.get("compare_type")
    d = b.dtype(op.operands[0])
    if isinstance(kind, ComparisonTypeAttr) and kind.data.value != "NOTYPE":
        want = {FLOAT: "FLOAT", BOOL: "UNSIGNED"}.get(
            d.category, "UNSIGNED" if d.name.startswith("u") else "SIGNED")
        if kind.data.value != want:
            raise StablehloError(op, f"compares {d.name} tensors as {kind.data.value}: "
                                     f"only {want} comparisons of {d.name} are supported "
                                     "(TOTALORDER orders NaN and -0.0, which no pyflame "
                                     "comparison does)")
    return [b.op(_COMPARE[direction.data.value], *op.operands)]


def _slice(b: IRBuilder, op: StablehloOp) -> list[SSAValue]:
    return [b.slice(op.operands[0], start=op.prop_ints("start_indices"),
                    limit=op.prop_ints("limit_indices"), stride=op.prop_ints("strides"))]


def _starts(b: IRBuilder, op: StablehloOp, x: SSAValue, starts: Sequence[SSAValue],
            sizes: Sequence[int]) -> list[int | SSAValue]:
    """The start indices of a dynamic slice or update, clamped as the spec says
    (to [0, dim - size]): an int where the index is a constant, else the
    clamped index as a 0-d int64 tensor."""
    s = b.shape(x)
    if len(starts) != len(s) or len(sizes) != len(s):
        raise StablehloError(op, f"takes one start index per dimension of {list(s)}, got "
                                 f"{len(starts)}")
    out: list[int | SSAValue] = []
    for i, (v, n, k) in enumerate(zip(starts, s, sizes)):
        if b.shape(v) != () or b.dtype(v).category in (FLOAT, BOOL):
            raise StablehloError(op, f"start index {i} is not an integer scalar")
        if not 0 <= k <= n:
            raise StablehloError(op, f"size {k} of dimension {i} is not within [0, {n}]")
        arr = constant_array(v)
        if arr is not None:
            out.append(min(max(int(arr), 0), n - k))
            continue
        v = v if b.dtype(v) is int64 else b.convert(v, dtype=int64)
        low, high = _index(b, 0), _index(b, n - k)
        out.append(b.minimum(b.maximum(v, low), high))
    return out


def _index(b: IRBuilder, v: int) -> SSAValue:
    return b.op("constant", value=DenseValue(np.asarray(v, np.int64), (), int64))


def _positions(b: IRBuilder, start: SSAValue, count: int, shape: Sequence[int], dim: int
               ) -> SSAValue:
    """start + 0..count-1 along ``dim``, broadcast to ``shape`` (whose ``dim`` is
    ``count``): gather's index tensor."""
    at = b.add(b.iota(shape=(count,), dim=0, dtype=int64), start)
    placed = tuple(count if i == dim else 1 for i in range(len(shape)))
    at = b.reshape(at, shape=placed)
    return at if placed == tuple(shape) else b.broadcast_to(at, shape=tuple(shape))


def _dynamic_slice(b: IRBuilder, op: StablehloOp) -> list[SSAValue]:
    x, *starts = op.operands
    sizes = op.prop_ints("slice_sizes")
    first = _starts(b, op, x, starts, sizes)
    fixed = [a if isinstance(a, int) else 0 for a in first]
    limit = [a + k if isinstance(a, int) else n for a, k, n in zip(first, sizes, b.shape(x))]
    if fixed != [0] * len(fixed) or limit != list(b.shape(x)):
        x = b.slice(x, start=tuple(fixed), limit=tuple(limit), stride=(1,) * len(fixed))
    for d, a in enumerate(first):  # a start only known when run: gather the rows
        if not isinstance(a, int):
            shape = tuple(sizes[d] if i == d else n for i, n in enumerate(b.shape(x)))
            x = b.gather(x, _positions(b, a, sizes[d], shape, d), dim=d)
    return [x]


def _dynamic_update_slice(b: IRBuilder, op: StablehloOp) -> list[SSAValue]:
    x, update, *starts = op.operands
    s, u = b.shape(x), b.shape(update)
    first = _starts(b, op, x, starts, u)
    if b.dtype(update) is not b.dtype(x):
        raise StablehloError(op, "updates a tensor with one of another element type")
    if all(isinstance(a, int) for a in first):
        low = tuple(first)  # type: ignore[arg-type]
        high = tuple(n - a - k for n, a, k in zip(s, first, u))  # type: ignore[operator]
        zeros = (0,) * len(s)
        placed = b.pad(update, low=low, high=high, interior=zeros)
        inside = b.pad(_true(b, u), low=low, high=high, interior=zeros)
        return [b.where(inside, placed, x)]
    # each element of x reads update[p - start] where 0 <= p - start < size
    placed, inside = update, None
    for d, a in enumerate(first):
        start = _index(b, a) if isinstance(a, int) else a
        offset = b.sub(_positions(b, _index(b, 0), s[d], (s[d],), 0), start)
        hit = b.logical_and(b.ge(offset, _index(b, 0)), b.lt(offset, _index(b, u[d])))
        shape = tuple(s[i] if i <= d else u[i] for i in range(len(s)))
        index = b.minimum(b.maximum(offset, _index(b, 0)), _index(b, u[d] - 1))
        line = tuple(s[d] if i == d else 1 for i in range(len(s)))
        index = b.reshape(index, shape=line)
        placed = b.gather(placed, b.broadcast_to(index, shape=shape) if line != shape
                          else index, dim=d)
        hit = b.reshape(hit, shape=line)
        inside = hit if inside is None else b.logical_and(inside, hit)
    assert inside is not None
    return [b.where(inside, placed, x)]


def _true(b: IRBuilder, shape: tuple[int, ...]) -> SSAValue:
    return b.op("constant", value=DenseValue(np.asarray(True), shape, bool_))


def _concatenate(b: IRBuilder, op: StablehloOp) -> list[SSAValue]:
    return [b.concat(*op.operands, dim=_int_prop(op, "dimension"))]


def _pad(b: IRBuilder, op: StablehloOp) -> list[SSAValue]:
    x, value = op.operands
    low, high = op.prop_ints("edge_padding_low"), op.prop_ints("edge_padding_high")
    interior = op.prop_ints("interior_padding")
    s = b.shape(x)
    if b.shape(value) != () or b.dtype(value) is not b.dtype(x):
        raise StablehloError(op, "pads with a value that is not a scalar of the operand's "
                                 "element type")
    if not len(low) == len(high) == len(interior) == len(s) or min(interior, default=0) < 0:
        raise StablehloError(op, f"low/high/interior need {len(s)} entries (interior "
                                 "non-negative)")
    grow = dict(low=tuple(max(v, 0) for v in low), high=tuple(max(v, 0) for v in high),
                interior=interior)
    padded = b.pad(x, **grow)
    pv = constant_array(value)
    if pv is None or pv.reshape(-1).view(f"u{pv.dtype.itemsize}")[0] != 0:  # not +0 / 0
        inside = b.pad(_true(b, s), **grow)
        padded = b.where(inside, padded, value)
    if min((*low, *high), default=0) < 0:  # negative padding crops
        full = b.shape(padded)
        start = tuple(max(-v, 0) for v in low)
        limit = tuple(n - max(-v, 0) for n, v in zip(full, high))
        padded = b.slice(padded, start=start, limit=limit, stride=(1,) * len(s))
    return [padded]


def _dot_general(b: IRBuilder, op: StablehloOp) -> list[SSAValue]:
    lhs, rhs = op.operands
    numbers = op.properties.get("dot_dimension_numbers")
    if isinstance(numbers, DotDimensionNumbersAttr):
        lb, rb, lc, rc = numbers.dims()
    else:  # stablehlo.dot: (m, k) x (k, n), vectors as numpy's matmul takes them
        ls, rs = b.shape(lhs), b.shape(rhs)
        if not (1 <= len(ls) <= 2 and 1 <= len(rs) <= 2):
            raise StablehloError(op, "takes operands of rank 1 or 2")
        lb, rb, lc, rc = (), (), (len(ls) - 1,), (0,)
    ls, rs = b.shape(lhs), b.shape(rhs)
    out_d = b.dtype(op.results[0])
    ok = (len(lb) == len(rb) and len(lc) == len(rc)
          and len(set(lb + lc)) == len(lb + lc) and len(set(rb + rc)) == len(rb + rc)
          and all(0 <= d < len(ls) for d in lb + lc) and all(0 <= d < len(rs) for d in rb + rc)
          and all(ls[i] == rs[j] for i, j in zip(lb + lc, rb + rc)))
    if not ok:
        raise StablehloError(op, f"dimension numbers batching {list(lb)} x {list(rb)}, "
                                 f"contracting {list(lc)} x {list(rc)} do not pair equal "
                                 f"dimensions of {list(ls)} and {list(rs)}")
    if {b.dtype(lhs), b.dtype(rhs)} != {out_d}:  # the product is computed in the result type
        lhs = lhs if b.dtype(lhs) is out_d else b.convert(lhs, dtype=out_d)
        rhs = rhs if b.dtype(rhs) is out_d else b.convert(rhs, dtype=out_d)
    lf = [i for i in range(len(ls)) if i not in lb + lc]
    rf = [i for i in range(len(rs)) if i not in rb + rc]

    def size(shape: Sequence[int], dims: Sequence[int]) -> int:
        return int(np.prod([shape[i] for i in dims], dtype=np.int64))

    batch = tuple(ls[i] for i in lb)
    lhs3 = _arrange(b, lhs, (*lb, *lf, *lc), (*batch, size(ls, lf), size(ls, lc)))
    rhs3 = _arrange(b, rhs, (*rb, *rc, *rf), (*batch, size(rs, rc), size(rs, rf)))
    prod = b.matmul(lhs3, rhs3)
    out = (*batch, *(ls[i] for i in lf), *(rs[i] for i in rf))
    return [prod if b.shape(prod) == out else b.reshape(prod, shape=out)]


def _arrange(b: IRBuilder, x: SSAValue, perm: Sequence[int], shape: Sequence[int]
             ) -> SSAValue:
    if tuple(perm) != tuple(range(len(perm))):
        x = b.permute(x, perm=tuple(perm))
    return x if b.shape(x) == tuple(shape) else b.reshape(x, shape=tuple(shape))


def _gather(b: IRBuilder, op: StablehloOp) -> list[SSAValue]:
    """The spec's gather as one 1-D ``gather`` of the flattened operand: per
    output element, its operand index (the start its batch position reads from
    the start indices, clamped so the slice fits, plus its offset) as a linear
    index, built from iotas over the output."""
    from ..dialects.stablehlo import GatherDimensionNumbersAttr

    x, starts = op.operands
    numbers = op.properties["dimension_numbers"]
    assert isinstance(numbers, GatherDimensionNumbersAttr)
    offset_dims, collapsed, operand_batch, start_batch, index_map = numbers.lists()
    vector_dim = numbers.vector_dim
    sizes = op.prop_ints("slice_sizes")
    xs, ss, out = b.shape(x), b.shape(starts), b.shape(op.results[0])
    if b.dtype(starts).category in (FLOAT, BOOL):
        raise StablehloError(op, "takes start indices that are not integers")
    batch_out = [i for i in range(len(out)) if i not in offset_dims]
    start_dims = [i for i in range(len(ss)) if i != vector_dim]  # ... <-> batch_out
    offset_operand = [d for d in range(len(xs)) if d not in collapsed + operand_batch]
    n_vec = ss[vector_dim] if vector_dim < len(ss) else 1
    ok = (len(sizes) == len(xs) and len(start_dims) == len(batch_out)
          and len(offset_operand) == len(offset_dims) and n_vec == len(index_map)
          and len(operand_batch) == len(start_batch)
          and all(0 <= k <= n for k, n in zip(sizes, xs))
          and all(sizes[d] == 1 for d in collapsed + operand_batch)
          and all(out[o] == sizes[d] for o, d in zip(offset_dims, offset_operand))
          and all(out[o] == ss[s] for o, s in zip(batch_out, start_dims))
          and len(set(index_map)) == len(index_map)
          and all(0 <= d < len(xs) for d in (*index_map, *collapsed, *operand_batch)))
    if not ok:
        raise StablehloError(op, f"dimension numbers {numbers} and slice_sizes {list(sizes)} "
                                 f"do not fit operand {list(xs)}, start indices {list(ss)} "
                                 f"and result {list(out)}")

    def over_output(v: SSAValue, dims_out: Sequence[int]) -> SSAValue:
        """A tensor over output dims ``dims_out`` (in order), broadcast to ``out``."""
        placed = tuple(b.shape(v)[dims_out.index(i)] if i in dims_out else 1
                       for i in range(len(out)))
        v = v if b.shape(v) == placed else b.reshape(v, shape=placed)
        return v if placed == out else b.broadcast_to(v, shape=out)

    def axis(i: int) -> SSAValue:
        return b.iota(shape=out, dim=i, dtype=int64)

    index: dict[int, SSAValue] = {}
    for k, d in enumerate(index_map):  # the start the batch position reads, clamped
        if vector_dim < len(ss):
            lo = tuple(k if i == vector_dim else 0 for i in range(len(ss)))
            hi = tuple(k + 1 if i == vector_dim else n for i, n in enumerate(ss))
            part = b.slice(starts, start=lo, limit=hi, stride=(1,) * len(ss))
            part = b.reshape(part, shape=tuple(ss[i] for i in start_dims))
        else:
            part = starts
        part = part if b.dtype(part) is int64 else b.convert(part, dtype=int64)
        part = b.minimum(b.maximum(part, _index(b, 0)), _index(b, xs[d] - sizes[d]))
        index[d] = over_output(part, batch_out)
    for d, s in zip(operand_batch, start_batch):  # the batch position itself
        index[d] = axis(batch_out[start_dims.index(s)])
    for d, o in zip(offset_operand, offset_dims):  # plus the offset in the slice
        index[d] = b.add(index[d], axis(o)) if d in index else axis(o)
    linear = None
    stride = 1
    for d in reversed(range(len(xs))):
        if d in index:
            term = index[d] if stride == 1 else b.mul(index[d], _index(b, stride))
            linear = term if linear is None else b.add(linear, term)
        stride *= xs[d]
    total = int(np.prod(out, dtype=np.int64))
    if linear is None:
        linear = b.broadcast_to(_index(b, 0), shape=out) if out else _index(b, 0)
    flat = b.reshape(x, shape=(int(np.prod(xs, dtype=np.int64)),))
    got = b.gather(flat, b.reshape(linear, shape=(total,)), dim=0)
    return [b.reshape(got, shape=out)]


# scatter update computations: the op the body applies to (current, update)
_SCATTER_COMBINE = {"stablehlo.add": "add", "stablehlo.maximum": "maximum",
                    "stablehlo.minimum": "minimum", "stablehlo.multiply": "mul"}


def _scatter_combiner(op: StablehloOp) -> str | None:
    """What the update computation does: ``set`` (returns the update),
    ``add``/``maximum``/``minimum``/``mul`` of its two arguments; None otherwise."""
    body = op.regions[0].block
    ops = list(body.ops)
    if len(ops) == 1 and list(ops[0].operands) == [body.args[1]]:
        return "set"
    if len(ops) == 2 and ops[0].name in _SCATTER_COMBINE and set(ops[0].operands) == set(
            body.args) and len(ops[0].operands) == 2 and \
            list(ops[1].operands) == list(ops[0].results):
        return _SCATTER_COMBINE[ops[0].name]
    return None


def _scatter(b: IRBuilder, op: StablehloOp) -> list[SSAValue]:
    """The spec's scatter into the flattened operand: each update element at
    its linear index (its start from the scatter indices, not clamped, plus
    its window offset; along batching dimensions, its batch position); an
    element whose index falls outside is skipped (it lands in one extra slot,
    cut off after). ``add`` is one ``scatter_add``. ``set``, ``maximum`` and
    ``minimum`` pick one update per slot: a stable sort of the linear indices
    puts each slot's updates in a run, in their order (``set``: the last one
    wins, as XLA applies them in order; ``maximum``/``minimum``: the updates are
    first sorted by value, so the run's last is its largest/smallest, NaN
    included); the slot gathers the winner and combines it with the operand's
    element. ``multiply`` runs when the op declares ``unique_indices``."""
    from ..dialects.stablehlo import ScatterDimensionNumbersAttr

    x, starts, updates = op.operands
    numbers = op.properties["scatter_dimension_numbers"]
    assert isinstance(numbers, ScatterDimensionNumbersAttr)
    window, inserted, input_batch, start_batch, index_map = numbers.lists()
    vector_dim = numbers.vector_dim
    combine = _scatter_combiner(op)
    unique = getattr(op.properties.get("unique_indices"), "value", None)
    unique = bool(unique is not None and unique.data)
    if combine is None or (combine == "mul" and not unique):
        raise StablehloError(op, "whose update computation is not a set (return the update), "
                                 "add, maximum or minimum of its two arguments (or a multiply "
                                 "with unique_indices) is not supported")
    xs, ss, us = b.shape(x), b.shape(starts), b.shape(updates)
    d_x = b.dtype(x)
    if b.dtype(starts).category in (FLOAT, BOOL) or b.dtype(updates) is not d_x:
        raise StablehloError(op, "takes integer indices and updates of the operand's type")
    if d_x.category == BOOL and combine != "set":
        raise StablehloError(op, f"with a {combine} update computation on bool tensors is not "
                                 "supported")
    scatter_u = [i for i in range(len(us)) if i not in window]
    start_dims = [i for i in range(len(ss)) if i != vector_dim]
    window_operand = [d for d in range(len(xs)) if d not in inserted + input_batch]
    n_vec = ss[vector_dim] if vector_dim < len(ss) else 1
    if not (len(start_dims) == len(scatter_u) and len(window_operand) == len(window)
            and n_vec == len(index_map) and len(set(index_map)) == len(index_map)
            and len(input_batch) == len(start_batch)
            and all(s in start_dims for s in start_batch)
            and all(us[u] == ss[s] for u, s in zip(scatter_u, start_dims))
            and all(0 <= d < len(xs) for d in (*index_map, *inserted, *input_batch))
            and not set(index_map) & set(input_batch)
            and all(us[w] <= xs[d] for w, d in zip(window, window_operand))):
        raise StablehloError(op, f"dimension numbers {numbers} do not fit operand {list(xs)}, "
                                 f"indices {list(ss)} and updates {list(us)}")

    def over_updates(v: SSAValue) -> SSAValue:
        placed = tuple(b.shape(v)[scatter_u.index(i)] if i in scatter_u else 1
                       for i in range(len(us)))
        v = v if b.shape(v) == placed else b.reshape(v, shape=placed)
        return v if placed == us else b.broadcast_to(v, shape=us)

    index: dict[int, SSAValue] = {}
    for k, d in enumerate(index_map):
        if vector_dim < len(ss):
            lo = tuple(k if i == vector_dim else 0 for i in range(len(ss)))
            hi = tuple(k + 1 if i == vector_dim else n for i, n in enumerate(ss))
            part = b.slice(starts, start=lo, limit=hi, stride=(1,) * len(ss))
            part = b.reshape(part, shape=tuple(ss[i] for i in start_dims))
        else:
            part = starts
        part = part if b.dtype(part) is int64 else b.convert(part, dtype=int64)
        index[d] = over_updates(part)
    for d, s in zip(input_batch, start_batch):  # the update's batch position itself
        index[d] = b.iota(shape=us, dim=scatter_u[start_dims.index(s)], dtype=int64)
    for d, w in zip(window_operand, window):
        at = b.iota(shape=us, dim=w, dtype=int64)
        index[d] = b.add(index[d], at) if d in index else at
    size = int(np.prod(xs, dtype=np.int64))
    linear, inside, stride = None, None, 1
    for d in reversed(range(len(xs))):
        if d in index:
            term = index[d] if stride == 1 else b.mul(index[d], _index(b, stride))
            linear = term if linear is None else b.add(linear, term)
            fits = b.logical_and(b.ge(index[d], _index(b, 0)), b.lt(index[d], _index(b, xs[d])))
            inside = fits if inside is None else b.logical_and(inside, fits)
        stride *= xs[d]
    if linear is None or inside is None:
        raise StablehloError(op, "scatters to no dimension of the operand")
    total = int(np.prod(us, dtype=np.int64))
    linear = b.reshape(b.where(inside, linear, _index(b, size)), shape=(total,))  # outside:
    values = b.reshape(updates, shape=(total,))  # the extra slot
    flat_x = b.reshape(x, shape=(size,))
    if combine == "add":
        flat = b.pad(flat_x, low=(0,), high=(1,), interior=(0,))
        added = b.scatter_add(flat, linear, values, dim=0)
        return [b.reshape(b.slice(added, start=(0,), limit=(size,), stride=(1,)), shape=xs)]
    if total == 0:
        return [x]
    if not unique and combine in ("maximum", "minimum"):
        # by value first (NaN last: it wins a maximum or minimum), so the stable
        # sort by slot leaves each run's largest (smallest) update last
        key = values
        if combine == "minimum":
            key = b.neg(values) if d_x.category == FLOAT else b.bitwise_not(values)
        _, by_value = b.sort(key, dim=0, descending=False)
        values, linear = b.gather(values, by_value, dim=0), b.gather(linear, by_value, dim=0)
    if not unique:  # the last update of each slot's run wins
        linear, order = b.sort(linear, dim=0, descending=False)
        values = b.gather(values, order, dim=0)
        if total > 1:
            nxt = b.slice(linear, start=(1,), limit=(total,), stride=(1,))
            last = b.ne(b.slice(linear, start=(0,), limit=(total - 1,), stride=(1,)), nxt)
            last = b.concat(last, _true(b, (1,)), dim=0)
            linear = b.where(last, linear, _index(b, size))
    # per slot: 1 + the position of the update it takes (0: none)
    ordinal = b.add(b.iota(shape=(total,), dim=0, dtype=int64), _index(b, 1))
    zeros = b.op("constant", value=DenseValue(np.asarray(0, np.int64), (size + 1,), int64))
    taken = b.scatter_add(zeros, linear, ordinal, dim=0)
    taken = b.slice(taken, start=(0,), limit=(size,), stride=(1,))
    hit = b.gt(taken, _index(b, 0))
    at = b.maximum(b.sub(taken, _index(b, 1)), _index(b, 0))
    got = b.gather(values, at, dim=0)
    if combine != "set":
        got = b.op(combine, flat_x, got)
    return [b.reshape(b.where(hit, got, flat_x), shape=xs)]


_CUMULATIVE = {"stablehlo.add": ("cumsum", "add"), "stablehlo.multiply": ("cumprod", "mul"),
               "stablehlo.maximum": ("cummax", "maximum"),
               "stablehlo.minimum": ("cummin", "minimum")}


def _reduce_window(b: IRBuilder, op: StablehloOp) -> list[SSAValue]:
    """The cumulative reductions JAX writes as a ``reduce_window`` (``jnp.cumsum``,
    ``cumprod``, ``lax.cummax``/``cummin``): a window spanning one whole
    dimension, padded before (after, reversed) with one fewer init values, as
    ``cumsum``/``cumprod``/``cummax``/``cummin``."""
    if len(op.operands) == 4:
        return _pair_windows(b, op)
    if len(op.operands) != 2:
        raise StablehloError(op, f"of {len(op.operands) // 2} operands is not supported: only "
                                 "one, or the (value, tangent) pairs a pool's second "
                                 "derivative selects")
    x, init = op.operands
    xs, n = b.shape(x), len(b.shape(x))
    window = op.prop_ints("window_dimensions")
    ones = (1,) * n

    def ints(key: str, default: tuple[int, ...]) -> tuple[int, ...]:
        return op.prop_ints(key) if key in op.properties else default

    padding = op.properties.get("padding")
    pads = [tuple(int(v) for v in row) for row in np.asarray(
        padding.get_values()).reshape(n, 2)] if padding is not None else [(0, 0)] * n  # type: ignore[union-attr]
    block = op.regions[0].block
    ops = list(block.ops)
    applies = ops[0].name if len(ops) == 2 and set(ops[0].operands) == set(block.args) and \
        len(ops[0].operands) == 2 and list(ops[1].operands) == list(ops[0].results) else None
    along = [d for d in range(n) if window[d] != 1]
    d = along[0] if len(along) == 1 else -1
    ok = (applies in _CUMULATIVE and len(window) == n and d >= 0 and window[d] == xs[d]
          and ints("window_strides", ones) == ones and ints("base_dilations", ones) == ones
          and ints("window_dilations", ones) == ones
          and pads[d] in ((xs[d] - 1, 0), (0, xs[d] - 1))
          and all(p == (0, 0) for i, p in enumerate(pads) if i != d))
    kind, combine = _CUMULATIVE.get(applies or "", (None, None))
    reverse = ok and pads[d] == (0, xs[d] - 1) and xs[d] > 1
    dt = b.dtype(x)
    if ok and not _is_identity(init, combine, dt) and not (
            combine == "add" and constant_array(init) is not None
            and not np.any(constant_array(init))):
        ok = False  # the padding holds init values: only an identity leaves a scan
    if not ok or (reverse and kind != "cumsum"):
        return [_windows(b, op, applies, pads, ints("window_strides", ones),
                         ints("base_dilations", ones), ints("window_dilations", ones))]
    if kind == "cumsum":
        r = b.cumsum(x, dim=d, reverse=reverse)
        if b.dtype(r) is not dt:  # integer sums count in int64: the same bits, wrapped
            r = b.convert(r, dtype=dt)
        if dt.category == FLOAT:  # the fold from init: +0.0 + -0.0 is +0.0 (or init -0.0)
            r = b.add(r, init)
        return [r]
    r = b.op(kind, x, dim=d)
    r = r[0] if isinstance(r, list) else r
    return [r if b.dtype(r) is dt else b.convert(r, dtype=dt)]


def _pair_windows(b: IRBuilder, op: StablehloOp) -> list[SSAValue]:
    """The two-operand ``reduce_window`` a max/min pool's derivative of a
    derivative prints (JAX's ``_select_and_gather_add``): per window, the
    (value, other) pair whose value a ``compare`` of the accumulated value and
    the next one selects: ``p = compare(acc0, x0); (select(p, acc0, x0),
    select(p, acc1, x1))``. From the init pair, the window's elements in
    row-major order (GE keeps the first largest), padding holding the inits."""
    x0, x1, init0, init1 = op.operands
    block = op.regions[0].block
    a0, a1, e0, e1 = block.args
    ops = list(block.ops)
    ok = len(ops) == 4 and ops[0].name == "stablehlo.compare" and \
        list(ops[0].operands) == [a0, e0] and all(
            o.name == "stablehlo.select" and list(o.operands) == [ops[0].results[0], a, e]
            for o, a, e in ((ops[1], a0, e0), (ops[2], a1, e1))) and \
        list(ops[3].operands) == [ops[1].results[0], ops[2].results[0]]
    d = b.dtype(x0)
    select = _compare_body_of(ops[0], d) if ok else None
    xs, n = b.shape(x0), len(b.shape(x0))
    if select is None or b.shape(x1) != xs or any(
            b.shape(v) != () or b.dtype(v) is not b.dtype(x) for v, x in
            ((init0, x0), (init1, x1))):
        raise StablehloError(op, "of two operands is supported when its body selects a pair "
                                 "by one compare of the values (a pool's second derivative), "
                                 "with scalar init values of the operands' types")
    window = op.prop_ints("window_dimensions")

    def ints(key: str) -> tuple[int, ...]:
        return op.prop_ints(key) if key in op.properties else (1,) * n

    strides, base, dilation = (ints(k) for k in ("window_strides", "base_dilations",
                                                 "window_dilations"))
    padding = op.properties.get("padding")
    pads = [tuple(int(v) for v in row) for row in np.asarray(
        padding.get_values()).reshape(n, 2)] if padding is not None else [(0, 0)] * n  # type: ignore[union-attr]
    if not (len(window) == len(strides) == len(base) == len(dilation) == n) or min(
            (*window, *strides, *base, *dilation), default=1) < 1 or min(
            (v for p in pads for v in p), default=0) < 0:
        raise StablehloError(op, f"needs {n} positive window dimensions, strides and dilations "
                                 "and a non-negative (low, high) padding per dimension")
    count = int(np.prod(window, dtype=np.int64))
    if count > MAX_WINDOW:
        raise StablehloError(op, f"of a {count}-element window: more than {MAX_WINDOW} are "
                                 "not supported")
    grow = dict(low=tuple(lo for lo, _ in pads), high=tuple(hi for _, hi in pads),
                interior=tuple(k - 1 for k in base))
    padded = []
    for x, init in ((x0, init0), (x1, init1)):
        if any(grow["low"]) or any(grow["high"]) or any(grow["interior"]):
            x = b.where(b.pad(_true(b, xs), **grow), b.pad(x, **grow), init)
        padded.append(x)
    ps = b.shape(padded[0])
    span = [(k - 1) * w + 1 for k, w in zip(window, dilation)]
    out = tuple((p - sp) // st + 1 if p >= sp else 0 for p, sp, st in zip(ps, span, strides))
    if out != b.shape(op.results[0]) or out != b.shape(op.results[1]):
        raise StablehloError(op, f"gives {list(out)} by the spec, the text declares "
                                 f"{list(b.shape(op.results[0]))}")
    pick0 = b.broadcast_to(init0, shape=out) if out else init0
    pick1 = b.broadcast_to(init1, shape=out) if out else init1
    for offset in np.ndindex(*window):
        start = tuple(o * w for o, w in zip(offset, dilation))
        limit = tuple(s + (m - 1) * st + 1 if m else s for s, m, st in zip(start, out, strides))
        v0, v1 = (b.slice(p, start=start, limit=limit, stride=tuple(strides)) for p in padded)
        keep = b.op(select, pick0, v0)
        pick0, pick1 = b.where(keep, pick0, v0), b.where(keep, pick1, v1)
    return [pick0, pick1]


MAX_WINDOW = 1024  # elements of one reduce_window's window, each one strided slice


def _windows(b: IRBuilder, op: StablehloOp, applies: str | None,
             pads: Sequence[tuple[int, int]], strides: Sequence[int], base: Sequence[int],
             dilation: Sequence[int]) -> SSAValue:
    """The spec's ``reduce_window`` (pooling: ``lax.reduce_window``, flax's
    ``max_pool``/``avg_pool``): the operand padded with the init value (edges
    and ``base_dilations``), then per window offset one strided slice, the
    slices combined by the body's op, from the init value."""
    x, init = op.operands
    xs, n = b.shape(x), len(b.shape(x))
    window = op.prop_ints("window_dimensions")
    d = b.dtype(x)
    combine = _CUMULATIVE.get(applies or "", (None, None))[1]
    if combine is None or (d.category == BOOL and combine in ("add", "mul")):
        raise StablehloError(op, "whose body is not one add, multiply, maximum or minimum of "
                                 f"its two arguments on {d.name} is not supported")
    if b.shape(init) != () or b.dtype(init) is not d:
        raise StablehloError(op, "takes an init value that is a scalar of the operand's "
                                 "element type")
    if not (len(window) == len(strides) == len(base) == len(dilation) == len(pads) == n) or \
            min((*window, *strides, *base, *dilation), default=1) < 1:
        raise StablehloError(op, f"needs {n} positive window dimensions, strides and "
                                 "dilations and a (low, high) padding per dimension")
    count = int(np.prod(window, dtype=np.int64))
    if count > MAX_WINDOW:
        raise StablehloError(op, f"of a {count}-element window: more than {MAX_WINDOW} are "
                                 "not supported")
    grow = dict(low=tuple(max(lo, 0) for lo, _ in pads),
                high=tuple(max(hi, 0) for _, hi in pads), interior=tuple(k - 1 for k in base))
    padded = b.pad(x, **grow)
    if any(grow["low"]) or any(grow["high"]) or any(grow["interior"]):
        padded = b.where(b.pad(_true(b, xs), **grow), padded, init)  # padding holds init
    if min((v for p in pads for v in p), default=0) < 0:  # negative padding crops
        full = b.shape(padded)
        padded = b.slice(padded, start=tuple(max(-lo, 0) for lo, _ in pads),
                         limit=tuple(m - max(-hi, 0) for m, (_, hi) in zip(full, pads)),
                         stride=(1,) * n)
    ps = b.shape(padded)
    span = [(k - 1) * w + 1 for k, w in zip(window, dilation)]
    out = tuple(max(0, (p - sp) // st + 1) if p >= sp else 0
                for p, sp, st in zip(ps, span, strides))
    if out != b.shape(op.results[0]):
        raise StablehloError(op, f"gives {list(out)} by the spec, the text declares "
                                 f"{b.shape(op.results[0])}")
    r = None
    for offset in np.ndindex(*window):
        start = tuple(o * w for o, w in zip(offset, dilation))
        limit = tuple(s + (m - 1) * st + 1 if m else s for s, m, st in zip(start, out, strides))
        part = b.slice(padded, start=start, limit=limit, stride=tuple(strides))
        r = part if r is None else b.op(combine, r, part)
    assert r is not None
    if not _is_identity(init, combine, d):
        r = b.op(combine, r, init)
    return r


def _props(op: StablehloOp, key: str, n: int, default: int) -> tuple[int, ...]:
    """An ``array<i64: ...>`` property of ``n`` entries, or ``n`` defaults."""
    if key not in op.properties:
        return (default,) * n
    values = op.prop_ints(key)
    if len(values) != n:
        raise StablehloError(op, f"has {len(values)} {key}, expected one per spatial "
                                 f"dimension ({n})")
    return values


def _stack(b: IRBuilder, parts: Sequence[SSAValue], dim: int) -> SSAValue:
    """``parts`` (one shape, ``dim`` of size 1) concatenated along ``dim``."""
    return parts[0] if len(parts) == 1 else b.concat(*parts, dim=dim)


def _convolution(b: IRBuilder, op: StablehloOp) -> list[SSAValue]:
    """The spec's convolution (``lax.conv_general_dilated`` and the convolutions
    ``jax.grad`` prints: transposed via lhs dilation, reversed kernels, the
    kernel's gradient with batch and feature swapped) as one matrix product:
    the input moved to (N, C, *spatial), dilated (interior zeros) and padded
    (negative padding crops); its windows gathered as columns (N, C, K, P) by
    one strided slice per kernel offset, or per output position when there are
    fewer of those (the kernel gradient's window is the whole output); the
    kernel moved to (O, I, *spatial) and reversed where ``window_reversal``
    says; then per feature group (or batch group) one ``matmul`` of the kernel
    (O/G, I*K) by the columns (I*K, N*P), the result moved to its layout."""
    from ..dialects.stablehlo import ConvDimensionNumbersAttr

    lhs, rhs = op.operands
    numbers = op.properties["dimension_numbers"]
    assert isinstance(numbers, ConvDimensionNumbersAttr)
    (ib, if_, isp), (ki, ko, ksp), (ob, of, osp) = numbers.layouts()
    ls, rs, out = b.shape(lhs), b.shape(rhs), b.shape(op.results[0])
    nsp = len(isp)
    groups = _int_prop(op, "feature_group_count")
    batch_groups = _int_prop(op, "batch_group_count")
    if not (len(ls) == len(rs) == len(out) == nsp + 2) or any(
            sorted((a, c, *sp)) != list(range(nsp + 2))
            for a, c, sp in ((ib, if_, isp), (ki, ko, ksp), (ob, of, osp))):
        raise StablehloError(op, f"dimension numbers {print_layouts(numbers)} do not fit "
                                 f"input {list(ls)}, kernel {list(rs)} and result {list(out)}")
    strides = _props(op, "window_strides", nsp, 1)
    lhs_dil = _props(op, "lhs_dilation", nsp, 1)
    rhs_dil = _props(op, "rhs_dilation", nsp, 1)
    reversal = _props(op, "window_reversal", nsp, 0)
    padding = op.properties.get("padding")
    pads = [tuple(int(v) for v in row) for row in np.asarray(
        padding.get_values()).reshape(-1, 2)] if padding is not None else [(0, 0)] * nsp  # type: ignore[union-attr]
    n, c, o, i = ls[ib], ls[if_], rs[ko], rs[ki]
    if len(pads) != nsp or min((*strides, *lhs_dil, *rhs_dil), default=1) < 1 or \
            groups < 1 or batch_groups < 1 or (groups > 1 and batch_groups > 1) or \
            c != i * groups or o % groups or n % batch_groups or o % batch_groups:
        raise StablehloError(op, f"of input {list(ls)} (batch {n}, features {c}) and kernel "
                                 f"{list(rs)} (input features {i}, output features {o}) with "
                                 f"feature_group_count {groups}, batch_group_count "
                                 f"{batch_groups}, {nsp} positive strides and dilations and "
                                 f"padding {pads}: the spec needs features = input features x "
                                 "feature_group_count, the output features and the batch "
                                 "divisible by the group counts (one of them 1)")
    d = b.dtype(op.results[0])
    x = _arrange(b, lhs, (ib, if_, *isp), tuple(ls[k] for k in (ib, if_, *isp)))
    w = _arrange(b, rhs, (ko, ki, *ksp), tuple(rs[k] for k in (ko, ki, *ksp)))
    x = x if b.dtype(x) is d else b.convert(x, dtype=d)
    w = w if b.dtype(w) is d else b.convert(w, dtype=d)
    kernel = b.shape(w)[2:]
    for k in range(nsp):  # window_reversal: the kernel read backwards there
        if reversal[k] and kernel[k] > 1:
            last = _index(b, kernel[k] - 1)
            w = b.gather(w, b.sub(last, b.iota(shape=b.shape(w), dim=2 + k, dtype=int64)),
                         dim=2 + k)
    grow = dict(low=(0, 0, *(max(lo, 0) for lo, _ in pads)),
                high=(0, 0, *(max(hi, 0) for _, hi in pads)),
                interior=(0, 0, *(v - 1 for v in lhs_dil)))
    if any(grow["low"]) or any(grow["high"]) or any(grow["interior"]):
        x = b.pad(x, **grow)  # (zeros)
    if min((v for p in pads for v in p), default=0) < 0:  # negative padding crops
        full = b.shape(x)
        x = b.slice(x, start=(0, 0, *(max(-lo, 0) for lo, _ in pads)),
                    limit=(*full[:2], *(m - max(-hi, 0) for m, (_, hi) in
                                        zip(full[2:], pads))), stride=(1,) * (nsp + 2))
    xs = b.shape(x)[2:]
    span = [(k - 1) * r + 1 for k, r in zip(kernel, rhs_dil)]
    positions = tuple((m - sp) // st + 1 if m >= sp and k else 0
                      for m, sp, st, k in zip(xs, span, strides, kernel))
    want = [0] * (nsp + 2)
    want[ob], want[of] = n // batch_groups, o
    for k, dim in enumerate(osp):
        want[dim] = positions[k]
    if tuple(want) != out:
        raise StablehloError(op, f"gives {want} by the spec, the text declares {list(out)}")
    kk, pp = int(np.prod(kernel, dtype=np.int64)), int(np.prod(positions, dtype=np.int64))
    if 0 in (kk, pp, c, n // batch_groups, o):  # empty: no product to take (sums of nothing)
        return [b.op("constant", value=DenseValue(np.asarray(0, d.np), out, d))]
    by_offset = kk <= pp
    count = min(kk, pp)
    if count > MAX_WINDOW:
        raise StablehloError(op, f"of {kk} kernel offsets and {pp} output positions: more "
                                 f"than {MAX_WINDOW} of either are not supported")
    parts = []
    for at in np.ndindex(*(kernel if by_offset else positions)):
        if by_offset:  # the window element at kernel offset `at`, for every position
            start = tuple(a * r for a, r in zip(at, rhs_dil))
            limit = tuple(s + (m - 1) * st + 1 for s, m, st in zip(start, positions, strides))
            step = strides
        else:  # the window at output position `at`, every kernel offset
            start = tuple(a * st for a, st in zip(at, strides))
            limit = tuple(s + sp for s, sp in zip(start, span))
            step = rhs_dil
        part = b.slice(x, start=(0, 0, *start), limit=(n, c, *limit), stride=(1, 1, *step))
        parts.append(b.reshape(part, shape=(n, c, 1, pp) if by_offset else (n, c, kk, 1)))
    cols = _stack(b, parts, 2 if by_offset else 3)  # (N, C, K, P)
    g = max(groups, batch_groups)
    lead = (g,) if g > 1 else ()  # (one 2-D product without groups)
    if batch_groups > 1:  # batch group j: input batch [j*N/G, ...), output features likewise
        cols = b.reshape(cols, shape=(g, n // g, c, kk, pp))
        cols = _arrange(b, cols, (0, 2, 3, 1, 4), (g, c * kk, n // g * pp))
    else:  # feature group j: input features [j*I, ...), output features [j*O/G, ...)
        cols = _arrange(b, cols, (1, 2, 0, 3), (*lead, i * kk, n * pp))
    w = b.reshape(w, shape=(*lead, o // g, b.shape(w)[1] * kk))
    y = b.matmul(w, cols)  # ((G,) O/G, N' * P)
    y = b.reshape(y, shape=(o, n // batch_groups, *positions))
    perm = [0] * (nsp + 2)  # result dim -> axis of y (O, N', *P)
    perm[ob], perm[of] = 1, 0
    for k, dim in enumerate(osp):
        perm[dim] = 2 + k
    return [y if perm == list(range(nsp + 2)) else b.permute(y, perm=tuple(perm))]


def print_layouts(numbers: Any) -> str:
    from ..dialects.stablehlo import print_conv_layouts

    return print_conv_layouts(numbers.layouts())


def _compare_body(op: StablehloOp, region: int, d: DType) -> str | None:
    """The pyflame comparison a region computes when it is one ``compare`` of its
    two arguments in order (of the operand's comparison type), else None."""
    block = op.regions[region].block
    ops = list(block.ops)
    if len(ops) != 2 or ops[0].name != "stablehlo.compare" or \
            list(ops[0].operands) != list(block.args) or \
            list(ops[1].operands) != list(ops[0].results):
        return None
    return _compare_body_of(ops[0], d)


def _compare_body_of(cmp: Operation, d: DType) -> str | None:
    """The pyflame comparison of a ``compare`` on ``d`` scalars (of its
    comparison type; TOTALORDER refused), else None."""
    ops = [cmp]
    kind = ops[0].properties.get("compare_type")
    want = {FLOAT: "FLOAT", BOOL: "UNSIGNED"}.get(
        d.category, "UNSIGNED" if d.name.startswith("u") else "SIGNED")
    if isinstance(kind, ComparisonTypeAttr) and kind.data.value not in ("NOTYPE", want):
        return None
    direction = ops[0].properties["comparison_direction"]
    assert isinstance(direction, ComparisonDirectionAttr)
    return _COMPARE[direction.data.value]


def _select_and_scatter(b: IRBuilder, op: StablehloOp) -> list[SSAValue]:
    """The spec's select_and_scatter (max pool's gradient): per window of the
    (padded) operand, the element the select region picks (scanning the window
    in row-major order, an element replaces the pick unless select(pick, it)
    holds; padding is never picked) receives the window's source value, added
    to the init value. One strided slice per window offset: the picks are
    running ``where``s, each offset's source values placed back by an interior
    ``pad`` and summed."""
    x, source, init = op.operands
    xs, n = b.shape(x), len(b.shape(x))
    d = b.dtype(x)
    window = op.prop_ints("window_dimensions")
    strides = op.prop_ints("window_strides") if "window_strides" in op.properties else \
        (1,) * n
    padding = op.properties.get("padding")
    pads = [tuple(int(v) for v in row) for row in np.asarray(
        padding.get_values()).reshape(-1, 2)] if padding is not None else [(0, 0)] * n  # type: ignore[union-attr]
    select = _compare_body(op, 0, d)
    combine = _CUMULATIVE.get(_scatter_applies(op) or "", (None, None))[1]
    if select is None or combine != "add":
        raise StablehloError(op, "is supported with a select region of one compare of its "
                                 "two arguments and a scatter region adding them (as "
                                 "jax.grad of a max/min pool prints)")
    if not (len(window) == len(strides) == len(pads) == n) or min(
            (*window, *strides), default=1) < 1 or min((v for p in pads for v in p),
                                                       default=0) < 0:
        raise StablehloError(op, f"needs {n} positive window dimensions and strides and a "
                                 "non-negative (low, high) padding per dimension")
    if b.dtype(source) is not d or b.shape(init) != () or b.dtype(init) is not d or \
            d.category == BOOL:
        raise StablehloError(op, "takes a source and a scalar init value of the operand's "
                                 "(numeric) element type")
    grow = dict(low=tuple(lo for lo, _ in pads), high=tuple(hi for _, hi in pads),
                interior=(0,) * n)
    padded = any(grow["low"]) or any(grow["high"])
    xp = b.pad(x, **grow) if padded else x
    inside = b.pad(_true(b, xs), **grow) if padded else None
    ps = b.shape(xp)
    grid = tuple((p - k) // st + 1 if p >= k else 0 for p, k, st in zip(ps, window, strides))
    if grid != b.shape(source) or b.shape(op.results[0]) != xs:
        raise StablehloError(op, f"has windows {list(grid)} by the spec, a source of "
                                 f"{list(b.shape(source))} and a result of "
                                 f"{list(b.shape(op.results[0]))} (the operand's "
                                 f"{list(xs)} expected)")
    count = int(np.prod(window, dtype=np.int64))
    if count > MAX_WINDOW:
        raise StablehloError(op, f"of a {count}-element window: more than {MAX_WINDOW} are "
                                 "not supported")
    zero = b.scalar(0, like=x)
    if 0 in grid or count == 0:  # nothing is scattered
        return [b.broadcast_to(init, shape=xs) if xs else init]
    offsets = list(np.ndindex(*window))
    pick = which = picked = None
    for k, at in enumerate(offsets):
        limit = tuple(a + (m - 1) * st + 1 for a, m, st in zip(at, grid, strides))
        v = b.slice(xp, start=tuple(at), limit=limit, stride=tuple(strides))
        valid = None if inside is None else b.slice(inside, start=tuple(at), limit=limit,
                                                    stride=tuple(strides))
        if pick is None:
            pick, picked = v, valid
            which = b.op("constant", value=DenseValue(np.asarray(0, np.int64), grid, int64))
            continue
        take = b.logical_not(b.op(select, pick, v))
        if picked is not None and valid is not None:
            take = b.logical_and(valid, b.logical_or(b.logical_not(picked), take))
            picked = b.logical_or(picked, valid)
        pick = b.where(take, v, pick)
        which = b.where(take, _index(b, k), which)
    total = None
    for k, at in enumerate(offsets):
        hit = b.eq(which, _index(b, k))
        if picked is not None:
            hit = b.logical_and(hit, picked)
        part = b.where(hit, source, zero)
        end = tuple(a + (m - 1) * st + 1 for a, m, st in zip(at, grid, strides))
        part = b.pad(part, low=tuple(at), high=tuple(p - e for p, e in zip(ps, end)),
                     interior=tuple(st - 1 for st in strides))
        total = part if total is None else b.add(total, part)
    assert total is not None
    if padded:
        total = b.slice(total, start=grow["low"], limit=tuple(
            lo + m for lo, m in zip(grow["low"], xs)), stride=(1,) * n)
    if not _is_identity(init, "add", d):
        total = b.add(total, init)
    return [total]


def _scatter_applies(op: StablehloOp) -> str | None:
    """The op the scatter region applies to its two arguments (either order)."""
    block = op.regions[1].block
    ops = list(block.ops)
    if len(ops) == 2 and set(ops[0].operands) == set(block.args) and \
            len(ops[0].operands) == 2 and list(ops[1].operands) == list(ops[0].results):
        return ops[0].name
    return None


def _owner(v: SSAValue, name: str) -> Operation | None:
    owner = v.owner
    return owner if getattr(owner, "name", None) == f"stablehlo.{name}" else None


def _direction(op: Operation) -> str:
    direction = op.properties["comparison_direction"]
    assert isinstance(direction, ComparisonDirectionAttr)
    return direction.data.value


def _sort_key(v: SSAValue, args: Sequence[SSAValue]) -> tuple[int, bool] | None:
    """(the comparator argument ``v`` is, whether through JAX's float
    canonicalization: -0.0 as 0.0, every NaN as one NaN), or None."""
    if v in args:
        return list(args).index(v), False
    nan = _owner(v, "select")
    if nan is None:
        return None
    is_nan, nan_value, zero = nan.operands
    test, zero_sel = _owner(is_nan, "compare"), _owner(zero, "select")
    nv = _constant_of(nan_value)
    if test is None or zero_sel is None or nv is None or not np.isnan(nv) or \
            _direction(test) != "NE" or test.operands[0] is not test.operands[1]:
        return None
    x = test.operands[0]
    is_zero, zero_value, same = zero_sel.operands
    test = _owner(is_zero, "compare")
    zv = _constant_of(zero_value)
    if test is None or same is not x or zv is None or zv != 0 or np.signbit(zv) or \
            _direction(test) != "EQ" or test.operands[0] is not x or \
            _constant_of(test.operands[1]) != 0 or x not in args:
        return None
    return list(args).index(x), True


def _key_compare(b: IRBuilder, v: SSAValue, args: Sequence[SSAValue],
                 directions: tuple[str, ...]) -> tuple[int, str] | None:
    """(operand, direction) when ``v`` compares operand k's left and right
    arguments (k and n + k... as the comparator's arguments pair them: 2k,
    2k + 1) as a strict total order: a float compared TOTALORDER after JAX's
    canonicalization, an integer SIGNED/UNSIGNED as its type; else None."""
    cmp = _owner(v, "compare")
    if cmp is None or _direction(cmp) not in directions:
        return None
    left, right = (_sort_key(x, args) for x in cmp.operands)
    if left is None or right is None or left[0] % 2 or right[0] != left[0] + 1 or \
            left[1] != right[1]:
        return None
    d = b.dtype(args[left[0]])
    kind = cmp.properties.get("compare_type")
    kind = kind.data.value if isinstance(kind, ComparisonTypeAttr) else "NOTYPE"
    if d.category == FLOAT:
        ok = left[1] and kind == "TOTALORDER"
    else:
        want = "UNSIGNED" if d.category == BOOL or d.name.startswith("u") else "SIGNED"
        ok = not left[1] and kind in ("NOTYPE", want)
    return (left[0] // 2, _direction(cmp)) if ok else None


def _sort_keys(b: IRBuilder, v: SSAValue, args: Sequence[SSAValue]
               ) -> list[tuple[int, bool]] | None:
    """The keys (operand, descending) of a comparator returning ``v``, most
    significant first: ``lt(k)`` or ``or(lt(k), and(eq(k), rest))`` (JAX's
    lexicographic comparator, ``lt`` a LT or GT of one operand's arguments)."""
    one = _key_compare(b, v, args, ("LT", "GT"))
    if one is not None:
        return [(one[0], one[1] == "GT")]
    either = _owner(v, "or")
    if either is None:
        return None
    for first, rest in (either.operands, either.operands[::-1]):
        lt = _key_compare(b, first, args, ("LT", "GT"))
        both = _owner(rest, "and")
        if lt is None or both is None:
            continue
        for eq, tail in (both.operands, both.operands[::-1]):
            same = _key_compare(b, eq, args, ("EQ",))
            keys = _sort_keys(b, tail, args) if same is not None and same[0] == lt[0] else None
            if keys is not None:
                return [(lt[0], lt[1] == "GT"), *keys]
    return None


def _sort(b: IRBuilder, op: StablehloOp) -> list[SSAValue]:
    """``stablehlo.sort`` whose comparator is JAX's (``jnp.sort``, ``argsort``,
    ``lax.sort`` of several keys): a stable sort by the keys, most significant
    last, each by the ``sort`` op (stable; NaN last ascending, first
    descending; -0.0 equal to 0.0: JAX's canonical total order), the operands
    then gathered by the permutation (``select_along``, so values carry their
    derivatives). Any other comparator is refused."""
    block = op.regions[0].block
    ret = block.last_op
    assert ret is not None
    keys = _sort_keys(b, ret.operands[0], list(block.args))
    used = {a for cand in block.ops for a in cand.operands if a in block.args}
    if keys is None or len({k for k, _ in keys}) != len(keys) or any(
            list(block.args).index(a) // 2 not in {k for k, _ in keys} for a in used):
        raise StablehloError(op, "whose comparator is not JAX's (a lexicographic LT/GT of "
                                 "operands' keys: integers SIGNED/UNSIGNED, floats "
                                 "canonicalized and TOTALORDER) is not supported")
    dim = _int_prop(op, "dimension")
    s = b.shape(op.operands[0])
    dim = dim + len(s) if dim < 0 else dim
    if not 0 <= dim < len(s) or any(b.shape(v) != s for v in op.operands):
        raise StablehloError(op, f"sorts operands of one shape along one of their "
                                 f"dimensions, got dimension {_int_prop(op, 'dimension')} "
                                 f"of {[list(b.shape(v)) for v in op.operands]}")
    if s[dim] < 2:
        return list(op.operands)
    order = None
    for k, descending in reversed(keys):
        key = op.operands[k]
        if b.dtype(key).category == BOOL:
            key = b.convert(key, dtype=int64)
        if order is not None:
            key = b.select_along(key, order, dim=dim)
        _, by_key = b.sort(key, dim=dim, descending=descending)
        order = by_key if order is None else b.select_along(order, by_key, dim=dim)
    assert order is not None
    return [b.select_along(v, order, dim=dim) for v in op.operands]


def _top_k(b: IRBuilder, op: StablehloOp) -> list[SSAValue]:
    """``chlo.top_k``: the k largest along the last dimension, largest first, in
    total order (NaN largest, 0.0 above -0.0; equal ones by index) and their
    indices: a stable descending sort of the zeros' signs (1 / x: +inf for 0.0,
    -inf for -0.0), then of the values."""
    x = op.operands[0]
    s, d = b.shape(x), b.dtype(x)
    k = _int_prop(op, "k")
    if not s or not 0 <= k <= s[-1] or b.shape(op.results[0]) != (*s[:-1], k) or \
            b.dtype(op.results[0]) is not d:
        raise StablehloError(op, f"of k = {k} takes the k <= {s[-1] if s else 0} largest of "
                                 f"the last dimension of {list(s)}")
    dim = len(s) - 1
    order = None
    if d.category == FLOAT:  # 0.0 before -0.0 among equals
        zero = b.scalar(0, like=x)
        signs = b.where(b.eq(x, zero), b.reciprocal(x), zero)
        _, order = b.sort(signs, dim=dim, descending=True)
        x_by = b.select_along(x, order, dim=dim)
    else:
        x_by = x if d.category != BOOL else b.convert(x, dtype=int64)
    _, by_value = b.sort(x_by, dim=dim, descending=True)
    order = by_value if order is None else b.select_along(order, by_value, dim=dim)
    if k != s[-1]:
        order = b.slice(order, start=(0,) * len(s), limit=(*s[:-1], k), stride=(1,) * len(s))
    index_type = b.dtype(op.results[1])
    indices = order if index_type is int64 else b.convert(order, dtype=index_type)
    return [b.select_along(x, order, dim=dim), indices]


# custom_call targets that pass their operand through on one device
_IDENTITY_CALLS = frozenset({"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape"})
# LAPACK routines JAX calls on CPU (lapack_<s|d><name>_ffi) with a pyflame op
_LAPACK = ("potrf", "getrf", "trsm", "syevd", "gesdd")


def _lapack_flag(op: StablehloOp, key: str, default: str) -> str:
    """A character flag of ``mhlo.backend_config`` (``uplo = 76 : ui8`` is 'L')."""
    from xdsl.dialects.builtin import DictionaryAttr

    config = op.attributes.get("mhlo.backend_config")
    value = config.data.get(key) if isinstance(config, DictionaryAttr) else None
    return chr(value.value.data) if isinstance(value, IntegerAttr) else default


def _tril_mask(b: IRBuilder, shape: Sequence[int], strict_upper: bool) -> SSAValue:
    """True above the diagonal (strictly) of the last two dims, over ``shape``."""
    n = len(shape)
    rows = b.iota(shape=tuple(shape), dim=n - 2, dtype=int64)
    cols = b.iota(shape=tuple(shape), dim=n - 1, dtype=int64)
    return b.lt(rows, cols) if strict_upper else b.gt(rows, cols)


def _zeros(b: IRBuilder, result: SSAValue) -> SSAValue:
    d = b.dtype(result)
    return b.op("constant", value=DenseValue(np.asarray(0, d.np), b.shape(result), d))


def _custom_call(b: IRBuilder, op: StablehloOp) -> list[SSAValue]:
    """The ``custom_call`` targets JAX emits on CPU that a pyflame op computes:
    ``Sharding`` (and the SPMD shape markers) pass their operand on one
    device; LAPACK's ``potrf`` is ``cholesky`` (the triangle not written keeps
    the operand's, as LAPACK leaves it), ``getrf`` is ``lu_factor`` (info: the
    first zero pivot, 1-based), ``trsm`` is ``solve_triangular``, ``syevd``
    ``eigh`` and ``gesdd`` ``svd`` (both numpy's, LAPACK's own routines; a
    failure to converge raises when run, so their info is 0). Any other target
    is refused by name."""
    target = op.properties["call_target_name"].data  # type: ignore[union-attr]
    ins, outs = list(op.operands), list(op.results)
    if target in _IDENTITY_CALLS:
        if len(ins) != 1 or len(outs) != 1 or ins[0].type != outs[0].type:
            raise StablehloError(op, f"@{target} passes one operand through as its result")
        return ins
    name = target.removeprefix("lapack_").removesuffix("_ffi")
    routine = name[1:] if name[:1] in ("s", "d") else ""
    if not target.startswith("lapack_") or routine not in _LAPACK:
        raise StablehloError(op, f"@{target} is not supported: the targets load_mlir runs are "
                                 f"{', '.join(sorted(_IDENTITY_CALLS))} and LAPACK's "
                                 f"{', '.join(f'?{r}' for r in _LAPACK)} (s/d)")
    if not ins or b.dtype(ins[0]).category != FLOAT or len(b.shape(ins[0])) < 2:
        raise StablehloError(op, f"@{target} takes float32/float64 matrices")
    a = ins[0]
    shape = b.shape(a)
    lower = _lapack_flag(op, "uplo", "L") == "L"
    if routine == "potrf":  # (factor, info)
        factor = b.cholesky(a if lower else mT(b, a))
        factor = factor if lower else mT(b, factor)
        untouched = _tril_mask(b, shape, strict_upper=lower)
        return [b.where(untouched, a, factor), _zeros(b, outs[1])]
    if routine == "getrf":  # (lu, 1-based pivots, info)
        lu, pivots, _ = b.lu_factor(a)
        k = b.shape(pivots)[-1]
        diag = b.sum(b.where(b.eq(_tril_mask(b, shape, True), _tril_mask(b, shape, False)),
                             lu, b.scalar(0, like=lu)), dims=(len(shape) - 1,), keepdim=False)
        if shape[-2] != k:  # (m > n: the diagonal is the first n entries)
            diag = b.slice(diag, start=(0,) * (len(shape) - 1), limit=(*shape[:-2], k),
                           stride=(1,) * (len(shape) - 1))
        zero = b.eq(diag, b.scalar(0, like=diag))
        first = b.add(b.argmax(b.convert(zero, dtype=int64), dim=len(shape) - 2,
                               keepdim=False), _index(b, 1))
        info = b.where(b.max(zero, dims=(len(shape) - 2,), keepdim=False, ties=None), first,
                       _index(b, 0))
        d = b.dtype(outs[2])
        pivots = pivots if b.dtype(pivots) is b.dtype(outs[1]) else b.convert(
            pivots, dtype=b.dtype(outs[1]))
        return [lu, pivots, info if b.dtype(info) is d else b.convert(info, dtype=d)]
    if routine == "trsm":  # op(A) X = B (side L) or X op(A) = B (side R)
        rhs = ins[1]
        upper = not lower
        if _lapack_flag(op, "trans_x", "N") != "N":
            a, upper = mT(b, a), not upper
        unit = _lapack_flag(op, "diag", "N") == "U"
        if _lapack_flag(op, "side", "L") == "L":
            return [b.solve_triangular(a, rhs, upper=upper, unitriangular=unit)]
        # X A = B is A^T X^T = B^T
        return [mT(b, b.solve_triangular(mT(b, a), mT(b, rhs), upper=not upper,
                                         unitriangular=unit))]
    if routine == "syevd":  # (eigenvectors as columns, ascending eigenvalues, info)
        w, v = b.eigh(a, lower=lower)
        return [v if _lapack_flag(op, "mode", "V") == "V" else a, w, _zeros(b, outs[2])]
    # gesdd: (the operand overwritten, singular values, U, V^T, info); mode 'A' full
    # U and V^T, 'S' reduced, 'N' none (its U and V^T, never read, are the full ones)
    mode = _lapack_flag(op, "mode", "A")
    if mode not in ("A", "S", "N"):
        raise StablehloError(op, f"@{target} of mode '{mode}' is not supported")
    u, sv, vt = b.svd(a, full_matrices=mode != "S")
    return [a, sv, u, vt, _zeros(b, outs[4])]


# reduce bodies: the op the body applies -> (pyflame reduction, the combining
# op with the init value) per operand kind (float, integer, bool)
_REDUCTIONS: dict[str, tuple[tuple[str, str] | None, ...]] = {
    "stablehlo.add": (("sum", "add"), ("sum", "add"), None),
    "stablehlo.multiply": (("prod", "mul"), ("prod", "mul"), None),
    "stablehlo.maximum": (("max", "maximum"), ("max", "maximum"), ("max", "maximum")),
    "stablehlo.minimum": (("min", "minimum"), ("min", "minimum"), ("min", "minimum")),
    "stablehlo.and": (None, None, ("min", "minimum")),
    "stablehlo.or": (None, None, ("max", "maximum")),
}


def _is_identity(init: SSAValue, combine: str, d: DType) -> bool:
    """Whether ``combine(r, init) == r`` bit for bit for every ``r``: the
    combining op can be left out."""
    arr = constant_array(init)
    if arr is None:
        return False
    v = arr.reshape(())
    if combine == "add":  # the sums fold from +0.0 (numpy's identity), as from this init
        return bool(v == 0 and not np.signbit(v))
    if combine == "mul":
        return bool(v == 1)
    if d.category == BOOL:
        return bool(v) == (combine == "minimum")
    info = np.finfo(v.dtype) if d.category == FLOAT else np.iinfo(v.dtype)
    if d.category == FLOAT:
        return bool(v == (-np.inf if combine == "maximum" else np.inf))
    return bool(v == (info.min if combine == "maximum" else info.max))


# the body JAX writes for argmax/argmin over (value, index) pairs: the larger
# (smaller) value or a NaN wins, ties go to the smaller index; block arguments
# (value, index) of the accumulated pair, then of the next
_ARG_BODY = (("c1", "compare", "DIR", ("v1", "v2")), ("c2", "compare", "NE", ("v1", "v1")),
             ("o1", "or", None, ("c1", "c2")), ("c3", "compare", "EQ", ("v1", "v2")),
             ("c4", "compare", "LT", ("i1", "i2")), ("a1", "and", None, ("c3", "c4")),
             ("o2", "or", None, ("o1", "a1")), ("s1", "select", None, ("o1", "v1", "v2")),
             ("s2", "select", None, ("o2", "i1", "i2")))


def _arg_reduction(b: IRBuilder, op: StablehloOp) -> list[SSAValue] | None:
    """``jnp.argmax``/``argmin``'s two-operand reduce (values and their iota),
    as ``max``/``min`` and ``argmax``/``argmin``; None if it is not that."""
    x, index, init_v, init_i = op.operands
    dims = op.prop_ints("dimensions")
    block = op.regions[0].block
    iota = index.owner
    if len(dims) != 1 or b.dtype(x).category != FLOAT or not (
            getattr(iota, "name", None) == "pyflame.iota" and b.shape(index) == b.shape(x)
            and iota.py_attrs()["dim"] == dims[0]):
        return None
    env = dict(zip(("v1", "i1", "v2", "i2"), block.args))
    seen = ""  # the first comparison's direction: GT for argmax, LT for argmin
    for key, name, direction, args in _ARG_BODY:
        found = next((cand for cand in block.ops if cand.name == f"stablehlo.{name}"
                      and [env.get(a) for a in args] == list(cand.operands)
                      and cand.results and cand.results[0] not in env.values()), None)
        if found is None:
            return None
        if name == "compare":
            got = found.properties["comparison_direction"].data.value  # type: ignore[union-attr]
            kind = found.properties.get("compare_type")
            on_values = args[0].startswith("v")
            if direction == "DIR":
                seen = direction = got if got in ("GT", "LT") else "?"
            if got != direction or (on_values and kind is not None
                                    and kind.data.value != "FLOAT"):  # type: ignore[union-attr]
                return None  # (TOTALORDER orders NaN and -0.0 otherwise)
        env[key] = found.results[0]
    ret = block.last_op
    if ret is None or list(ret.operands) != [env["s1"], env["s2"]] or \
            len(list(block.ops)) != len(_ARG_BODY) + 1:
        return None
    is_max = seen == "GT"
    v0, i0 = constant_array(init_v), constant_array(init_i)
    if v0 is None or i0 is None or float(v0) != (-np.inf if is_max else np.inf) or int(i0):
        return None
    values = b.op("max" if is_max else "min", x, dims=dims, keepdim=False, ties=None)
    where = b.op("argmax" if is_max else "argmin", x, dim=dims[0], keepdim=False)
    d = b.dtype(index)
    return [values, where if b.dtype(where) is d else b.convert(where, dtype=d)]


def _reduce(b: IRBuilder, op: StablehloOp) -> list[SSAValue]:
    if len(op.operands) == 4 and (args := _arg_reduction(b, op)) is not None:
        return args
    if len(op.operands) != 2:
        raise StablehloError(op, f"of {len(op.operands) // 2} operands at once is not "
                                 "supported: only one-operand reductions of add, multiply, "
                                 "maximum, minimum, and, or, and the (value, iota) pair "
                                 "jnp.argmax/argmin reduce")
    x, init = op.operands
    applies = _reduce_applies(op)
    if applies is None:  # the commutative ops also read their arguments swapped
        block = op.regions[0].block
        ops = list(block.ops)
        if len(ops) == 2 and list(ops[0].operands) == list(block.args)[::-1] and \
                list(ops[1].operands) == list(ops[0].results):
            applies = ops[0].name
    d = b.dtype(x)
    rule = _REDUCTIONS.get(applies or "", (None, None, None))[_kind(d)]
    if rule is None:
        raise StablehloError(op, f"whose body is not one add, multiply, maximum or minimum "
                                 f"(or, on bool, and/or) of its two arguments on {d.name} is "
                                 "not supported")
    if b.shape(init) != () or b.dtype(init) is not d:
        raise StablehloError(op, "takes an init value that is a scalar of the operand's "
                                 "element type")
    dims = op.prop_ints("dimensions")
    s = b.shape(x)
    if len(set(dims)) != len(dims) or any(not 0 <= i < len(s) for i in dims):
        raise StablehloError(op, f"dimensions {list(dims)} are not distinct dimensions of "
                                 f"{list(s)}")
    reduction, combine = rule
    if reduction in ("max", "min") and any(s[i] == 0 for i in dims):
        raise StablehloError(op, "of max/min over an empty dimension is not supported")
    r = x
    if dims:
        attrs: dict[str, Any] = {"dims": tuple(sorted(dims)), "keepdim": False}
        if reduction in ("max", "min"):
            attrs["ties"] = None
        r = b.op(reduction, x, **attrs)
        if b.dtype(r) is not d:  # integer sums count in int64: the same bits, wrapped
            r = b.convert(r, dtype=d)
    if not _is_identity(init, combine, d):
        r = b.op(combine, r, init)
    arr = constant_array(init)
    if combine == "add" and d.category == FLOAT and dims and (
            arr is None or (arr.reshape(()) == 0 and np.signbit(arr.reshape(())))):
        # a fold from init differs from init + the sum (a fold from +0.0) where
        # every element is -0.0 (1 / x is -inf): there it is init, -0.0 included
        others = b.ne(b.reciprocal(x), b.scalar(-np.inf, like=x))
        every = b.logical_not(b.max(others, dims=tuple(sorted(dims)), keepdim=False,
                                    ties=None))
        r = b.where(every, init, r)
    return [r]


RULES: dict[str, Rule] = {
    **{f"stablehlo.{n}": _elementwise for n in (
        *_SAME, *_BY_KIND, "divide", "sign", "is_finite", "tan", "round_nearest_afz")},
    **{f"chlo.{n}": _elementwise for n in CHLO_UNARY},
    **{f"stablehlo.{n}": _shift for n in (
        "shift_left", "shift_right_arithmetic", "shift_right_logical")},
    "stablehlo.popcnt": _bit_count,
    "stablehlo.count_leading_zeros": _bit_count,
    "stablehlo.reduce_precision": _reduce_precision,
    **{f"stablehlo.{n}": _complex_part for n in ("real", "imag", "complex")},
    "stablehlo.bitcast_convert": _bitcast_convert,
    "stablehlo.select": _select,
    "stablehlo.clamp": _clamp,
    "stablehlo.constant": _constant,
    "stablehlo.iota": _iota,
    "stablehlo.broadcast_in_dim": _broadcast_in_dim,
    "stablehlo.reshape": _reshape,
    "stablehlo.transpose": _transpose,
    "stablehlo.reverse": _reverse,
    "stablehlo.convert": _convert,
    "stablehlo.compare": _compare,
    "stablehlo.slice": _slice,
    "stablehlo.dynamic_slice": _dynamic_slice,
    "stablehlo.dynamic_update_slice": _dynamic_update_slice,
    "stablehlo.concatenate": _concatenate,
    "stablehlo.pad": _pad,
    "stablehlo.dot_general": _dot_general,
    "stablehlo.dot": _dot_general,
    "stablehlo.reduce": _reduce,
    "stablehlo.gather": _gather,
    "stablehlo.scatter": _scatter,
    "stablehlo.reduce_window": _reduce_window,
    "stablehlo.convolution": _convolution,
    "stablehlo.select_and_scatter": _select_and_scatter,
    "stablehlo.sort": _sort,
    "chlo.top_k": _top_k,
    "stablehlo.custom_call": _custom_call,
}


MAX_UNROLLED = 4096  # iterations of one stablehlo.while that are unrolled


def _constant_of(v: SSAValue) -> np.ndarray | None:
    """The value of ``v`` if a stablehlo or pyflame constant defines it."""
    owner = v.owner
    if getattr(owner, "name", None) == "stablehlo.constant":
        from xdsl.dialects.builtin import DenseIntOrFPElementsAttr

        value = owner.properties["value"]  # type: ignore[union-attr]
        if isinstance(value, DenseIntOrFPElementsAttr) and not value.get_shape():
            return np.asarray(value.get_values()[0])
        return None
    return constant_array(v)


def _unroll(loop: StablehloOp) -> None:
    """A ``stablehlo.while`` whose cond is ``counter < N`` (constants) and whose
    body adds a positive constant to the counter (``fori_loop``, ``scan``),
    unrolled: its body once per trip, the counter a constant in each."""
    from xdsl.rewriter import InsertPoint, Rewriter

    cond, body = (r.block for r in loop.regions)
    ops = [op for op in cond.ops if op.name != "stablehlo.constant"]
    compare = ops[0] if len(ops) == 2 else None
    k = cond.args.index(compare.operands[0]) if (
        compare is not None and compare.name == "stablehlo.compare"
        and compare.operands[0] in cond.args
        and compare.properties["comparison_direction"].data.value == "LT"  # type: ignore[union-attr]
        and compare.results[0] in list(ops[1].operands)) else None
    bound = _constant_of(compare.operands[1]) if k is not None else None  # type: ignore[union-attr]
    first = _constant_of(loop.operands[k]) if k is not None else None
    ret = body.last_op
    step_op = ret.operands[k].owner if k is not None and ret is not None else None
    step = None
    if getattr(step_op, "name", None) == "stablehlo.add" and body.args[k] in list(
            step_op.operands):  # type: ignore[union-attr]
        other = [v for v in step_op.operands if v is not body.args[k]]  # type: ignore[union-attr]
        step = _constant_of(other[0]) if other else None
    if bound is None or first is None or step is None or int(step) <= 0 or \
            first.dtype.kind not in "iu":
        raise StablehloError(loop, "is not supported unless it counts: its cond must be "
                                   "'counter < constant' and its body add a positive "
                                   "constant to the counter, which starts at a constant "
                                   "(fori_loop and scan of a fixed length are unrolled)")
    trips = max(0, -(-(int(bound) - int(first)) // int(step)))
    if trips > MAX_UNROLLED:
        raise StablehloError(loop, f"of {trips} iterations: more than {MAX_UNROLLED} are not "
                                   "unrolled")
    counter_type = loop.operands[k].type
    values = list(loop.operands)
    from xdsl.dialects.builtin import DenseIntOrFPElementsAttr

    def constant(v: int) -> SSAValue:
        new = type(loop.operands[k].owner).create(  # (a stablehlo.constant)
            result_types=[counter_type], properties={"value": DenseIntOrFPElementsAttr.from_list(
                counter_type, [v])})  # type: ignore[arg-type]
        new.location = loop.location
        Rewriter.insert_op(new, InsertPoint.before(loop))
        return new.results[0]

    for t in range(trips):
        mapping: dict[Any, Any] = dict(zip(body.args, values))
        mapping[body.args[k]] = constant(int(first) + t * int(step))
        for op in list(body.ops)[:-1]:
            Rewriter.insert_op(op.clone(value_mapper=mapping), InsertPoint.before(loop))
        values = [mapping.get(v, v) for v in ret.operands]  # type: ignore[union-attr]
    values[k] = constant(int(first) + trips * int(step))
    Rewriter.replace_op(loop, [], values)


# ops no one pyflame op computes, which the library computes as composites:
# left in place when the caller runs them (load_mlir records pf.erfc, pf.sinh...)
COMPOSITES = frozenset({*(f"chlo.{n}" for n in CHLO_COMPOSITE), "stablehlo.cbrt"})


def _inline_case(case: StablehloOp) -> None:
    """``stablehlo.case`` (``lax.switch``, ``lax.cond``): every branch's ops
    inlined before it (they are pure), each result the branch's value selected
    by the index; an index out of range takes the last branch, as the spec says."""
    from xdsl.rewriter import InsertPoint, Rewriter

    index = case.operands[0]
    d = getattr(index.type, "element_type", None)
    if getattr(index.type, "get_shape", lambda: None)() != () or \
            getattr(d, "name", "") != "integer_type":
        raise StablehloError(case, "takes an index that is an integer scalar")
    branches: list[list[SSAValue]] = []
    for region in case.regions:
        mapping: dict[Any, Any] = {}
        for op in list(region.block.ops)[:-1]:
            Rewriter.insert_op(op.clone(value_mapper=mapping), InsertPoint.before(case))
        ret = region.block.last_op
        assert ret is not None
        branches.append([mapping.get(v, v) for v in ret.operands])
    new: list[Operation] = []
    b = IRBuilder(new.append)
    values = list(branches[-1])
    for k in range(len(branches) - 2, -1, -1):
        pick = b.eq(index, b.scalar(k, like=index))
        values = [b.where(pick, v, rest) for v, rest in zip(branches[k], values)]
    for n in new:
        n.location = case.location
        Rewriter.insert_op(n, InsertPoint.before(case))
    Rewriter.replace_op(case, [], values)


def convert_stablehlo(root: Operation, keep: frozenset[str] = frozenset()) -> int:
    """Rewrite every StableHLO op under ``root`` (a module or one function;
    outside reduce bodies) into pyflame ops, in program order; returns how
    many were rewritten. Ops named in ``keep`` (some of ``COMPOSITES``) are
    left for the caller; with ``stablehlo.while`` there, a loop that does not
    count (its condition reads data) is left too, the ops of its ``cond`` and
    ``do`` regions converted (``pf.load_mlir`` runs it as a loop)."""
    from xdsl.utils.exceptions import VerifyException

    converted = 0
    loops = [op for op in root.walk(region_first=True) if op.name == "stablehlo.while"]
    for loop in loops:  # inner loops first
        try:
            _unroll(loop)
        except StablehloError:
            if "stablehlo.while" not in keep:
                raise
            continue
        converted += 1
    # the loops left to the caller (copies of them in unrolled bodies included),
    # their regions converted
    kept = {op for op in root.walk() if op.name == "stablehlo.while"}
    cases = [op for op in root.walk(region_first=True) if op.name == "stablehlo.case"]
    for case in cases:  # inner ones first
        _inline_case(case)
        converted += 1
    todo = [op for op in root.walk() if isinstance(op, StablehloOp)
            and (not isinstance(op.parent_op(), StablehloOp) or op.parent_op() in kept)]
    for op in todo:
        rule = RULES.get(op.name)
        if op.name in keep or (op.name == "stablehlo.return" and op.parent_op() in kept):
            continue
        if op.name in COMPOSITES:
            raise StablehloError(op, "is not supported by this pass: no one pyflame op "
                                     "computes it (pf.load_mlir runs it as the library's "
                                     "composite)")
        if rule is None:
            raise StablehloError(op, "is not supported (no pyflame op computes "
                                     "it)" if op.name != "stablehlo.return" else
                                     "outside a reduce body")
        new: list[Operation] = []
        b = IRBuilder(new.append)
        try:
            values = rule(b, op)
        except (ShapeError, VerifyException) as e:
            raise StablehloError(op, f"cannot be converted: {e}") from None
        for r, v in zip(op.results, values, strict=True):
            if v.type != r.type:
                raise StablehloError(op, f"declares the result type {r.type}, but its "
                                         f"operands give {v.type}")
        block = op.parent
        assert block is not None
        for n in new:
            n.location = op.location
            block.insert_op_before(n, op)
        for r, v in zip(op.results, values):
            r.replace_all_uses_with(v)
        block.erase_op(op)
        converted += 1
    return converted


@dataclass(frozen=True)
class ConvertStablehloToPyflame(PyflamePass):
    """The StableHLO ops JAX prints, as the pyflame ops that compute them."""

    name = "convert-stablehlo-to-pyflame"

    def run(self, ctx: Context, module: ModuleOp) -> dict[str, int]:
        return {"rewritten": convert_stablehlo(module)}


__all__ = ["COMPOSITES", "RULES", "ConvertStablehloToPyflame", "StablehloError",
           "convert_stablehlo"]

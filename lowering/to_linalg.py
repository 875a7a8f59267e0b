"""``pyflame`` ops -> upstream ``linalg``/``tensor``/``arith``/``math`` on tensors.

The output is plain upstream MLIR: real ``mlir-opt`` parses and verifies it,
and the ``mlir`` backend bufferizes, lowers and JIT-runs it. Every rule
reproduces the reference kernel's semantics (``dialects/*.py``), not the
upstream defaults where the two differ:

- elementwise ops are one ``linalg.generic`` each (broadcasting through the
  indexing maps: a size-1 dimension reads index 0); upstream elementwise
  fusion merges chains of them into one loop nest;
- bool ``add``/``mul``/``maximum``/``minimum`` are logical; ``maximum``,
  ``minimum``, ``relu`` and the max/min reductions propagate NaN (numpy);
  ``sign`` is 0 at NaN and at -0.0 (PyTorch's); ``ne`` is true at NaN;
- half precision transcendental math, reductions, matmul and softmax compute
  in f32 and round once (the reference does the same); integer ``sum`` widens
  to i64;
- ``argmax``/``argmin`` pick the first extreme, and the first NaN.

Fused ops and ``pyflame.fused`` regions are expanded by the one ``unfuse``
pass before this lowering runs (``convert-pyflame-to-linalg`` does that);
upstream elementwise fusion regroups the chains. softmax, log_softmax and
logsumexp have rules of their own (one fused loop nest with the reference's
special-value semantics and half precision computed in f32), as MAX has
primitives for them. An op without a rule raises ``LinalgLoweringError``
naming it.

``lower_module(module)`` rewrites a module in place; the pass
``convert-pyflame-to-linalg`` (``passes/to_linalg.py``) calls it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import arith, func, tensor
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import (
    AffineMapAttr,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    TensorType,
    i64,
)
from xdsl.dialects.linalg.attrs import IteratorType, IteratorTypeAttr
from xdsl.dialects.linalg.ops import FillOp, GenericOp, IndexOp, YieldOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.rewriter import Rewriter

from ..dialects.data import DenseValue
from ..dialects.decomp import DECOMPOSITIONS
from ..dialects.dtypes import FLOAT, DType, bool_, float32, int64
from ..dialects.opdef import OPS, OpDef, Shape, by_op
from ..dialects.pyflame import (
    FusedOp,
    PyflameOp,
    ir_element_type,
    narrow_int_use,
    spec_of_type,
    tensor_type,
)
from ..dialects.scan import SCANS

Spec = tuple[Shape, DType]
# Bump when a rule changes what it emits: part of the mlir backend's disk-cache key.
LOWERING_VERSION = "1"

_PARALLEL = IteratorTypeAttr(IteratorType.PARALLEL)
_REDUCTION = IteratorTypeAttr(IteratorType.REDUCTION)
_SQRT_HALF = 1.0 / math.sqrt(2.0)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


class LinalgLoweringError(ValueError):
    """A module the linalg lowering cannot handle; ``op`` names the culprit."""

    def __init__(self, op: str, message: str):
        super().__init__(f"linalg lowering of pyflame.{op}: {message}")
        self.op = op


_I8 = IntegerType(8)


def _spec(v: SSAValue) -> Spec:
    t = v.type
    if isinstance(t, TensorType) and t.get_element_type() == _I8:  # bools stored as bytes
        return tuple(t.get_shape()), bool_
    return spec_of_type(t, "value")


def _is_half(d: DType) -> bool:
    return d.category == FLOAT and d.itemsize < 4


def _wide(d: DType) -> DType:
    """The type half precision math computes in."""
    return float32 if _is_half(d) else d


# ---- scalar bodies ----

def scalar_constant(value: float | int | bool, d: DType) -> arith.ConstantOp:
    t = ir_element_type(d)
    if d.category == FLOAT:
        return arith.ConstantOp(FloatAttr(float(value), t))
    if d.is_bool:
        return arith.ConstantOp(IntegerAttr(-1 if value else 0, t))
    return arith.ConstantOp(IntegerAttr(int(value), t))


class Scalar:
    """Builds the scalar ops of one ``linalg.generic`` body (its block)."""

    def __init__(self, block: Block, rational_tanh: bool = False):
        self.block = block
        self.rational_tanh = rational_tanh

    def __call__(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0]

    def const(self, value: float | int | bool, d: DType) -> SSAValue:
        return self(scalar_constant(value, d))

    def index(self, dim: int) -> SSAValue:
        return self(IndexOp(dim))

    def convert(self, x: SSAValue, src: DType, dst: DType) -> SSAValue:
        """numpy's ``astype`` on one element."""
        if src is dst:
            return x
        t = ir_element_type(dst)
        if dst.is_bool:  # nonzero (NaN included) is true
            zero = self.const(0, src)
            if src.category == FLOAT:
                return self(arith.CmpfOp(x, zero, "une"))
            return self(arith.CmpiOp(x, zero, "ne"))
        if src.category == FLOAT and dst.category == FLOAT:
            if src.itemsize == dst.itemsize:  # f16 <-> bf16: through f32
                return self.convert(self.convert(x, src, float32), float32, dst)
            cls = arith.ExtFOp if dst.itemsize > src.itemsize else arith.TruncFOp
            return self(cls(x, t))
        if src.category == FLOAT:
            return self(arith.FPToSIOp(x, t))
        if dst.category == FLOAT:
            return self((arith.UIToFPOp if src.is_bool else arith.SIToFPOp)(x, t))
        if dst.itemsize > src.itemsize or (src.is_bool and not dst.is_bool):
            return self((arith.ExtUIOp if src.is_bool else arith.ExtSIOp)(x, t))
        return self(arith.TruncIOp(x, t))


# tanh on f32 as Eigen's rational approximation (what MLIR's polynomial
# approximation of math.tanh uses): a few ulp from the correctly rounded value,
# and only arith ops, so LLVM vectorizes the loop (a libm call per element does
# not). The mlir backend asks for it; the plain pass emits math.tanh.
_TANH_CLAMP = 7.99881172180175781
_TANH_TINY = 0.0004
_TANH_P = (-2.76076847742355e-16, 2.00018790482477e-13, -8.60467152213735e-11,
           5.12229709037114e-08, 1.48572235717979e-05, 6.37261928875436e-04,
           4.89352455891786e-03)  # x^13 ... x^1 (odd powers)
_TANH_Q = (1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03,
           4.89352518554385e-03)  # x^6 ... x^0 (even powers)


def _tanh(s: Scalar, x: SSAValue, d: DType, **a: Any) -> SSAValue:
    if not (s.rational_tanh and d.name == "float32"):
        return s(mathd.TanhOp(x))
    c = s(arith.MinimumfOp(s(arith.MaximumfOp(x, s.const(-_TANH_CLAMP, d))),
                           s.const(_TANH_CLAMP, d)))  # NaN stays NaN
    x2 = s(arith.MulfOp(c, c))

    def horner(coefs: Sequence[float]) -> SSAValue:
        acc = s.const(coefs[0], d)
        for k in coefs[1:]:
            acc = s(arith.AddfOp(s(arith.MulfOp(acc, x2)), s.const(k, d)))
        return acc
    r = s(arith.DivfOp(s(arith.MulfOp(horner(_TANH_P), c)), horner(_TANH_Q)))
    tiny = s(arith.CmpfOp(s(mathd.AbsFOp(x)), s.const(_TANH_TINY, d), "olt"))
    return s(arith.SelectOp(tiny, x, r))


def _float(op_cls: type) -> Callable:
    return lambda s, x, d, **a: s(op_cls(x))


def _neg(s: Scalar, x: SSAValue, d: DType, **a: Any) -> SSAValue:
    if d.category == FLOAT:
        return s(arith.NegfOp(x))
    return s(arith.SubiOp(s.const(0, d), x))


def _abs(s: Scalar, x: SSAValue, d: DType, **a: Any) -> SSAValue:
    return s(mathd.AbsFOp(x) if d.category == FLOAT else mathd.AbsIOp(x))


def _sign(s: Scalar, x: SSAValue, d: DType, **a: Any) -> SSAValue:
    # PyTorch's: 0 at NaN (ordered compares are false there) and +0.0 at -0.0
    zero = s.const(0, d)
    if d.category == FLOAT:
        gt, lt = s(arith.CmpfOp(x, zero, "ogt")), s(arith.CmpfOp(x, zero, "olt"))
    else:
        gt, lt = s(arith.CmpiOp(x, zero, "sgt")), s(arith.CmpiOp(x, zero, "slt"))
    rest = s(arith.SelectOp(lt, s.const(-1, d), zero))
    return s(arith.SelectOp(gt, s.const(1, d), rest))


def _square(s: Scalar, x: SSAValue, d: DType, **a: Any) -> SSAValue:
    return _mul(s, x, x, d)


def _relu(s: Scalar, x: SSAValue, d: DType, **a: Any) -> SSAValue:
    return _maximum(s, x, s.const(0, d), d)


def _rsqrt(s: Scalar, x: SSAValue, d: DType, **a: Any) -> SSAValue:
    return s(arith.DivfOp(s.const(1, d), s(mathd.SqrtOp(x))))


def _reciprocal(s: Scalar, x: SSAValue, d: DType, **a: Any) -> SSAValue:
    return s(arith.DivfOp(s.const(1, d), x))


def _sigmoid(s: Scalar, x: SSAValue, d: DType, **a: Any) -> SSAValue:
    # the reference's stable form: e = exp(-|x|); x >= 0: 1/(1+e), else e/(1+e)
    e = s(mathd.ExpOp(s(arith.NegfOp(s(mathd.AbsFOp(x))))))
    one = s.const(1, d)
    den = s(arith.AddfOp(one, e))
    pos = s(arith.CmpfOp(x, s.const(0, d), "oge"))
    return s(arith.DivfOp(s(arith.SelectOp(pos, one, e)), den))


def _log1p(s: Scalar, x: SSAValue, d: DType, **a: Any) -> SSAValue:
    # upstream's math-to-llvm computes log(1 + x), which loses all of x's digits
    # below 1's ulp (log1p(1e-7) was 19% off); Kahan's correction instead:
    # u = 1 + x; x where u == 1, log(u) where u is inf, else log(u) * x / (u - 1)
    one = s.const(1, d)
    u = s(arith.AddfOp(one, x))
    log_u = s(mathd.LogOp(u))
    scaled = s(arith.MulfOp(log_u, s(arith.DivfOp(x, s(arith.SubfOp(u, one))))))
    inf = s(arith.CmpfOp(u, s.const(float("inf"), d), "oeq"))
    r = s(arith.SelectOp(inf, log_u, scaled))
    return s(arith.SelectOp(s(arith.CmpfOp(u, one, "oeq")), x, r))


def _expm1(s: Scalar, x: SSAValue, d: DType, **a: Any) -> SSAValue:
    # upstream computes exp(x) - 1 (expm1(1e-7) was 19% off); Kahan's form:
    # u = exp(x); x where u == 1, -1 where u - 1 == -1, u where u is inf,
    # else (u - 1) * x / log(u)
    one = s.const(1, d)
    u = s(mathd.ExpOp(x))
    um1 = s(arith.SubfOp(u, one))
    scaled = s(arith.MulfOp(um1, s(arith.DivfOp(x, s(mathd.LogOp(u))))))
    r = s(arith.SelectOp(s(arith.CmpfOp(u, s.const(float("inf"), d), "oeq")), u, scaled))
    r = s(arith.SelectOp(s(arith.CmpfOp(um1, s.const(-1, d), "oeq")), um1, r))
    return s(arith.SelectOp(s(arith.CmpfOp(u, one, "oeq")), x, r))


def _gelu(s: Scalar, x: SSAValue, d: DType, approximate: str = "none", **a: Any
          ) -> SSAValue:
    half = s(arith.MulfOp(s.const(0.5, d), x))
    if approximate == "tanh":
        cube = s(arith.MulfOp(s(arith.MulfOp(x, x)), x))
        inner = s(arith.AddfOp(x, s(arith.MulfOp(s.const(0.044715, d), cube))))
        t = s(mathd.TanhOp(s(arith.MulfOp(s.const(_SQRT_2_OVER_PI, d), inner))))
    else:
        t = s(mathd.ErfOp(s(arith.MulfOp(x, s.const(_SQRT_HALF, d)))))
    return s(arith.MulfOp(half, s(arith.AddfOp(s.const(1, d), t))))


def _logical_not(s: Scalar, x: SSAValue, d: DType, **a: Any) -> SSAValue:
    return s(arith.XOrIOp(s.convert(x, d, bool_), s.const(True, bool_)))


def _arith(float_op: type, int_op: type, bool_op: type | None = None) -> Callable:
    """A binary body picking its arith op by element type (bool: a logical op,
    as the reference's bool add/mul/maximum/minimum are or/and)."""
    def body(s: Scalar, x: SSAValue, y: SSAValue, d: DType) -> SSAValue:
        if d.is_bool and bool_op is not None:
            return s(bool_op(x, y))
        return s(float_op(x, y) if d.category == FLOAT else int_op(x, y))
    return body


_add = _arith(arith.AddfOp, arith.AddiOp, arith.OrIOp)
_sub = _arith(arith.SubfOp, arith.SubiOp)
_mul = _arith(arith.MulfOp, arith.MuliOp, arith.AndIOp)
_maximum = _arith(arith.MaximumfOp, arith.MaxSIOp, arith.OrIOp)
_minimum = _arith(arith.MinimumfOp, arith.MinSIOp, arith.AndIOp)


def _div(s: Scalar, x: SSAValue, y: SSAValue, d: DType) -> SSAValue:
    return s(arith.DivfOp(x, y))


def _pow(s: Scalar, x: SSAValue, y: SSAValue, d: DType) -> SSAValue:
    if d.category == FLOAT:
        return s(mathd.PowFOp(x, y))
    # integers: math.ipowi for exponents >= 0; below 0 the reference's (PyTorch's)
    # rule: 1 for base 1, +-1 for base -1 (by the exponent's parity), else 0
    zero, one, minus_one = s.const(0, d), s.const(1, d), s.const(-1, d)
    neg = s(arith.CmpiOp(y, zero, "slt"))
    r = s(mathd.IPowIOp(x, s(arith.SelectOp(neg, zero, y))))
    odd = s(arith.CmpiOp(s(arith.AndIOp(y, one)), zero, "ne"))
    at_minus_one = s(arith.SelectOp(odd, minus_one, one))
    special = s(arith.SelectOp(s(arith.CmpiOp(x, one, "eq")), one, s(arith.SelectOp(
        s(arith.CmpiOp(x, minus_one, "eq")), at_minus_one, zero))))
    return s(arith.SelectOp(neg, special, r))


_CMPF = {"eq": "oeq", "ne": "une", "lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge"}
_CMPI = {"eq": "eq", "ne": "ne", "lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge"}
_CMPU = {"eq": "eq", "ne": "ne", "lt": "ult", "le": "ule", "gt": "ugt", "ge": "uge"}


def _compare(pred: str) -> Callable:
    def rule(s: Scalar, x: SSAValue, y: SSAValue, d: DType) -> SSAValue:
        if d.category == FLOAT:
            return s(arith.CmpfOp(x, y, _CMPF[pred]))
        return s(arith.CmpiOp(x, y, (_CMPU if d.is_bool else _CMPI)[pred]))
    return rule


def _logical(cls: type) -> Callable:
    def rule(s: Scalar, x: SSAValue, y: SSAValue, dx: DType, dy: DType) -> SSAValue:
        return s(cls(s.convert(x, dx, bool_), s.convert(y, dy, bool_)))
    return rule


# unary: name -> (body(s, x, d, **attrs), computes in f32 for half precision)
UNARY: dict[OpDef, tuple[Callable, bool]] = by_op({
    "neg": (_neg, False), "abs": (_abs, False), "sign": (_sign, False),
    "square": (_square, False), "relu": (_relu, False),
    "exp": (_float(mathd.ExpOp), True), "log": (_float(mathd.LogOp), True),
    "log1p": (_log1p, True),
    "sqrt": (_float(mathd.SqrtOp), True), "rsqrt": (_rsqrt, True),
    "sin": (_float(mathd.SinOp), True), "cos": (_float(mathd.CosOp), True),
    "tanh": (_tanh, True), "reciprocal": (_reciprocal, True),
    "sigmoid": (_sigmoid, True), "erf": (_float(mathd.ErfOp), True), "gelu": (_gelu, True),
    "logical_not": (_logical_not, False),
})
# binary, on operands of one element type: name -> (body(s, x, y, d), computes in f32)
BINARY: dict[OpDef, tuple[Callable, bool]] = by_op({
    "add": (_add, False), "sub": (_sub, False), "mul": (_mul, False),
    "div": (_div, False), "maximum": (_maximum, False), "minimum": (_minimum, False),
    "pow": (_pow, True),
    **{p: (_compare(p), False) for p in _CMPF},
})
LOGICAL: dict[OpDef, Callable] = by_op({"logical_and": _logical(arith.AndIOp),
                                        "logical_or": _logical(arith.OrIOp)})


# ---- issue 14's math primitives (rounding, inverse trig, integer division, bitwise) ----

def _int_only(name: str, int_op: type) -> Callable:
    """An integer-only body: xDSL 0.74's arith has no ``remf``, so the float
    forms of fmod / floor_divide are refused, naming the op."""
    def body(s: Scalar, x: SSAValue, y: SSAValue, d: DType) -> SSAValue:
        if d.category == FLOAT:
            raise LinalgLoweringError(name, "on floating-point operands is not supported "
                                            "by the mlir backend yet")
        return s(int_op(x, y))
    return body


def _bitwise_not(s: Scalar, x: SSAValue, d: DType, **a: Any) -> SSAValue:
    return s(arith.XOrIOp(x, s.const(True if d.is_bool else -1, d)))


UNARY.update(by_op({
    "floor": (_float(mathd.FloorOp), True), "ceil": (_float(mathd.CeilOp), True),
    "round": (_float(mathd.RoundEvenOp), True), "trunc": (_float(mathd.TruncOp), True),
    "expm1": (_expm1, True), "atan": (_float(mathd.AtanOp), True),
    "asin": (_float(mathd.AsinOp), True), "acos": (_float(mathd.AcosOp), True),
    "bitwise_not": (_bitwise_not, False),
}))
BINARY.update(by_op({
    "atan2": (lambda s, x, y, d: s(mathd.Atan2Op(x, y)), True),
    "fmod": (_int_only("fmod", arith.RemSIOp), False),
    "floor_divide": (_int_only("floor_divide", arith.FloorDivSIOp), False),
    "bitwise_and": (_arith(arith.AndIOp, arith.AndIOp), False),
    "bitwise_or": (_arith(arith.OrIOp, arith.OrIOp), False),
    "bitwise_xor": (_arith(arith.XOrIOp, arith.XOrIOp), False),
}))


# ---- tensor-level emitter ----

def _map(num_dims: int, exprs: Sequence[int | None]) -> AffineMapAttr:
    """An indexing map; None stands for the constant index 0 (a broadcast dim)."""
    return AffineMapAttr(AffineMap(num_dims, 0, tuple(
        AffineExpr.constant(0) if e is None else AffineExpr.dimension(e) for e in exprs)))


def _broadcast_map(shape: Shape, out: Shape) -> AffineMapAttr:
    """numpy broadcasting of ``shape`` to ``out`` as an indexing map."""
    off = len(out) - len(shape)
    return _map(len(out), [None if d == 1 and out[off + i] != 1 else off + i
                           for i, d in enumerate(shape)])


class Emitter:
    """Emits upstream ops into ``ops``; each method takes and returns tensor SSA values.

    ``bool_bits``: the element type of bool tensors, i1 or (8) bytes. Scalar
    bodies always compute on i1; with bytes, ``generic`` truncates bool
    operands on entry and widens bool results on exit (MLIR 22's memref-to-LLVM
    lowering cannot load or store i1, so the mlir backend stores bools as i8)."""

    def __init__(self, bool_bits: int = 1, rational_tanh: bool = False) -> None:
        self.ops: list[Operation] = []
        self.bool_bits = bool_bits
        self.rational_tanh = rational_tanh

    def ttype(self, spec: Spec) -> TensorType:
        shape, d = spec
        if d.is_bool and self.bool_bits != 1:
            return TensorType(IntegerType(self.bool_bits), list(shape))
        return tensor_type(shape, d)

    def emit(self, op: Operation) -> SSAValue:
        self.ops.append(op)
        return op.results[0]

    def empty(self, spec: Spec) -> SSAValue:
        return self.emit(tensor.EmptyOp([], self.ttype(spec)))

    def filled(self, spec: Spec, value: float | int | bool) -> SSAValue:
        init = self.empty(spec)
        if spec[1].is_bool and self.bool_bits != 1:
            c = self.emit(arith.ConstantOp(IntegerAttr(int(bool(value)), self.bool_bits)))
        else:
            c = self.emit(scalar_constant(value, spec[1]))
        return self.emit(FillOp([c], [init], [init.type]))

    def generic(self, inputs: Sequence[SSAValue], maps: Sequence[AffineMapAttr],
                inits: Sequence[SSAValue], out_maps: Sequence[AffineMapAttr],
                iterators: Sequence[IteratorTypeAttr],
                body: Callable[[Scalar, Sequence[SSAValue]], Sequence[SSAValue]]
                ) -> list[SSAValue]:
        types = [v.type.get_element_type() for v in [*inputs, *inits]]  # type: ignore
        block = Block(arg_types=types)
        s = Scalar(block, self.rational_tanh)
        i1 = IntegerType(1)
        args = [s(arith.TruncIOp(a, i1)) if a.type == _I8 else a for a in block.args]
        outs = body(s, args)
        outs = [s(arith.ExtUIOp(v, t)) if t == _I8 and v.type == i1 else v
                for v, t in zip(outs, types[len(inputs):])]
        block.add_op(YieldOp(*outs))
        op = GenericOp(list(inputs), list(inits), Region(block), [*maps, *out_maps],
                              list(iterators), [v.type for v in inits])
        self.ops.append(op)
        return list(op.results)

    def map(self, inputs: Sequence[SSAValue], out: Spec,
            body: Callable[[Scalar, Sequence[SSAValue]], SSAValue]) -> SSAValue:
        """An elementwise generic, the inputs broadcast to ``out``'s shape."""
        shape = out[0]
        maps = [_broadcast_map(_spec(v)[0], shape) for v in inputs]
        ident = _map(len(shape), range(len(shape)))
        return self.generic(inputs, maps, [self.empty(out)], [ident], [_PARALLEL] * len(shape),
                            lambda s, a: [body(s, a[:len(inputs)])])[0]

    def convert(self, x: SSAValue, d: DType) -> SSAValue:
        shape, src = _spec(x)
        if src is d:
            return x
        return self.map([x], (shape, d), lambda s, a: s.convert(a[0], src, d))

    def reshape(self, x: SSAValue, shape: Shape) -> SSAValue:
        src, d = _spec(x)
        if tuple(src) == tuple(shape):
            return x
        shape_t = TensorType(i64, [len(shape)])
        data = np.asarray(shape, np.int64).tobytes()
        dims = self.emit(arith.ConstantOp(DenseIntOrFPElementsAttr(shape_t, BytesAttr(data))))
        return self.emit(tensor.ReshapeOp(x, dims, self.ttype((shape, d))))

    def reduce(self, x: SSAValue, dims: Sequence[int], keepdim: bool, acc: DType,
               init: float | int | bool,
               combine: Callable[[Scalar, SSAValue, SSAValue, DType], SSAValue]) -> SSAValue:
        """Reduce ``x`` over ``dims`` in the accumulator type ``acc`` (result in ``acc``)."""
        shape, d = _spec(x)
        rank = len(shape)
        kept = [i for i in range(rank) if i not in dims]
        out_shape = tuple(shape[i] for i in kept)
        out = self.generic([x], [_map(rank, range(rank))], [self.filled((out_shape, acc), init)],
                           [_map(rank, kept)],
                           [_REDUCTION if i in dims else _PARALLEL for i in range(rank)],
                           lambda s, a: [combine(s, s.convert(a[0], d, acc), a[1], acc)])[0]
        if keepdim:
            out = self.reshape(out, tuple(1 if i in dims else n for i, n in enumerate(shape)))
        return out

    # ---- the ops, by family; each returns the op's results ----

    def op(self, name: str, inputs: Sequence[SSAValue], attrs: dict[str, Any]
           ) -> list[SSAValue]:
        """Lower one op given its Python attribute values (decompositions call this too)."""
        opdef = OPS.get(name)
        if opdef is None:
            raise LinalgLoweringError(name, "is not a pyflame op")
        specs = [_spec(v) for v in inputs]
        out = opdef.check([s for s, _ in specs], [d for _, d in specs], attrs)
        unary = UNARY.get(opdef)
        if unary is not None:
            body, widen = unary
            d, res_d = specs[0][1], out[0][1]
            cd = _wide(d) if widen else d
            return [self.map(inputs, out[0], lambda s, a: s.convert(
                body(s, s.convert(a[0], d, cd), cd, **attrs), cd if res_d is d else res_d,
                res_d))]
        binary = BINARY.get(opdef)
        if binary is not None:
            body, widen = binary
            d = specs[0][1]
            cd = _wide(d) if widen else d
            res_d = out[0][1]
            return [self.map(inputs, out[0], lambda s, a: s.convert(
                body(s, s.convert(a[0], d, cd), s.convert(a[1], d, cd), cd),
                cd if res_d is d else res_d, res_d))]
        logical = LOGICAL.get(opdef)
        if logical is not None:
            return [self.map(inputs, out[0], lambda s, a: logical(
                s, a[0], a[1], specs[0][1], specs[1][1]))]
        rule = RULES.get(opdef)
        if rule is None:
            why = ("is a fused op: run unfuse first" if opdef.family == "fused"
                   else "has no lowering to linalg yet")
            raise LinalgLoweringError(name, why)
        return rule(self, inputs, specs, out, **attrs)


# ---- rules of the non-elementwise ops: (em, inputs, specs, out_specs, **attrs) ----

def _where(em: Emitter, inputs, specs, out, **a):
    return [em.map(inputs, out[0], lambda s, x: s(arith.SelectOp(x[0], x[1], x[2])))]


def _convert(em: Emitter, inputs, specs, out, dtype):
    return [em.convert(inputs[0], dtype)]


def _constant(em: Emitter, inputs, specs, out, value):
    (shape, d), = out
    arr = np.broadcast_to(value.array, shape).astype(d.np)
    if d.category == FLOAT and not np.isfinite(arr.astype(np.float64)).all():
        # xDSL prints non-finite dense floats in a form MLIR rejects: build the
        # bits as integers and bitcast them
        it = _int_bits(d)
        t = TensorType(IntegerType(8 * d.itemsize), list(shape))
        bits = em.emit(arith.ConstantOp(DenseIntOrFPElementsAttr(t, BytesAttr(
            np.ascontiguousarray(arr).view(it).tobytes()))))
        return [em.emit(arith.BitcastOp(bits, tensor_type(shape, d)))]
    data = np.ascontiguousarray(arr)
    if d.is_bool:
        data = data.astype(np.uint8)
    return [em.emit(arith.ConstantOp(DenseIntOrFPElementsAttr(em.ttype((shape, d)),
                                                              BytesAttr(data.tobytes()))))]


def _int_bits(d: DType) -> Any:
    return {2: np.int16, 4: np.int32, 8: np.int64}[d.itemsize]


def _iota(em: Emitter, inputs, specs, out, shape, dim, dtype):
    def body(s: Scalar, a):
        i = s(arith.IndexCastOp(s.index(dim), IntegerType(64)))
        return s.convert(i, int64, dtype)
    return [em.map([], out[0], body)]


def _sum_like(em: Emitter, x: SSAValue, dims, keepdim: bool, out_d: DType) -> SSAValue:
    d = _spec(x)[1]
    acc = _wide(d) if d.category == FLOAT else int64
    r = em.reduce(x, dims, keepdim, acc, 0, _add)
    return em.convert(r, out_d)


def _sum(em: Emitter, inputs, specs, out, dims, keepdim):
    return [_sum_like(em, inputs[0], dims, keepdim, out[0][1])]


def _mean(em: Emitter, inputs, specs, out, dims, keepdim):
    (shape, d), = specs
    acc = _wide(d)
    total = em.reduce(inputs[0], dims, keepdim, acc, 0, _add)
    n = 1
    for i in dims:
        n *= shape[i]
    rs = _spec(total)
    mean = em.map([total], rs, lambda s, a: s(arith.DivfOp(a[0], s.const(n, acc))))
    return [em.convert(mean, d)]


def _extreme(kind: str) -> Callable:
    def rule(em: Emitter, inputs, specs, out, dims, keepdim, ties=None):
        (shape, d), = specs
        if d.category == FLOAT:
            init: float | int | bool = -math.inf if kind == "max" else math.inf
        elif d.is_bool:
            init = kind != "max"
        else:
            info = np.iinfo(d.np)
            init = int(info.min if kind == "max" else info.max)
        combine = _maximum if kind == "max" else _minimum
        return [em.reduce(inputs[0], dims, keepdim, d, init, combine)]
    return rule


def _arg(kind: str) -> Callable:
    def rule(em: Emitter, inputs, specs, out, dim, keepdim):
        (shape, d), = specs
        x = inputs[0]
        if dim is None:  # over the flattened tensor
            n = 1
            for k in shape:
                n *= k
            x, dim, red_shape = em.reshape(x, (n,)), 0, (n,)
        else:
            red_shape = shape
        rank = len(red_shape)
        if rank == 0:  # a scalar: index 0
            return [em.filled(out[0], 0)]
        if d.category == FLOAT:
            init: float | int = -math.inf if kind == "argmax" else math.inf
        else:
            info = np.iinfo(d.np)
            init = int(info.min if kind == "argmax" else info.max)
        kept = [i for i in range(rank) if i != dim]
        o_shape = tuple(red_shape[i] for i in kept)
        better = "gt" if kind == "argmax" else "lt"

        def body(s: Scalar, a):
            v, best, besti = a
            take = _compare(better)(s, v, best, d)
            if d.category == FLOAT:  # the first NaN wins, and stays
                v_nan = s(arith.CmpfOp(v, v, "uno"))
                best_nan = s(arith.CmpfOp(best, best, "uno"))
                new_nan = s(arith.AndIOp(v_nan, s(arith.XOrIOp(best_nan, s.const(True,
                                                                                  bool_)))))
                take = s(arith.OrIOp(take, new_nan))
            i = s(arith.IndexCastOp(s.index(dim), IntegerType(64)))
            return [s(arith.SelectOp(take, v, best)), s(arith.SelectOp(take, i, besti))]

        res = em.generic([x], [_map(rank, range(rank))],
                         [em.filled((o_shape, d), init), em.filled((o_shape, int64), 0)],
                         [_map(rank, kept)] * 2,
                         [_REDUCTION if i == dim else _PARALLEL for i in range(rank)], body)
        return [em.reshape(res[1], out[0][0])]
    return rule


def _reshape(em: Emitter, inputs, specs, out, shape):
    return [em.reshape(inputs[0], tuple(shape))]


def _permute(em: Emitter, inputs, specs, out, perm):
    (shape, d), = out
    inv = [0] * len(perm)
    for j, p in enumerate(perm):
        inv[p] = j
    rank = len(perm)
    return em.generic(inputs, [_map(rank, [inv[i] for i in range(rank)])], [em.empty(out[0])],
                      [_map(rank, range(rank))], [_PARALLEL] * rank, lambda s, a: [a[0]])


def _broadcast_to(em: Emitter, inputs, specs, out, shape):
    return [em.map(inputs, out[0], lambda s, a: a[0])]


def _slice(em: Emitter, inputs, specs, out, start, limit, stride):
    (shape, d), = out
    op = tensor.ExtractSliceOp.from_static_parameters(inputs[0], list(start), list(shape),
                                                      list(stride))
    return [em.emit(op)]


def _concat(em: Emitter, inputs, specs, out, dim):
    (shape, d), = out
    acc = em.empty(out[0])
    off = 0
    for v, (s, _) in zip(inputs, specs):
        offsets = [off if i == dim else 0 for i in range(len(shape))]
        acc = em.emit(tensor.InsertSliceOp.from_static_parameters(v, acc, offsets, list(s)))
        off += s[dim]
    return [acc]


def _split(em: Emitter, inputs, specs, out, sizes, dim):
    (shape, d), = specs
    res, off = [], 0
    for (s, _) in out:
        offsets = [off if i == dim else 0 for i in range(len(shape))]
        res.append(em.emit(tensor.ExtractSliceOp.from_static_parameters(
            inputs[0], offsets, list(s))))
        off += s[dim]
    return res


def _pad(em: Emitter, inputs, specs, out, low, high, interior):
    (shape, d), = specs
    acc = em.filled(out[0], 0)
    return [em.emit(tensor.InsertSliceOp.from_static_parameters(
        inputs[0], acc, list(low), list(shape), [k + 1 for k in interior]))]


def _matmul(em: Emitter, inputs, specs, out, **a):
    (sa, d), (sb, _) = specs
    (so, _), = out
    cd = _wide(d)
    x, y = em.convert(inputs[0], cd), em.convert(inputs[1], cd)
    # loops: out's batch dims, m (lhs 2-D+), k, n (rhs 2-D+): n innermost and
    # contiguous in rhs and out, so the loop nest vectorizes along it
    has_m, has_n = len(sa) > 1, len(sb) > 1
    nb = len(so) - has_m - has_n
    m = nb if has_m else None
    k = nb + has_m
    n = k + 1 if has_n else None
    rank = nb + has_m + 1 + has_n
    batch = so[:nb]

    def batch_exprs(bshape: Shape) -> list[int | None]:
        off = nb - len(bshape)
        return [None if s == 1 and batch[off + i] != 1 else off + i
                for i, s in enumerate(bshape)]

    a_map = batch_exprs(sa[:-2]) + [m, k] if has_m else [k]
    b_map = batch_exprs(sb[:-2]) + [k, n] if has_n else [k]
    o_map = list(range(nb)) + ([m] if has_m else []) + ([n] if has_n else [])
    iters = [_REDUCTION if i == k else _PARALLEL for i in range(rank)]
    init = em.filled((so, cd), 0)
    r = em.generic([x, y], [_map(rank, a_map), _map(rank, b_map)], [init], [_map(rank, o_map)],
                   iters, lambda s, v: [_add(s, v[2], _mul(s, v[0], v[1], cd), cd)])[0]
    return [em.convert(r, d)]


def _shifted_max(em: Emitter, x: SSAValue, dims, of_softmax: bool) -> SSAValue:
    """The max over ``dims`` (kept), replaced by 0 where the reference's
    ``_shift`` does: -inf for softmax, any non-finite value for logsumexp."""
    d = _spec(x)[1]
    m = em.reduce(x, dims, True, d, -math.inf, _maximum)

    def body(s: Scalar, a):
        v = a[0]
        if of_softmax:
            bad = s(arith.CmpfOp(v, s.const(-math.inf, d), "oeq"))
        else:
            bad = s(arith.CmpfOp(s(mathd.AbsFOp(v)), s.const(math.inf, d), "ueq"))
        return s(arith.SelectOp(bad, s.const(0, d), v))
    return em.map([m], _spec(m), body)


def _exp_sum(em: Emitter, x: SSAValue, shift: SSAValue, dims) -> SSAValue:
    shape, d = _spec(x)
    e = em.map([x, shift], (shape, d), lambda s, a: s(mathd.ExpOp(s(arith.SubfOp(a[0], a[1])))))
    return e, em.reduce(e, dims, True, d, 0, _add)


def _softmax(em: Emitter, inputs, specs, out, dim):
    (shape, d), = specs
    x = em.convert(inputs[0], _wide(d))
    e, total = _exp_sum(em, x, _shifted_max(em, x, (dim,), True), (dim,))
    r = em.map([e, total], _spec(e), lambda s, a: s(arith.DivfOp(a[0], a[1])))
    return [em.convert(r, d)]


def _log_softmax(em: Emitter, inputs, specs, out, dim):
    (shape, d), = specs
    x = em.convert(inputs[0], _wide(d))
    m = _shifted_max(em, x, (dim,), True)
    _, total = _exp_sum(em, x, m, (dim,))
    r = em.map([x, m, total], _spec(x), lambda s, a: s(arith.SubfOp(
        s(arith.SubfOp(a[0], a[1])), s(mathd.LogOp(a[2])))))
    return [em.convert(r, d)]


def _logsumexp(em: Emitter, inputs, specs, out, dims, keepdim):
    (shape, d), = specs
    x = em.convert(inputs[0], _wide(d))
    m = _shifted_max(em, x, dims, False)
    _, total = _exp_sum(em, x, m, dims)
    r = em.map([total, m], _spec(m), lambda s, a: s(arith.AddfOp(s(mathd.LogOp(a[0])), a[1])))
    return [em.convert(em.reshape(r, out[0][0]), d)]


# ---- indexing (dialects/indexing.py): gather and scatter_add ----

def _clamped_index(s: Scalar, v: SSAValue, n: int) -> SSAValue:
    """An index value as ``index``, clamped into ``[0, n)`` so that no read
    leaves the tensor; the result is never returned for a bad index: the
    ``check-indices`` pass's counts make the compile driver raise instead."""
    i = s(arith.IndexCastOp(v, IndexType()))
    lo = s(arith.ConstantOp(IntegerAttr(0, IndexType())))
    hi = s(arith.ConstantOp(IntegerAttr(max(n - 1, 0), IndexType())))
    return s(arith.MinSIOp(s(arith.MaxSIOp(i, lo)), hi))


def _gather(em: Emitter, inputs, specs, out, dim):
    """One parallel generic over the index: ``tensor.extract`` of the input at
    the index's coordinates with ``dim`` replaced by the index value."""
    (x, index), ((xshape, d), (ishape, _)) = inputs, specs
    rank = len(ishape)
    if rank == 0:
        return [em.map([x], out[0], lambda s, a: a[0])]

    def body(s: Scalar, a):
        coords = [s.index(k) for k in range(rank)]
        coords[dim] = _clamped_index(s, a[0], xshape[dim])
        return [s(tensor.ExtractOp(x, coords, em.ttype(((), d)).get_element_type()))]
    ident = _map(rank, range(rank))
    return em.generic([index], [ident], [em.empty(out[0])], [ident], [_PARALLEL] * rank, body)


def _scatter_add(em: Emitter, inputs, specs, out, dim):
    """A generic over the output and the index positions along ``dim`` (a
    reduction): each output element adds the sources whose index names it,
    O(numel * index.shape[dim]). Index and src are zero-padded to the input's
    sizes in the other dims (a zero src adds nothing)."""
    (x, index, src), ((xshape, d), (ishape, idt), _) = inputs, specs
    rank = len(xshape)
    if rank == 0:
        return [em.map([x, src], out[0], lambda s, a: BINARY[OPS["add"]][0](s, a[0], a[1], d))]
    high = tuple(0 if k == dim else n - m for k, (n, m) in enumerate(zip(xshape, ishape)))
    if any(high):
        pad = {"low": (0,) * rank, "high": high, "interior": (0,) * rank}
        index, src = em.op("pad", [index], pad)[0], em.op("pad", [src], pad)[0]
    acc = em.map([x], out[0], lambda s, a: a[0])  # a fresh tensor: inputs are never written
    ins_map = _map(rank + 1, [rank if k == dim else k for k in range(rank)])
    add = BINARY[OPS["add"]][0]

    def body(s: Scalar, a):
        i, v, total = a
        here = s(arith.IndexCastOp(s.index(dim), IntegerType(64)))
        hit = s(arith.CmpiOp(s.convert(i, idt, int64), here, "eq"))
        return [s(arith.SelectOp(hit, add(s, total, v, d), total))]
    return em.generic([index, src], [ins_map, ins_map], [acc], [_map(rank + 1, range(rank))],
                      [_PARALLEL] * rank + [_REDUCTION], body)


RULES: dict[OpDef, Callable[..., list[SSAValue]]] = by_op({
    "where": _where, "convert": _convert, "constant": _constant, "iota": _iota,
    "sum": _sum, "mean": _mean, "max": _extreme("max"), "min": _extreme("min"),
    "argmax": _arg("argmax"), "argmin": _arg("argmin"),
    "reshape": _reshape, "permute": _permute, "broadcast_to": _broadcast_to,
    "slice": _slice, "concat": _concat, "split": _split, "pad": _pad,
    "matmul": _matmul, "softmax": _softmax, "log_softmax": _log_softmax,
    "logsumexp": _logsumexp,
    "gather": _gather, "scatter_add": _scatter_add,
})


# ---- reductions, scans and sorting (dialects/reduction.py prod, scan.py, sorting.py) ----

def _prod(em: Emitter, inputs, specs, out, dims, keepdim):
    d = specs[0][1]
    acc = _wide(d) if d.category == FLOAT else int64
    return [em.convert(em.reduce(inputs[0], dims, keepdim, acc, 1, _mul), out[0][1])]


class _EmitterBuilder:
    """The builder interface of ``dialects/ad.py`` over an ``Emitter``: an op's
    ``decomposition`` lowered through the other ops' rules."""

    def __init__(self, em: Emitter):
        self.em = em

    def shape(self, v: SSAValue) -> Shape:
        return _spec(v)[0]

    def dtype(self, v: SSAValue) -> DType:
        return _spec(v)[1]

    def op(self, name: str, *inputs: SSAValue, **attrs: Any) -> Any:
        res = self.em.op(name, inputs, attrs)
        return res[0] if OPS[name].num_results == 1 else res

    def scalar(self, value: float, like: SSAValue) -> SSAValue:
        d = self.dtype(like)
        return self.op("constant", value=DenseValue(np.asarray(value, dtype=d.np), (), d))

    def __getattr__(self, name: str) -> Any:
        if name in OPS:
            return lambda *inputs, **attrs: self.op(name, *inputs, **attrs)
        raise AttributeError(name)


def _log_depth_scan(name: str) -> Callable[..., list[SSAValue]]:
    """A scan as ``dialects/scan.py: SCANS``: Hillis-Steele steps of the other
    ops' rules (no linalg named op scans; O(n log n) work, log depth)."""
    decomposition = SCANS[name]

    def rule(em: Emitter, inputs, specs, out, **attrs):
        return list(decomposition(_EmitterBuilder(em), list(inputs), **attrs))
    return rule


def _scatter_add_along(em: Emitter, inputs, specs, out, dim, size):
    """``scatter_add`` into zeros of the result's shape (O(numel * n): the
    scatter's own rule)."""
    (src, index), (_, ispec) = inputs, specs
    zeros = em.filled(out[0], 0)
    return _scatter_add(em, [zeros, index, src], [out[0], ispec, specs[0]], out, dim)


def _sort(em: Emitter, inputs, specs, out, dim, descending):
    """A stable sort as a bitonic network of log2(N) (log2(N) + 1) / 2 stages
    (N: n rounded up to a power of two), each one parallel ``linalg.generic``
    where place i compares the element it holds with the one at place i ^ j
    and keeps the one its place asks for. The network sorts a permutation
    (iota at first) by the key (value, position), a total order: NaN is the
    largest value, ties go to the lower position, the N - n padding places
    sort after every element. O(N log^2 N) work in O(log^2 N) ops (unrolled:
    an ``scf.for`` carrying the permutation would need bufferization to
    return a fresh buffer from the loop); the values are gathered at the end."""
    (x,), ((shape, d),) = inputs, specs
    rank, n = len(shape), shape[dim]
    if n <= 1:
        return [x, em.filled(out[1], 0)]
    size = 1 << (n - 1).bit_length()
    padded = tuple(size if k == dim else s_ for k, s_ in enumerate(shape))
    if size != n:
        x = em.op("pad", [x], {"low": (0,) * rank, "interior": (0,) * rank,
                               "high": tuple(size - n if k == dim else 0 for k in range(rank))})[0]
    elem = em.ttype(((), d)).get_element_type()
    less_than, equal = _compare("lt"), _compare("eq")

    def stage(perm: SSAValue, block: int, stride: int) -> SSAValue:
        def exchange(s: Scalar, a):
            mine = a[0]
            here = s.index(dim)
            coords = [s.index(k) for k in range(rank)]
            there = s(arith.XOrIOp(here, s(arith.ConstantOp(IntegerAttr(stride, IndexType())))))
            theirs = s(tensor.ExtractOp(perm, [*coords[:dim], there, *coords[dim + 1:]], i64))

            def value(p: SSAValue) -> SSAValue:
                at = s(arith.IndexCastOp(p, IndexType()))
                v = s(tensor.ExtractOp(x, [*coords[:dim], at, *coords[dim + 1:]], elem))
                return s(arith.TruncIOp(v, IntegerType(1))) if elem == _I8 else v
            a_, b_ = value(mine), value(theirs)
            first, second = (b_, a_) if descending else (a_, b_)
            less = less_than(s, first, second, d)
            same = equal(s, a_, b_, d)
            if d.category == FLOAT:  # NaN after every number, NaNs equal
                nan_a, nan_b = (s(arith.CmpfOp(v, v, "uno")) for v in (first, second))
                less = s(arith.OrIOp(less, s(arith.AndIOp(nan_b, s(arith.XOrIOp(
                    nan_a, s.const(True, bool_)))))))
                same = s(arith.OrIOp(same, s(arith.AndIOp(nan_a, nan_b))))
            lower_pos = s(arith.CmpiOp(mine, theirs, "slt"))
            before = s(arith.OrIOp(less, s(arith.AndIOp(same, lower_pos))))
            limit = s.const(n, int64)
            padding = s(arith.OrIOp(s(arith.CmpiOp(mine, limit, "sge")),
                                    s(arith.CmpiOp(theirs, limit, "sge"))))
            before = s(arith.SelectOp(padding, lower_pos, before))
            # this place wants the earlier of the two: the lower place of an
            # ascending block (i & block == 0) or the upper place of a descending one
            lower_place = s(arith.CmpiOp(here, there, "ult"))
            ascending = s(arith.CmpiOp(s(arith.AndIOp(here, s(arith.ConstantOp(
                IntegerAttr(block, IndexType()))))), s(arith.ConstantOp(
                    IntegerAttr(0, IndexType()))), "eq"))
            wants_first = s(arith.CmpiOp(lower_place, ascending, "eq"))
            keep = s(arith.CmpiOp(before, wants_first, "eq"))
            return [s(arith.SelectOp(keep, mine, theirs))]
        ident = _map(rank, range(rank))
        return em.generic([perm], [ident], [em.empty((padded, int64))], [ident],
                          [_PARALLEL] * rank, exchange)[0]

    perm = em.op("iota", [], {"shape": padded, "dim": dim, "dtype": int64})[0]
    for p in range(1, size.bit_length()):
        for q in range(p - 1, -1, -1):
            perm = stage(perm, 1 << p, 1 << q)
    if size != n:
        perm = em.op("slice", [perm], {"start": (0,) * rank, "limit": tuple(shape),
                                        "stride": (1,) * rank})[0]
    values = _gather(em, [x, perm], [(padded, d), (shape, int64)], [out[0]], dim)[0]
    return [values, perm]


def _decomposed(name: str) -> Callable[..., list[SSAValue]]:
    """An op without a linalg form of its own (max pooling, gelu_grad): its table
    decomposition through the other ops' rules."""
    decomposition = OPS[name].decomposition
    assert decomposition is not None, name

    def rule(em: Emitter, inputs, specs, out, **attrs):
        return list(decomposition(_EmitterBuilder(em), list(inputs), **attrs))
    return rule


RULES.update(by_op({n: _decomposed(n) for n in ("max_pool", "max_pool_grad", "gelu_grad")}))
RULES.update(by_op({"prod": _prod, "sort": _sort, "select_along": _gather,
                    "scatter_add_along": _scatter_add_along,
                    **{n: _log_depth_scan(n) for n in SCANS}}))


# ---- matrix decompositions and solvers (dialects/decomp.py) ----

def _no_lapack(name: str) -> Callable[..., list[SSAValue]]:
    def rule(em: Emitter, inputs, specs, out, **attrs):
        raise LinalgLoweringError(name, "is not supported by the mlir backend (linalg has no "
                                        "matrix factorizations); run it on the reference "
                                        "backend")
    return rule


RULES.update(by_op({n: _no_lapack(n) for n in DECOMPOSITIONS}))


def unsupported_ops(module: ModuleOp) -> list[str]:
    """Names of the ops in ``module`` this lowering has no rule for (fused ops
    and regions among them: the ``unfuse`` pass expands them first)."""
    known = set(UNARY) | set(BINARY) | set(LOGICAL) | set(RULES)
    return sorted({op.name for op in module.walk()
                   if isinstance(op, FusedOp) or (isinstance(op, PyflameOp)
                                                  and op.OPDEF not in known)})


def lower_module(module: ModuleOp, bool_bits: int = 1, rational_tanh: bool = False) -> None:
    """Rewrite every ``pyflame`` op of ``module`` (fused regions already
    inlined) into upstream ops, in place; bool tensors become tensors of
    ``bool_bits``-bit integers (function signatures included); with
    ``rational_tanh``, f32 tanh is a vectorizable rational approximation."""
    for op in module.walk():
        if op.name in ("pyflame.vjp", "pyflame.jvp"):
            raise LinalgLoweringError(op.name[len("pyflame."):],
                                      "must be expanded first (run pyflame-autodiff)")
    narrow = narrow_int_use(module)  # (bools are stored as i8 here, and uint8 needs unsigned ops)
    if narrow is not None:
        raise LinalgLoweringError(narrow[0].removeprefix("pyflame."),
                                  f"{narrow[1].name} tensors are not supported by the mlir "
                                  "backend yet (the reference backend runs them; cast to "
                                  "int32 first)")
    storage = Emitter(bool_bits)
    for fn in [op for op in module.body.block.ops if isinstance(op, func.FuncOp)]:
        if bool_bits != 1:
            for block in fn.body.blocks:
                for arg in list(block.args):
                    if arg.type != storage.ttype(_spec(arg)):
                        Rewriter.replace_value_with_new_type(arg, storage.ttype(_spec(arg)))
            ft = fn.function_type
            fn.function_type = FunctionType.from_lists(
                [storage.ttype(spec_of_type(t, "argument")) for t in ft.inputs.data],
                [storage.ttype(spec_of_type(t, "result")) for t in ft.outputs.data])
        for block in fn.body.blocks:
            for op in list(block.ops):
                if isinstance(op, FusedOp):
                    raise LinalgLoweringError("fused", "regions must be inlined first "
                                              "(run unfuse)")
                if not isinstance(op, PyflameOp):
                    continue
                em = Emitter(bool_bits, rational_tanh)
                results = em.op(op.OPDEF.name, list(op.operands), op.py_attrs())
                for old, new in zip(op.results, results, strict=True):
                    if storage.ttype(_spec(old)) != new.type:
                        raise LinalgLoweringError(op.OPDEF.name, f"emitted {new.type}, "
                                                  f"expected {old.type}")
                block.insert_ops_before(em.ops, op)
                for old, new in zip(op.results, results):
                    old.replace_all_uses_with(new)
                block.erase_op(op)


__all__ = ["LOWERING_VERSION", "LinalgLoweringError", "lower_module", "unsupported_ops"]

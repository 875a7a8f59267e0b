"""The builder: ``Emit`` appends csl/arith/scf ops to a block, with helpers for
the idioms the lowering generates (DSDs, DSD builtins, loops, guards)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from xdsl.dialects import arith, csl, memref, scf
from xdsl.dialects.builtin import (
    AffineMapAttr,
    Float16Type,
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    i16,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from ...dialects import csl_ext
from ...dialects.wse_target import DSD_BUILTINS, HALF_BUILTINS, HALF_FORMS
from .host import CslLoweringError

if TYPE_CHECKING:
    from ..to_csl import _Lowerer

F32 = Float32Type()
F16 = Float16Type()


def _i(v: int) -> arith.ConstantOp:
    return arith.ConstantOp(IntegerAttr(int(v), i16))


class Emit:
    """Appends ops to a block; small helpers for the csl idioms we generate."""

    def __init__(self, block: Block, low: _Lowerer):
        self.block, self.low = block, low

    def add(self, op: Operation) -> Any:
        self.block.add_op(op)
        return op.results[0] if op.results else op

    # -- scalars --
    def i16(self, v: int | SSAValue) -> SSAValue:
        return v if isinstance(v, SSAValue) else self.add(_i(v))

    def f32(self, v: float) -> SSAValue:
        return self.add(arith.ConstantOp(FloatAttr(float(v), F32)))

    def iadd(self, a, b) -> SSAValue:
        if isinstance(b, int) and b == 0:
            return self.i16(a)
        return self.add(arith.AddiOp(self.i16(a), self.i16(b)))

    def isub(self, a, b) -> SSAValue:
        return self.add(arith.SubiOp(self.i16(a), self.i16(b)))

    def imul(self, a, b) -> SSAValue:
        if isinstance(b, int) and b == 1:
            return self.i16(a)
        return self.add(arith.MuliOp(self.i16(a), self.i16(b)))

    def icmp(self, pred: str, a, b) -> SSAValue:
        return self.add(arith.CmpiOp(self.i16(a), self.i16(b), pred))

    def select(self, c: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.add(arith.SelectOp(c, a, b))

    def imin(self, a, b) -> SSAValue:
        a, b = self.i16(a), self.i16(b)
        return self.select(self.icmp("slt", a, b), a, b)

    def fbin(self, cls: type, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.add(cls(a, b))

    def fcmp(self, pred: str, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.add(arith.CmpfOp(a, b, pred))

    def index(self, v: SSAValue) -> SSAValue:
        return self.add(arith.IndexCastOp(v, IndexType()))

    def load(self, buf: SSAValue, idx) -> SSAValue:
        return self.add(memref.LoadOp.get(buf, [self.index(self.i16(idx))]))

    def store(self, v: SSAValue, buf: SSAValue, idx) -> None:
        self.add(memref.StoreOp.get(v, buf, [self.index(self.i16(idx))]))

    # -- DSDs --
    def dsd(self, buf: SSAValue, length: int | SSAValue, offset: int = 0,
            stride: int = 1) -> SSAValue:
        """``mem1d_dsd`` over buf[offset + stride * i], i < length."""
        expr = AffineExpr.dimension(0) * stride + offset if (stride, offset) != (1, 0) \
            else AffineExpr.dimension(0)
        n = self.i16(length) if isinstance(length, SSAValue) else self.i16(max(int(length), 1))
        op = csl.GetMemDsdOp.build(
            operands=[buf, [n]], result_types=[csl.DsdType(csl.DsdKind.mem1d_dsd)],
            properties={"tensor_access": AffineMapAttr(AffineMap(1, 0, (expr,)))})
        return self.add(op)

    def shift_dsd(self, d: SSAValue, offset) -> SSAValue:
        if isinstance(offset, int) and offset == 0:
            return d
        # the offset counts elements of the DSD's own type (f16 tiles: 2 bytes each)
        return self.add(csl.IncrementDsdOffsetOp.build(
            operands=[d, self.i16(offset)], properties={"elem_type": dsd_elem(d) or F32},
            result_types=[csl.DsdType(csl.DsdKind.mem1d_dsd)]))

    def set_len(self, d: SSAValue, n) -> SSAValue:
        # DSD lengths are u16 (``@set_dsd_length(d, @bitcast(u16, n))`` as the SDK writes it)
        length = self.add(arith.BitcastOp(self.i16(n), csl.u16_value))
        return self.add(csl.SetDsdLengthOp.build(
            operands=[d, length], result_types=[csl.DsdType(csl.DsdKind.mem1d_dsd)]))

    def fab(self, kind: csl.DsdKind, n: int | SSAValue, color: SSAValue, queue: int) -> SSAValue:
        return self.add(csl_ext.GetFabDsdOp(kind, self.i16(n), color, queue))

    def builtin(self, name: str, *args: SSAValue, then: tuple[str, int] | None = None,
                asynchronous: bool = False) -> None:
        """A DSD builtin; ``then=("activate"|"unblock", task id)`` makes it asynchronous
        with that completion action (``asynchronous`` alone: no action)."""
        name, args = _precision(self, name, args)
        cls = _BUILTIN[name]
        op = cls.build(operands=[list(args)])
        if then is not None or asynchronous:
            action, tid = then if then is not None else ("", 0)
            op.attributes[csl_ext.ASYNC_ATTR] = csl_ext.AsyncAttr.get(
                action, csl.TaskKind.LOCAL, tid)
        self.add(op)

    def load_var(self, v: SSAValue) -> SSAValue:
        return self.add(csl.LoadVarOp(v))

    def store_var(self, v: SSAValue, value) -> None:
        self.add(csl.StoreVarOp(v, self.i16(value)))

    def task_state(self, verb: str, tid: int) -> None:
        cls = {"activate": csl.ActivateOp, "block": csl_ext.BlockOp,
               "unblock": csl_ext.UnblockOp}[verb]
        self.add(cls(tid, csl.TaskKind.LOCAL))

    # -- control flow --
    @contextlib.contextmanager
    def loop(self, lb, ub, step: int = 1) -> Iterator[tuple[SSAValue, Emit]]:
        body = Block(arg_types=[i16])
        inner = Emit(body, self.low)
        yield body.args[0], inner
        body.add_op(scf.YieldOp())
        self.add(scf.ForOp(self.i16(lb), self.i16(ub), self.i16(step), [], body))

    @contextlib.contextmanager
    def when(self, cond: SSAValue | None) -> Iterator[Emit]:
        if cond is None:
            yield self
            return
        then = Block()
        inner = Emit(then, self.low)
        yield inner
        then.add_op(scf.YieldOp())
        self.add(scf.IfOp(cond, [], Region(then)))

    @contextlib.contextmanager
    def branch(self, cond: SSAValue) -> Iterator[tuple[Emit, Emit]]:
        then, other = Block(), Block()
        yield Emit(then, self.low), Emit(other, self.low)
        then.add_op(scf.YieldOp())
        other.add_op(scf.YieldOp())
        self.add(scf.IfOp(cond, [], Region(then), Region(other)))

    def math(self, fn: str, x: SSAValue) -> SSAValue:
        return self.add(csl.MemberCallOp(f"{fn}_f32", F32, self.low.math_lib(), [x]))



# every DSD builtin the lowering emits, by name (from the target's records)
_BUILTIN: dict[str, type[csl.BuiltinDsdOp]] = {
    name: getattr(csl, name.capitalize() + "Op") for name in sorted(DSD_BUILTINS | HALF_BUILTINS)}


# ---- half precision (issue #16): one f32 builtin name, the form the operands need ----
# The per-op code names the f32 builtin; ``Emit.builtin`` picks the form from the
# element types of the operands (a DSD's is its array's, read off the op that made
# it; a fabric DSD carries the sender's bits and follows the memory operands; a float
# constant takes the type of the others). Forms and operand types are the SDK's
# (``xdsl.dialects.csl`` SIGNATURES): ``@fmach(f16, f16, f16, f16 scalar)``,
# ``@fmachs(f32, f32, f16, f16 scalar)`` (16-bit multiply, 32-bit add),
# ``@fh2s``/``@fs2h`` the conversions.


def dsd_elem(v: SSAValue) -> Attribute | None:
    """Element type of a memory DSD (None: a fabric DSD)."""
    op = v.owner
    while isinstance(op, csl.IncrementDsdOffsetOp | csl.SetDsdLengthOp
                     | csl.SetDsdStrideOp):
        op = op.op.owner
    if isinstance(op, csl.GetMemDsdOp):
        t = op.base_addr.type
        return t.element_type if isinstance(t, MemRefType) else None
    return None


def _elem(v: SSAValue) -> Attribute | None:
    """The element type an operand imposes (None: follows the others)."""
    if isinstance(v.type, csl.DsdType):
        return dsd_elem(v)
    if isinstance(v.owner, arith.ConstantOp) and isinstance(v.type, Float32Type | Float16Type):
        return None  # a float constant is written in whatever type the op takes
    return v.type


def _as(e: Emit, v: SSAValue, t: Attribute) -> SSAValue:
    """A float constant operand in type t (others are already of their type)."""
    if isinstance(v.owner, arith.ConstantOp) and isinstance(v.type, Float32Type | Float16Type) \
            and v.type != t:
        return e.add(arith.ConstantOp(FloatAttr(float(v.owner.value.value.data), t)))
    return v


def _precision(e: Emit, name: str, args: tuple[SSAValue, ...]
               ) -> tuple[str, tuple[SSAValue, ...]]:
    if name not in HALF_FORMS:
        return name, args
    dest, *srcs = (_elem(a) for a in args)
    known = {t for t in (dest, *srcs) if t is not None}
    if known <= {F32}:
        return name, tuple(_as(e, a, F32) for a in args)
    if known == {F16}:
        return HALF_FORMS[name], tuple(_as(e, a, F16) for a in args)
    if name == "fmovs" and dest == F16 and srcs == [F32]:
        return "fs2h", args
    if name == "fmovs" and dest == F32 and srcs == [F16]:
        return "fh2s", args
    if name == "fmacs" and dest == F32 and srcs[0] in (F32, None) and srcs[1] == F16 \
            and srcs[2] in (F16, None):  # f16 products accumulated in f32
        return "fmachs", (args[0], args[1], args[2], _as(e, args[3], F16))
    raise CslLoweringError(f"csl backend: @{name} with operands of element types "
                           f"{[str(t) if t else 'any' for t in (dest, *srcs)]}: no DSD builtin "
                           "mixes f16 and f32 that way (only @fh2s/@fs2h, @fmachs)")


def _i_op(e: Emit, v: int) -> SSAValue:
    return e.add(_i(v))


def _pick(e: Emit, idx: SSAValue, cols: list[SSAValue]) -> SSAValue:
    out = cols[-1]
    for k in range(len(cols) - 2, -1, -1):
        out = e.select(e.icmp("eq", idx, k), cols[k], out)
    return out


def _fmax(e: Emit, a: SSAValue, b: SSAValue) -> SSAValue:
    """max(a, b) propagating NaN (numpy's maximum)."""
    m = e.select(e.fcmp("ogt", b, a), b, a)
    return e.select(e.fcmp("une", b, b), b, m)


def _fmin(e: Emit, a: SSAValue, b: SSAValue) -> SSAValue:
    m = e.select(e.fcmp("olt", b, a), b, a)
    return e.select(e.fcmp("une", b, b), b, m)



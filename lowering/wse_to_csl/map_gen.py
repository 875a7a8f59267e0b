"""Elementwise code generation for ``wse.map``: whole-tile DSD builtins where the
target's record of the function names one, loops of DSD ops over rows or columns
for broadcast operands, scalar loops (``arith``, ``<math>`` calls) otherwise."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from xdsl.dialects import arith
from xdsl.ir import SSAValue

from ...dialects import wse
from ...dialects.wse_target import WSE_FNS
from ..wse_memory import is_immediate
from .builder import F32, Emit, _fmax, _fmin
from .host import CslLoweringError

if TYPE_CHECKING:
    from ..to_csl import _Lowerer


class _MapGen:
    """Code for one ``wse.map``: whole-tile DSD ops where a builtin exists,
    loops of DSD ops over rows/columns for broadcasts, scalar loops otherwise."""

    def __init__(self, low: _Lowerer, e: Emit, op: wse.MapOp):
        self.low, self.e, self.op = low, e, op
        self.fn = op.fn.data
        grid = low.grid
        t = op.result.type
        tile = t.tile(grid)
        # rank >= 3 tiles (whole tensors: only full-shape operands) as rows of the last dim
        self.r0, self.r1 = (tile + (1, 1))[:2] if len(tile) < 2 else (
            math.prod(tile[:-1]), tile[-1])
        if len(tile) == 1:
            self.r0, self.r1 = 1, tile[0]
        if not tile:
            self.r0 = self.r1 = 1
        self.rank = len(tile)
        self.dst = low.buf(op.result)
        self.kinds: list[str] = []
        self.vals: list[Any] = []
        for v in op.inputs:
            kind, val = self._classify(v, tile)
            self.kinds.append(kind)
            self.vals.append(val)
        self.result = t

    def _classify(self, v: SSAValue, rtile: tuple[int, ...]) -> tuple[str, Any]:
        if is_immediate(v):
            return "imm", v.owner.scalar
        grid = self.low.grid
        tile = v.type.tile(grid)
        buf = self.low.buf(v)
        rank = len(rtile)
        full = (1,) * (rank - len(tile)) + tuple(tile)  # right-aligned, as broadcasting
        if max(1, math.prod(tile)) == 1 and max(1, math.prod(rtile)) > 1:
            return "scalar", buf
        if full == tuple(rtile):
            return "full", buf
        if rank == 2 and full == (1, rtile[1]):
            return "row", buf
        if rank == 2 and full == (rtile[0], 1):
            return "col", buf
        raise CslLoweringError(f"csl backend: unsupported broadcast of tile {tile} to {rtile}")

    def emit(self) -> None:
        fn, kinds = self.fn, self.kinds
        dsd_ok = WSE_FNS[fn].dsd is not None
        if dsd_ok and not all(k in ("imm", "scalar") for k in kinds):
            if all(k in ("full", "imm", "scalar") for k in kinds):
                self._dsd_whole()
                return
            self._dsd_loop()
            return
        self._scalar_loop()

    # operands in one DSD op over a range of the tile
    def _scalar_of(self, e: Emit, i: int) -> SSAValue:
        k, v = self.kinds[i], self.vals[i]
        return e.f32(v) if k == "imm" else e.load(v, 0)

    def _apply(self, e: Emit, dst: SSAValue, srcs: list[SSAValue]) -> None:
        """One DSD builtin: dst = fn(srcs...) with DSD or f32 scalar operands."""
        fn = WSE_FNS[self.fn]
        name = fn.dsd
        assert name is not None
        if fn.form == "unary":
            e.builtin(name, dst, srcs[0])
        elif fn.form == "with_zero":
            e.builtin(name, dst, srcs[0], e.f32(0.0))
        elif fn.form == "self":
            e.builtin(name, dst, srcs[0], srcs[0])
        elif fn.form == "one_minus":
            e.builtin(name, dst, e.f32(1.0), srcs[0])
        else:
            a, b = srcs
            if a.type == F32 and fn.name != "sub":  # commutative: keep the scalar second
                a, b = b, a
            # (D, D, D), (D, D, f32) and, for s - v, (D, f32, D) are valid signatures
            e.builtin(name, dst, a, b)

    def _dsd_whole(self) -> None:
        e = self.e
        n = self.r0 * self.r1
        dst = e.dsd(self.dst, n)
        srcs = [e.dsd(v, n) if k == "full" else self._scalar_of(e, i)
                for i, (k, v) in enumerate(zip(self.kinds, self.vals))]
        self._apply(e, dst, srcs)

    def _dsd_loop(self) -> None:
        e = self.e
        r0, r1 = self.r0, self.r1
        has_col, has_row = "col" in self.kinds, "row" in self.kinds
        # loop over rows (vectors of r1) unless only columns broadcast and rows are more;
        # a broadcast vector along the loop's vectors is one DSD, across them one
        # element per iteration
        if has_col or not (has_row and r0 > r1):
            count, along, across = r0, "row", "col"

            def full(v: SSAValue) -> SSAValue:
                return e.dsd(v, r1)
            vector = full

            def offset(b: Emit, i: SSAValue) -> SSAValue:
                return b.imul(i, r1)
        else:
            count, along, across = r1, "col", "row"

            def full(v: SSAValue) -> SSAValue:
                return e.dsd(v, r0, 0, r1)

            def vector(v: SSAValue) -> SSAValue:
                return e.dsd(v, r0)

            def offset(b: Emit, i: SSAValue) -> SSAValue:
                return i
        base_dst = full(self.dst)
        bases = [full(v) if k == "full" else vector(v) if k == along else None
                 for k, v in zip(self.kinds, self.vals)]
        with e.loop(0, count) as (i, b):
            off = offset(b, i)
            srcs = []
            for idx, (k, v) in enumerate(zip(self.kinds, self.vals)):
                if k == "full":
                    srcs.append(b.shift_dsd(bases[idx], off))
                elif k == along:
                    srcs.append(bases[idx])
                elif k == across:
                    srcs.append(b.load(v, i))
                else:
                    srcs.append(self._scalar_of(b, idx))
            self._fix_scalars(b, b.shift_dsd(base_dst, off), srcs)

    def _fix_scalars(self, e: Emit, dst: SSAValue, srcs: list[SSAValue]) -> None:
        """All-scalar operands in a row: compute the scalar, then fill the row."""
        if all(s.type == F32 for s in srcs):
            e.builtin("fmovs", dst, _scalar_fn(e, self.fn, srcs))
        else:
            self._apply(e, dst, srcs)

    def _scalar_loop(self) -> None:
        """for i < r0, j < r1: dst[i, j] = fn(operands) with arith / math_lib."""
        e = self.e
        r0, r1 = self.r0, self.r1
        t = self.result
        rows = self.low.extent(e, t, 0) if self.rank == 2 else 1
        cols = self.low.extent(e, t, self.rank - 1) if self.rank >= 1 else 1

        def body(b: Emit, i, j, flat) -> None:
            args = []
            for k, v in zip(self.kinds, self.vals):
                if k == "imm":
                    args.append(b.f32(v))
                elif k == "scalar":
                    args.append(b.load(v, 0))
                elif k == "full":
                    args.append(b.load(v, flat))
                elif k == "row":
                    args.append(b.load(v, j))
                else:
                    args.append(b.load(v, i))
            b.store(_scalar_fn(b, self.fn, args), self.dst, flat)

        if self.rank <= 1 or r0 == 1:
            with e.loop(0, cols) as (j, b):
                body(b, 0, j, j)
        else:
            with e.loop(0, rows) as (i, b):
                base = b.imul(i, r1)
                with b.loop(0, cols) as (j, c):
                    body(c, i, j, c.iadd(base, j))


_CMP = {"gt": "ogt", "ge": "oge", "lt": "olt", "le": "ole", "eq": "oeq", "ne": "une"}


def _scalar_fn(e: Emit, fn: str, a: list[SSAValue]) -> SSAValue:
    """The scalar form of an elementwise fn (f32 in, f32 out; masks are 0.0/1.0)."""
    one, zero = (lambda: e.f32(1.0)), (lambda: e.f32(0.0))
    x = a[0]
    if fn in ("copy", "from_mask"):
        return x
    if fn == "neg":
        return e.fbin(arith.MulfOp, x, e.f32(-1.0))
    if fn == "abs":
        return e.select(e.fcmp("olt", x, zero()), e.fbin(arith.MulfOp, x, e.f32(-1.0)), x)
    if fn == "relu":
        return _fmax(e, x, zero())
    if fn == "square":
        return e.fbin(arith.MulfOp, x, x)
    if WSE_FNS[fn].math == fn:  # the <math> function of the same name (the record says)
        return e.math(fn, x)
    if fn == "rsqrt":
        return e.fbin(arith.DivfOp, one(), e.math("sqrt", x))
    if fn == "reciprocal":
        return e.fbin(arith.DivfOp, one(), x)
    if fn == "log1p":
        # log(u) * (x / (u - 1)) with u = fl(1 + x) (Goldberg's trick: the quotient
        # cancels the rounding of 1 + x, so tiny x keeps its digits); x where u == 1,
        # log(u) where 1 + x rounds to x (|x| >= 2^24; at +inf the quotient is NaN)
        u = e.fbin(arith.AddfOp, one(), x)
        log_u = e.math("log", u)
        r = e.fbin(arith.MulfOp, log_u, e.fbin(arith.DivfOp, x, e.fbin(arith.SubfOp, u, one())))
        return e.select(e.fcmp("oeq", u, one()), x, e.select(e.fcmp("oeq", u, x), log_u, r))
    if fn == "sigmoid":
        ex = e.math("exp", e.fbin(arith.MulfOp, x, e.f32(-1.0)))
        return e.fbin(arith.DivfOp, one(), e.fbin(arith.AddfOp, one(), ex))
    if fn == "sign":
        neg = e.select(e.fcmp("olt", x, zero()), e.f32(-1.0), zero())  # 0 at NaN, PyTorch's
        return e.select(e.fcmp("ogt", x, zero()), one(), neg)
    if fn == "not":
        return e.fbin(arith.SubfOp, one(), x)
    if fn == "to_mask":
        return e.select(e.fcmp("une", x, zero()), one(), zero())
    y = a[1] if len(a) > 1 else None
    if fn == "add":
        return e.fbin(arith.AddfOp, x, y)
    if fn == "sub":
        return e.fbin(arith.SubfOp, x, y)
    if fn in ("mul", "and"):
        return e.fbin(arith.MulfOp, x, y)
    if fn == "div":
        return e.fbin(arith.DivfOp, x, y)
    if fn in ("maximum", "or"):
        return _fmax(e, x, y)
    if fn == "minimum":
        return _fmin(e, x, y)
    if fn in _CMP:
        return e.select(e.fcmp(_CMP[fn], x, y), one(), zero())
    if fn == "select":
        return e.select(e.fcmp("une", x, zero()), a[1], a[2])
    raise CslLoweringError(f"csl backend: no scalar form for elementwise fn {fn!r}")



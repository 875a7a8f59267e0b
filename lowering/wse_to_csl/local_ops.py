"""Per-op PE code for the local ops: constants, reshape, elementwise maps,
reductions, transposes and the local tile matmul."""

from __future__ import annotations

import math

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, i16
from xdsl.ir import Block, SSAValue

from ...dialects import wse
from ..wse_cost import UNROLL_MAX
from ..wse_memory import is_immediate
from .builder import F32, Emit, _fmax
from .map_gen import _MapGen


def _index_const(e: Emit, v: int) -> SSAValue:
    return e.add(arith.ConstantOp(IntegerAttr(v, IndexType())))


def _strides(tile: tuple) -> list[int]:
    """Element strides of a row-major tile."""
    return [math.prod(tile[d + 1:]) for d in range(len(tile))]


class LocalOpsMixin:
    """The local-op half of ``_Lowerer``'s per-op code."""

    def _op_constant(self, e: Emit, op: wse.ConstantOp) -> None:
        if is_immediate(op.result):
            return
        t = op.result.type
        with e.when(self.guard(e, t.layout)) as g:
            g.builtin("fmovs", g.dsd(self.buf(op.result), t.elems(self.grid)), g.f32(op.scalar))

    def _op_reshape(self, e: Emit, op: wse.ReshapeOp) -> None:
        assert self.plan.of[op.result] == self.plan.of[op.input]

    # -- elementwise --
    def _op_map(self, e: Emit, op: wse.MapOp) -> None:
        t = op.result.type
        with e.when(self.guard(e, t.layout)) as g:
            _MapGen(self, g, op).emit()

    # -- reductions --
    def _op_reduce(self, e: Emit, op: wse.ReduceOp) -> None:
        t, r = op.input.type, op.result.type
        kind, dims = op.kind.data, op.reduced
        src, dst = self.buf(op.input), self.buf(op.result)
        with e.when(self.guard(e, t.layout)) as g:
            tile = t.tile(self.grid)
            if not tile:  # a scalar: copy
                g.builtin("fmovs", g.dsd(dst, 1), g.dsd(src, 1))
            elif len(tile) == 1:
                self._reduce_vector(g, kind, src, tile[0], self.extent(g, t, 0), dst)
            elif dims == (1,):
                self._reduce_cols(g, kind, src, tile, self.extent(g, t, 1), dst)
            elif dims == (0,):
                self._reduce_rows(g, kind, src, tile, self.extent(g, t, 0), dst)
            else:
                (scratch,) = self.plan.scratch[op]
                tmp = self.bufs[scratch]
                self._reduce_cols(g, kind, src, tile, self.extent(g, t, 1), tmp)
                self._reduce_vector(g, kind, tmp, tile[0], self.extent(g, t, 0), dst)
        del r

    def _reduce_cols(self, e: Emit, kind: str, src, tile, valid, dst) -> None:
        """dst[i] = op_j src[i, j], j < valid (strided column DSDs)."""
        t0, t1 = tile
        out = e.dsd(dst, t0)
        col0 = e.dsd(src, t0, 0, t1)
        e.builtin("fmovs", out, col0)
        fn = "fadds" if kind == "sum" else "fmaxs"
        with e.loop(1, valid) as (j, b):
            b.builtin(fn, out, out, b.shift_dsd(col0, j))

    def _reduce_rows(self, e: Emit, kind: str, src, tile, valid, dst) -> None:
        """dst[j] = op_i src[i, j], i < valid (contiguous row DSDs)."""
        t0, t1 = tile
        out = e.dsd(dst, t1)
        row0 = e.dsd(src, t1)
        e.builtin("fmovs", out, row0)
        fn = "fadds" if kind == "sum" else "fmaxs"
        with e.loop(1, valid) as (i, b):
            b.builtin(fn, out, out, b.shift_dsd(row0, b.imul(i, t1)))

    def _reduce_vector(self, e: Emit, kind: str, src, n, valid, dst) -> None:
        """dst[0] = op_i src[i], i < valid: a scalar loop."""
        acc = e.load(src, 0)
        body = Block(arg_types=[i16, F32])
        b = Emit(body, self)
        i, a = body.args
        x = b.load(src, i)
        nxt = b.fbin(arith.AddfOp, a, x) if kind == "sum" else _fmax(b, a, x)
        body.add_op(scf.YieldOp(nxt))
        loop = e.add(scf.ForOp(e.i16(1), e.i16(valid), e.i16(1), [acc], body))
        e.store(loop, dst, 0)
        del n


    # -- local layout changes --
    def _op_transpose(self, e: Emit, op: wse.TransposeOp) -> None:
        t = op.input.type
        t0, t1 = t.tile(self.grid)
        src, dst = self.buf(op.input), self.buf(op.result)
        with e.when(self.guard(e, t.layout)) as g:
            if t0 <= t1:  # out[:, i] (stride t0) = in[i, :]
                with g.loop(0, t0) as (i, b):
                    b.builtin("fmovs", b.shift_dsd(b.dsd(dst, t1, 0, t0), i),
                              b.shift_dsd(b.dsd(src, t1), b.imul(i, t1)))
            else:  # out[j, :] = in[:, j] (stride t1)
                with g.loop(0, t1) as (j, b):
                    b.builtin("fmovs", b.shift_dsd(b.dsd(dst, t0), b.imul(j, t0)),
                              b.shift_dsd(b.dsd(src, t0, 0, t1), j))

    # -- windows: slice, pad, concat (the changed dims are whole on every PE) --
    def _op_slice(self, e: Emit, op: wse.SliceOp) -> None:
        t, r = op.input.type, op.result.type
        start, _, stride = op.window()
        with e.when(self.guard(e, r.layout)) as g:
            self._copy_window(g, self.buf(op.input), t.tile(self.grid), start, stride,
                              self.buf(op.result), r.tile(self.grid), (0,) * len(start),
                              (1,) * len(start), r.tile(self.grid))

    def _op_pad(self, e: Emit, op: wse.PadOp) -> None:
        t, r = op.input.type, op.result.type
        low, _, interior = op.amounts()
        dst = self.buf(op.result)
        with e.when(self.guard(e, r.layout)) as g:
            g.builtin("fmovs", g.dsd(dst, r.elems(self.grid)), g.f32(0.0))
            self._copy_window(g, self.buf(op.input), t.tile(self.grid), (0,) * len(low),
                              (1,) * len(low), dst, r.tile(self.grid), low,
                              tuple(k + 1 for k in interior), t.tile(self.grid))

    def _op_concat(self, e: Emit, op: wse.ConcatOp) -> None:
        r = op.result.type
        dim, rank = op.dim.value.data, len(r.dims)
        dst, at = self.buf(op.result), 0
        with e.when(self.guard(e, r.layout)) as g:
            for x in op.inputs:
                tile = x.type.tile(self.grid)
                self._copy_window(g, self.buf(x), tile, (0,) * rank, (1,) * rank, dst,
                                  r.tile(self.grid), tuple(at if i == dim else 0
                                                           for i in range(rank)),
                                  (1,) * rank, tile)
                at += tile[dim]

    def _op_permute(self, e: Emit, op: wse.PermuteOp) -> None:
        t, r = op.input.type, op.result.type
        perm = tuple(int(p) for p in op.perm.get_values())
        src_strides = _strides(t.tile(self.grid))
        with e.when(self.guard(e, r.layout)) as g:
            self._strided_copy(g, self.buf(op.input), 0, [src_strides[p] for p in perm],
                               self.buf(op.result), 0, _strides(r.tile(self.grid)),
                               r.tile(self.grid))

    # -- row lookups (embedding): the index is an exact f32 value --
    def _per_row(self, e: Emit, idx, i, rows: int, ok_fn, bad_fn) -> None:
        """ok_fn(b, row) for an index in [0, rows), else bad_fn(b): an out-of-range
        index poisons with NaN, never reads or writes a wrong row."""
        r = e.add(arith.FPToSIOp(e.load(idx, i), i16))
        with e.branch(e.icmp("sge", r, 0)) as (t, f):
            with t.branch(t.icmp("slt", r, rows)) as (t2, f2):
                ok_fn(t2, r)
                bad_fn(f2)
            bad_fn(f)

    def _op_take_rows(self, e: Emit, op: wse.TakeRowsOp) -> None:
        (v, c), n = op.table.type.dims, op.result.type.dims[0]
        table, idx, dst = self.buf(op.table), self.buf(op.indices), self.buf(op.result)
        with e.when(self.guard(e, op.result.type.layout)) as g, g.loop(0, n) as (i, b):
            def row(x: Emit):
                return x.shift_dsd(x.dsd(dst, c), x.imul(i, c))

            self._per_row(b, idx, i, v, lambda x, r: x.builtin(
                "fmovs", row(x), x.shift_dsd(x.dsd(table, c), x.imul(r, c))),
                lambda x: x.builtin("fmovs", row(x), x.f32(float("nan"))))

    def _op_add_rows(self, e: Emit, op: wse.AddRowsOp) -> None:
        (v, c), n = op.base.type.dims, op.indices.type.dims[0]
        base, idx, src = self.buf(op.base), self.buf(op.indices), self.buf(op.source)
        dst = self.buf(op.result)

        def add(x: Emit, r, i) -> None:
            row = x.shift_dsd(x.dsd(dst, c), x.imul(r, c))
            x.builtin("fadds", row, row, x.shift_dsd(x.dsd(src, c), x.imul(i, c)))

        with e.when(self.guard(e, op.result.type.layout)) as g:
            g.builtin("fmovs", g.dsd(dst, v * c), g.dsd(base, v * c))
            with g.loop(0, n) as (i, b):
                self._per_row(b, idx, i, v, lambda x, r: add(x, r, i),
                              lambda x: x.builtin("fmovs", x.dsd(dst, v * c),
                                                  x.f32(float("nan"))))

    def _copy_window(self, e: Emit, src, src_tile: tuple, src_off: tuple, src_step: tuple,
                     dst, dst_tile: tuple, dst_off: tuple, dst_step: tuple,
                     count: tuple) -> None:
        """dst[dst_off + dst_step * i] = src[src_off + src_step * i] for i < count
        (per dim, row-major tiles)."""
        ss, ds = _strides(src_tile), _strides(dst_tile)
        self._strided_copy(e, src, sum(o * s for o, s in zip(src_off, ss)),
                           [k * s for k, s in zip(src_step, ss)], dst,
                           sum(o * s for o, s in zip(dst_off, ds)),
                           [k * s for k, s in zip(dst_step, ds)], count)

    def _strided_copy(self, e: Emit, src, src_base: int, src_strides: list[int], dst,
                      dst_base: int, dst_strides: list[int], count: tuple) -> None:
        """dst[dst_base + sum(i * dst_strides)] = src[src_base + sum(i * src_strides)]
        for i < count: loops over the leading dims, one strided DSD copy along the
        last."""
        if not count:
            e.builtin("fmovs", e.dsd(dst, 1), e.dsd(src, 1))
            return
        last = len(count) - 1
        src_row = e.dsd(src, count[last], src_base, src_strides[last])
        dst_row = e.dsd(dst, count[last], dst_base, dst_strides[last])

        def rows(b: Emit, d: int, so, do) -> None:
            if d == last:
                b.builtin("fmovs", b.shift_dsd(dst_row, do), b.shift_dsd(src_row, so))
                return
            if count[d] == 1:
                rows(b, d + 1, so, do)
                return
            with b.loop(0, count[d]) as (i, c):
                rows(c, d + 1, c.iadd(so, c.imul(i, src_strides[d])),
                     c.iadd(do, c.imul(i, dst_strides[d])))

        rows(e, 0, 0, 0)

    # -- matmul --
    def _op_matmul(self, e: Emit, op: wse.MatmulOp) -> None:
        ta, tb, tc = op.lhs.type, op.rhs.type, op.result.type
        A, B, C = self.buf(op.lhs), self.buf(op.rhs), self.buf(op.result)
        with e.when(self.guard(e, tc.layout)) as g:
            vk = self.extent(g, ta, len(ta.dims) - 1)
            self.local_matmul(g, A, ta.tile(self.grid), B, tb.tile(self.grid), C, vk, True)

    def _op_batch_matmul(self, e: Emit, op: wse.BatchMatmulOp) -> None:
        """The batch elements of this PE's row block one after another (unrolled), each a
        tile product at its offsets: A's block j starts j*M*K elements in (A's columns
        are read at stride 1 from there, so the offset rides on ``k_off_a``), B's j*K
        rows in, C's j*M*N elements in."""
        ta, tb, tc = op.lhs.type, op.rhs.type, op.result.type
        A, B, C = self.buf(op.lhs), self.buf(op.rhs), self.buf(op.result)
        rows, k = ta.tile(self.grid)
        n = tb.tile(self.grid)[1]
        r_axis = ta.layout.dims[0]
        batch = op.batch.value.data
        local = batch // (self.grid.size(r_axis) if r_axis != wse.NONE else 1)
        m = rows // local
        with e.when(self.guard(e, tc.layout)) as g:
            for j in range(local):
                self.local_matmul(g, A, (m, k), B, (k, n), C, k, True, k_off_a=j * m * k,
                                  k_off_b=j * k, c_off=j * m * n)

    def local_matmul(self, e: Emit, A, ta: tuple, B, tb: tuple, C, vk, zero: bool,
                     k_off_a: SSAValue | int = 0, k_off_b: SSAValue | int = 0,
                     c_off: int = 0) -> None:
        """C (+)= A[:, k] B[k, :] over k < vk; tiles row-major (1-D: vectors).
        ``k_off_a``/``k_off_b``: where k = 0 starts in A's columns / B's rows; ``c_off``:
        where C starts in its buffer (2-D tiles only)."""
        if c_off and (len(ta) == 1 or len(tb) == 1):
            raise ValueError("local_matmul: a C offset is for 2-D tiles only")
        if len(ta) == 1 and len(tb) == 1:  # dot product
            acc = e.f32(0.0) if zero else e.load(C, 0)
            body = Block(arg_types=[i16, F32])
            b = Emit(body, self)
            k, a = body.args
            x, y = (b.load(buf, b.iadd(k, off)) for buf, off in ((A, k_off_a), (B, k_off_b)))
            # f16 operands: widened (exactly), their product and the sum in f32
            x, y = (v if v.type == F32 else b.add(arith.ExtFOp(v, F32)) for v in (x, y))
            prod = b.fbin(arith.MulfOp, x, y)
            body.add_op(scf.YieldOp(b.fbin(arith.AddfOp, a, prod)))
            e.store(e.add(scf.ForOp(e.i16(0), e.i16(vk), e.i16(1), [acc], body)), C, 0)
            return
        if len(tb) == 1:  # GEMV: C[:] += A[:, k] * x[k]
            m, ka = ta
            out = e.dsd(C, m)
            if zero:
                e.builtin("fmovs", out, e.f32(0.0))
            col0 = e.dsd(A, m, 0, ka)
            with e.loop(0, vk) as (k, b):
                b.builtin("fmacs", out, out, b.shift_dsd(col0, b.iadd(k, k_off_a)),
                          b.load(B, b.iadd(k, k_off_b)))
            return
        if len(ta) == 1:  # vector-matrix: C[:] += B[k, :] * a[k]
            _, n = tb
            out = e.dsd(C, n)
            if zero:
                e.builtin("fmovs", out, e.f32(0.0))
            row0 = e.dsd(B, n)
            with e.loop(0, vk) as (k, b):
                kk = b.iadd(k, k_off_b)
                b.builtin("fmacs", out, out, b.shift_dsd(row0, b.imul(kk, n)),
                          b.load(A, b.iadd(k, k_off_a)))
            return
        m, ka = ta
        _, n = tb
        if zero:
            e.builtin("fmovs", e.dsd(C, m * n, c_off), e.f32(0.0))
        if min(m, n) <= UNROLL_MAX:  # code size: three statements per line
            self._outer_products(e, A, ka, B, C, m, n, vk, k_off_a, k_off_b, c_off)
        elif m >= n:  # columns of C: C[:, j] += A[:, k] * B[k, j]
            ccol0, acol0 = e.dsd(C, m, c_off, n), e.dsd(A, m, 0, ka)
            with e.loop(0, vk) as (k, b):
                a_k = b.shift_dsd(acol0, b.iadd(k, k_off_a))
                brow = b.imul(b.iadd(k, k_off_b), n)
                with b.loop(0, n) as (j, c):
                    cj = c.shift_dsd(ccol0, j)
                    c.builtin("fmacs", cj, cj, a_k, c.load(B, c.iadd(brow, j)))
        else:  # rows of C: C[i, :] += B[k, :] * A[i, k]
            crow0, brow0 = e.dsd(C, n, c_off), e.dsd(B, n)
            with e.loop(0, m) as (i, b):
                ci = b.shift_dsd(crow0, b.imul(i, n))
                arow = b.iadd(b.imul(i, ka), k_off_a)
                with b.loop(0, vk) as (k, c):
                    c.builtin("fmacs", ci, ci, c.shift_dsd(brow0, c.imul(c.iadd(k, k_off_b), n)),
                              c.load(A, c.iadd(arow, k)))

    def _outer_products(self, e: Emit, A, ka: int, B, C, m: int, n: int, vk,
                        k_off_a: SSAValue | int, k_off_b: SSAValue | int,
                        c_off: int = 0) -> None:
        """C += A[:, :vk] B[:vk, :] as vk rank-1 updates, the short side of C unrolled: one
        ``@fmacs`` per line of C along its long side (the SDK GEMM's loop), with the
        lines' DSDs and the scalars' offsets set up once, before the loop over k, rather
        than per line; per line and k what is left is the scalar's address, its load
        and the DSD op."""
        if m >= n:  # lines are columns of C: C[:, j] += A[:, k] * B[k, j]
            length = e.i16(m)
            lines = [e.dsd(C, length, c_off + j, n) for j in range(n)]
            vec0, vec_step, vec_off, sc, sc_step, sc_off = e.dsd(A, m, 0, ka), 1, k_off_a, \
                B, n, k_off_b
            sc_at = [None] + [_index_const(e, j) for j in range(1, n)]  # B[k, j]: j past row k
        else:  # lines are rows of C: C[i, :] += B[k, :] * A[i, k]
            length = e.i16(n)
            lines = [e.dsd(C, length, c_off + i * n) for i in range(m)]
            vec0, vec_step, vec_off, sc, sc_step, sc_off = e.dsd(B, n), n, k_off_b, A, 1, \
                k_off_a
            sc_at = [None] + [_index_const(e, i * ka) for i in range(1, m)]  # A[i, k]
        with e.loop(0, vk) as (k, b):
            vec = b.shift_dsd(vec0, b.imul(b.iadd(k, vec_off), vec_step))
            base = b.index(b.imul(b.iadd(k, sc_off), sc_step))
            for line, at in zip(lines, sc_at):
                b.builtin("fmacs", line, line, vec, b.add(memref.LoadOp.get(
                    sc, [base if at is None else b.add(arith.AddiOp(base, at))])))

    OVERLAP_WORDS = 64  # smaller panels move faster than the task switches cost


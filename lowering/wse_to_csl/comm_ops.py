"""Per-op PE code for communication along one grid axis: combine, broadcast,
gather, scatter, shift, and SUMMA (panels broadcast along both axes, its steps
optionally a chain of tasks overlapping transfers with the multiply)."""

from __future__ import annotations

import contextlib

from xdsl.dialects import arith, csl
from xdsl.ir import SSAValue

from ...dialects import wse
from ...dialects.wse_target import ARCH
from .builder import Emit
from .fabric import store_and_forward


class CommOpsMixin:
    """The communication half of ``_Lowerer``'s per-op code."""

    # -- communication along one axis --
    def _op_combine(self, e: Emit, op: wse.CombineOp) -> None:
        axis, t = op.axis.data, op.input.type
        g_size = self.grid.size(axis)
        if g_size == 1:
            return
        kind = t.layout.partial(axis)
        buf, n = self.buf(op.input), t.elems(self.grid)
        assert self.plan.of[op.result] == self.plan.of[op.input]
        ch = self.channel("chain", axis)
        other = [a for a in wse.AXES if a != axis]
        fn = "fadds" if kind == "sum" else "fmaxs"
        q = self.coord(axis)
        with e.when(self.guard(e, t.layout, other)) as g:
            local = g.dsd(buf, n)
            with g.branch(g.icmp("eq", q, g_size - 1)) as (last, rest):
                last.builtin("fmovs", last.fab(csl.DsdKind.fabout_dsd, n, ch.send, ch.qout),
                             local)
                with rest.branch(rest.icmp("eq", q, 0)) as (first, mid):
                    first.builtin(fn, local, local,
                                  first.fab(csl.DsdKind.fabin_dsd, n, ch.recv, ch.qin))
                    mid.builtin(fn, mid.fab(csl.DsdKind.fabout_dsd, n, ch.send, ch.qout), local,
                                mid.fab(csl.DsdKind.fabin_dsd, n, ch.recv, ch.qin))

    def broadcast_from(self, e: Emit, axis: str, root: int | SSAValue, src: SSAValue,
                       dst: SSAValue, n: int) -> None:
        """Every PE along ``axis`` gets the ``n`` words ``src`` holds on PE ``root``
        (into ``dst``; the root keeps ``src``). Root 0 multicasts directly;
        another root relays to index 0 first."""
        if self.grid.size(axis) == 1:
            return
        bc = self.channel("bcast", axis)
        q = self.coord(axis)
        out_b = e.fab(csl.DsdKind.fabout_dsd, n, bc.send, bc.qout)
        in_b = e.fab(csl.DsdKind.fabin_dsd, n, bc.recv, bc.qin)
        if isinstance(root, int) and root == 0:
            with e.branch(e.icmp("eq", q, 0)) as (r, other):
                r.builtin("fmovs", out_b, r.dsd(src, n))
                other.builtin("fmovs", other.dsd(dst, n), in_b)
            return
        rl = self.channel("relay", axis)
        out_r = e.fab(csl.DsdKind.fabout_dsd, n, rl.send, rl.qout)
        in_r = e.fab(csl.DsdKind.fabin_dsd, n, rl.recv, rl.qin)
        root_v = e.i16(root)
        at_zero = e.icmp("eq", root_v, 0)
        with e.branch(at_zero) as (z, nz):
            with z.branch(z.icmp("eq", q, 0)) as (r, other):
                r.builtin("fmovs", out_b, r.dsd(src, n))
                other.builtin("fmovs", other.dsd(dst, n), in_b)
            # root > 0: root -> relay -> PE 0 -> bcast (the root hears its own data back)
            with nz.branch(nz.icmp("eq", q, 0)) as (zero, other):
                zero.builtin("fmovs", zero.dsd(dst, n), in_r)
                zero.builtin("fmovs", out_b, zero.dsd(dst, n))
                with other.branch(other.icmp("eq", q, root_v)) as (r, rest):
                    r.builtin("fmovs", out_r, r.dsd(src, n))
                    r.builtin("fmovs", r.dsd(dst, n), in_b)
                    if store_and_forward(rl, ARCH[self.arch]):
                        # the PEs between pass the root's data on, core to core
                        with rest.when(rest.icmp("slt", q, root_v)) as fw:
                            fw.builtin("fmovs", out_r, in_r)
                    rest.builtin("fmovs", rest.dsd(dst, n), in_b)

    def _op_broadcast(self, e: Emit, op: wse.BroadcastOp) -> None:
        axis, t = op.axis.data, op.input.type
        k = t.layout.held_at(axis)
        assert k is not None
        other = [a for a in wse.AXES if a != axis]
        buf = self.buf(op.input)
        with e.when(self.guard(e, t.layout, other)) as g:
            self.broadcast_from(g, axis, k, buf, buf, t.elems(self.grid))

    def _op_gather(self, e: Emit, op: wse.GatherOp) -> None:
        axis, t, r = op.axis.data, op.input.type, op.result.type
        dim = t.layout.dim_on(axis)
        assert dim is not None
        g_size = self.grid.size(axis)
        tile, rtile = t.tile(self.grid), r.tile(self.grid)
        n, size = t.elems(self.grid), t.dims[dim]
        blk = wse.block_size(size, g_size)
        src, dst = self.buf(op.input), self.buf(op.result)
        (scratch,) = self.plan.scratch[op]
        tmp = self.bufs[scratch]
        other = [a for a in wse.AXES if a != axis]
        q = self.coord(axis)
        with e.when(self.guard(e, t.layout, other)) as g:
            with g.loop(0, g_size) as (s, b):
                self.broadcast_from(b, axis, s, src, tmp, n)
                # block s: the root's own tile, or what arrived
                valid = b.imin(b.isub(size, b.imul(s, blk)), blk)
                mine = b.icmp("eq", q, s)
                with b.branch(mine) as (own, got):
                    for h, from_buf in ((own, src), (got, tmp)):
                        self._place_block(h, from_buf, tile, dst, rtile, dim, s, blk, valid)

    def _place_block(self, e: Emit, src, tile, dst, rtile, dim: int, s, blk: int, valid) -> None:
        """Copy the first ``valid`` entries along ``dim`` of a tile into block ``s`` of dst."""
        if len(tile) == 1:
            e.builtin("fmovs", e.set_len(e.shift_dsd(e.dsd(dst, blk), e.imul(s, blk)), valid),
                      e.set_len(e.dsd(src, blk), valid))
        elif dim == 0:  # rows: one contiguous block
            t1 = tile[1]
            n = e.imul(valid, t1)
            e.builtin("fmovs",
                      e.set_len(e.shift_dsd(e.dsd(dst, blk * t1), e.imul(e.imul(s, blk), t1)), n),
                      e.set_len(e.dsd(src, blk * t1), n))
        else:  # columns: one strided copy per row
            t0, t1 = tile
            w = rtile[1]
            with e.loop(0, t0) as (i, b):
                d = b.shift_dsd(b.dsd(dst, t1), b.iadd(b.imul(i, w), b.imul(s, blk)))
                sd = b.shift_dsd(b.dsd(src, t1), b.imul(i, t1))
                b.builtin("fmovs", b.set_len(d, valid), b.set_len(sd, valid))

    def _op_scatter(self, e: Emit, op: wse.ScatterOp) -> None:
        axis, t, r = op.axis.data, op.input.type, op.result.type
        dim = op.dim.value.data
        tile, rtile = t.tile(self.grid), r.tile(self.grid)
        size, g_size = t.dims[dim], self.grid.size(axis)
        blk = wse.block_size(size, g_size)
        src, dst = self.buf(op.input), self.buf(op.result)
        with e.when(self.guard(e, r.layout)) as g:
            valid = self.valid(g, size, axis)
            start = g.imul(self.coord(axis), blk)
            if len(tile) == 1:
                g.builtin("fmovs", g.set_len(g.dsd(dst, blk), valid),
                          g.set_len(g.shift_dsd(g.dsd(src, blk), start), valid))
            elif dim == 0:
                t1 = tile[1]
                n = g.imul(valid, t1)
                g.builtin("fmovs", g.set_len(g.dsd(dst, blk * t1), n),
                          g.set_len(g.shift_dsd(g.dsd(src, blk * t1), g.imul(start, t1)), n))
            else:
                t0, t1 = tile
                w = rtile[1]
                with g.loop(0, t0) as (i, b):
                    d = b.set_len(b.shift_dsd(b.dsd(dst, w), b.imul(i, w)), valid)
                    s = b.set_len(b.shift_dsd(b.dsd(src, w), b.iadd(b.imul(i, t1), start)), valid)
                    b.builtin("fmovs", d, s)

    def _op_shift(self, e: Emit, op: wse.ShiftOp) -> None:
        axis, t = op.axis.data, op.input.type
        d = op.distance.value.data
        g_size = self.grid.size(axis)
        ch = self.channel("shift", axis, d)
        n = t.elems(self.grid)
        src, dst = self.buf(op.input), self.buf(op.result)
        q = self.coord(axis)
        other = [a for a in wse.AXES if a != axis]
        with e.when(self.guard(e, t.layout, other)) as g:
            sends = g.icmp("slt", g.iadd(q, d), g_size) if d > 0 else g.icmp("sge", q, -d)
            with g.when(sends) as s:
                s.builtin("fmovs", s.fab(csl.DsdKind.fabout_dsd, n, ch.send, ch.qout),
                          s.dsd(src, n))
            gets = g.icmp("sge", q, d) if d > 0 else g.icmp("slt", g.iadd(q, -d), g_size)
            with g.branch(gets) as (yes, no):
                yes.builtin("fmovs", yes.dsd(dst, n),
                            yes.fab(csl.DsdKind.fabin_dsd, n, ch.recv, ch.qin))
                no.builtin("fmovs", no.dsd(dst, n), no.f32(0.0))


    def _op_relayout(self, e: Emit, op: wse.RelayoutOp) -> None:
        """PE (i, j) takes the tile of PE (j, i) (a square grid): for each step s, every
        row j sends the tile of its PE s along the row to the diagonal PE (j, j), and
        every column j sends what its diagonal PE got down the column to PE (j, s);
        one tile of scratch per PE. Rows, and columns, run side by side; the diagonal's
        own tile is copied at home. Every PE of a row (a column) takes the same branch,
        so the fabric operations of a line stay one synchronous sequence."""
        t, r = op.input.type, op.result.type
        n, g = t.elems(self.grid), self.grid.width
        src, dst = self.buf(op.input), self.buf(op.result)
        if g == 1:
            with e.when(self.guard(e, r.layout)) as h:
                h.builtin("fmovs", h.dsd(dst, n), h.dsd(src, n))
            return
        (scratch,) = self.plan.scratch[op]
        tmp = self.bufs[scratch]
        kx = t.layout.held_at("x")  # the source on one column only: one step
        with (e.loop(0, g) if kx is None else contextlib.nullcontext((kx, e))) as (s, b):
            with b.when(self.guard(b, t.layout, ["y"])) as rows:  # rows holding the source
                with rows.when(rows.icmp("ne", self.py, s)) as row:  # the diagonal: at home
                    self.broadcast_from(row, "x", s, src, tmp, n)
            with b.when(self.guard(b, r.layout, ["x"])) as cols:  # columns of the result
                with cols.branch(cols.icmp("eq", self.px, s)) as (home, col):
                    with home.when(home.icmp("eq", self.py, s)) as d:
                        d.builtin("fmovs", d.dsd(dst, n), d.dsd(src, n))
                    with col.branch(col.icmp("eq", self.py, s)) as (mine, other):
                        self.broadcast_from(mine, "y", self.px, tmp, dst, n)
                        self.broadcast_from(other, "y", self.px, tmp, tmp, n)

    def _op_summa(self, e: Emit, op: wse.SummaOp) -> Emit | None:
        panel = op.lhs.type.elems(self.grid) + op.rhs.type.elems(self.grid)
        if self.overlap and panel >= self.OVERLAP_WORDS and len(self.free_task_ids) >= 4:
            return self._summa_async(e, op)
        ta, tb, tc = op.lhs.type, op.rhs.type, op.result.type
        a_axis, b_axis = tc.layout.dims  # M on a_axis, N on b_axis; K: A over b, B over a
        A, B, C = self.buf(op.lhs), self.buf(op.rhs), self.buf(op.result)
        pa, _, pb, _ = (self.bufs[s] for s in self.plan.scratch[op])
        tile_a, tile_b = ta.tile(self.grid), tb.tile(self.grid)
        na, nb = ta.elems(self.grid), tb.elems(self.grid)
        k = ta.dims[1]
        steps = self.grid.size(b_axis)
        blk = wse.block_size(k, steps)
        e.builtin("fmovs", e.dsd(C, tc.elems(self.grid)), e.f32(0.0))
        with e.loop(0, steps) as (s, b):
            self.broadcast_from(b, b_axis, s, A, pa, na)  # A's panel s along the row
            self.broadcast_from(b, a_axis, s, B, pb, nb)  # B's panel s down the column
            vk = b.imin(b.isub(k, b.imul(s, blk)), blk)
            own_a = b.icmp("eq", self.coord(b_axis), s)
            own_b = b.icmp("eq", self.coord(a_axis), s)
            with b.branch(own_a) as (ya, na_):
                for h_a, src_a in ((ya, A), (na_, pa)):
                    with h_a.branch(own_b) as (yb, nb_):
                        for h, src_b in ((yb, B), (nb_, pb)):
                            self.local_matmul(h, src_a, tile_a, src_b, tile_b, C, vk, False)
        return None

    def _summa_async(self, e: Emit, op: wse.SummaOp) -> Emit:
        """SUMMA as a chain of tasks, panels double-buffered: while step t multiplies
        the panels in buffer pair t % 2, the panels of step t + 1 arrive in the other
        pair by asynchronous DSD ops. The step task is blocked when step t + 1's
        transfers are issued; the A-panel's completion unblocks it, the B-panel's
        activates it (the block/unblock join). Line 0 of an axis relays panels whose
        root is elsewhere (relay color in, bcast color out) in a task of its own. The
        ops after the SUMMA continue in a new task the last step activates."""
        ta, tb, tc = op.lhs.type, op.rhs.type, op.result.type
        a_axis, b_axis = tc.layout.dims
        A, B, C = self.buf(op.lhs), self.buf(op.rhs), self.buf(op.result)
        pa = [self.bufs[i] for i in self.plan.scratch[op][:2]]
        pb = [self.bufs[i] for i in self.plan.scratch[op][2:]]
        tile_a, tile_b = ta.tile(self.grid), tb.tile(self.grid)
        na, nb = ta.elems(self.grid), tb.elems(self.grid)
        k = ta.dims[1]
        steps = self.grid.size(b_axis)
        blk = wse.block_size(k, steps)
        step_id, step = self.new_task("summa_step")
        relay_ids: dict[str, int] = {}
        relay_tasks: dict[str, Emit] = {}
        for ax in (b_axis, a_axis):
            if self.grid.size(ax) > 1:
                relay_ids[ax], relay_tasks[ax] = self.new_task(f"summa_relay_{ax}")
        next_id, after = self.new_task("after_summa")
        counter = self.variable(f"summa{step_id}_step")
        pending = self.variable(f"summa{step_id}_relayed")
        # the signal each panel's arrival gives the step task: A unblocks, B activates
        signal = {b_axis: "unblock", a_axis: "activate"}
        parts = ((b_axis, A, pa, na), (a_axis, B, pb, nb))

        def by_parity(h: Emit, t, fn) -> None:
            with h.branch(h.icmp("eq", h.add(arith.RemSIOp(h.i16(t), h.i16(2))), 0)) as (ev, od):
                fn(ev, 0)
                fn(od, 1)

        def issue(h: Emit, t) -> None:
            """Start the transfers of step t's panels (t >= 1 at run time, or 0)."""
            h.task_state("block", step_id)
            for ax, src, bufs, n in parts:
                sig = (signal[ax], step_id)
                if self.grid.size(ax) == 1:  # the PE holds the whole panel line itself
                    by_parity(h, t, lambda g, i, src=src, bufs=bufs, n=n: g.builtin(
                        "fmovs", g.dsd(bufs[i], n), g.dsd(src, n)))
                    h.task_state(*sig)
                    continue
                q = self.coord(ax)
                bc, rl = self.channel("bcast", ax), self.channel("relay", ax)

                def transfer(g: Emit, i: int, ax=ax, src=src, bufs=bufs, n=n, sig=sig,
                             bc=bc, rl=rl, q=q) -> None:
                    with g.branch(g.icmp("eq", g.i16(t), 0)) as (first, later):
                        # step 0: line 0 is the root and multicasts its own tile
                        with first.branch(first.icmp("eq", q, 0)) as (root, rest):
                            root.builtin("fmovs", root.dsd(bufs[i], n), root.dsd(src, n))
                            root.builtin("fmovs", root.fab(csl.DsdKind.fabout_dsd, n, bc.send,
                                                           bc.qout), root.dsd(src, n),
                                         asynchronous=True)
                            root.task_state(*sig)
                            rest.builtin("fmovs", rest.dsd(bufs[i], n), rest.fab(
                                csl.DsdKind.fabin_dsd, n, bc.recv, bc.qin), then=sig)
                        with later.branch(later.icmp("eq", q, 0)) as (zero, other):
                            # line 0 relays: the relay task multicasts once it has it
                            zero.store_var(pending, t)
                            zero.builtin("fmovs", zero.dsd(bufs[i], n), zero.fab(
                                csl.DsdKind.fabin_dsd, n, rl.recv, rl.qin),
                                then=("activate", relay_ids[ax]))
                            with other.branch(other.icmp("eq", q, t)) as (root, rest):
                                root.builtin("fmovs", root.fab(csl.DsdKind.fabout_dsd, n,
                                                               rl.send, rl.qout),
                                             root.dsd(src, n), asynchronous=True)
                                root.builtin("fmovs", root.dsd(bufs[i], n), root.fab(
                                    csl.DsdKind.fabin_dsd, n, bc.recv, bc.qin), then=sig)
                                if store_and_forward(rl, ARCH[self.arch]):  # csl15: WSE-3
                                    # the lines between pass the root's panel on, core to core
                                    with rest.when(rest.icmp("slt", q, t)) as fw:
                                        fw.builtin("fmovs", fw.fab(csl.DsdKind.fabout_dsd, n,
                                                                   rl.send, rl.qout),
                                                   fw.fab(csl.DsdKind.fabin_dsd, n, rl.recv,
                                                          rl.qin), asynchronous=True)
                                rest.builtin("fmovs", rest.dsd(bufs[i], n), rest.fab(
                                    csl.DsdKind.fabin_dsd, n, bc.recv, bc.qin), then=sig)

                by_parity(h, t, transfer)

        # the relay tasks: multicast what arrived on the relay color, then signal
        for ax, _, bufs, n in parts:
            if ax not in relay_tasks:
                continue
            r = relay_tasks[ax]
            bc = self.channel("bcast", ax)
            t = r.load_var(pending)
            by_parity(r, t, lambda g, i, bufs=bufs, n=n, bc=bc: g.builtin(
                "fmovs", g.fab(csl.DsdKind.fabout_dsd, n, bc.send, bc.qout), g.dsd(bufs[i], n),
                asynchronous=True))
            r.task_state(signal[ax], step_id)
        # the prologue, in the current task: C = 0, step 0's transfers
        e.builtin("fmovs", e.dsd(C, tc.elems(self.grid)), e.f32(0.0))
        e.store_var(counter, 0)
        issue(e, 0)
        # one step: prefetch step t + 1, multiply step t's panels
        t = step.load_var(counter)
        nxt = step.iadd(t, 1)
        with step.when(step.icmp("slt", nxt, steps)) as h:
            issue(h, nxt)
        vk = step.imin(step.isub(k, step.imul(t, blk)), blk)
        by_parity(step, t, lambda g, i: self.local_matmul(g, pa[i], tile_a, pb[i], tile_b, C,
                                                          vk, False))
        step.store_var(counter, nxt)
        with step.when(step.icmp("eq", nxt, steps)) as h:
            h.task_state("activate", next_id)
        return after


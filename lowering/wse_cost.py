"""Cycle estimates of ``wse`` ops: the cost model the placement search prices with.

``WseCostModel`` estimates the cycles of each ``wse`` op from the figures of
the target's ``CycleModel`` (``dialects/wse_target.py``: DSD issue cost and
rate, scalar-op cost, hop and ramp latency, math-library calls) and from the
loop structure the CSL lowering generates (``lowering/wse_to_csl``): a DSD op
costs its issue plus its length; a loop iteration a few scalar ops; a chain or
a broadcast the message length plus a hop per PE it crosses; a broadcast from
a root other than line 0 relays through line 0 (twice the traffic). Which
elementwise functions run as DSD ops and which call ``<math>`` comes from the
target's one record per function (``WSE_FNS``, its ``cost_class``).

The lowering (``lowering/pyflame_to_wse``) prices every candidate placement of
an op, and of the relayouts it would need, with this model and takes the
cheapest that fits the SRAM budget.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..dialects import wse
from ..dialects.wse_target import WSE_FNS, CycleModel

# scalar ops per loop iteration the lowering emits around a DSD op
# (induction variable, offset arithmetic, @increment_dsd_offset, a load)
LOOP_OPS = 5
# scalar ops per element of a scalar loop (loads, arithmetic, store, index math)
SCALAR_ELEM_OPS = 8
# tile products unroll their short side up to this many lines (local_ops.py)
UNROLL_MAX = 32
MATH_FNS = frozenset(f.name for f in WSE_FNS.values() if f.cost_class == "math")
DSD_FNS = frozenset(f.name for f in WSE_FNS.values() if f.cost_class == "dsd")


@dataclass
class WseCostModel:
    """Cycle estimates of wse ops on a grid (see the module docstring)."""

    grid: wse.Grid
    model: CycleModel | None = None
    arch: str = "wse2"  # f16 DSD ops run at the arch's SIMD width (CycleModel.f16_simd)

    def __post_init__(self) -> None:
        if self.model is None:
            self.model = CycleModel()
        m = self.model
        self.issue = m.dsd_issue_cycles
        self.rate = m.f32_elems_per_cycle
        self.op = m.scalar_op_cycles
        self.hop = m.hop_latency + 0.0
        self.ramp = m.ramp_latency
        self.math_call = m.math_call_cycles
        self.half_rate = float(m.f16_simd(self.arch))

    # -- building blocks --
    def dsd(self, n: float, half: bool = False) -> float:
        return self.issue + math.ceil(max(n, 1) / (self.half_rate if half else self.rate))

    def loop(self, iters: float, n: float) -> float:
        """``iters`` DSD ops of ``n`` elements inside a loop."""
        return iters * (self.dsd(n) + LOOP_OPS * self.op)

    def message(self, n: float, hops: int) -> float:
        return self.dsd(n) + hops * self.hop + 2 * self.ramp

    # -- ops --
    def map(self, fn: str, elems: int, rows: int, broadcast: bool, half: bool = False
            ) -> float:
        """``half``: an f16 result of an f16 DSD builtin (SIMD); conversions to and from
        f16 and the scalar loops run at the f32 rate."""
        if fn in DSD_FNS:
            return self.loop(rows, elems / max(rows, 1)) if broadcast \
                else self.dsd(elems, half)
        per = SCALAR_ELEM_OPS * self.op + (self.math_call if fn in MATH_FNS else 0)
        return elems * per

    def reduce(self, tile: tuple[int, ...], dims: tuple[int, ...]) -> float:
        if not tile:
            return self.dsd(1)
        if len(tile) == 1:
            return tile[0] * 4 * self.op
        t0, t1 = tile
        if dims == (1,):
            return self.loop(t1, t0)
        if dims == (0,):
            return self.loop(t0, t1)
        return self.loop(t1, t0) + t0 * 4 * self.op

    def combine(self, elems: int, axis: str) -> float:
        g = self.grid.size(axis)
        return 0.0 if g == 1 else self.message(elems, g) + (g - 1) * self.issue

    def broadcast(self, elems: int, axis: str, root: int) -> float:
        g = self.grid.size(axis)
        if g == 1:
            return 0.0
        return self.message(elems, g) * (2 if root else 1)

    def gather(self, elems: int, axis: str, rows: int = 1) -> float:
        """``rows``: the block lands as that many strided row copies (the gathered dim
        is the second of a rank-2 tile), else as one DSD copy."""
        g = self.grid.size(axis)
        place = self.loop(rows, elems / rows) if rows > 1 else self.dsd(elems)
        return g * (self.broadcast(elems, axis, 1) + place) if g > 1 else 0.0

    def relayout(self, elems: int) -> float:
        """The tile grid transposed (``wse.relayout``): per step, a broadcast along the
        rows from a root other than line 0 (relayed through it) and one down the
        columns; one step per line."""
        g = self.grid.width
        if g == 1:
            return self.dsd(elems)
        return g * (self.broadcast(elems, "x", 1) + self.broadcast(elems, "y", 1)
                    + 8 * self.op)

    def scatter(self, elems: int) -> float:
        return self.dsd(elems)

    def transpose(self, tile: tuple[int, int]) -> float:
        t0, t1 = tile
        return self.loop(min(t0, t1), max(t0, t1))

    def matmul(self, m: int, k: int, n: int) -> float:
        """Local tile matmul (m x k) @ (k x n): the longer of m, n is the DSD length.
        Up to ``UNROLL_MAX`` lines on the short side are unrolled, their DSDs made
        before the loop over k: per line and k a scalar's address and load and the
        DSD op; per k the loop's own few ops (``local_ops.py: _outer_products``)."""
        if m <= 1 and n <= 1:
            return k * 6 * self.op
        short, long = min(m, n), max(m, n)
        if m > 1 and n > 1 and short <= UNROLL_MAX:
            return self.dsd(m * n) + k * (short * (self.dsd(long) + 3 * self.op)
                                          + LOOP_OPS * self.op)
        return self.dsd(m * n) + self.loop(k * short, long)

    def summa(self, mt: int, kt: int, nt: int, steps: int) -> float:
        """K panels broadcast along both axes each step; panels of 64 words and more
        are double-buffered, their transfers overlapping the previous step's
        multiply (at the price of a task switch and some control per step)."""
        a_axis_g = self.grid.height
        b_axis_g = self.grid.width
        comm = (self.broadcast(mt * kt, "x", 1) * (b_axis_g > 1)
                + self.broadcast(kt * nt, "y", 1) * (a_axis_g > 1))
        compute = self.matmul(mt, kt, nt)
        if mt * kt + kt * nt >= 64:
            per = max(comm, compute) + self.model.task_switch_cycles + 40 * self.op  # type: ignore[union-attr]
        else:
            per = comm + compute
        return self.dsd(mt * nt) + steps * per



def gather_rows(t: wse.TensorTypeAttr, grid: wse.Grid, axis: str) -> int:
    """Row copies a gather along ``axis`` places each block with (1: one DSD copy)."""
    return gather_tile_rows(t.tile(grid), t.layout.dim_on(axis))


def gather_tile_rows(tile: tuple[int, ...], dim: int | None) -> int:
    return tile[0] if len(tile) == 2 and dim == 1 else 1


def op_cost(cost: WseCostModel, op) -> float:
    """Estimated cycles of one wse op (per PE, the lines that run it in parallel)."""
    g = cost.grid

    def elems(v) -> int:
        return v.type.elems(g)

    if isinstance(op, wse.MapOp):
        t = op.result.type
        tile = t.tile(g)
        rows = tile[0] if len(tile) == 2 else 1
        full = all(x.type.tile(g) == tile or x.type.elems(g) == 1 for x in op.inputs)
        half = t.is_half and all(x.type.is_half or x.type.elems(g) == 1 for x in op.inputs)
        return cost.map(op.fn.data, elems(op.result), rows, not full, half)
    if isinstance(op, wse.ReduceOp):
        return cost.reduce(op.input.type.tile(g), op.reduced)
    if isinstance(op, wse.CombineOp):
        return cost.combine(elems(op.input), op.axis.data)
    if isinstance(op, wse.BroadcastOp):
        return cost.broadcast(elems(op.input), op.axis.data,
                              op.input.type.layout.held_at(op.axis.data) or 0)
    if isinstance(op, wse.GatherOp):
        return cost.gather(elems(op.input), op.axis.data, gather_rows(op.input.type, g,
                                                                    op.axis.data))
    if isinstance(op, wse.ScatterOp):
        return cost.scatter(elems(op.result))
    if isinstance(op, wse.RelayoutOp):
        return cost.relayout(elems(op.input))
    if isinstance(op, wse.TransposeOp):
        return cost.transpose(op.input.type.tile(g))  # type: ignore[arg-type]
    if isinstance(op, wse.MatmulOp):
        ta, tb = op.lhs.type.tile(g), op.rhs.type.tile(g)
        m = ta[0] if len(ta) == 2 else 1
        n = tb[1] if len(tb) == 2 else 1
        return cost.matmul(m, ta[-1], n)
    if isinstance(op, wse.BatchMatmulOp):  # this PE's batch elements, one after another
        rows, k = op.lhs.type.tile(g)
        r_axis = op.lhs.type.layout.dims[0]
        local = op.batch.value.data // (g.size(r_axis) if r_axis != wse.NONE else 1)
        return local * cost.matmul(rows // local, k, op.rhs.type.tile(g)[1])
    if isinstance(op, wse.SummaOp):
        ta, tb = op.lhs.type.tile(g), op.rhs.type.tile(g)
        b_axis = op.result.type.layout.dims[1]
        return cost.summa(ta[0], ta[1], tb[1], g.size(b_axis))
    if isinstance(op, wse.ShiftOp):
        return cost.message(elems(op.input), abs(op.distance.value.data))
    if isinstance(op, wse.ConstantOp):
        return cost.dsd(elems(op.result))
    window = window_cost(cost, op)  # issue #16's local window copies
    return window if window is not None else 0.0


def program_cost(program, model: CycleModel | None = None, arch: str = "wse2") -> float:
    """Estimated cycles of a whole wse.program: its ops one after another."""
    cost = WseCostModel(program.grid, model, arch)
    return sum(op_cost(cost, op) for op in program.body.block.ops)


def window_cost(cost: WseCostModel, op) -> float | None:
    """Cycles of the local window copies of issue #16 (``wse.slice``, ``wse.pad``,
    ``wse.concat``, ``wse.permute``): one strided DSD copy per row of each piece (a
    pad first fills its tile); the gathers that made the changed dims whole are priced as relayouts.
    None for other ops."""
    g = cost.grid
    if isinstance(op, wse.SliceOp | wse.PadOp | wse.ConcatOp | wse.PermuteOp):
        pieces = [op.result] if isinstance(op, wse.SliceOp | wse.PermuteOp) \
            else list(op.operands)
        total = cost.dsd(op.result.type.elems(g)) if isinstance(op, wse.PadOp) else 0.0
        for v in pieces:
            tile = v.type.tile(g) or (1,)
            total += cost.loop(math.prod(tile[:-1]), tile[-1])
        return total
    if isinstance(op, wse.TakeRowsOp | wse.AddRowsOp):  # a row copy or add per index
        n, c = op.indices.type.dims[0], op.result.type.dims[1]
        return cost.loop(n, c) + n * SCALAR_ELEM_OPS * cost.op
    return None

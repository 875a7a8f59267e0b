"""The planner: walks the pyflame ops in order, prices the candidate placements
of each (relayouts of its operands included) with the cost model and emits the
cheapest as wse ops (matmul candidates in ``matmul.py``)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from xdsl.dialects import func
from xdsl.ir import Block, Operation, SSAValue

from ...dialects import OPS, wse
from ...dialects.pyflame import OP_CLASSES
from ..wse_cost import WseCostModel, gather_tile_rows
from ..wse_memory import default_budget
from .indexing import INDEX_LOWERINGS
from .matmul import MatmulMixin
from .placement import _fill_states, _operand_layout, conversion_steps, default_layout, host_layout
from .support import (
    ELEMENTWISE,
    CslUnsupportedError,
    _Fresh,
    _pow_fn,
    _splat_of_dense,
    _unsupported,
)
from .support import value_spec as _spec
from .windows import WINDOW_LOWERINGS, lower_general_reshape, lower_permute_whole

INF = float("inf")


def _half(v: Any) -> bool:
    """A pyflame-level f16 value (stored and computed as f16 on the PEs)."""
    return _spec(v)[1].name == "float16"


@dataclass
class WseOptions:
    grid: wse.Grid | None = None  # None: automatic
    max_pes: int = 1024
    budget: int | None = None  # bytes per PE for data; None: the cycle model's
    matmul: str = "auto"  # auto | local (tiles, operands broadcast) | summa
    arch: str = "wse2"
    # a step that does not fit the budget: recompute cheap activations (recompute.py)
    recompute: bool = True




class _Planner(MatmulMixin):
    """Walks the pyflame ops in order; emits wse ops into the program block."""

    def __init__(self, fn: func.FuncOp, grid: wse.Grid, options: WseOptions,
                 fixed: dict[int, str] | None = None):
        self.fn, self.grid, self.options = fn, grid, options
        self.fixed = fixed or {}  # op index -> the candidate label to take
        self.candidates: dict[int, list[str]] = {}  # op index -> labels, cheapest first
        self.chosen: dict[int, str] = {}  # op index -> the label taken
        self.index: dict[Operation, int] = {op: i for i, op in enumerate(fn.body.block.ops)}
        self.cost = WseCostModel(grid, arch=options.arch)
        self.budget_words = (options.budget or default_budget()) // 4
        self.block = Block()
        self.placed: dict[SSAValue, list[tuple[wse.Layout, SSAValue]]] = {}
        self.pending: dict[SSAValue, tuple[str, Any]] = {}  # pyflame value -> input source
        self.slots: list[tuple[tuple, SSAValue]] = []  # (order key, block arg)
        self.inputs: list[tuple[str, Any]] = []
        self.splats: dict[SSAValue, float] = {}
        self.choices: list[str] = []
        self.annotations: dict[Operation, tuple[wse.Layout, str]] = {}
        self._nconst = 0
        for i, a in enumerate(fn.body.block.args):
            self.pending[a] = ("arg", i)

    # -- program inputs --
    def _place_input(self, v: SSAValue, lay: wse.Layout) -> SSAValue:
        kind, data = self.pending.pop(v)
        host = host_layout(lay)
        shape, d = _spec(v)
        # f16 data arrives as f16 (16-bit memcpy into an f16 buffer: no conversion)
        t = wse.wse_type(shape, host, d.name == "bool", _half(v))
        key = (0, data) if kind == "arg" else (1, self._nconst)
        if kind != "arg":
            self._nconst += 1
        pos = sum(1 for k, _ in self.slots if k < key)
        arg = self.block.insert_arg(t, pos)
        self.slots.insert(pos, (key, arg))
        self.inputs.insert(pos, (kind, data))
        self.placed.setdefault(v, []).append((host, arg))
        return arg

    # -- costs --
    def conv_cost(self, v: SSAValue, dst: wse.Layout) -> float:
        """Cheapest relayout of pyflame value v into dst (inputs: from their host layout)."""
        shape = _spec(v)[0]
        if v in self.splats:
            return self.cost.dsd(wse.tile_elems(shape, dst, self.grid))
        if v in self.pending:
            return self._steps_cost(shape, host_layout(dst), self.steps(
                shape, host_layout(dst), dst))
        best = INF
        for lay, _ in self.placed.get(v, []):
            best = min(best, self._steps_cost(shape, lay, self.steps(shape, lay, dst)))
        return best

    def steps(self, shape, src: wse.Layout, dst: wse.Layout) -> list[tuple] | None:
        """``conversion_steps`` on this grid (a square one moves dims between the axes
        with ``wse.relayout``)."""
        return conversion_steps(shape, src, dst,
                                square=self.grid.width == self.grid.height > 1)

    def _steps_cost(self, shape, lay: wse.Layout, steps: list[tuple] | None) -> float:
        if steps is None:
            return INF
        total, cur = 0.0, lay
        for step in steps:
            n = wse.tile_elems(shape, cur, self.grid)
            kind, axis = step[0], step[1]
            if kind == "combine":
                total += self.cost.combine(n, axis)
                cur = wse.infer_combine(shape, cur, axis)[1]
            elif kind == "gather":
                total += self.cost.gather(n, axis, gather_tile_rows(
                    wse.tile_shape(shape, cur, self.grid), cur.dim_on(axis)))
                cur = wse.infer_gather(shape, cur, axis)[1]
                if wse.tile_elems(shape, cur, self.grid) > self.budget_words // 2:
                    return INF
            elif kind == "broadcast":
                total += self.cost.broadcast(n, axis, cur.held_at(axis) or 0)
                cur = wse.infer_broadcast(shape, cur, axis)[1]
            elif kind == "relayout":
                total += self.cost.relayout(n)
                cur = wse.swap_axes(cur)
            else:
                total += self.cost.scatter(n)
                cur = wse.infer_scatter(shape, cur, axis, step[2])[1]
        return total

    # -- getting a value in a layout --
    def get(self, v: SSAValue, dst: wse.Layout) -> SSAValue:
        shape, d = _spec(v)
        for lay, w in self.placed.get(v, []):
            if lay == dst:
                return w
        if v in self.splats:
            w = self.emit(wse.ConstantOp(self.splats[v], wse.wse_type(
                shape, dst, d.name == "bool", _half(v))))
            self.placed.setdefault(v, []).append((dst, w))
            return w
        if v in self.pending:
            self._place_input(v, dst)
        best: tuple[float, wse.Layout, SSAValue, list[tuple]] | None = None
        for lay, w in self.placed[v]:
            steps = self.steps(shape, lay, dst)
            c = self._steps_cost(shape, lay, steps)
            if steps is not None and (best is None or c < best[0]):
                best = (c, lay, w, steps)
        if best is None:
            have = ", ".join(str(lay) for lay, _ in self.placed[v])
            raise CslUnsupportedError(f"csl backend: cannot move a {list(shape)} tensor from "
                                      f"{have} to {dst} on the {self.grid} grid")
        _, lay, w, steps = best
        for step in steps:
            w, lay = self._emit_step(w, shape, lay, step, d.name == "bool", _half(v))
            self.placed[v].append((lay, w))
        return w

    def _emit_step(self, w: SSAValue, shape, lay: wse.Layout, step: tuple, mask: bool,
                   half: bool = False) -> tuple[SSAValue, wse.Layout]:
        kind, axis = step[0], step[1]
        if kind == "combine":
            new = wse.infer_combine(shape, lay, axis)[1]
            op: Operation = wse.CombineOp(axis, w, wse.wse_type(shape, new, mask, half))
        elif kind == "gather":
            new = wse.infer_gather(shape, lay, axis)[1]
            op = wse.GatherOp(axis, w, wse.wse_type(shape, new, mask, half))
        elif kind == "broadcast":
            new = wse.infer_broadcast(shape, lay, axis)[1]
            op = wse.BroadcastOp(axis, w, wse.wse_type(shape, new, mask, half))
        elif kind == "relayout":
            new = wse.infer_relayout(shape, lay, self.grid)[1]
            op = wse.RelayoutOp(w, wse.wse_type(shape, new, mask, half))
        else:
            new = wse.infer_scatter(shape, lay, axis, step[2])[1]
            op = wse.ScatterOp(axis, w, step[2], wse.wse_type(shape, new, mask, half))
        self.block.add_op(op)
        return op.results[0], new

    def downstream(self, out: SSAValue | None, elems: int) -> float:
        """What a result's layout costs its consumers: each passes over its tile at
        least once, so tiles that spread the work over more PEs are cheaper."""
        uses = sum(1 for _ in out.uses) if isinstance(out, SSAValue) else 1
        return uses * self.cost.dsd(elems)

    def current(self, v: SSAValue) -> list[wse.Layout]:
        """Layouts v has now (a pending input: the default one)."""
        if v in self.pending or v in self.splats:
            return [default_layout(_spec(v)[0], self.grid)]
        return [lay for lay, _ in self.placed[v]]

    def bind(self, v: SSAValue, w: SSAValue, lay: wse.Layout) -> None:
        self.placed.setdefault(v, []).append((lay, w))

    def emit(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0]

    # ---- ops ----
    def lower(self, op: Operation) -> None:
        handler = _LOWER.get(type(op))
        if handler is None:  # pragma: no cover - check_supported rejects the rest
            raise _unsupported(op.name.removeprefix("pyflame."), "no CSL lowering for it yet")
        handler(self, op, op.py_attrs())  # type: ignore[attr-defined]

    def _constant(self, op: Operation, attrs: dict) -> None:
        dv = attrs["value"]
        splat = _splat_of_dense(dv)
        if splat is not None:
            self.splats[op.results[0]] = splat
        else:
            self.pending[op.results[0]] = ("const", dv.materialize())

    def _iota(self, op: Operation, attrs: dict) -> None:
        self.pending[op.results[0]] = ("const", OPS["iota"].kernel(**attrs))

    # -- elementwise --
    def _convert(self, op: Operation) -> None:
        src, rd = _spec(op.operands[0])[1], _spec(op.results[0])[1]
        fn = "copy" if src == rd else ("to_mask" if rd.name == "bool" else "from_mask")
        self._elementwise(op, fn, list(op.operands))

    def _pow(self, op: Operation) -> None:
        # the exponent is a splat folded into the function (check_supported made sure)
        self._elementwise(op, _pow_fn(op), [op.operands[0]])  # type: ignore[arg-type]

    def _elementwise(self, op: Operation, fn: str, ins: list[SSAValue]) -> None:
        """``op`` as the wse.map function ``fn`` of ``ins``."""
        out = op.results[0]
        rshape, rd = _spec(out)
        if fn == "div" and _spec(ins[1])[0] != rshape and ins[1] not in self.splats:
            # a / b with b broadcast: one reciprocal of the small b, then a DSD multiply
            r = self._map_value("reciprocal", [ins[1]], _spec(ins[1])[0], False, None)
            ins, fn = [ins[0], r], "mul"
        elif fn == "div" and ins[1] in self.splats:
            c = self.splats[ins[1]]  # x / ±0 is x * ±inf for every x (0 and NaN give NaN)
            inv = 1.0 / c if c != 0 else math.copysign(math.inf, c)
            ins, fn = [ins[0], self._splat_of(inv, ins[1])], "mul"
        self._map_value(fn, ins, rshape, rd.name == "bool", out)

    def _splat_of(self, value: float, like: SSAValue) -> SSAValue:
        """A fresh pyflame-level name for a splat (not in the IR)."""
        key = _SplatKey(value, _spec(like))
        self.splats[key] = value  # type: ignore[index]
        return key  # type: ignore[return-value]

    def _map_value(self, fn: str, ins: list[SSAValue], rshape: tuple, mask: bool,
                   out: SSAValue | None) -> SSAValue:
        """Lower one elementwise fn; returns the pyflame-level value (out, or a fresh key).

        A splat operand becomes an immediate when the other operands alone give
        the result shape; otherwise it is filled into a tile like any operand."""
        real = [v for v in ins if v not in self.splats]
        if not real or wse.broadcast_shape([_spec(v)[0] for v in real]) != tuple(rshape):
            real = list(ins)
        imm = [v not in real for v in ins]
        cands: list[wse.Layout] = []
        for v in real:
            if _spec(v)[0] == tuple(rshape):
                cands += [lay for lay in self.current(v) if not lay.is_partial]
        cands.append(default_layout(rshape, self.grid))
        best: tuple[float, wse.Layout] | None = None
        for lay in dict.fromkeys(cands):
            c = sum(self.conv_cost(v, _operand_layout(lay, rshape, _spec(v)[0]))
                    for v in real) + self.downstream(out, wse.tile_elems(rshape, lay, self.grid))
            if best is None or c < best[0]:
                best = (c, lay)
        assert best is not None
        lay = best[1]
        operands = []
        for v, is_imm in zip(ins, imm):
            if is_imm:
                operands.append(self.emit(wse.ConstantOp(self.splats[v], wse.wse_type(
                    (), _fill_states((), "*")))))
            else:
                operands.append(self.get(v, _operand_layout(lay, rshape, _spec(v)[0])))
        half = out is not None and _half(out)
        w = self.emit(wse.MapOp(fn, operands, wse.wse_type(rshape, lay, mask, half)))
        key = out if out is not None else _Fresh(rshape, mask)
        self.bind(key, w, lay)
        if out is not None:
            self.note(out.owner, lay, f"map {fn}")
        return key  # type: ignore[return-value]

    def note(self, op: Operation, lay: wse.Layout, scheme: str) -> None:
        self.annotations[op] = (lay, scheme)
        name = op.name if isinstance(op, Operation) else "?"
        self.choices.append(f"{name}: {scheme} -> {lay}")

    # -- reductions --
    def reduce_emit(self, x: Any, dims: tuple[int, ...], keepdim: bool, kind: str,
                    negate: bool = False) -> tuple[SSAValue, tuple[int, ...], wse.Layout]:
        """Reduce the pyflame-level value ``x`` (a value or a planner key) from its
        cheapest placement, combining the axes left partial; ``negate``:
        ``-kind(-x)`` (min from max). Returns the wse value, its shape and layout."""
        shape = _spec(x)[0]
        lay = min(self.current(x), key=lambda lay: self.conv_cost(x, lay))
        w = self.get(x, lay)
        if negate:
            w = self.emit(wse.MapOp("neg", [w], wse.wse_type(shape, lay)))
        rs, rl = wse.infer_reduce(shape, lay, dims, keepdim, kind)
        w = self.emit(wse.ReduceOp(kind, w, dims, keepdim, wse.wse_type(rs, rl)))
        for g in wse.AXES:
            if rl.partial(g):
                rs, rl = wse.infer_combine(rs, rl, g)
                w = self.emit(wse.CombineOp(g, w, wse.wse_type(rs, rl)))
        if negate:
            w = self.emit(wse.MapOp("neg", [w], wse.wse_type(rs, rl)))
        return w, rs, rl

    def _reduction(self, op: Operation, attrs: dict, kind: str, negate: bool, mean: bool
                   ) -> None:
        """sum/max reductions on the grid; min is -max(-x), mean sum times 1/count."""
        x, out = op.operands[0], op.results[0]
        shape = _spec(x)[0]
        dims, keepdim = tuple(attrs["dims"]), attrs["keepdim"]
        rshape = _spec(out)[0]
        if not dims:
            self._map_value("copy", [x], rshape, False, out)
            return
        w, rs, rl = self.reduce_emit(x, dims, keepdim, kind, negate)
        if mean:
            count = math.prod(shape[d] for d in dims)
            c = self.emit(wse.ConstantOp(1.0 / max(count, 1), wse.wse_type(
                (), _fill_states((), "*"))))
            w = self.emit(wse.MapOp("mul", [w, c], wse.wse_type(rs, rl)))
        self.bind(out, w, rl)
        self.note(op, rl, f"{op.OPDEF.name} over {list(dims)}")  # type: ignore[attr-defined]

    # -- shape ops --
    def _permute(self, op: Operation, perm: Sequence[int]) -> None:
        x, out = op.operands[0], op.results[0]
        shape = _spec(x)[0]
        src = min(self.current(x), key=lambda lay: self.conv_cost(x, lay))
        if len(perm) > 2 and tuple(perm) != tuple(range(len(perm))):
            lower_permute_whole(self, op, perm)
            return
        w = self.get(x, src)
        if tuple(perm) == tuple(range(len(perm))):
            self.bind(out, w, src)
            return
        rs, rl = wse.infer_transpose(shape, src)
        w = self.emit(wse.TransposeOp(w, wse.wse_type(rs, rl, _spec(x)[1].name == "bool",
                                                     _half(x))))
        self.bind(out, w, rl)
        self.note(op, rl, "transpose")

    def _reshape(self, op: Operation, new_shape: Sequence[int]) -> None:
        x, out = op.operands[0], op.results[0]
        shape = _spec(x)[0]
        if [n for n in shape if n != 1] != [n for n in new_shape if n != 1] or len(
                new_shape) > 2:  # rank >= 3 tensors are whole on every PE
            lower_general_reshape(self, op, new_shape)
            return
        lays = [lay for lay in self.current(x)
                if all(d == "-" for n, d in zip(shape, lay.dims) if n == 1)]
        if not lays:
            lays = [default_layout(shape, self.grid)]
        src = min(lays, key=lambda lay: self.conv_cost(x, lay))
        w = self.get(x, src)
        rs, rl = wse.infer_reshape(shape, src, new_shape)
        w = self.emit(wse.ReshapeOp(w, wse.wse_type(rs, rl, _spec(x)[1].name == "bool",
                                                   _half(x))))
        self.bind(out, w, rl)

    # ---- outputs ----
    def output(self, v: SSAValue) -> SSAValue:
        if v in self.splats or v in self.pending:
            w = self.get(v, default_layout(_spec(v)[0], self.grid))
        else:
            lays = [lay for lay in self.current(v) if not lay.is_partial]
            w = self.get(v, lays[0] if lays else default_layout(_spec(v)[0], self.grid))
        return w  # an f16 output is read as 16-bit data (MEMCPY_16BIT)


class _SplatKey(_Fresh):
    def __init__(self, value: float, spec: tuple):
        super().__init__(spec[0], spec[1].name == "bool")
        self.value = value

    def __hash__(self) -> int:
        return hash((self.value, self.shape, self.mask))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _SplatKey) and (self.value, self.shape, self.mask) == (
            other.value, other.shape, other.mask)


Handler = Callable[[_Planner, Operation, dict], None]


def _map_fn(fn: str) -> Handler:
    return lambda p, op, a: p._elementwise(op, fn, list(op.operands))


def _reduce(kind: str, negate: bool = False, mean: bool = False) -> Handler:
    return lambda p, op, a: p._reduction(op, a, kind, negate, mean)


# how each pyflame op class is planned (check_supported has rejected the others)
_LOWER: dict[type[Operation], Handler] = {
    **{OP_CLASSES[name]: _map_fn(fn) for name, fn in ELEMENTWISE.items()},
    OP_CLASSES["broadcast_to"]: _map_fn("copy"),
    OP_CLASSES["convert"]: lambda p, op, a: p._convert(op),
    OP_CLASSES["pow"]: lambda p, op, a: p._pow(op),
    OP_CLASSES["sum"]: _reduce("sum"),
    OP_CLASSES["mean"]: _reduce("sum", mean=True),
    OP_CLASSES["max"]: _reduce("max"),
    OP_CLASSES["min"]: _reduce("max", negate=True),
    OP_CLASSES["constant"]: _Planner._constant,
    OP_CLASSES["iota"]: _Planner._iota,
    OP_CLASSES["matmul"]: lambda p, op, a: p._matmul(op),
    OP_CLASSES["permute"]: lambda p, op, a: p._permute(op, a["perm"]),
    OP_CLASSES["reshape"]: lambda p, op, a: p._reshape(op, a["shape"]),
}

# ops of issue #16, planned in their own modules
_LOWER.update({OP_CLASSES[name]: h for name, h in {**WINDOW_LOWERINGS,
                                                    **INDEX_LOWERINGS}.items()})

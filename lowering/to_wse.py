"""``pyflame`` -> ``wse``: place every tensor on the PE grid and lower the ops.

``lower_to_wse(module, WseOptions(...))`` turns the one ``func.func @main``
into a ``wse.program``:

1. **Check** every op against what the CSL backend lowers (f32 tensors and
   bool masks of rank 0-2; see ``SUPPORTED``); anything else fails first with
   ``csl backend: op pyflame.X is not supported (...)``.
2. **Expand** fused ops (named ones into their chains, ``pyflame.fused``
   regions inline) and the softmax family into max / sub / exp / sum / div.
3. **Choose the grid**: the one given, else the smallest candidate (1x1,
   2x2, 4x4, 8x8, 16x16, 32x32 and the rectangles between, up to
   ``max_pes``) on which the program's memory plan fits the SRAM budget.
4. **Place and lower** op by op. Every candidate placement of an op (which
   grid axis carries each dim; for a matmul also the algorithm: K tiled with
   partial sums combined along a chain, K local with operands broadcast, or
   SUMMA) is priced with the cycle model of ``passes/wse_layout.py``,
   relayouts of the operands included, and the cheapest whose tiles fit is
   emitted. Relayouts are sequences of ``wse.combine``, ``wse.gather``,
   ``wse.broadcast`` and ``wse.scatter``. Program inputs take the layout of
   their first use, with each element on one PE (the host copies each once;
   replication happens on the device, where it is timed). Splat constants
   feeding elementwise ops become immediates; other constants (and ``iota``)
   become program inputs whose data the host supplies.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from ..dialects import wse
from ..dialects.dtypes import DType
from ..dialects.pyflame import PyflameOp, create_op, spec_of_type
from ..passes.wse_layout import WseCostModel, program_cost
from ..passes.wse_memory import MemoryBudgetError, MemoryPlan, default_budget, plan_memory

INF = float("inf")


class CslUnsupportedError(DiagnosticException):
    """``csl backend: op pyflame.X is not supported (...)``."""


def _unsupported(op: str, why: str) -> CslUnsupportedError:
    return CslUnsupportedError(f"csl backend: op pyflame.{op} is not supported ({why})")


# ---- what is supported ----

ELEMENTWISE: dict[str, str] = {
    "add": "add", "sub": "sub", "mul": "mul", "div": "div", "maximum": "maximum",
    "minimum": "minimum", "neg": "neg", "abs": "abs", "relu": "relu", "exp": "exp",
    "log": "log", "sqrt": "sqrt", "rsqrt": "rsqrt", "tanh": "tanh", "sigmoid": "sigmoid",
    "reciprocal": "reciprocal", "sin": "sin", "cos": "cos", "square": "square",
    "sign": "sign", "gt": "gt", "ge": "ge", "lt": "lt", "le": "le", "eq": "eq", "ne": "ne",
    "logical_and": "and", "logical_or": "or", "logical_not": "not", "where": "select",
}
REDUCTIONS = ("sum", "mean", "max", "min")
OTHER = ("matmul", "permute", "reshape", "broadcast_to", "constant", "iota", "convert",
         "softmax", "log_softmax", "logsumexp", "pow")
SUPPORTED = frozenset(ELEMENTWISE) | frozenset(REDUCTIONS) | frozenset(OTHER)
WHY_NOT = {
    "gelu": "needs erf, which the CSL math library does not provide",
    "erf": "the CSL math library has no erf",
    "argmax": "integer (index) results are not lowered",
    "argmin": "integer (index) results are not lowered",
    "slice": "sub-tensors across PE tiles are not lowered yet",
    "concat": "joining tensors across PE tiles is not lowered yet",
    "split": "sub-tensors across PE tiles are not lowered yet",
    "pad": "padding across PE tiles is not lowered yet",
}


def _dtype_ok(d: DType) -> bool:
    return d.name in ("float32", "bool")


def _fused() -> tuple[dict, type | None]:
    """The fusion pass's named chains and region op (absent in older trees)."""
    try:
        from ..dialects.fused import CHAINS
    except ImportError:
        CHAINS = {}
    try:
        from ..dialects.pyflame import FusedOp
    except ImportError:
        FusedOp = None
    return CHAINS, FusedOp


def check_supported(fn: func.FuncOp) -> None:
    """Raise CslUnsupportedError for the first op the backend cannot lower."""
    CHAINS, FusedOp = _fused()

    def check(op: Operation) -> None:
        if isinstance(op, func.ReturnOp):
            return
        if FusedOp is not None and isinstance(op, FusedOp):
            for inner in op.body.block.ops:
                check(inner)
            return
        if not isinstance(op, PyflameOp):
            if op.name == "pyflame.yield":
                return
            raise CslUnsupportedError(f"csl backend: op {op.name} is not supported (not a "
                                      "pyflame tensor op; run the autodiff expansion first)")
        name = op.OPDEF.name
        if name in CHAINS:
            return  # expanded into its chain, whose ops are checked there
        if name not in SUPPORTED:
            raise _unsupported(name, WHY_NOT.get(name, "no CSL lowering for it yet"))
        for v in (*op.operands, *op.results):
            shape, d = spec_of_type(v.type, "value")
            if not _dtype_ok(d):
                raise _unsupported(name, f"element type {d.name}: the CSL backend computes "
                                         "in f32 (bool as 0/1 masks)")
            if len(shape) > 2:
                raise _unsupported(name, f"a rank-{len(shape)} tensor {list(shape)}: tensors "
                                         "are placed on the 2-D grid with rank 0 to 2")
        attrs = op.py_attrs()
        if name == "reshape":
            src = spec_of_type(op.operands[0].type, "x")[0]
            if [n for n in src if n != 1] != [n for n in attrs["shape"] if n != 1]:
                raise _unsupported(name, f"{list(src)} -> {list(attrs['shape'])} moves elements "
                                         "between dimensions; only unit dimensions may come "
                                         "or go")
        if name == "pow" and _pow_fn(op) is None:
            raise _unsupported(name, "only a constant exponent of 2, 1, 0.5 or -1 is lowered")

    for op in fn.body.block.ops:
        check(op)


def _splat_of_dense(dv: Any) -> float | None:
    """The one value of a constant whose elements are all equal (splat or not)."""
    arr = np.asarray(dv.array)
    if dv.is_splat or (arr.size and np.all(arr == arr.reshape(-1)[0])
                       and not np.isnan(arr.reshape(-1)[0])):
        return float(arr.reshape(-1)[0]) if arr.size else None
    return None


def _splat_value(v: SSAValue) -> float | None:
    op = v.owner
    if isinstance(op, PyflameOp) and op.OPDEF.name == "constant":
        return _splat_of_dense(op.py_attrs()["value"])
    return None


def _pow_fn(op: PyflameOp) -> str | None:
    e = _splat_value(op.operands[1])
    return {2.0: "square", 1.0: "copy", 0.5: "sqrt", -1.0: "reciprocal"}.get(e) \
        if e is not None else None


# ---- expansion of composite ops (on a clone of the module) ----

def _spec(v: SSAValue) -> tuple[tuple[int, ...], DType]:
    return spec_of_type(v.type, "value")


def _new(name: str, operands: Sequence[SSAValue], attrs: dict[str, Any], before: Operation
         ) -> SSAValue:
    from ..dialects import OPS

    specs = OPS[name].check([_spec(v)[0] for v in operands], [_spec(v)[1] for v in operands],
                            attrs)
    op = create_op(name, list(operands), attrs, specs)
    before.parent_block().insert_op_before(op, before)  # type: ignore[union-attr]
    return op.results[0]


def _const(value: float, like: SSAValue, before: Operation) -> SSAValue:
    from ..dialects.data import DenseValue

    d = _spec(like)[1]
    dv = DenseValue(np.array(value, dtype=d.np), (), d)
    return _new("constant", [], {"value": dv}, before)


def expand(fn: func.FuncOp) -> None:
    """Fused ops into their chains, pyflame.fused inline, softmax family into basics."""
    CHAINS, FusedOp = _fused()
    block = fn.body.block
    for op in list(block.ops):
        if FusedOp is not None and isinstance(op, FusedOp):
            body = op.body.block
            for arg, v in zip(body.args, op.operands):
                arg.replace_all_uses_with(v)
            y = op.yield_op
            for r, v in zip(op.results, y.operands):
                r.replace_all_uses_with(v)
            for inner in list(body.ops):
                if inner is y:
                    break
                inner.detach()
                block.insert_op_before(inner, op)
            block.erase_op(op)
            continue
        if not isinstance(op, PyflameOp):
            continue
        name = op.OPDEF.name
        if name in CHAINS:
            attrs = op.py_attrs()
            prev: SSAValue | None = None
            for step, refs, attr_names in CHAINS[name]:
                args = [prev if r < 0 else op.operands[r] for r in refs]
                prev = _new(step, args, {k: attrs[k] for k in attr_names}, op)
            assert prev is not None
            op.results[0].replace_all_uses_with(prev)
            block.erase_op(op)
        elif name in ("softmax", "log_softmax", "logsumexp"):
            _expand_softmax(block, op)
    for op in list(block.ops):  # the expansions may have produced more softmax-like ops
        if isinstance(op, PyflameOp) and op.OPDEF.name in ("softmax", "log_softmax",
                                                           "logsumexp"):
            _expand_softmax(block, op)


def _expand_softmax(block: Block, op: PyflameOp) -> None:
    name, attrs = op.OPDEF.name, op.py_attrs()
    x = op.operands[0]
    dims = (attrs["dim"],) if "dim" in attrs else tuple(attrs["dims"])
    m = _new("max", [x], {"dims": dims, "keepdim": True}, op)
    d = _new("sub", [x, m], {}, op)
    e = _new("exp", [d], {}, op)
    s = _new("sum", [e], {"dims": dims, "keepdim": True}, op)
    if name == "softmax":
        out = _new("div", [e, s], {}, op)
    elif name == "log_softmax":
        out = _new("sub", [d, _new("log", [s], {}, op)], {}, op)
    else:
        out = _new("add", [_new("log", [s], {}, op), m], {}, op)
        if not attrs["keepdim"]:
            out = _new("reshape", [out], {"shape": _spec(op.results[0])[0]}, op)
    op.results[0].replace_all_uses_with(out)
    block.erase_op(op)


# ---- placement ----

def tileable(n: int, g: int) -> bool:
    return n > 1 and wse.can_tile(n, g)


def default_layout(shape: Sequence[int], grid: wse.Grid) -> wse.Layout:
    """Tile every dim that can be (rows over y, columns over x), the rest held at 0."""
    shape = tuple(shape)
    if len(shape) == 2:
        m, n = shape
        for dims in (("y", "x"), ("y", "-"), ("-", "x"), ("x", "-"), ("-", "y"), ("-", "-")):
            if all(d == "-" or tileable(s, grid.size(d)) for s, d in zip(shape, dims)):
                return _fill_states(dims)
    if len(shape) == 1:
        for d in ("x", "y", "-"):
            if d == "-" or tileable(shape[0], grid.size(d)):
                return _fill_states((d,))
    return _fill_states(())


def _fill_states(dims: Sequence[str], state: str = "0") -> wse.Layout:
    dims = tuple(dims)
    st = {a: ("" if a in dims else state) for a in wse.AXES}
    return wse.Layout(dims, st["x"], st["y"])


def host_layout(lay: wse.Layout) -> wse.Layout:
    """Where the host puts an input that is wanted in ``lay``: one PE per element."""
    st = {a: lay.state(a) for a in wse.AXES}
    for a, s in st.items():
        if s == "dim":
            st[a] = ""
        elif not s.isdigit():
            st[a] = "0"
    return wse.Layout(lay.dims, st["x"], st["y"])


def conversion_steps(shape: Sequence[int], src: wse.Layout, dst: wse.Layout
                     ) -> list[tuple] | None:
    """Relayout ``src`` -> ``dst`` as (op, axis[, dim]) steps; None when impossible."""
    steps: list[tuple] = []
    cur = src
    try:
        for g in wse.AXES:
            if cur.partial(g):
                steps.append(("combine", g))
                cur = wse.infer_combine(shape, cur, g)[1]
        for g in wse.AXES:
            i = cur.dim_on(g)
            if i is not None and dst.dim_on(g) != i:
                steps.append(("gather", g))
                cur = wse.infer_gather(shape, cur, g)[1]
        for g in wse.AXES:
            j = dst.dim_on(g)
            if j is not None and cur.dim_on(g) is None:
                if cur.state(g) != "*":
                    steps.append(("broadcast", g))
                    cur = wse.infer_broadcast(shape, cur, g)[1]
                steps.append(("scatter", g, j))
                cur = wse.infer_scatter(shape, cur, g, j)[1]
        for g in wse.AXES:
            want, have = dst.state(g), cur.state(g)
            if want == "dim":
                continue
            if want in wse.PARTIALS:
                return None
            if (want == "*" and have != "*") or (want.isdigit() and have not in ("*", want)):
                steps.append(("broadcast", g))
                cur = wse.infer_broadcast(shape, cur, g)[1]
    except wse.LayoutError:
        return None
    if cur.dims != dst.dims:
        return None
    return steps


@dataclass
class WseOptions:
    grid: wse.Grid | None = None  # None: automatic
    max_pes: int = 1024
    budget: int | None = None  # bytes per PE for data; None: the cycle model's
    matmul: str = "auto"  # auto | local (tiles, operands broadcast) | summa


@dataclass
class WseModule:
    """The lowered program and what running it needs."""

    module: ModuleOp
    program: wse.ProgramOp
    grid: wse.Grid
    inputs: list[tuple[str, Any]]  # per program input: ("arg", index) or ("const", array)
    output_dtypes: list[DType]
    memory: MemoryPlan
    choices: list[str] = field(default_factory=list)  # one line per placement decision


class _Planner:
    """Walks the pyflame ops in order; emits wse ops into the program block."""

    def __init__(self, fn: func.FuncOp, grid: wse.Grid, options: WseOptions,
                 fixed: dict[int, str] | None = None):
        self.fn, self.grid, self.options = fn, grid, options
        self.fixed = fixed or {}  # op index -> the candidate label to take
        self.candidates: dict[int, list[str]] = {}  # op index -> labels, cheapest first
        self.chosen: dict[int, str] = {}  # op index -> the label taken
        self.index: dict[Operation, int] = {op: i for i, op in enumerate(fn.body.block.ops)}
        self.cost = WseCostModel(grid)
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
        t = wse.wse_type(shape, host, d.name == "bool")
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
            return self._steps_cost(shape, host_layout(dst), conversion_steps(
                shape, host_layout(dst), dst))
        best = INF
        for lay, _ in self.placed.get(v, []):
            best = min(best, self._steps_cost(shape, lay, conversion_steps(shape, lay, dst)))
        return best

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
                total += self.cost.gather(n, axis)
                cur = wse.infer_gather(shape, cur, axis)[1]
                if wse.tile_elems(shape, cur, self.grid) > self.budget_words // 2:
                    return INF
            elif kind == "broadcast":
                total += self.cost.broadcast(n, axis, cur.held_at(axis) or 0)
                cur = wse.infer_broadcast(shape, cur, axis)[1]
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
                shape, dst, d.name == "bool")))
            self.placed.setdefault(v, []).append((dst, w))
            return w
        if v in self.pending:
            self._place_input(v, dst)
        best: tuple[float, wse.Layout, SSAValue, list[tuple]] | None = None
        for lay, w in self.placed[v]:
            steps = conversion_steps(shape, lay, dst)
            c = self._steps_cost(shape, lay, steps)
            if steps is not None and (best is None or c < best[0]):
                best = (c, lay, w, steps)
        if best is None:
            have = ", ".join(str(lay) for lay, _ in self.placed[v])
            raise CslUnsupportedError(f"csl backend: cannot move a {list(shape)} tensor from "
                                      f"{have} to {dst} on the {self.grid} grid")
        _, lay, w, steps = best
        for step in steps:
            w, lay = self._emit_step(w, shape, lay, step, d.name == "bool")
            self.placed[v].append((lay, w))
        return w

    def _emit_step(self, w: SSAValue, shape, lay: wse.Layout, step: tuple, mask: bool
                   ) -> tuple[SSAValue, wse.Layout]:
        kind, axis = step[0], step[1]
        if kind == "combine":
            new = wse.infer_combine(shape, lay, axis)[1]
            op: Operation = wse.CombineOp(axis, w, wse.wse_type(shape, new, mask))
        elif kind == "gather":
            new = wse.infer_gather(shape, lay, axis)[1]
            op = wse.GatherOp(axis, w, wse.wse_type(shape, new, mask))
        elif kind == "broadcast":
            new = wse.infer_broadcast(shape, lay, axis)[1]
            op = wse.BroadcastOp(axis, w, wse.wse_type(shape, new, mask))
        else:
            new = wse.infer_scatter(shape, lay, axis, step[2])[1]
            op = wse.ScatterOp(axis, w, step[2], wse.wse_type(shape, new, mask))
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
        name = op.OPDEF.name  # type: ignore[attr-defined]
        attrs = op.py_attrs()  # type: ignore[attr-defined]
        if name == "constant":
            dv = attrs["value"]
            splat = _splat_of_dense(dv)
            if splat is not None:
                self.splats[op.results[0]] = splat
            else:
                self.pending[op.results[0]] = ("const", dv.materialize())
            return
        if name == "iota":
            from ..dialects import OPS

            self.pending[op.results[0]] = ("const", OPS["iota"].kernel(**attrs))
            return
        if name in ELEMENTWISE or name in ("convert", "broadcast_to", "pow"):
            self._elementwise(op, name, attrs)
        elif name in REDUCTIONS:
            self._reduction(op, name, attrs)
        elif name == "matmul":
            self._matmul(op)
        elif name == "permute":
            self._permute(op, attrs["perm"])
        elif name == "reshape":
            self._reshape(op, attrs["shape"])
        else:  # pragma: no cover - check_supported rejects the rest
            raise _unsupported(name, "no CSL lowering for it yet")

    # -- elementwise --
    def _elementwise(self, op: Operation, name: str, attrs: dict) -> None:
        ins = list(op.operands)
        out = op.results[0]
        rshape, rd = _spec(out)
        if name == "convert":
            src = _spec(ins[0])[1]
            fn = "copy" if src == rd else ("to_mask" if rd.name == "bool" else "from_mask")
        elif name == "broadcast_to":
            fn = "copy"
        elif name == "pow":
            fn = _pow_fn(op)  # type: ignore[arg-type]
            ins = ins[:1]
        else:
            fn = ELEMENTWISE[name]
        if fn == "div" and _spec(ins[1])[0] != rshape and ins[1] not in self.splats:
            # a / b with b broadcast: one reciprocal of the small b, then a DSD multiply
            r = self._map_value("reciprocal", [ins[1]], _spec(ins[1])[0], False, None)
            ins, fn = [ins[0], r], "mul"
        elif fn == "div" and ins[1] in self.splats:
            ins, fn = [ins[0], self._splat_of(1.0 / self.splats[ins[1]], ins[1])], "mul"
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
        w = self.emit(wse.MapOp(fn, operands, wse.wse_type(rshape, lay, mask)))
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
    def _reduction(self, op: Operation, name: str, attrs: dict) -> None:
        x, out = op.operands[0], op.results[0]
        shape = _spec(x)[0]
        dims, keepdim = tuple(attrs["dims"]), attrs["keepdim"]
        rshape = _spec(out)[0]
        if not dims:
            self._map_value("copy", [x], rshape, False, out)
            return
        src_lay = min(self.current(x), key=lambda lay: self.conv_cost(x, lay))
        w = self.get(x, src_lay)
        lay = src_lay
        if name == "min":
            w = self.emit(wse.MapOp("neg", [w], wse.wse_type(shape, lay)))
        kind = "sum" if name in ("sum", "mean") else "max"
        rs, rl = wse.infer_reduce(shape, lay, dims, keepdim, kind)
        w = self.emit(wse.ReduceOp(kind, w, dims, keepdim, wse.wse_type(rs, rl)))
        for g in wse.AXES:
            if rl.partial(g):
                rs, rl = wse.infer_combine(rs, rl, g)
                w = self.emit(wse.CombineOp(g, w, wse.wse_type(rs, rl)))
        if name == "min":
            w = self.emit(wse.MapOp("neg", [w], wse.wse_type(rs, rl)))
        if name == "mean":
            count = math.prod(shape[d] for d in dims)
            c = self.emit(wse.ConstantOp(1.0 / max(count, 1), wse.wse_type(
                (), _fill_states((), "*"))))
            w = self.emit(wse.MapOp("mul", [w, c], wse.wse_type(rs, rl)))
        self.bind(out, w, rl)
        self.note(op, rl, f"{name} over {list(dims)}")

    # -- shape ops --
    def _permute(self, op: Operation, perm: Sequence[int]) -> None:
        x, out = op.operands[0], op.results[0]
        shape = _spec(x)[0]
        src = min(self.current(x), key=lambda lay: self.conv_cost(x, lay))
        w = self.get(x, src)
        if tuple(perm) == tuple(range(len(perm))):
            self.bind(out, w, src)
            return
        rs, rl = wse.infer_transpose(shape, src)
        w = self.emit(wse.TransposeOp(w, wse.wse_type(rs, rl, _spec(x)[1].name == "bool")))
        self.bind(out, w, rl)
        self.note(op, rl, "transpose")

    def _reshape(self, op: Operation, new_shape: Sequence[int]) -> None:
        x, out = op.operands[0], op.results[0]
        shape = _spec(x)[0]
        lays = [lay for lay in self.current(x)
                if all(d == "-" for n, d in zip(shape, lay.dims) if n == 1)]
        if not lays:
            lays = [default_layout(shape, self.grid)]
        src = min(lays, key=lambda lay: self.conv_cost(x, lay))
        w = self.get(x, src)
        rs, rl = wse.infer_reshape(shape, src, new_shape)
        w = self.emit(wse.ReshapeOp(w, wse.wse_type(rs, rl, _spec(x)[1].name == "bool")))
        self.bind(out, w, rl)

    # -- matmul --
    def _matmul(self, op: Operation) -> None:
        a, b = op.operands
        out = op.results[0]
        sa, sb = _spec(a)[0], _spec(b)[0]
        g = self.grid
        M = sa[0] if len(sa) == 2 else None
        K = sa[-1]
        N = sb[1] if len(sb) == 2 else None
        options: list[tuple[float, str, Callable[[], tuple[SSAValue, wse.Layout]]]] = []
        opts = ("x", "y", "-")
        # M over the rows first: the conventional orientation wins ties
        m_opts = ("y", "x", "-") if M else (None,)
        for ma, ka, na in itertools.product(m_opts, opts, opts if N else (None,)):
            used = [t for t in (ma, ka, na) if t not in (None, "-")]
            if len(used) != len(set(used)):
                continue
            if any(ax not in (None, "-") and not tileable(n, g.size(ax))
                   for ax, n in ((ma, M), (ka, K), (na, N))):
                continue
            free = [ax for ax in wse.AXES if ax not in used]
            for st in ("0", "*") if free else ("",):
                la = _layout([ma, ka] if M else [ka], {ax: ("*" if ax == na else st)
                                                       for ax in wse.AXES})
                lb = _layout([ka, na] if N else [ka], {ax: ("*" if ax == ma else st)
                                                       for ax in wse.AXES})
                if la is None or lb is None:
                    continue
                ta, tb = (wse.tile_shape(s, lay, g) for s, lay in ((sa, la), (sb, lb)))
                mt = ta[0] if M else 1
                kt = ta[-1]
                nt = tb[1] if N else 1
                words = math.prod(ta) + math.prod(tb) + mt * nt
                if words > self.budget_words * 0.9:
                    continue
                c = (self.conv_cost(a, la) + self.conv_cost(b, lb) + self.cost.matmul(mt, kt, nt)
                     + (self.cost.combine(mt * nt, ka) if ka != "-" else 0.0)
                     + self.downstream(out, mt * nt))
                label = (f"matmul M:{ma or '-'} K:{ka} N:{na or '-'}"
                         + (f" (replicated over {','.join(free)})" if st == "*" else ""))
                options.append((c, label, _bind_local(self, a, b, la, lb)))
        local = list(options)
        if (self.options.matmul != "local" and M and N and g.width == g.height > 1):
            for ax in (("y", "x"), ("x", "y")):
                lay = wse.Layout(ax)
                if not all(tileable(n, g.size(d)) for n, d in ((M, ax[0]), (K, ax[1]))) or \
                        not all(tileable(n, g.size(d)) for n, d in ((K, ax[0]), (N, ax[1]))):
                    continue
                ta = wse.tile_shape(sa, lay, g)
                tb = wse.tile_shape(sb, lay, g)
                mt, kt, nt = ta[0], ta[1], tb[1]
                words = 3 * (math.prod(ta) + math.prod(tb)) + mt * nt  # + 2 panels each
                if words > self.budget_words * 0.9:
                    continue
                c = (self.conv_cost(a, lay) + self.conv_cost(b, lay)
                     + self.cost.summa(mt, kt, nt, g.size(ax[1])) + self.downstream(out, mt * nt))
                options.append((c, f"summa M:{ax[0]} N:{ax[1]}", _bind_summa(self, a, b, lay)))
        if self.options.matmul == "summa" and len(options) > len(local):
            options = options[len(local):]  # forced, where SUMMA applies
        if not options:
            raise CslUnsupportedError(
                f"csl backend: no placement of matmul {list(sa)} x {list(sb)} fits the "
                f"{self.budget_words * 4}-byte SRAM budget of a PE on the {g} grid; use a "
                "larger grid")
        options.sort(key=lambda o: o[0])
        i = self.index.get(op, -1)
        self.candidates[i] = [label for _, label, _ in options]
        want = self.fixed.get(i)
        cost, label, build = next((o for o in options if o[1] == want), options[0])
        self.chosen[i] = label
        w, lay = build()
        self.bind(out, w, lay)
        self.note(op, lay, f"{label} (~{cost:,.0f} cycles)")

    # ---- outputs ----
    def output(self, v: SSAValue) -> SSAValue:
        if v in self.splats or v in self.pending:
            return self.get(v, default_layout(_spec(v)[0], self.grid))
        lays = [lay for lay in self.current(v) if not lay.is_partial]
        return self.get(v, lays[0] if lays else default_layout(_spec(v)[0], self.grid))


class _Fresh:
    """A pyflame-level value the lowering makes up (e.g. the reciprocal of a divisor)."""

    def __init__(self, shape: tuple, mask: bool):
        self.shape, self.mask = tuple(shape), mask

    @property
    def type(self):  # noqa: ANN201 - quacks like an SSAValue for _spec
        from ..dialects.dtypes import bool_, float32
        from ..dialects.pyflame import tensor_type

        return tensor_type(self.shape, bool_ if self.mask else float32)


class _SplatKey(_Fresh):
    def __init__(self, value: float, spec: tuple):
        super().__init__(spec[0], spec[1].name == "bool")
        self.value = value

    def __hash__(self) -> int:
        return hash((self.value, self.shape, self.mask))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _SplatKey) and (self.value, self.shape, self.mask) == (
            other.value, other.shape, other.mask)


def _layout(dims: Sequence[str], states: dict[str, str]) -> wse.Layout | None:
    st = {a: ("" if a in dims else states[a]) for a in wse.AXES}
    try:
        return wse.Layout(tuple(dims), st["x"], st["y"])
    except wse.LayoutError:
        return None


def _operand_layout(result: wse.Layout, rshape: Sequence[int], shape: Sequence[int]
                    ) -> wse.Layout:
    """The layout an operand of ``shape`` needs for an elementwise result in ``result``."""
    off = len(rshape) - len(shape)
    dims = []
    for j, n in enumerate(shape):
        i = j + off
        dims.append(result.dims[i] if n == rshape[i] else "-")
    st = {}
    for a in wse.AXES:
        if a in dims:
            st[a] = ""
        elif a in result.dims:
            st[a] = "*"  # the operand broadcasts along a dim tiled over a
        else:
            st[a] = result.state(a)
    return wse.Layout(tuple(dims), st["x"], st["y"])


def _bind_local(p: _Planner, a, b, la: wse.Layout, lb: wse.Layout):
    def build() -> tuple[SSAValue, wse.Layout]:
        wa, wb = p.get(a, la), p.get(b, lb)
        rs, rl = wse.infer_matmul((_spec(a)[0], la), (_spec(b)[0], lb))
        w = p.emit(wse.MatmulOp(wa, wb, wse.wse_type(rs, rl)))
        for g in wse.AXES:
            if rl.partial(g):
                rs, rl = wse.infer_combine(rs, rl, g)
                w = p.emit(wse.CombineOp(g, w, wse.wse_type(rs, rl)))
        return w, rl
    return build


def _bind_summa(p: _Planner, a, b, lay: wse.Layout):
    def build() -> tuple[SSAValue, wse.Layout]:
        wa, wb = p.get(a, lay), p.get(b, lay)
        rs, rl = wse.infer_summa((_spec(a)[0], lay), (_spec(b)[0], lay), p.grid)
        return p.emit(wse.SummaOp(wa, wb, wse.wse_type(rs, rl))), rl
    return build


# ---- driver ----

def find_main(module: ModuleOp) -> func.FuncOp:
    funcs = [op for op in module.body.ops if isinstance(op, func.FuncOp)]
    mains = [f for f in funcs if f.sym_name.data == "main"] or funcs
    if len(mains) != 1:
        raise CslUnsupportedError(f"csl backend: expected one func.func @main, found "
                                  f"{len(funcs)} functions")
    return mains[0]


def grid_candidates(max_pes: int) -> list[wse.Grid]:
    out = [wse.Grid(1, 1)]
    s = 1
    while True:
        if (2 * s) * s <= max_pes:
            out.append(wse.Grid(2 * s, s))
        s *= 2
        if s * s > max_pes:
            break
        out.append(wse.Grid(s, s))
    return out


def _prepare(module: ModuleOp) -> tuple[ModuleOp, func.FuncOp]:
    clone = module.clone()
    fn = find_main(clone)
    check_supported(fn)
    expand(fn)
    return clone, fn


def _plan(fn: func.FuncOp, grid: wse.Grid, options: WseOptions,
          fixed: dict[int, str] | None = None) -> _Planner:
    p = _Planner(fn, grid, options, fixed)
    ret = None
    for op in fn.body.block.ops:
        if isinstance(op, func.ReturnOp):
            ret = op
            break
        p.lower(op)
    assert ret is not None
    outs = [p.output(v) for v in ret.operands]
    for a in list(p.pending):  # inputs nobody reads still get a place
        if p.pending[a][0] == "arg":
            p._place_input(a, default_layout(_spec(a)[0], grid))
    p.block.add_op(wse.ReturnOp(*outs))
    return p


LOOKAHEAD = 4  # candidates per matmul tried with the whole program priced


def _search(fn: func.FuncOp, grid: wse.Grid, options: WseOptions
            ) -> tuple[_Planner, wse.ProgramOp, MemoryPlan]:
    """Plan greedily, then revisit each matmul: try its cheapest candidates, each
    with the rest of the program planned greedily after it, and keep the one whose
    whole program the cycle model prices lowest (and whose memory plan fits)."""
    budget = options.budget or default_budget()

    def attempt(fixed: dict[int, str]):
        p = _plan(fn, grid, options, fixed)
        program = wse.ProgramOp("main", grid, p.block)
        try:
            memory = plan_memory(program, budget)
        except MemoryBudgetError as e:
            return INF, p, program, e
        return program_cost(program), p, program, memory

    best = attempt({})
    fixed: dict[int, str] = {}
    for i in sorted(best[1].candidates):
        chosen = best[1].chosen[i]
        for label in best[1].candidates[i][:LOOKAHEAD]:
            if label == chosen:
                continue
            trial = attempt({**fixed, i: label})
            if trial[0] < best[0]:
                best, chosen = trial, label
        fixed[i] = chosen
    cost, p, program, memory = best
    if isinstance(memory, Exception):
        raise memory
    return p, program, memory


def _lower_on(fn: func.FuncOp, grid: wse.Grid, options: WseOptions) -> WseModule:
    p, program, memory = _search(fn, grid, options)
    module = ModuleOp([program])
    module.verify()
    ret = find_return(fn)
    dtypes = [_spec(v)[1] for v in ret.operands]
    return WseModule(module, program, grid, p.inputs, dtypes, memory, p.choices)


def find_return(fn: func.FuncOp) -> func.ReturnOp:
    last = fn.body.block.last_op
    assert isinstance(last, func.ReturnOp)
    return last


def lower_to_wse(module: ModuleOp, options: WseOptions | None = None) -> WseModule:
    """The pyflame module's @main as a wse.program (see the module docstring)."""
    options = options or WseOptions()
    _, fn = _prepare(module)
    if options.grid is not None:
        return _lower_on(fn, options.grid, options)
    errors = []
    for grid in grid_candidates(options.max_pes):
        try:
            return _lower_on(fn, grid, options)
        except (MemoryBudgetError, CslUnsupportedError) as e:
            if isinstance(e, CslUnsupportedError) and "fits" not in str(e):
                raise
            errors.append(f"{grid}: {e}")
    raise MemoryBudgetError(
        f"csl backend: the program does not fit any grid of at most {options.max_pes} PEs "
        f"(largest tried: {errors[-1] if errors else '-'})", 0, options.budget or 0)


def annotate_layouts(module: ModuleOp, options: WseOptions) -> None:
    """The ``wse-layout`` pass: record the chosen layouts on the pyflame ops."""
    from xdsl.dialects.builtin import StringAttr

    fn = find_main(module)
    check_supported(fn)
    expand(fn)
    grid = options.grid
    if grid is None:
        grid = lower_to_wse(module, options).grid
    p = _plan(fn, grid, options)
    for op, (lay, scheme) in p.annotations.items():
        op.attributes["wse.layout"] = wse.LayoutAttr.get(lay)
        op.attributes["wse.scheme"] = StringAttr(scheme)
    module.attributes["wse.grid"] = StringAttr(str(grid))


def target_wse(module: ModuleOp, stream) -> None:
    """``pyflame-opt -t wse``: the ``wse.program`` of a pyflame module (``wse.grid`` module
    attribute, e.g. ``"4x4"``, else automatic)."""
    from xdsl.dialects.builtin import StringAttr

    grid = None
    g = module.attributes.get("wse.grid")
    if isinstance(g, StringAttr) and g.data != "auto":
        w, _, h = g.data.partition("x")
        grid = wse.Grid(int(w), int(h))
    low = lower_to_wse(module, WseOptions(grid=grid))
    stream.write(str(low.module) + "\n")

"""``wse`` -> ``csl`` (+ ``csl_ext``): one layout module and one PE program.

Every PE runs the same program (``pe_program.csl``) with its coordinates as
params. The generated program:

* allocates one zero-filled ``[n]f32`` array per buffer of the memory plan
  (``passes/wse_memory.py``) and exports the ones holding program inputs and
  outputs (``in_0``, ``out_0``, ... for memcpy);
* runs the ops of the ``wse.program`` in order inside one local task
  (``main``), which the exported ``compute`` function activates and which
  ends, on every PE, with the memcpy module's ``unblock_cmd_stream()``;
* does local math with DSD builtins over whole tiles (``@fadds``,
  ``@fsubs``, ``@fmuls``, ``@fmaxs``, ``@fnegs``, ``@fmovs``, ``@fmacs``),
  loops of DSD ops for broadcasting, reductions and matmul, and scalar loops
  (``math_lib`` calls, ``arith``) for what has no DSD builtin (exp, log,
  tanh, sigmoid, division, comparisons);
* communicates with fabric DSDs on static routes. Channels per grid axis:
  a two-color *chain* toward index 0 (``wse.combine``), a *bcast* color from
  index 0 outward and a *relay* color toward index 0 that any PE may inject
  into (``wse.broadcast``/``wse.gather``/``wse.summa`` from any root: the root
  relays to index 0, which multicasts), and ``|d| + 1`` colors per shift
  distance. Colors come from 0 upward around the reserved ids; queues 2-7
  (WSE-3 binds each to its color with ``@initialize_queue``).

Ops whose operands live on one line of PEs run only there (``if (px == k)``).
Fabric operations are synchronous: every PE runs the same sequence of
operations, each color has one upstream per PE, so wavelets arrive in order.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects import arith, csl, memref, scf
from xdsl.dialects.builtin import (
    AffineMapAttr,
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    i16,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.utils.exceptions import DiagnosticException

from ..dialects import csl_ext, wse
from ..passes.wse_memory import MemoryPlan, is_immediate, plan_memory

F32 = Float32Type()
RESERVED = frozenset({21, 22, 23, 27, 28, 29, 30, 31})
ROUTABLE = [c for c in range(24) if c not in RESERVED]  # 21 colors
QUEUES = (2, 3, 4, 5, 6, 7)  # 0 and 1 belong to memcpy on WSE-3
ARCHS = ("wse2", "wse3")
PROGRAM_FILE = "pe_program"
LAUNCH = "compute"

DIRS = {"x": ("west", "east"), "y": ("north", "south")}  # (toward index 0, away)


class CslLoweringError(DiagnosticException):
    """The wse program cannot be lowered (too many colors or queues, bad op)."""


class ColorBudgetError(CslLoweringError):
    """The program needs more routable colors than the fabric has."""


# ---- what the host needs to know ----


@dataclass(frozen=True)
class IoSpec:
    """A host-visible tensor: its memcpy symbol, placement and PE region."""

    name: str
    shape: tuple[int, ...]
    dims: tuple[str, ...]  # layout dims: "x", "y" or "-"
    tile: tuple[int, ...]
    region: tuple[int, int, int, int]  # x0, y0, w, h
    mask: bool = False

    @property
    def elems(self) -> int:
        return max(1, math.prod(self.tile))

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "shape": list(self.shape), "dims": list(self.dims),
                "tile": list(self.tile), "region": list(self.region), "mask": self.mask}

    @staticmethod
    def from_json(d: dict[str, Any]) -> IoSpec:
        return IoSpec(d["name"], tuple(d["shape"]), tuple(d["dims"]), tuple(d["tile"]),
                      tuple(d["region"]), bool(d.get("mask", False)))  # type: ignore[arg-type]


def io_spec(name: str, t: wse.TensorTypeAttr, grid: wse.Grid) -> IoSpec:
    lay = t.layout
    region = []
    for a in wse.AXES:
        st = lay.state(a)
        if st == "dim":
            region.append((0, grid.size(a)))
        elif st == "*":
            region.append((0, 1))
        else:
            region.append((int(st), 1))
    (x0, w), (y0, h) = region
    return IoSpec(name, t.dims, lay.dims, t.tile(grid), (x0, y0, w, h), t.is_mask)


@dataclass
class CslProgram:
    """The lowered program: the csl module plus what the host side needs."""

    module: ModuleOp
    grid: wse.Grid
    arch: str
    inputs: list[IoSpec]
    outputs: list[IoSpec]
    memory: MemoryPlan
    colors: dict[str, list[int]]
    task_id: int
    launch: str = LAUNCH
    constants: dict[str, Any] = field(default_factory=dict)  # host-provided inputs by name

    @property
    def memory_bytes(self) -> int:
        return self.memory.bytes


# ---- building blocks ----


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
        return self.add(csl.IncrementDsdOffsetOp.build(
            operands=[d, self.i16(offset)], properties={"elem_type": F32},
            result_types=[csl.DsdType(csl.DsdKind.mem1d_dsd)]))

    def set_len(self, d: SSAValue, n) -> SSAValue:
        return self.add(csl.SetDsdLengthOp.build(
            operands=[d, self.i16(n)], result_types=[csl.DsdType(csl.DsdKind.mem1d_dsd)]))

    def fab(self, kind: csl.DsdKind, n: int | SSAValue, color: SSAValue, queue: int) -> SSAValue:
        return self.add(csl_ext.GetFabDsdOp(kind, self.i16(n), color, queue))

    def builtin(self, name: str, *args: SSAValue, then: tuple[str, int] | None = None,
                asynchronous: bool = False) -> None:
        """A DSD builtin; ``then=("activate"|"unblock", task id)`` makes it asynchronous
        with that completion action (``asynchronous`` alone: no action)."""
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


_BUILTIN: dict[str, type[csl.BuiltinDsdOp]] = {
    "fadds": csl.FaddsOp, "fsubs": csl.FsubsOp, "fmuls": csl.FmulsOp, "fmaxs": csl.FmaxsOp,
    "fnegs": csl.FnegsOp, "fmovs": csl.FmovsOp, "fmacs": csl.FmacsOp, "fabss": csl.FabssOp,
}


# ---- channels (colors and routes) ----


@dataclass
class Channel:
    kind: str  # chain | bcast | relay | shift
    axis: str
    colors: list[int]
    distance: int = 0
    qin: int = 0
    qout: int = 0
    # per-PE color values (module level), filled while lowering
    send: SSAValue | None = None
    recv: SSAValue | None = None


def _channel_key(op: Operation) -> list[tuple]:
    if isinstance(op, wse.CombineOp):
        return [("chain", op.axis.data, 0)]
    if isinstance(op, wse.BroadcastOp):
        k = op.input.type.layout.held_at(op.axis.data)
        return [("bcast", op.axis.data, 0)] + ([("relay", op.axis.data, 0)] if k else [])
    if isinstance(op, wse.GatherOp):
        return [("bcast", op.axis.data, 0), ("relay", op.axis.data, 0)]
    if isinstance(op, wse.SummaOp):
        a, b = op.result.type.layout.dims
        # A's panels travel along b (its K axis), B's along a
        return [(k, ax, 0) for ax in (b, a) for k in ("bcast", "relay")]
    if isinstance(op, wse.ShiftOp):
        return [("shift", op.axis.data, op.distance.value.data)]
    return []


_NCOLORS = {"chain": 2, "bcast": 1, "relay": 1}


# ---- the lowering ----


class _Lowerer:
    def __init__(self, program: wse.ProgramOp, arch: str, plan: MemoryPlan | None,
                 budget: int | None, stop_after: int | None = None, overlap: bool = True):
        self.stop_after, self.overlap = stop_after, overlap
        if arch not in ARCHS:
            raise CslLoweringError(f"csl backend: --arch must be one of {ARCHS}, not {arch!r}")
        self.program, self.arch = program, arch
        self.grid = program.grid
        self.plan = plan or plan_memory(program, budget)
        self.channels: dict[tuple, Channel] = {}
        self._math: SSAValue | None = None
        self.bufs: list[SSAValue] = []
        self.valid_cache: dict[tuple, SSAValue] = {}

    # -- colors --
    def allocate_channels(self) -> None:
        wanted: list[tuple] = []
        for op in self.program.body.block.ops:
            for key in _channel_key(op):
                kind, axis, d = key
                if self.grid.size(axis) > 1 and key not in wanted:
                    wanted.append(key)
        need = sum(_NCOLORS.get(k, abs(d) + 1) for k, _, d in wanted)
        if need > len(ROUTABLE):
            detail = ", ".join(f"{k} along {a}" + (f" by {d}" if k == "shift" else "") +
                               f" ({_NCOLORS.get(k, abs(d) + 1)})" for k, a, d in wanted)
            raise ColorBudgetError(
                f"csl backend: the program needs {need} colors ({detail}) but only "
                f"{len(ROUTABLE)} are routable (0-23 without the reserved "
                f"{sorted(c for c in RESERVED if c < 24)})")
        free = iter(ROUTABLE)
        for i, (kind, axis, d) in enumerate(wanted):
            n = _NCOLORS.get(kind, abs(d) + 1)
            q = QUEUES[i % len(QUEUES)]
            if i >= len(QUEUES) and self.arch == "wse3":
                raise CslLoweringError(
                    f"csl backend: the program needs {len(wanted)} fabric channels but WSE-3 "
                    f"has {len(QUEUES)} input queues for user colors (each bound to one color)")
            self.channels[(kind, axis, d)] = Channel(kind, axis, [next(free) for _ in range(n)],
                                                     d, q, q)
        used = {c for ch in self.channels.values() for c in ch.colors}
        # local task ids never double as colors (on WSE-2 a data task id is a color)
        self.free_task_ids = [t for t in [*range(len(ROUTABLE)), 24, 25, 26]
                              if t not in used and t not in RESERVED]
        self.task_id = self.free_task_ids.pop(0)

    def channel(self, kind: str, axis: str, d: int = 0) -> Channel:
        return self.channels[(kind, axis, d)]

    def math_lib(self) -> SSAValue:
        assert self._math is not None, "math library used before import"
        return self._math

    # -- entry --
    def run(self) -> CslProgram:
        self.allocate_channels()
        prog = self._program_module()
        layout = self._layout_module()
        module = ModuleOp([layout, prog])
        inputs = [io_spec(f"in_{i}", a.type, self.grid)
                  for i, a in enumerate(self.program.body.block.args)]
        outputs = [io_spec(f"out_{i}", v.type, self.grid)
                   for i, v in enumerate(self.program.return_op.operands)]
        colors = {f"{k}_{a}" + (f"_{d}" if k == "shift" else ""): ch.colors
                  for (k, a, d), ch in self.channels.items()}
        return CslProgram(module, self.grid, self.arch, inputs, outputs, self.plan, colors,
                          self.task_id)

    # ---- the PE program ----
    def _program_module(self) -> csl.CslModuleOp:
        block = Block()
        m = Emit(block, self)
        self.mod = m
        ct = csl.ComptimeStructType()
        memcpy_params = m.add(csl.ParamOp("memcpy_params", ct))
        self.px = m.add(csl.ParamOp("px", i16))
        self.py = m.add(csl.ParamOp("py", i16))
        self.px.name_hint, self.py.name_hint = "px", "py"
        self.sys_mod = m.add(csl.ImportModuleConstOp("<memcpy/memcpy>", memcpy_params))
        self.sys_mod.name_hint = "sys_mod"
        if self._needs_math():
            self._math = m.add(csl.ImportModuleConstOp("<math>"))
            self._math.name_hint = "math_lib"
        for i, n in enumerate(self.plan.sizes):
            t = MemRefType(F32, [max(n, 1)])
            b = m.add(csl.ZerosOp(t))
            b.name_hint = f"buf{i}"
            self.bufs.append(b)
        self._exports(m)
        self._channel_values(m)
        # the main task: the ops of the program in order (an op may continue the
        # program in a new task: SUMMA's steps run as a chain of tasks), then
        # unblock the command stream
        body = Block()
        self.tasks: list[tuple[str, int, Block]] = [("main", self.task_id, body)]
        e = Emit(body, self)
        for i, op in enumerate(self.program.body.block.ops):
            if isinstance(op, wse.ReturnOp) or (self.stop_after is not None
                                                and i > self.stop_after):
                break
            e = self._lower_op(e, op) or e
        e.add(csl.MemberCallOp("unblock_cmd_stream", None, self.sys_mod, []))
        for name, tid, blk in self.tasks:
            blk.add_op(csl.ReturnOp())
            m.add(csl.TaskOp(name, ([], None), Region(blk), task_kind=csl.TaskKind.LOCAL,
                             id=tid))
        launch = Block()
        launch.add_op(csl.ActivateOp(self.task_id, csl.TaskKind.LOCAL))
        launch.add_op(csl.ReturnOp())
        m.add(csl.FuncOp(LAUNCH, ([], None), Region(launch)))
        from xdsl.dialects.builtin import FunctionType

        m.add(csl.SymbolExportOp(LAUNCH, FunctionType.from_lists([], [])))
        return csl.CslModuleOp(regions=[Region(block)], properties={
            "kind": csl.ModuleKindAttr(csl.ModuleKind.PROGRAM),
            "sym_name": StringAttr(PROGRAM_FILE)})

    def _needs_math(self) -> bool:
        return any(isinstance(op, wse.MapOp) and op.fn.data in _MATH_FNS
                   for op in self.program.body.block.ops)

    def _exports(self, m: Emit) -> None:
        ptr_t = csl.PtrType.get(F32, is_single=False, is_const=False)
        names: list[tuple[str, SSAValue]] = []
        for i, a in enumerate(self.program.body.block.args):
            names.append((f"in_{i}", a))
        for i, v in enumerate(self.program.return_op.operands):
            names.append((f"out_{i}", v))
        for name, v in names:
            if is_immediate(v):
                raise CslLoweringError("csl backend: a program output cannot be an immediate")
            ptr = m.add(csl.AddressOfOp(self.bufs[self.plan.of[v]], ptr_t))
            ptr.name_hint = f"{name}_ptr"
            m.add(csl.SymbolExportOp(name, ptr))

    def coord(self, axis: str) -> SSAValue:
        return self.px if axis == "x" else self.py

    def _channel_values(self, m: Emit) -> None:
        """Per-PE colors of each channel, and (WSE-3) queue bindings."""
        for ch in self.channels.values():
            q = self.coord(ch.axis)
            cols = [m.add(csl.GetColorOp(_i_op(m, c))) for c in ch.colors]
            if ch.kind == "chain":
                even = m.icmp("eq", m.add(arith.RemSIOp(q, m.i16(2))), 0)
                ch.send = m.select(even, cols[0], cols[1])
                ch.recv = m.select(even, cols[1], cols[0])
            elif ch.kind == "shift":
                n = len(cols)
                d = ch.distance
                own = m.add(arith.RemSIOp(q, m.i16(n)))
                src = m.add(arith.RemSIOp(m.iadd(q, (n - d % n) % n if d > 0 else -d), m.i16(n)))
                ch.send = _pick(m, own, cols)
                ch.recv = _pick(m, src, cols)
            else:
                ch.send = ch.recv = cols[0]
            ch.send.name_hint = f"{ch.kind}_{ch.axis}_send"
            if ch.recv is not ch.send:
                ch.recv.name_hint = f"{ch.kind}_{ch.axis}_recv"
            m.add(csl_ext.InitializeQueueOp(ch.recv, ch.qin))
            m.add(csl_ext.InitializeQueueOp(ch.send, ch.qout, output=True))

    # ---- valid extents ----
    def valid(self, e: Emit, n: int, axis: str) -> SSAValue | int:
        """Valid elements of a dim of size n tiled over axis, on this PE."""
        g = self.grid.size(axis)
        t = wse.block_size(n, g)
        if g == 1 or n % t == 0 and n // t == g:
            return t
        key = (n, axis)
        if key not in self.valid_cache:
            m = self.mod
            rest = m.isub(n, m.imul(self.coord(axis), t))
            v = m.imin(rest, t)
            v.name_hint = f"valid_{axis}{n}"
            self.valid_cache[key] = v
        return self.valid_cache[key]

    def extent(self, e: Emit, t: wse.TensorTypeAttr, dim: int) -> SSAValue | int:
        d = t.layout.dims[dim]
        return t.dims[dim] if d == wse.NONE else self.valid(e, t.dims[dim], d)

    # ---- participation ----
    def guard(self, e: Emit, lay: wse.Layout, axes: Sequence[str] = wse.AXES
              ) -> SSAValue | None:
        conds = []
        for a in axes:
            k = lay.held_at(a)
            if k is not None and self.grid.size(a) > 1:
                conds.append(e.icmp("eq", self.coord(a), k))
        if not conds:
            return None
        c = conds[0]
        for other in conds[1:]:
            c = e.add(arith.AndIOp(c, other))
        return c

    def buf(self, v: SSAValue) -> SSAValue:
        return self.bufs[self.plan.of[v]]

    # ---- ops ----
    def _lower_op(self, e: Emit, op: Operation) -> Emit | None:
        handler = _HANDLERS.get(type(op))
        if handler is None:
            raise CslLoweringError(f"csl backend: no CSL lowering for {op.name}")
        return handler(self, e, op)

    def new_task(self, name: str) -> tuple[int, Emit]:
        """A new local task (its id and body); its code is added by the caller."""
        if not self.free_task_ids:
            raise CslLoweringError("csl backend: out of local task ids")
        tid = self.free_task_ids.pop(0)
        body = Block()
        self.tasks.append((f"{name}_{tid}", tid, body))
        return tid, Emit(body, self)

    def variable(self, name: str, init: int = 0) -> SSAValue:
        v = self.mod.add(csl.VariableOp.build(properties={"default": IntegerAttr(init, i16)},
                                              result_types=[csl.VarType(i16)]))
        v.name_hint = name
        return v

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

    # -- matmul --
    def _op_matmul(self, e: Emit, op: wse.MatmulOp) -> None:
        ta, tb, tc = op.lhs.type, op.rhs.type, op.result.type
        A, B, C = self.buf(op.lhs), self.buf(op.rhs), self.buf(op.result)
        with e.when(self.guard(e, tc.layout)) as g:
            vk = self.extent(g, ta, len(ta.dims) - 1)
            self.local_matmul(g, A, ta.tile(self.grid), B, tb.tile(self.grid), C, vk, True)

    def local_matmul(self, e: Emit, A, ta: tuple, B, tb: tuple, C, vk, zero: bool,
                     k_off_a: SSAValue | int = 0, k_off_b: SSAValue | int = 0) -> None:
        """C (+)= A[:, k] B[k, :] over k < vk; tiles row-major (1-D: vectors).
        ``k_off_a``/``k_off_b``: where k = 0 starts in A's columns / B's rows."""
        if len(ta) == 1 and len(tb) == 1:  # dot product
            acc = e.f32(0.0) if zero else e.load(C, 0)
            body = Block(arg_types=[i16, F32])
            b = Emit(body, self)
            k, a = body.args
            prod = b.fbin(arith.MulfOp, b.load(A, b.iadd(k, k_off_a)),
                          b.load(B, b.iadd(k, k_off_b)))
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
            kb, n = tb
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
        kb, n = tb
        if zero:
            e.builtin("fmovs", e.dsd(C, m * n), e.f32(0.0))
        if m >= n:  # columns of C: C[:, j] += A[:, k] * B[k, j]
            ccol0, acol0 = e.dsd(C, m, 0, n), e.dsd(A, m, 0, ka)
            with e.loop(0, vk) as (k, b):
                a_k = b.shift_dsd(acol0, b.iadd(k, k_off_a))
                brow = b.imul(b.iadd(k, k_off_b), n)
                with b.loop(0, n) as (j, c):
                    cj = c.shift_dsd(ccol0, j)
                    c.builtin("fmacs", cj, cj, a_k, c.load(B, c.iadd(brow, j)))
        else:  # rows of C: C[i, :] += B[k, :] * A[i, k]
            crow0, brow0 = e.dsd(C, n), e.dsd(B, n)
            with e.loop(0, m) as (i, b):
                ci = b.shift_dsd(crow0, b.imul(i, n))
                arow = b.iadd(b.imul(i, ka), k_off_a)
                with b.loop(0, vk) as (k, c):
                    c.builtin("fmacs", ci, ci, c.shift_dsd(brow0, c.imul(c.iadd(k, k_off_b), n)),
                              c.load(A, c.iadd(arow, k)))

    OVERLAP_WORDS = 64  # smaller panels move faster than the task switches cost

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

    # ---- the layout module ----
    def _layout_module(self) -> csl.CslModuleOp:
        block = Block()
        m = Emit(block, self)
        W, H = self.grid.width, self.grid.height
        w = m.add(_i(W))
        h = m.add(_i(H))
        w.name_hint, h.name_hint = "width", "height"
        init = m.add(csl.ConstStructOp(("width", w), ("height", h)))
        init.name_hint = "memcpy_init"
        memcpy = m.add(csl.ImportModuleConstOp("<memcpy/get_params>", init))
        memcpy.name_hint = "memcpy"
        body = Block()
        lb = Emit(body, self)
        lb.add(csl.SetRectangleOp.build(operands=[w, h]))
        with lb.loop(0, w) as (px, bx):
            px.name_hint = "px"
            mp = bx.add(csl.MemberCallOp("get_params", csl.ComptimeStructType(), memcpy, [px]))
            mp.name_hint = "memcpy_params"
            with bx.loop(0, h) as (py, by):
                py.name_hint = "py"
                params = by.add(csl.ConstStructOp(("memcpy_params", mp), ("px", px), ("py", py)))
                params.name_hint = "tile_params"
                by.add(csl.SetTileCodeOp(f"{PROGRAM_FILE}.csl", px, py, params))
                for ch in self.channels.values():
                    self._routes(by, ch, px if ch.axis == "x" else py, px, py)
        m.add(csl.LayoutOp(Region(body)))
        return csl.CslModuleOp(regions=[Region(block)], properties={
            "kind": csl.ModuleKindAttr(csl.ModuleKind.LAYOUT), "sym_name": StringAttr("layout")})

    def _routes(self, e: Emit, ch: Channel, q: SSAValue, px: SSAValue, py: SSAValue) -> None:
        g = self.grid.size(ch.axis)
        near, far = DIRS[ch.axis]  # toward index 0, away from it

        def route(h: Emit, color: SSAValue, rx: list[str], tx: list[str]) -> None:
            h.add(csl_ext.SetColorConfigOp(px, py, color, rx, tx))

        cols = [e.add(csl.GetColorOp(_i_op(e, c))) for c in ch.colors]
        last = g - 1
        if ch.kind == "chain":  # sends toward index 0
            even = e.icmp("eq", e.add(arith.RemSIOp(q, e.i16(2))), 0)
            send = e.select(even, cols[0], cols[1])
            recv = e.select(even, cols[1], cols[0])
            send.name_hint, recv.name_hint = f"chain_{ch.axis}_send", f"chain_{ch.axis}_recv"
            with e.when(e.icmp("sgt", q, 0)) as h:
                route(h, send, ["ramp"], [near])
            with e.when(e.icmp("slt", q, last)) as h:
                route(h, recv, [far], ["ramp"])
        elif ch.kind == "bcast":  # from index 0 outward
            with e.branch(e.icmp("eq", q, 0)) as (first, rest):
                route(first, cols[0], ["ramp"], [far])
                with rest.branch(rest.icmp("eq", q, last)) as (end, mid):
                    route(end, cols[0], [near], ["ramp"])
                    route(mid, cols[0], [near], ["ramp", far])
        elif ch.kind == "relay":  # any PE toward index 0
            with e.branch(e.icmp("eq", q, 0)) as (first, rest):
                route(first, cols[0], [far], ["ramp"])
                with rest.branch(rest.icmp("eq", q, last)) as (end, mid):
                    route(end, cols[0], ["ramp"], [near])
                    route(mid, cols[0], [far, "ramp"], [near])
        else:  # shift: explicit roles per coordinate
            d = ch.distance
            out_dir = far if d > 0 else near
            in_dir = near if d > 0 else far
            nc = len(cols)
            for p in range(g):
                roles = _shift_roles(p, d, g, nc)
                if not roles:
                    continue
                with e.when(e.icmp("eq", q, p)) as h:
                    for c, role in roles.items():
                        if role == "send":
                            route(h, cols[c], ["ramp"], [out_dir])
                        elif role == "recv":
                            route(h, cols[c], [in_dir], ["ramp"])
                        else:
                            route(h, cols[c], [in_dir], [out_dir])


def _shift_roles(p: int, d: int, g: int, nc: int) -> dict[int, str]:
    """Color index -> send/recv/pass at coordinate p for a shift by d (d+1 colors)."""
    step = 1 if d > 0 else -1
    roles: dict[int, str] = {}
    for src in range(g):
        dst = src + d
        if not 0 <= dst < g:
            continue
        c = src % nc
        if src == p:
            roles[c] = "send"
        elif dst == p:
            roles[c] = "recv"
        elif min(src, dst) < p < max(src, dst):
            roles[c] = "pass"
    del step
    return roles


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


# ---- elementwise code generation ----

_MATH_FNS = {"exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "sin", "cos"}
# fn -> DSD builtin for the whole-vector form (operands dest, src0, src1)
_DSD_BINARY = {"add": "fadds", "sub": "fsubs", "mul": "fmuls", "maximum": "fmaxs",
               "and": "fmuls", "or": "fmaxs"}
_DSD_UNARY = {"copy": "fmovs", "from_mask": "fmovs", "neg": "fnegs", "abs": "fabss"}


class _MapGen:
    """Code for one ``wse.map``: whole-tile DSD ops where a builtin exists,
    loops of DSD ops over rows/columns for broadcasts, scalar loops otherwise."""

    def __init__(self, low: _Lowerer, e: Emit, op: wse.MapOp):
        self.low, self.e, self.op = low, e, op
        self.fn = op.fn.data
        grid = low.grid
        t = op.result.type
        tile = t.tile(grid)
        self.r0, self.r1 = (tile + (1, 1))[:2] if len(tile) < 2 else tile
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
        dsd_ok = fn in _DSD_BINARY or fn in _DSD_UNARY or fn in ("relu", "square", "not")
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
        fn = self.fn
        if fn in _DSD_UNARY:
            e.builtin(_DSD_UNARY[fn], dst, srcs[0])
        elif fn == "relu":
            e.builtin("fmaxs", dst, srcs[0], e.f32(0.0))
        elif fn == "square":
            e.builtin("fmuls", dst, srcs[0], srcs[0])
        elif fn == "not":
            e.builtin("fsubs", dst, e.f32(1.0), srcs[0])
        else:
            a, b = srcs
            if a.type == F32 and fn != "sub":  # commutative: keep the scalar second
                a, b = b, a
            # (D, D, D), (D, D, f32) and, for s - v, (D, f32, D) are valid signatures
            e.builtin(_DSD_BINARY[fn], dst, a, b)

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
    if fn in ("exp", "log", "sqrt", "tanh", "sin", "cos"):
        return e.math(fn, x)
    if fn == "rsqrt":
        return e.fbin(arith.DivfOp, one(), e.math("sqrt", x))
    if fn == "reciprocal":
        return e.fbin(arith.DivfOp, one(), x)
    if fn == "sigmoid":
        ex = e.math("exp", e.fbin(arith.MulfOp, x, e.f32(-1.0)))
        return e.fbin(arith.DivfOp, one(), e.fbin(arith.AddfOp, one(), ex))
    if fn == "sign":
        neg = e.select(e.fcmp("olt", x, zero()), e.f32(-1.0), x)
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


_HANDLERS = {
    wse.ConstantOp: _Lowerer._op_constant,
    wse.ReshapeOp: _Lowerer._op_reshape,
    wse.MapOp: _Lowerer._op_map,
    wse.ReduceOp: _Lowerer._op_reduce,
    wse.CombineOp: _Lowerer._op_combine,
    wse.BroadcastOp: _Lowerer._op_broadcast,
    wse.GatherOp: _Lowerer._op_gather,
    wse.ScatterOp: _Lowerer._op_scatter,
    wse.ShiftOp: _Lowerer._op_shift,
    wse.TransposeOp: _Lowerer._op_transpose,
    wse.MatmulOp: _Lowerer._op_matmul,
    wse.SummaOp: _Lowerer._op_summa,
}


def find_program(module: ModuleOp) -> wse.ProgramOp:
    progs = [op for op in module.body.ops if isinstance(op, wse.ProgramOp)]
    if len(progs) != 1:
        raise CslLoweringError(f"csl backend: expected one wse.program, found {len(progs)}")
    return progs[0]


def lower_to_csl(module_or_program: ModuleOp | wse.ProgramOp, arch: str = "wse2",
                 plan: MemoryPlan | None = None, budget: int | None = None,
                 stop_after: int | None = None, overlap: bool = True) -> CslProgram:
    """Lower the (single) ``wse.program`` to a module of two ``csl.module`` ops.
    ``overlap=False``: SUMMA's transfers stay synchronous (no task chain).
    ``stop_after=i`` (debugging) ends the launched task after the i-th op."""
    program = (module_or_program if isinstance(module_or_program, wse.ProgramOp)
               else find_program(module_or_program))
    out = _Lowerer(program, arch, plan, budget, stop_after, overlap).run()
    out.module.verify()
    return out

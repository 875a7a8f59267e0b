"""``wse`` -> ``csl`` (+ ``csl_ext``): one layout module and one PE program.

Every PE runs the same program (``pe_program.csl``) with its coordinates as
params. The generated program:

* allocates one zero-filled ``[n]f32`` array per buffer of the memory plan
  (``lowering/wse_memory.py``) and exports the ones holding program inputs and
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

The code is split along its seams in ``lowering/wse_to_csl/``: the builder
(``builder.py``), host artifacts (``host.py``), fabric, colors and routes
(``fabric.py``), per-op PE code (``local_ops.py``, ``comm_ops.py``) and
elementwise code generation (``map_gen.py``); this module holds the driver.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from xdsl.dialects import arith, csl
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp, StringAttr, i16
from xdsl.ir import Block, Operation, Region, SSAValue

from ..dialects import wse
from ..dialects.wse_target import ARCHS, SDK_VERSIONS, WSE_FNS
from .csl_printer import ARCH_ATTR, SDK_ATTR
from .wse_memory import MemoryPlan, is_immediate, plan_memory
from .wse_to_csl.builder import F16, F32, Emit
from .wse_to_csl.comm_ops import CommOpsMixin
from .wse_to_csl.fabric import Channel, FabricMixin
from .wse_to_csl.host import (
    HOST_ATTR,
    LAUNCH,
    PROGRAM_FILE,
    ColorBudgetError,
    CslLoweringError,
    CslProgram,
    IoSpec,
    io_spec,
)
from .wse_to_csl.local_ops import LocalOpsMixin

__all__ = ["HOST_ATTR", "LAUNCH", "PROGRAM_FILE", "ColorBudgetError", "CslLoweringError",
           "CslProgram", "IoSpec", "convert_to_csl", "find_program", "io_spec", "lower_to_csl"]


class _Lowerer(FabricMixin, LocalOpsMixin, CommOpsMixin):
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
    # A hand-written sweep, not rewrite patterns: one wse op becomes code in a task body
    # that may continue in a new task (SUMMA), and every PE must run the ops in order.
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
        for i, n in enumerate(self.plan.sizes):  # sizes in words; f16 buffers: 2 per word
            t = MemRefType(F16, [max(2 * n, 1)]) if i in self.plan.half else \
                MemRefType(F32, [max(n, 1)])
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
        return any(isinstance(op, wse.MapOp) and WSE_FNS[op.fn.data].math is not None
                   for op in self.program.body.block.ops)

    def _exports(self, m: Emit) -> None:
        names: list[tuple[str, SSAValue]] = []
        for i, a in enumerate(self.program.body.block.args):
            names.append((f"in_{i}", a))
        for i, v in enumerate(self.program.return_op.operands):
            names.append((f"out_{i}", v))
        for name, v in names:
            if is_immediate(v):
                raise CslLoweringError("csl backend: a program output cannot be an immediate")
            buf = self.bufs[self.plan.of[v]]
            ptr_t = csl.PtrType.get(buf.type.element_type, is_single=False, is_const=False)
            ptr = m.add(csl.AddressOfOp(buf, ptr_t))
            ptr.name_hint = f"{name}_ptr"
            m.add(csl.SymbolExportOp(name, ptr))

    def coord(self, axis: str) -> SSAValue:
        return self.px if axis == "x" else self.py

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
    wse.RelayoutOp: _Lowerer._op_relayout,
    wse.BatchMatmulOp: _Lowerer._op_batch_matmul,  # batch dims over the grid (issue #16)
    # windows of tiles (issue #16)
    wse.SliceOp: _Lowerer._op_slice,
    wse.PadOp: _Lowerer._op_pad,
    wse.ConcatOp: _Lowerer._op_concat,
    wse.PermuteOp: _Lowerer._op_permute,
    wse.TakeRowsOp: _Lowerer._op_take_rows,
    wse.AddRowsOp: _Lowerer._op_add_rows,
}


def find_program(module: ModuleOp) -> wse.ProgramOp:
    progs = [op for op in module.body.ops if isinstance(op, wse.ProgramOp)]
    if len(progs) != 1:
        raise CslLoweringError(f"csl backend: expected one wse.program, found {len(progs)}")
    return progs[0]


def lower_to_csl(module_or_program: ModuleOp | wse.ProgramOp, arch: str = "wse2",
                 plan: MemoryPlan | None = None, budget: int | None = None,
                 stop_after: int | None = None, overlap: bool = True,
                 sdk: int = 2) -> CslProgram:
    """Lower the (single) ``wse.program`` to a module of two ``csl.module`` ops.
    ``overlap=False``: SUMMA's transfers stay synchronous (no task chain).
    ``stop_after=i`` (debugging) ends the launched task after the i-th op.
    ``sdk``: the SDK major version whose idioms the printed CSL uses (1 or 2)."""
    if sdk not in SDK_VERSIONS:
        raise CslLoweringError(f"csl backend: sdk must be one of {SDK_VERSIONS}, not {sdk!r}")
    program = (module_or_program if isinstance(module_or_program, wse.ProgramOp)
               else find_program(module_or_program))
    out = _Lowerer(program, arch, plan, budget, stop_after, overlap).run()
    out.module.verify()
    out.module.attributes[SDK_ATTR] = IntegerAttr(sdk, 32)
    out.module.attributes[ARCH_ATTR] = StringAttr(arch)
    return out


def convert_to_csl(module: ModuleOp, arch: str = "wse2", plan: MemoryPlan | None = None,
                   budget: int | None = None, overlap: bool = True, sdk: int = 2) -> CslProgram:
    """``convert-wse-to-csl``: replace the module's ``wse.program`` by the layout and
    PE-program ``csl.module`` ops side by side (the form xDSL's ``lower-csl-wrapper``
    produces) and record the host interface in the ``HOST_ATTR`` module attribute."""
    prog = lower_to_csl(module, arch, plan, budget, overlap=overlap, sdk=sdk)
    block = module.body.block
    for op in list(block.ops):
        op.detach()
    for op in list(prog.module.body.ops):
        op.detach()
        block.add_op(op)
    module.attributes[HOST_ATTR] = StringAttr(json.dumps(prog.host_json()))
    for name in (SDK_ATTR, ARCH_ATTR):
        module.attributes[name] = prog.module.attributes[name]
    prog.module = module
    return prog

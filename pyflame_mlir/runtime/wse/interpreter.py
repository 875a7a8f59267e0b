"""The interpreter's core: plans of blocks, the handler registry, running a plan.

A program is *planned* once, before anything runs: every op of every block is
looked up in one registry (`impl.HANDLERS`, built from one module per dialect
under `impl/`) and compiled into a step, a closure over the op's SSA values
and attributes; an op without a handler is an `UnsupportedError` naming it and
where it is. Running a block then only calls its steps: no xDSL accessor and
no dispatch by op name at run time.

Blocks run as generators: a step that needs wavelets not yet delivered yields
a `Wait`, and the PE's scheduler resumes the generator when they arrive. A
step is `(waits, run)`: when `waits`, `run(ctx, env)` returns a generator of
its waits (a generator function), or None when it could finish at once (a DSD
op whose wavelets are queued: the common case makes no generator); a plain
function otherwise. `ctx` is a `Context`: a PE for program modules,
the layout evaluator for the layout module; each provides the context-specific
actions (params, allocation, tasks, routes). Every op, terminators included,
costs `ctx.op_cycles`.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects import csl
from xdsl.dialects.builtin import FileLineColLoc, ModuleOp
from xdsl.ir import Block, Operation, SSAValue

from .errors import ProgramError, UnsupportedError

if TYPE_CHECKING:
    from . import dsd as D
    from .builtins import Builtin

Env = dict[SSAValue, Any]
Run = Callable[["Context", Env], Any]  # a plain function, or a generator function of Waits
Step = tuple[bool, Run]  # (waits, run)


@dataclass(frozen=True, slots=True)
class Wait:
    """Yielded by a blocked op: wake me when `count` wavelets of `color` are queued."""

    color: int
    count: int


@dataclass(eq=False, slots=True)
class Drain:
    """Yielded by a synchronous send: wake me when every receiver has taken all but
    the last `room` words of what I sent (bounded queues: the rest sit in the
    queues and router buffers between). ``targets``: (receiver PE (x, y), its input
    queue, the queue's ``taken`` count to reach)."""

    color: int
    count: int
    targets: list[tuple[tuple[int, int], Any, int]]
    ready_t: float = 0.0  # when the last receiver took enough (set by the simulator)
    op: Any = None  # the async op sending (None: the core's synchronous send)

    def done(self) -> bool:
        return all(q.taken >= need for _, q, need in self.targets)


class Context:
    """What the interpreter needs from its surroundings; the defaults reject the op."""

    kind = "module"
    t: float = 0.0
    op_cycles: float = 0.0
    blocked_op: Operation | None = None  # the op a waiting step blocks at
    watching = False  # a PE whose async ops read memory the core may write (`core_write`)

    def _reject(self, what: str):
        raise ProgramError(f"{what} is not allowed in a {self.kind} module")

    def param(self, name: str, type, default): self._reject("csl.param")
    def import_module(self, name: str, params: dict | None): self._reject(f"import {name}")
    def alloc(self, name: str, dtype: np.dtype, shape: tuple[int, ...], module_level: bool):
        self._reject("memory allocation")
    def define(self, op: csl.FuncOp | csl.TaskOp, body: BlockPlan, env: Env):
        self._reject(op.name)
    def instantiate(self, op: csl.CslModuleOp, file: str, params: dict | None):
        self._reject(f'@import_module("{file}.csl")')
    def export(self, name: str, value, type): self._reject("csl.export")
    def rpc(self, color: int): self._reject("csl.rpc")
    def activate(self, kind: str, id: int): self._reject("@activate")
    def set_blocked(self, kind: str, id: int, blocked: bool): self._reject("@block/@unblock")
    def initialize_queue(self, queue: int, color: int, output: bool):
        self._reject("@initialize_queue")
    def check_fabric_dsd(self, d: D.FabDsd): self._reject("fabric DSDs")
    def dsr(self, kind: str, id: int) -> D.Dsr: self._reject("@get_dsr")
    def allocate_fifo(self, buf: np.ndarray) -> D.FabDsd: self._reject("@allocate_fifo")
    def check_data_id_form(self, on_queue: bool, op: Operation) -> None:
        pass  # only a PE knows its arch
    def bind_data_task(self, task: str, queue: int, op: Operation):
        self._reject("@bind_data_task")
    def call(self, name: str, args: list) -> Generator[Wait, None, Any]: self._reject("csl.call")
    def dsd_op(self, b: Builtin, types: tuple, then, vals: list
               ) -> Generator[Wait, None, None] | None:
        self._reject(f"csl.{b.name}")
    def dsd_local(self, b: Builtin, whole: tuple[bool, ...], vals: list) -> bool:
        return False  # no fast path: `dsd_op` decides
    def set_rectangle(self, w: int, h: int): self._reject("@set_rectangle")
    def set_tile_code(self, x: int, y: int, file: str, params: dict):
        self._reject("@set_tile_code")
    def set_route(self, x: int, y: int, color: int, rx, tx, switches=None, teardown=False,
                  filter=None):
        self._reject("@set_color_config")
    def set_teardown_handler(self, fn: str, color: int): self._reject("@set_teardown_handler")
    def tile_config(self, action: str, color: int, routes=None, port=None):
        self._reject(f"<tile_config> {action}")
    def core_write(self, arr: np.ndarray, index, values, times): self._reject("watched writes")


# --- the registry ------------------------------------------------------------------------

Compile = Callable[[Any, "Planner"], Step]


class Functions:
    """One dialect's handlers: per op class, a plan-time compiler of the op into a step.

    `@F.impl(Op)` registers `f(op) -> run(ctx, env)` for an op that never waits,
    `@F.impl_waiting(Op)` one whose `run` is a generator function, `@F.impl_region(Op)`
    `f(op, planner) -> (waits, run)` for an op with regions (it plans them), and
    `F.impl_terminator(Op)` a block terminator whose operands are the block's results.
    """

    def __init__(self, dialect: str):
        self.dialect = dialect
        self.compilers: dict[type[Operation], Compile] = {}
        self.terminators: set[type[Operation]] = set()

    def _add(self, types: Iterable[type[Operation]], compile: Compile) -> None:
        for t in types:
            if t in self.compilers or t in self.terminators:
                raise ValueError(f"{t.name} has two handlers in {self.dialect}")
            self.compilers[t] = compile

    def impl(self, *types: type[Operation]):
        def reg(f: Callable[[Any], Run]):
            self._add(types, lambda op, planner: (False, f(op)))
            return f

        return reg

    def impl_waiting(self, *types: type[Operation]):
        def reg(f: Callable[[Any], Run]):
            self._add(types, lambda op, planner: (True, f(op)))
            return f

        return reg

    def impl_region(self, *types: type[Operation]):
        def reg(f: Compile):
            self._add(types, f)
            return f

        return reg

    def impl_terminator(self, *types: type[Operation]) -> None:
        for t in types:
            if t in self.compilers or t in self.terminators:
                raise ValueError(f"{t.name} has two handlers in {self.dialect}")
            self.terminators.add(t)


@dataclass(frozen=True, slots=True)
class BlockPlan:
    """A block compiled to steps; `results` are the terminator's operands (None: none)."""

    args: tuple[SSAValue, ...]
    steps: tuple[Step, ...]
    results: tuple[SSAValue, ...] | None
    waits: bool  # some step may yield a Wait


class Planner:
    """Compiles blocks with one registry, merged from the dialects' `Functions`."""

    def __init__(self, *dialects: Functions):
        self.compilers: dict[type[Operation], Compile] = {}
        self.terminators: set[type[Operation]] = set()
        for d in dialects:
            for t in (*d.compilers, *d.terminators):
                if t in self.compilers or t in self.terminators:
                    raise ValueError(f"{t.name} has handlers in two dialect modules")
            self.compilers.update(d.compilers)
            self.terminators |= d.terminators
        self._modules: weakref.WeakKeyDictionary[Operation, BlockPlan] = (
            weakref.WeakKeyDictionary()
        )

    def handles(self, t: type[Operation]) -> bool:
        return t in self.compilers or t in self.terminators

    def block(self, block: Block, order: Iterable[Operation] | None = None) -> BlockPlan:
        steps: list[Step] = []
        results = None
        for op in block.ops if order is None else order:
            cls = op.__class__
            if cls in self.terminators:
                results = tuple(op.operands)
                continue
            compile = self.compilers.get(cls)
            if compile is None:
                raise UnsupportedError(
                    f"the WSE simulator does not model op {op.name} (at {location(op)})"
                )
            waits, run = compile(op, self)
            steps.append((waits, _located(op, run) if waits else run))
        return BlockPlan(
            tuple(block.args), tuple(steps), results, any(waits for waits, _ in steps)
        )

    def module(self, module: csl.CslModuleOp) -> BlockPlan:
        """The plan of a `csl.module`'s body, made once per module op. CSL's top-level
        declarations are order-independent (Zig-like: an export may name a function
        declared below it, a value may be used above its declaration), so the body
        runs in declaration order: functions and tasks first, then every other op
        after the ops defining its operands, otherwise in text order."""
        plan = self._modules.get(module)
        if plan is None:
            plan = self._modules[module] = self.block(module.body.block,
                                                       declaration_order(module.body.block))
        return plan


def _located(op: Operation, run: Run) -> Run:
    """A waiting step that records, on its context, the op it blocks at (the
    innermost op: a call's wrapper keeps what the callee's op recorded). A waiting
    step returns None when it finished without waiting (a DSD op whose wavelets
    are there: no generator is made), else a generator of its waits."""

    def record(ctx, gen):
        for w in gen:
            if ctx.blocked_op is None:
                ctx.blocked_op = op
            yield w

    def located(ctx, env):
        gen = run(ctx, env)
        return None if gen is None else record(ctx, gen)

    return located


def declaration_order(block: Block) -> list[Operation]:
    """The ops of a module body, functions and tasks first, then each op after the
    ops of the body that define its operands (or its nested ops' operands), stable
    otherwise; a cycle of uses is an error naming an op on it."""
    ops = list(block.ops)
    defs = [op for op in ops if isinstance(op, csl.FuncOp | csl.TaskOp)]
    rest = [op for op in ops if not isinstance(op, csl.FuncOp | csl.TaskOp)]
    index = {op: i for i, op in enumerate(rest)}
    deps: dict[Operation, set[Operation]] = {}
    for op in rest:
        needs: set[Operation] = set()
        for inner in op.walk():
            for v in inner.operands:
                owner = v.owner
                if isinstance(owner, Operation) and owner in index and owner is not op:
                    needs.add(owner)
        deps[op] = needs
    if all(index[d] < index[op] for op in rest for d in deps[op]):
        return defs + rest  # already in order: the common case
    out: list[Operation] = []
    placed: set[Operation] = set()
    visiting: set[Operation] = set()

    def place(op: Operation) -> None:
        if op in placed:
            return
        if op in visiting:
            raise ProgramError(f"top-level declarations use each other in a cycle "
                               f"(at {location(op)})")
        visiting.add(op)
        for d in sorted(deps[op], key=index.__getitem__):
            place(d)
        visiting.discard(op)
        placed.add(op)
        out.append(op)

    for op in rest:
        place(op)
    return defs + out


def location(op: Operation) -> str:
    """Where an op is: its source position if the parser kept one, and its enclosing ops."""
    path: list[str] = []
    node = op
    while (parent := node.parent_op()) is not None and not isinstance(parent, ModuleOp):
        if isinstance(parent, csl.CslModuleOp):
            path.append(f'csl.module "{parent.sym_name.data}"')
        elif isinstance(parent, csl.FuncOp | csl.TaskOp):
            path.append(f"{parent.name} @{parent.sym_name.data}")
        else:
            path.append(parent.name)
        node = parent
    block = op.parent_block()
    index = list(block.ops).index(op) if block is not None else 0
    where = " > ".join([*reversed(path), f"op {index}"])
    if isinstance(op.location, FileLineColLoc):
        loc = op.location
        where = f"{loc.filename.data}:{loc.line.data}:{loc.column.data}, {where}"
    return where


# --- running a plan -----------------------------------------------------------------------


def run_block(ctx: Context, env: Env, plan: BlockPlan) -> Generator[Wait, None, list | None]:
    """Run a block; return the operands of its terminator (scf.yield / csl.return)."""
    cost = ctx.op_cycles
    for waits, run in plan.steps:
        ctx.t += cost
        if waits:
            gen = run(ctx, env)
            if gen is not None:
                yield from gen
        else:
            run(ctx, env)
    if plan.results is None:
        return None
    ctx.t += cost
    return [env[v] for v in plan.results]


def run_sync(ctx: Context, env: Env, plan: BlockPlan) -> list | None:
    """`run_block` for a plan none of whose steps waits, without a generator."""
    cost = ctx.op_cycles
    for _, run in plan.steps:
        ctx.t += cost
        run(ctx, env)
    if plan.results is None:
        return None
    ctx.t += cost
    return [env[v] for v in plan.results]


def run_to_end(gen: Generator[Wait, None, Any], what: str) -> Any:
    """Drive a generator that must not wait (module-level code, the layout)."""
    try:
        w = next(gen)
    except StopIteration as stop:
        return stop.value
    raise ProgramError(f"{what} waits for wavelets on color {w.color}: only tasks may wait")

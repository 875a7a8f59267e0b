"""One processing element: SRAM, tasks, the run-to-completion scheduler; the DSD
builtins are its `dsd_unit.DsdUnit`.

Time: `t` is the core's clock (cycles). A task starts at max(t, the time it
became runnable) plus the task-switch cost; every interpreted op adds its
cost. A synchronous op that waits for wavelets stalls the core until they
arrive (stall cycles are idle, not busy). Asynchronous DSD ops run beside the
core and fire their completion action (activate/unblock) when done.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects import csl
from xdsl.dialects.builtin import FunctionType
from xdsl.ir import SSAValue

from . import dsd as D
from .dsd_unit import AsyncOp, CoreWrite, DsdUnit, Running, words_to
from .errors import (
    ArchRuleError,
    ProgramError,
    ReservedIdError,
    SramOverflowError,
    UnsupportedError,
)
from .fabric import CTRL_ENTRY_SHIFT, NO_ENTRYPOINT, HostSink, InputQueue, check_color
from .impl import plan_module
from .instances import instantiate
from .interpreter import BlockPlan, Context, Drain, Wait, location, run_block, run_to_end
from .libs import import_library
from .machine import ARCH, RESERVED_IDS
from .memory import Sram
from .modules import qualify
from .values import TaskId, convert, np_dtype, scalar

if TYPE_CHECKING:
    from .simulator import Simulator


class Task:
    __slots__ = ("name", "kind", "id", "inputs", "activated", "blocked", "ready", "unblock_t",
                 "color")

    def __init__(self, name: str, kind: str, id: int, inputs: tuple):
        self.name, self.kind, self.id, self.inputs = name, kind, id, inputs
        # the color whose wavelets run a data task: its id (WSE-2), or the color
        # @initialize_queue binds its input queue to (WSE-3; set when the PE is loaded)
        self.color: int | None = id if kind == "data" else None
        self.activated, self.blocked = False, False
        self.ready = self.unblock_t = 0.0

    def __str__(self) -> str:
        return f"task '{self.name}' ({self.kind} {self.id})"


def _readers(d: Drain) -> str:
    """Who does not read what a blocked send waits on: PEs, or the host (a D2H stream)."""
    return ", ".join(
        f"the host does not read them (its streaming memcpy_d2h on color {q.color}; "
        f"{q.count} queued)" if isinstance(q, HostSink)
        else f"PE {xy} does not read them ({q.count} queued there)"
        for xy, q, need in d.targets if q.taken < need)


class PE(DsdUnit, Context):
    kind = "program"

    def __init__(self, sim: Simulator, x: int, y: int, program: str, params: dict):
        self.sim, self.x, self.y, self.program, self.tile_params = sim, x, y, program, params
        self.where = f"PE ({x}, {y})"
        m = sim.model
        self.op_cycles = m.scalar_op_cycles
        self.sram = Sram(f"{self.where} running '{program}'", m.sram_bytes, m.sram_reserve_bytes)
        self.globals: dict[SSAValue, Any] = {}
        self.globals_by_symbol: dict[str, np.ndarray] = {}
        self.functions: dict[str, csl.FuncOp | csl.TaskOp] = {}
        self.bodies: dict[str, BlockPlan] = {}
        # a function's module globals (an imported module's instance; else `globals`)
        self.envs: dict[str, dict] = {}
        self.instances: dict[str, int] = {}  # user module file -> instances made
        self.tasks: dict[tuple[str, int], Task] = {}
        self.exports: dict[str, tuple[Any, Any]] = {}
        self.queues: defaultdict[int, InputQueue] = defaultdict(
            lambda: InputQueue(clock=lambda: self.t))
        self.queue_colors: dict[tuple[bool, int], int] = {}
        self.declared_params: set[str] = set()
        self.launches: list[tuple[str, list, float]] = []
        self.pending: list[AsyncOp] = []  # async ops waiting for their input wavelets
        self.microthreads: dict[int, list[AsyncOp]] = {}  # async ops per microthread
        self.held: list[AsyncOp] = []  # async sends waiting for room on their path
        self.streaming: list[Running] = []  # async ops still reading their sources
        self.write_log: list[CoreWrite] = []  # the core's writes while ops are pending
        self.races: list[str] = []  # core writes that async ops saw (AsyncRaceWarning)
        self.running: Generator[Wait, None, Any] | None = None
        self.running_what = ""
        self.wait: Wait | None = None
        self.cmd_blocked = False
        self.tsc_enabled = False  # <time>'s timestamp counter runs
        self.debug_traces: dict[str, Any] = {}  # <debug> trace buffers by key
        self.comptime_actions: list[tuple[str, int, bool | None]] | None = None
        # data ids (a color on WSE-2, an input queue on WSE-3) bound to no data task that
        # @unblock opened: their control wavelets reach the core (SDK topic-07-switches)
        self.open_data_ids: set[int] = set()
        self.dsrs: dict[tuple[str, int], D.Dsr] = {}  # the DSR files, (kind, id) -> register
        self.fifo_capacity: dict[int, int] = {}  # a FIFO's queue key -> its buffer's size
        self.control_inbox: dict[int, deque[tuple[float, int]]] = {}  # control id -> (t, data)
        self.t = 0.0
        self.end_t = 0.0  # latest completion of anything this PE did (async ops included)
        self.busy = self.stall = self.async_cycles = self.flops = 0.0
        self.tasks_run = self.dsd_ops = 0

    # --- loading -------------------------------------------------------------------

    def load(self, module: csl.CslModuleOp) -> None:
        plan = plan_module(module)
        # a comptime @activate/@block may come before the task it names is bound
        # (declarations are order-independent): they act once the module is loaded
        self.comptime_actions: list[tuple[str, int, bool | None]] | None = []
        run_to_end(run_block(self, self.globals, plan), f"{self.where} module code")
        # top-level code (the imported modules' too) is the compiler's: no core time
        self.t = 0.0
        actions, self.comptime_actions = self.comptime_actions, None
        for kind, id, blocked in actions:
            if blocked is None:
                self.activate(kind, id)
            else:
                self.set_blocked(kind, id, blocked)
        # checks that need the whole module (its declarations are order-independent)
        unknown = sorted(set(self.tile_params) - self.declared_params)
        if unknown:
            raise ProgramError(
                f"{self.where}: @set_tile_code passes param(s) {unknown} that '{self.program}' "
                f"does not declare (its params: {sorted(self.declared_params)})")
        if ARCH[self.sim.arch].data_task_from == "input_queue":
            for task in self.tasks.values():
                if task.kind != "data":
                    continue
                task.color = self.queue_colors.get((False, task.id))
                if task.color is None:
                    raise ProgramError(
                        f"{self.where}: data task '{task.name}' is bound to input queue "
                        f"{task.id}, which no @initialize_queue binds to a color")

    def param(self, name, type, default):
        self.declared_params.add(name)
        if name in self.tile_params:
            return convert(self.tile_params[name], type)
        if default is not None:
            return default
        raise ProgramError(
            f"{self.where}: param '{name}' of '{self.program}' gets no value from "
            f"@set_tile_code (fields: {sorted(self.tile_params)}) and has no default"
        )

    def import_module(self, name, params):
        return import_library(name, params, self)

    def instantiate(self, op, file, params):
        return instantiate(self, op, file, params, self.instances)

    def alloc(self, name, dtype, shape, module_level):
        if any(int(d) < 0 for d in shape):  # numpy's reshape(-1) would make it empty, and
            # the SRAM allocator would move back over the arrays before it
            raise ProgramError(f"{self.where}: array '{name}' of shape {list(shape)}: a "
                               "negative size")
        if module_level:
            return self.sram.alloc(name, dtype, shape)
        # function-local: the stack, inside the reserve (its size is an estimate, so only
        # what cannot fit beside the globals in the whole SRAM is refused)
        nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        free = self.sram.capacity - self.sram.top
        if nbytes > free:
            raise SramOverflowError(
                f"{self.where}: function-local array '{name}' of {nbytes} bytes cannot be on "
                f"the stack: the {self.sram.capacity}-byte SRAM has {free} bytes beside the "
                f"globals (and code, memcpy's buffers and the rest of the stack need some)")
        return np.zeros(shape, dtype)

    def define(self, op, body, env):
        name = qualify(env, op.sym_name.data)
        self.functions[name], self.bodies[name] = op, body
        if env is not self.globals:
            self.envs[name] = env
        if isinstance(op, csl.TaskOp) and op.id is not None:
            self._bind(op, name, op.kind.data.value, op.id.value.data)

    def _bind(self, op: csl.TaskOp, name: str, kind: str, id: int) -> None:
        if kind == "data":
            self._check_data_task(op, name, id)
        else:
            self._check_id(kind, id, f"@bind_{kind}_task({name})")
        if (kind, id) in self.tasks:
            raise ProgramError(f"{self.where}: two tasks bound to {kind} id {id}")
        self._check_shared_id(kind, id, name)
        self.tasks[(kind, id)] = Task(name, kind, id, tuple(op.function_type.inputs.data))

    def bind_task(self, name: str, tid: TaskId, op) -> None:
        """`@bind_<kind>_task(task, id)` of a task id value (csl_ext.bind_task)."""
        what = f"@bind_{tid.kind}_task({name}, {tid})"
        fn = self.functions.get(name)
        if not isinstance(fn, csl.TaskOp):
            raise ProgramError(f"{self.where}: {what} (at {location(op)}): '{name}' is no task "
                               "defined before it")
        if fn.kind.data.value != tid.kind:
            raise ProgramError(f"{self.where}: {what} (at {location(op)}): '{name}' is a "
                               f"{fn.kind.data.value} task")
        if fn.id is not None or any(t.name == name for t in self.tasks.values()):
            raise ProgramError(f"{self.where}: {what} (at {location(op)}): task '{name}' is "
                               "already bound")
        if tid.queue:
            self.bind_data_task(name, tid.id, op)
        else:
            self._bind(fn, name, tid.kind, tid.id)

    def task_id_of(self, name: str, what: str) -> TaskId:
        """The id a task is bound to (`.activate = f_send`, a task named as a target)."""
        for t in self.tasks.values():
            if t.name == name:
                queue = t.kind == "data" and ARCH[self.sim.arch].data_task_from == "input_queue"
                return TaskId(t.kind, t.id, queue)
        raise ProgramError(f"{self.where}: {what} names task '{name}', which is bound to no "
                           "task id")

    def _check_data_task(self, op: csl.TaskOp, name: str, id: int) -> None:
        """A data task's id is a color on WSE-2; on WSE-3 it comes from an input queue
        (``bind_data_task``), and binding one to a color is what ``cslc`` rejects."""
        rules = ARCH[self.sim.arch]
        what = f"@bind_data_task({name}, @get_data_task_id(@get_color({id})))"
        if rules.data_task_from != "color":
            raise ArchRuleError(
                f"{self.where}: {what} (at {location(op)}): {rules.title} data task ids come "
                "from an input queue: @get_data_task_id(@get_input_queue(q)), the queue bound "
                "to the color by @initialize_queue")
        self._check_id("data", id, what)
        check_color(id, f"{self.where}: data task '{name}'")

    def bind_data_task(self, name: str, queue: int, op) -> None:
        rules = ARCH[self.sim.arch]
        what = f"@bind_data_task({name}, @get_data_task_id(@get_input_queue({queue})))"
        if rules.data_task_from != "input_queue":
            raise ArchRuleError(
                f"{self.where}: {what} (at {location(op)}): {rules.title} data task ids come "
                "from a color: @get_data_task_id(@get_color(c))")
        self._check_queue(queue, False, what)
        fn = self.functions.get(name)
        if not isinstance(fn, csl.TaskOp) or fn.kind.data != csl.TaskKind.DATA:
            raise ProgramError(f"{self.where}: {what}: '{name}' is not a data task")
        if fn.id is not None:
            raise ProgramError(f"{self.where}: {what}: data task '{name}' already has id "
                               f"{fn.id.value.data}")
        if ("data", queue) in self.tasks:
            raise ProgramError(f"{self.where}: two data tasks bound to input queue {queue}")
        self._check_shared_id("data", queue, name)
        self.tasks[("data", queue)] = Task(name, "data", queue, tuple(fn.function_type.inputs.data))

    def allocate_fifo(self, buf: np.ndarray) -> D.FabDsd:
        """A FIFO: its elements wait in a queue of this PE under a key of its own (a
        negative number, no color), at most as many as its buffer holds."""
        key = -(len(self.fifo_capacity) + 1)
        self.fifo_capacity[key] = buf.size
        return D.FabDsd("fifo", key, 0, -1)

    def dsr(self, kind: str, id: int) -> D.Dsr:
        return self.dsrs.setdefault((kind, id), D.Dsr(kind, id))

    def check_data_id_form(self, on_queue: bool, op) -> None:
        """@block/@unblock of a data id names a color on WSE-2, an input queue on WSE-3."""
        rules = ARCH[self.sim.arch]
        if on_queue != (rules.data_task_from == "input_queue"):
            want = "an input queue" if not on_queue else "a color"
            raise ArchRuleError(
                f"{self.where}: {op.name} of a data id as {'a queue' if on_queue else 'a color'}"
                f" (at {location(op)}): {rules.title} data task ids come from {want}")

    def _check_shared_id(self, kind: str, id: int, name: str) -> None:
        """Local, data and control tasks share one task table: a data task's id is its
        color (WSE-2) or input queue (WSE-3), so @bind_local_task(t, @get_local_task_id(12))
        and a data task on color 12 clash on WSE-2 (WSE-3 keeps local ids 8-30 apart
        from its queues 0-7). A separate control task table (WSE-3's
        @set_control_task_table) is not modeled."""
        for other in ("local", "data", "control"):
            task = self.tasks.get((other, id)) if other != kind else None
            if task is not None:
                raise ArchRuleError(
                    f"{self.where}: {kind} task '{name}' takes task id {id}, already bound to "
                    f"{task}: local, data and control tasks share one task table")

    def _check_id(self, kind: str, id: int, what: str) -> None:
        if id in RESERVED_IDS:
            raise ReservedIdError(
                f"{self.where}: {what} uses {kind} id {id}, reserved for memcpy/the runtime "
                f"(reserved: {sorted(RESERVED_IDS)})"
            )
        rules = ARCH[self.sim.arch]
        if kind == "local" and not rules.local_task_id_ok(id):
            lo, hi = rules.local_task_id_range
            raise ArchRuleError(
                f"{self.where}: {what} uses local task id {id}; {rules.title} local task ids "
                f"are {lo}-{hi}" + (" (0-7 are the input queues' data task ids)" if lo else ""))

    def export(self, name, value, type):
        if isinstance(type, FunctionType) and value not in self.functions:
            raise ProgramError(f"{self.where}: exported function '{value}' is not defined")
        self.exports[name] = (value, type)

    def rpc(self, color):
        self.sim.launch_colors.add(color)

    def _check_queue(self, queue: int, output: bool, what: str) -> None:
        rules = ARCH[self.sim.arch]
        d = "output" if output else "input"
        if queue not in (rules.output_queues if output else rules.input_queues):
            raise ArchRuleError(f"{self.where}: {what} uses {d} queue {queue}, which "
                                f"{rules.title} does not have")
        # WSE-2: memcpy's D2H output queue 0 may carry a program's color as well (the
        # SDK's 25-pt-stencil sends on output queue 0: "multiple colors can share the
        # same output_queue"); its H2D input queue 0 may not
        shared = output and self.sim.arch == "wse2"
        if queue in rules.reserved_queues and not shared:
            raise ReservedIdError(f"{self.where}: {what} uses {d} queue {queue}, reserved for "
                                  f"memcpy on {rules.title}")

    def initialize_queue(self, queue, color, output):
        check_color(color, f"{self.where}: @initialize_queue")
        self._check_queue(queue, output, "@initialize_queue")
        bound = self.queue_colors.get((output, queue))
        if bound is not None and bound != color:
            raise ArchRuleError(
                f"{self.where}: @initialize_queue binds {'output' if output else 'input'} "
                f"queue {queue} to color {color}, but it is already bound to color {bound}: "
                "two channels cannot share a queue")
        self.queue_colors[(output, queue)] = color

    def check_fabric_dsd(self, d: D.FabDsd) -> None:
        check_color(d.color, f"{self.where}: {d.kind}")
        output = d.kind == "fabout_dsd"
        self._check_queue(d.queue, output, d.kind)
        if ARCH[self.sim.arch].queue_per_color:
            bound = self.queue_colors.get((output, d.queue))
            if bound is not None and bound != d.color:
                raise ProgramError(
                    f"{self.where}: {d.kind} on color {d.color} uses queue {d.queue}, "
                    f"which @initialize_queue bound to color {bound}"
                )

    # --- tasks -----------------------------------------------------------------------

    def _task(self, kind: str, id: int, what: str) -> Task:
        self._check_id(kind, id, what)
        task = self.tasks.get((kind, id))
        if task is None:
            raise ProgramError(f"{self.where}: {what} names {kind} task id {id}, bound to no task")
        return task

    def activate(self, kind, id, at: float | None = None):
        if self.comptime_actions is not None:
            self.comptime_actions.append((kind, id, None))
            return
        if kind == "data":
            raise ProgramError(f"{self.where}: data tasks run on wavelets; @activate is for local")
        task = self._task(kind, id, "@activate")
        at = self.t if at is None else at
        task.ready = min(task.ready, at) if task.activated else at
        task.activated = True
        self.sim.poke(self, at)

    def set_blocked(self, kind, id, blocked, at: float | None = None):
        if self.comptime_actions is not None:
            self.comptime_actions.append((kind, id, blocked))
            return
        if kind == "data" and ("data", id) not in self.tasks:
            # no data task on it: the color/queue itself, which control wavelets need open
            self._check_id(kind, id, "@block" if blocked else "@unblock")
            (self.open_data_ids.discard if blocked else self.open_data_ids.add)(id)
            return
        task = self._task(kind, id, "@block" if blocked else "@unblock")
        task.blocked = blocked
        if not blocked:
            task.unblock_t = self.t if at is None else at
            self.sim.poke(self, task.unblock_t)

    def set_teardown_handler(self, fn: str, color: int) -> None:
        """`@set_teardown_handler(fn, color)` (comptime): `fn` runs, as a task of the
        runtime's (task 29 on WSE-2), when a teardown command reaches this router."""
        check_color(color, f"{self.where}: @set_teardown_handler({fn})")
        if ("teardown", color) in self.tasks:
            raise ProgramError(f"{self.where}: two teardown handlers for color {color}")
        self.tasks[("teardown", color)] = Task(fn, "teardown", color, ())

    def teardown(self, color: int, t: float) -> None:
        """A teardown command tore `color` down at this PE's router: its handler runs."""
        task = self.tasks.get(("teardown", color))
        if task is None:
            raise ProgramError(f"{self.where}: a teardown command on color {color} reaches "
                               "this router, but no @set_teardown_handler names the color")
        if task.activated:
            raise UnsupportedError(f"{self.where}: a second teardown on color {color} before "
                                   "its handler ran: not modeled")
        task.ready, task.activated = t, True
        self.sim.poke(self, t)

    def tile_config(self, action: str, color: int, routes=None, port=None) -> None:
        """A `<tile_config>` call: this PE's router changes its route, switch or
        teardown state for `color` at the core's current time."""
        xy, fab = (self.x, self.y), self.sim.fabric
        if action == "reset_routes":
            fab.reset_routes(xy, color, routes[0], routes[1], self.t)
        elif action == "teardown_exit":
            fab.teardown_exit(xy, color, self.t)
        else:
            fab.switch_config(xy, color, action, port, self.t)

    def control_wavelet(self, color: int, word: int, t: float) -> None:
        """A control wavelet reaches this core (its filter bit off): it activates the
        control task its entrypoint field names, with its 16-bit data (SDK tutorial
        topic-07-switches-entrypt). The color (WSE-2), or the input queue bound to it
        (WSE-3), must have no data task and be unblocked."""
        rules = ARCH[self.sim.arch]
        if rules.data_task_from == "color":
            data_id, what = color, f"color {color}"
        else:
            queues = [q for (out, q), c in self.queue_colors.items() if not out and c == color]
            if not queues:
                raise ProgramError(f"{self.where}: a control wavelet on color {color} arrives, "
                                   "but no @initialize_queue binds an input queue to it")
            data_id, what = queues[0], f"input queue {queues[0]} (color {color})"
        if ("data", data_id) in self.tasks:
            raise UnsupportedError(f"{self.where}: a control wavelet on {what}, which runs data "
                                   f"task {self.tasks[('data', data_id)].name}: mixing control "
                                   "and data wavelets on one color is not modeled")
        if data_id not in self.open_data_ids:
            raise ProgramError(f"{self.where}: a control wavelet on {what} is never taken: "
                               f"with no data task on it, the core takes it only once "
                               f"@unblock opens the {what.split(' (')[0]}")
        entry = (word >> CTRL_ENTRY_SHIFT) & 0x3F
        if entry == NO_ENTRYPOINT:
            raise UnsupportedError(f"{self.where}: a control wavelet with no entrypoint reaches "
                                   "the core: what the core does with it is not modeled")
        task = self.tasks.get(("control", entry))
        if task is None:
            raise ProgramError(f"{self.where}: a control wavelet activates control task id "
                               f"{entry}, bound to no task")
        self.control_inbox.setdefault(entry, deque()).append((t, word & 0xFFFF))
        self.sim.poke(self, t)

    def unblock_cmd_stream(self) -> None:
        self.cmd_blocked = False

    def call(self, name, args):
        block = self.bodies.get(name)
        if block is None:
            raise ProgramError(f"{self.where}: call of undefined function '{name}'")
        if len(args) != len(block.args):
            raise ProgramError(
                f"{self.where}: '{name}' takes {len(block.args)} args, got {len(args)}"
            )
        env = dict(self.envs.get(name, self.globals))
        env.update(zip(block.args, args))
        result = yield from run_block(self, env, block)
        return result[0] if result else None

    def _runnable(self) -> tuple[float, Any] | None:
        """The earliest-ready runnable work: a launch, an activated task or a data task."""
        best: tuple[float, Any] | None = None
        for item in self.launches:
            if best is None or item[2] < best[0]:
                best = (item[2], item)
        for task in self.tasks.values():
            if task.blocked:
                continue
            if task.kind == "data":
                q = self.queues.get(task.color) if task.color is not None else None
                if not q or not q.count:
                    continue
                ready = q.head_time()
            elif task.kind == "control" and self.control_inbox.get(task.id):
                ready = self.control_inbox[task.id][0][0]
            elif task.activated:
                ready = task.ready
            else:
                continue
            ready = max(ready, task.unblock_t)
            if best is None or ready < best[0]:
                best = (ready, task)
        return best

    def _start(self, work: Any) -> None:
        if isinstance(work, tuple):  # a host launch / call
            self.launches.remove(work)
            name, args, _ = work
            self.running_what = f"launched function '{name}'"
            self.running = self.call(name, args)
            return
        task: Task = work
        self.running_what = str(task)
        if task.kind == "data":
            words, _, _ = self.queues[task.color].take(1)
            types = task.inputs
            args = [scalar(words_to(words, np_dtype(t))[0]) for t in types[:1]]
            if len(types) == 2:  # two 16-bit halves of one wavelet
                args.append(scalar(np.array([words[0] >> 16], np.uint32).astype(np.uint16)
                                   .view(np_dtype(types[1]))[0]))  # fmt: skip
        elif task.kind == "control" and self.control_inbox.get(task.id):
            _, data = self.control_inbox[task.id].popleft()
            args = [scalar(np.array([data], np.uint16).view(np_dtype(t))[0])
                    if np_dtype(t).itemsize == 2 else data for t in task.inputs[:1]]
        else:
            task.activated = False
            args = []
        self.running = self.call(task.name, args)

    def step(self, now: float) -> None:
        """Make progress at simulated time `now`: resume the stalled task or start one."""
        if self.running is None:
            found = self._runnable()
            if found is None:
                return
            ready, work = found
            if ready > now:
                self.sim.poke(self, ready)
                return
            self.t = max(self.t, ready) + self.sim.model.task_switch_cycles
            self.tasks_run += 1
            self._start(work)
        elif self.wait is not None:
            if isinstance(self.wait, Drain):
                if not self.wait.done():
                    return
                # the sender's last wavelets left when the receivers made room for them
                if self.wait.ready_t > self.t:
                    self.stall += self.wait.ready_t - self.t
                    self.t = self.wait.ready_t
            elif self.queues[self.wait.color].count < self.wait.count:
                return
            self.wait = None
        t0, stall0 = self.t, self.stall
        self.blocked_op = None
        try:
            self.wait = self.running.send(None)
        except StopIteration:
            self.running, self.running_what = None, ""
        self.busy += (self.t - t0) - (self.stall - stall0)
        self.end_t = max(self.end_t, self.t)
        if self.running is None and (found := self._runnable()) is not None:
            self.sim.poke(self, max(self.t, found[0]))

    def on_line(self, axis: str, line: int) -> bool:
        return (self.y if axis == "x" else self.x) == line

    def collective_index(self, axis: str) -> int:
        return self.x if axis == "x" else self.y

    # --- diagnostics --------------------------------------------------------------------

    def describe(self) -> list[str]:
        """Why this PE is stuck, for the deadlock report."""
        out = []
        at = f" (at {location(self.blocked_op)})" if self.blocked_op is not None else ""
        if self.running is not None and isinstance(self.wait, Drain):
            d = self.wait
            rooms = _readers(d)
            out.append(f"{self.running_what} is blocked{at} sending {d.count} wavelets on "
                       f"color {d.color}: the queues on the way are full and {rooms}")
        elif self.running is not None and self.wait is not None:
            q = self.queues[self.wait.color].count
            out.append(
                f"{self.running_what} waits for {self.wait.count} wavelets on color "
                f"{self.wait.color} ({q} queued){at}"
            )
        for a in self.pending:
            need = ", ".join(f"{k} on color {c} ({self.queues[c].count} queued)"
                             for c, k in a.needs.items())  # fmt: skip
            out.append(f"{a} waits for {need}")
        for (axis, line), calls in self.sim.collective_calls.items():
            for c in calls.get(self.collective_index(axis), []) if self.on_line(axis, line) else []:
                out.append(f"{c.lib.name}.{c.op}() along {'row' if axis == 'x' else 'column'} "
                           f"{line} waits for the other PEs of the line to call it")
        for a in self.held:
            d = a.drain
            rooms = _readers(d)
            out.append(f"{a} is held back sending {d.count} wavelets on color {d.color}: "
                       f"the queues on the way are full and {rooms}")
        for task in self.tasks.values():
            q = self.queues.get(task.color) if task.color is not None else None
            if task.blocked and (task.activated or (q and q.count)):
                out.append(f"{task} is blocked")
        consumers = {c for c, k in (a for p in self.pending for a in p.needs.items())}
        consumers |= {t.color for t in self.tasks.values() if t.color is not None}
        for color, q in self.queues.items():
            if q.count and color not in consumers and (not self.wait or self.wait.color != color):
                out.append(f"{q.count} wavelets on color {color} have no consumer")
        if not out:
            out.append("no task is activated and nothing waits: unblock_cmd_stream() never ran")
        return out

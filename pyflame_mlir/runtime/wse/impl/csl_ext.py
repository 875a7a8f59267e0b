"""`csl_ext`, our extension of `csl`: task blocking, queues, fabric DSDs with an SSA
color, and routes in the layout; pointer dereference and @map."""

from __future__ import annotations

import numpy as np
from xdsl.dialects import csl
from xdsl.dialects.builtin import MemRefType
from xdsl.dialects.csl import TaskKind

from pyflame_mlir.dialects import csl_ext

from .. import dsd as D
from ..builtins import BUILTINS, UNMODELED
from ..errors import DsdBoundsError, ProgramError, UnsupportedError
from ..fabric import SwitchSpec
from ..interpreter import Functions, location
from ..modules import SCOPE, FnRef, ModuleInstance, call_in_scope, qualify
from ..values import QueueId, TaskId, Var, check_param, is_numeric, np_dtype, scalar
from .csl_dsd import async_then, fab_dsd

CSL_EXT = Functions("csl_ext")


@CSL_EXT.impl(csl_ext.BlockOp, csl_ext.UnblockOp)
def _block(op: csl_ext.BlockOp | csl_ext.UnblockOp):
    kind, id, blocked = op.kind.data.value, op.id.value.data, isinstance(op, csl_ext.BlockOp)
    on_queue = op.on_queue is not None

    def run(ctx, env):
        ctx.check_data_id_form(on_queue, op) if kind == "data" else None
        ctx.set_blocked(kind, id, blocked)

    return run


@CSL_EXT.impl(csl_ext.InitializeQueueOp)
def _init_queue(op: csl_ext.InitializeQueueOp):
    queue, color, output = csl_ext.queue_number(op.queue_id), op.color, op.is_output

    def run(ctx, env):
        ctx.initialize_queue(queue, env[color], output)

    return run


@CSL_EXT.impl(csl_ext.GetFabDsdOp)
def _fab_dsd(op: csl_ext.GetFabDsdOp):
    color, extent, queue = op.color, op.extent, op.queue
    if queue is not None:
        return fab_dsd(op, lambda env: env[color], lambda env: env[extent], op.is_control,
                       lambda env: env[queue].id)
    return fab_dsd(op, lambda env: env[color], lambda env: env[extent], op.is_control)


@CSL_EXT.impl(csl_ext.SetColorConfigOp)
def _set_color_config(op: csl_ext.SetColorConfigOp):
    x, y, color, rx, tx = op.x_coord, op.y_coord, op.color, op.routes.rx_ports, op.routes.tx_ports
    sw, teardown = op.switches, op.teardown is not None
    switches = None if sw is None else SwitchSpec(
        tuple(sw.position(k) for k in (1, 2, 3)), sw.current.data, sw.ring, sw.pop_mode.data)
    f = op.filter
    filt = None if f is None else (f.min_idx.data, f.max_idx.data)
    extra = {k: v for k, v in (("teardown", teardown), ("filter", filt)) if v}

    def run(ctx, env):
        ctx.set_route(env[x], env[y], env[color], rx, tx, switches, **extra)

    return run


@CSL_EXT.impl(csl_ext.SetTeardownHandlerOp)
def _set_teardown_handler(op: csl_ext.SetTeardownHandlerOp):
    fn, color = op.fn_name.string_value(), op.color

    def run(ctx, env):
        ctx.set_teardown_handler(qualify(env, fn), int(env[color]))

    return run


@CSL_EXT.impl(csl_ext.TileConfigOp)
def _tile_config(op: csl_ext.TileConfigOp):
    action, color = op.action.data, op.color
    routes = None if op.routes is None else (op.routes.rx_ports, op.routes.tx_ports)
    port = None if op.port is None else op.port.data

    def run(ctx, env):
        ctx.tile_config(action, int(env[color]), routes, port)

    return run


@CSL_EXT.impl(csl_ext.GetTaskIdOp)
def _get_task_id(op: csl_ext.GetTaskIdOp):
    res, id = op.result, op.id.value.data

    def run(ctx, env):
        env[res] = id

    return run


@CSL_EXT.impl(csl_ext.ParamOp)
def _param(op: csl_ext.ParamOp):
    res, name, type, init = op.res, op.param_name.data, op.res.type, op.init_value

    def run(ctx, env):
        default = env[init] if init is not None else None
        scope = env.get(SCOPE)  # a param of an imported module: from its import's struct
        owner = scope or ctx
        v = owner.param(name, type, default)
        where = scope.where() if scope is not None else getattr(ctx, "where", "the layout")
        env[res] = check_param(v, type, f"{where}: param '{name}'")

    return run


@CSL_EXT.impl(csl_ext.TaskIdOfOp)
def _task_id_of(op: csl_ext.TaskIdOfOp):
    res, source, kind = op.result, op.source, op.result.type.kind.data

    def run(ctx, env):
        v = env[source]
        if isinstance(v, QueueId):
            env[res] = TaskId(kind, v.id, True)
        else:
            env[res] = TaskId(kind, int(v))

    return run


@CSL_EXT.impl(csl_ext.GetQueueOp)
def _get_queue(op: csl_ext.GetQueueOp):
    res, number, direction = op.result, op.number, op.result.type.direction.data

    def run(ctx, env):
        q = int(env[number])
        if not 0 <= q <= 7:
            raise ProgramError(f"@get_{direction}_queue({q}) (at {location(op)}): queues are "
                               "0-7")
        env[res] = QueueId(direction, q)

    return run


def _pe_only(ctx, what: str, op):
    if not hasattr(ctx, "bind_task"):
        raise ProgramError(f"{what} (at {location(op)}) in the layout: it belongs in a PE "
                           "program")


@CSL_EXT.impl(csl_ext.BindTaskOp)
def _bind_task(op: csl_ext.BindTaskOp):
    task, id = op.task_name.string_value(), op.id

    def run(ctx, env):
        _pe_only(ctx, "@bind_task", op)
        ctx.bind_task(qualify(env, task), env[id], op)

    return run


@CSL_EXT.impl(csl_ext.ActivateIdOp)
def _activate_id(op: csl_ext.ActivateIdOp):
    id = op.id

    def run(ctx, env):
        _pe_only(ctx, "@activate", op)
        tid = env[id]
        ctx.activate(tid.kind, tid.id)

    return run


@CSL_EXT.impl(csl_ext.BlockIdOp, csl_ext.UnblockIdOp)
def _block_id(op: csl_ext.BlockIdOp | csl_ext.UnblockIdOp):
    id, blocked = op.id, isinstance(op, csl_ext.BlockIdOp)

    def run(ctx, env):
        _pe_only(ctx, "@block" if blocked else "@unblock", op)
        tid = env[id]
        if tid.kind == "data":
            ctx.check_data_id_form(tid.queue, op)
        ctx.set_blocked(tid.kind, tid.id, blocked)

    return run


@CSL_EXT.impl(csl_ext.ComptimeAssertOp)
def _comptime_assert(op: csl_ext.ComptimeAssertOp):
    cond, where = op.cond, location(op)
    msg = f": {op.message.data}" if op.message is not None else ""

    def run(ctx, env):
        if not env[cond]:
            raise ProgramError(f"{getattr(ctx, 'where', 'the layout')}: @comptime_assert fails "
                               f"(at {where}){msg}: cslc refuses the program")

    return run


@CSL_EXT.impl(csl_ext.VoidOp)
def _void(op: csl_ext.VoidOp):
    res = op.result

    def run(ctx, env):
        env[res] = None

    return run


@CSL_EXT.impl(csl_ext.BindDataTaskOp)
def _bind_data_task(op: csl_ext.BindDataTaskOp):  # csl15: WSE-3 data tasks on input queues
    task, queue = op.task_name.string_value(), csl_ext.queue_number(op.queue_id)

    def run(ctx, env):
        ctx.bind_data_task(qualify(env, task), queue, op)

    return run


@CSL_EXT.impl(csl_ext.FnRefOp)
def _fn_ref(op: csl_ext.FnRefOp):
    res, name = op.result, op.fn_name.string_value()

    def run(ctx, env):
        env[res] = FnRef(qualify(env, name))

    return run


# --- pointers and @map ----------------------------------------------------------------------


def _pointee(ptr, what: str):
    flat = ptr.reshape(-1) if isinstance(ptr, np.ndarray) else None
    if flat is None or flat.size < 1:
        raise ProgramError(f"{what} of {ptr!r}, which is no pointer to memory")
    return flat


@CSL_EXT.impl(csl_ext.AddressOfVarOp)
def _addressof_var(op: csl_ext.AddressOfVarOp):
    var, res = op.var, op.result

    def run(ctx, env):
        v = env[var]
        if not isinstance(v, Var) or v.cell is None:
            raise ProgramError(f"&v of {var}, which is no numeric variable (at {location(op)})")
        env[res] = v.cell

    return run


@CSL_EXT.impl(csl_ext.DerefOp)
def _deref(op: csl_ext.DerefOp):
    ptr, res = op.ptr, op.result

    if isinstance(op.result.type, MemRefType):  # *[n, m]T: the array itself
        shape = tuple(op.result.type.get_shape())

        def run_array(ctx, env):
            p = env[ptr]
            if not isinstance(p, np.ndarray) or p.size != int(np.prod(shape)):
                raise ProgramError(f"p.* of {p!r}, which is no pointer to a {list(shape)} array "
                                   f"(at {location(op)})")
            env[res] = p.reshape(shape)

        return run_array

    def run(ctx, env):
        env[res] = scalar(_pointee(env[ptr], "p.*")[0])

    return run


@CSL_EXT.impl(csl_ext.StorePtrOp)
def _store_ptr(op: csl_ext.StorePtrOp):
    ptr, value = op.ptr, op.value

    def run(ctx, env):
        flat = _pointee(env[ptr], "p.* = v")
        if ctx.watching:  # async ops of this PE read memory as they run
            ctx.core_write(flat, (0,), env[value], ctx.t)
        else:
            flat[0] = env[value]

    return run


# --- data structure registers -------------------------------------------------------------


@CSL_EXT.impl(csl_ext.GetDsrOp)
def _get_dsr(op: csl_ext.GetDsrOp):
    res, kind, id = op.result, op.result.type.kind.data, op.id.value.data

    def run(ctx, env):
        env[res] = ctx.dsr(kind, id)

    return run


@CSL_EXT.impl(csl_ext.LoadToDsrOp)
def _load_to_dsr(op: csl_ext.LoadToDsrOp):
    dsr, dsd, then_of = op.dsr, op.dsd, async_then(op)
    save = op.saves_address

    def run(ctx, env):
        reg = env[dsr]
        reg.dsd, reg.then, reg.used, reg.save = env[dsd], then_of(ctx, env), False, save

    return run


def _merge_then(op_then, regs: list, where: str):
    """The completion of a DSD operation on registers: the op's own `.async` and the
    action one of its registers' loads named (the SDK's allreduce: `@load_to_dsr(dest,
    fab, .{.async = true, .activate = t})` then `@mov32(dest, src1, .{.async = true})`)."""
    actions = [r for r in regs if r.then is not None]
    if not actions:
        return op_then
    if op_then is None:
        raise UnsupportedError(f"{actions[0]} was loaded with .async options but the operation "
                               f"using it is synchronous: not modeled (at {where})")
    if len(actions) > 1 or op_then.action.data:
        names = ", ".join(str(r) for r in actions)
        raise UnsupportedError(f"several completion actions ({names}"
                               f"{' and the operation' if op_then.action.data else ''}): "
                               f"which one runs is not modeled (at {where})")
    a = actions[0].then
    return csl_ext.AsyncAttr.get(a.action.data, TaskKind(a.kind.data) if a.action.data else
                                 TaskKind.LOCAL, a.id.data,
                                 op_then.ut_id if op_then.ut_id is not None else a.ut_id)


@CSL_EXT.impl(csl_ext.AllocateFifoOp)
def _allocate_fifo(op: csl_ext.AllocateFifoOp):
    buf, res = op.buffer, op.result

    def run(ctx, env):
        env[res] = ctx.allocate_fifo(env[buf])

    return run


@CSL_EXT.impl_waiting(csl_ext.DsdBuiltinOp)
def _dsd_builtin(op: csl_ext.DsdBuiltinOp):
    """A DSD builtin on registers or FIFOs. A register operand stands for the DSD it
    holds. An operation moves a register along its DSD; a load's `.save_address` says
    what the next operation sees: true, the DSD from where the last one stopped (a
    mem1d_dsd's offset advanced by its length times its stride); false, the DSD as
    loaded (the SDK's single-tile-matvec benchmark relies on both). Without it, using
    a register again without reloading is refused. A FIFO is pushed (destination) or
    popped (source) by asynchronous operations (`DsdUnit`)."""
    where = location(op)
    name = op.builtin.data
    b = BUILTINS.get(name)
    if b is None:
        why = UNMODELED.get(name, "not modeled")
        raise UnsupportedError(f"@{name} is not simulated: {why} (at {where})")
    ops, then_of = tuple(op.ops), async_then(op)
    is_reg = tuple(isinstance(o.type, csl_ext.DsrType) for o in ops)
    types = tuple(csl.DsdType(csl.DsdKind.mem1d_dsd) if r else o.type
                  for o, r in zip(ops, is_reg))

    def run(ctx, env):
        vals, regs = [], []
        for o, r in zip(ops, is_reg):
            v = env[o]
            if r:
                if v.dsd is None:
                    raise ProgramError(f"{ctx.where}: @{name} uses {v}, which no @load_to_dsr "
                                       f"loaded (at {where})")
                if v.used and v.save is None:
                    raise UnsupportedError(
                        f"{ctx.where}: @{name} uses {v} again without reloading it, and its "
                        "load did not say .save_address: where the register then points is "
                        f"not modeled (at {where})")
                regs.append(v)
                v = v.dsd
            vals.append(v)
        for reg in regs:
            reg.used = True
            if reg.save:
                if not isinstance(reg.dsd, D.MemDsd):
                    raise UnsupportedError(
                        f"{ctx.where}: {reg} holds a {reg.dsd.kind} loaded with .save_address "
                        f"= true: only a mem1d_dsd's saved address is modeled (at {where})")
                d = reg.dsd
                reg.dsd = D.MemDsd(d.buf, d.offset + d.stride * d.length, d.stride, d.length)
        then = then_of(ctx, env)
        if then is None and any(isinstance(v, D.FabDsd) and v.kind == "fifo" for v in vals):
            raise UnsupportedError(
                f"{ctx.where}: a synchronous @{name} on a FIFO (it stops at an empty or full "
                f"FIFO and returns whether it finished) is not modeled (at {where})")
        return ctx.dsd_op(b, types, _merge_then(then, regs, where), vals)

    return run


def _mov(dtype: np.dtype):
    """The plain copy builtin for elements of `dtype` (how @map's fabric operands move)."""
    if dtype.itemsize not in (2, 4):
        raise ProgramError(f"@map: no {dtype} elements on the fabric (16- or 32-bit only)")
    return BUILTINS["mov16" if dtype.itemsize == 2 else "mov32"]


@CSL_EXT.impl_waiting(csl_ext.MapOp)
def _map(op: csl_ext.MapOp):
    """@map runs its callback once per element, in element order, reading each input
    element just before its call and writing each result just after it (so a fold
    through a pointer sees every earlier result, as the SDK's BLAS examples rely on).
    An input DSD that reads, at a later element, memory the output DSD writes is
    refused, as for the DSD builtins (`DsdUnit._aliasing`); the same positions (in
    place) are fine. Fabric operands move whole: a fabin
    input is received before the first call, a fabout output sent after the last (the
    same values and wavelet count; the cycle model does not overlap them with the
    calls). Its cost is the callbacks' (each op `op_cycles`, library calls theirs)."""
    where = location(op)
    if csl_ext.ASYNC_ATTR in op.attributes:
        raise UnsupportedError(f"an asynchronous @map is not simulated (at {where})")
    args, module, callee = tuple(op.args), op.module, op.callee.string_value()
    types = [a.type for a in args]
    fn = op.callback()
    if fn is not None:
        params: list = [np_dtype(t) if is_numeric(t) else None
                        for t in fn.function_type.inputs.data]
        results = fn.function_type.outputs.data
        ret: np.dtype | None = np_dtype(results[0]) if results else None
    else:  # a library function: elements in their own type (a fabric one as f32)
        params, ret = [None] * (len(args) - 1), None
    output = op.has_output()  # (without one, every operand is an input)
    out_t = types[-1] if output else None
    if isinstance(out_t, csl.PtrType):
        ret = ret or np_dtype(out_t.type)
        if np_dtype(out_t.type) != ret:
            raise ProgramError(f"@map output points to {out_t.type}, the callback returns "
                               f"{ret} (at {where})")

    def elements(v, want: np.dtype | None, what: str, ctx_where: str):
        """(typed flat buffer, element indices) of a memory DSD."""
        if want is not None and v.buf.dtype != want:
            raise ProgramError(f"{ctx_where}: @map {what} is a DSD of {v.buf.dtype} elements "
                               f"but {callee} takes {want} (at {where})")
        try:
            return v.buf, np.arange(v.buf.size)[v.index()]
        except DsdBoundsError as e:
            raise ProgramError(f"{ctx_where}: @map {what}: {e} (at {where})") from None

    def run(ctx, env):
        ctx_where = getattr(ctx, "where", ctx.kind)
        vals = [env[a] for a in args]
        dsds = [v for v in vals if isinstance(v, D.MemDsd | D.Mem4dDsd | D.FabDsd)]
        if len({v.length for v in dsds}) > 1:
            raise ProgramError(f"{ctx_where}: @map DSD operands have different lengths "
                               f"{[v.length for v in dsds]} (at {where})")
        n = dsds[0].length
        inputs: list[tuple[str, object, object]] = []
        for i, (v, want) in enumerate(zip(vals[:-1] if output else vals, params)):
            what = f"input {i}"
            if isinstance(v, D.FabDsd):
                if v.kind != "fabin_dsd":
                    raise ProgramError(f"{ctx_where}: @map {what} is a {v.kind} (at {where})")
                buf = np.zeros(n, want or np.float32)
                recv = ctx.dsd_op(_mov(buf.dtype), (None, None), None, [D.MemDsd(buf, 0, 1, n), v])
                if recv is not None:
                    yield from recv
                inputs.append(("seq", buf, np.arange(n)))
            elif isinstance(v, D.MemDsd | D.Mem4dDsd):
                inputs.append(("seq", *elements(v, want, what, ctx_where)))
            elif isinstance(types[i], csl.PtrType):
                inputs.append(("ptr", _pointee(v, f"@map {what}"), None))
            else:
                inputs.append(("const", want.type(v) if want is not None else v, None))
        out = vals[-1] if output else None
        if out is None:
            obuf, oidx = None, None
        elif isinstance(out, D.FabDsd):
            if out.kind != "fabout_dsd":
                raise ProgramError(f"{ctx_where}: @map output is a {out.kind} (at {where})")
            obuf, oidx = np.zeros(n, ret or np.float32), np.arange(n)
        elif isinstance(out, D.MemDsd | D.Mem4dDsd):
            obuf, oidx = elements(out, ret, "output", ctx_where)
        else:
            obuf, oidx = _pointee(out, "@map output"), np.zeros(n, np.int64)
        if isinstance(out, D.MemDsd | D.Mem4dDsd):
            for i, v in enumerate(vals[:-1]):
                if isinstance(v, D.MemDsd | D.Mem4dDsd) and D.order_dependent(out, v):
                    raise ProgramError(
                        f"{ctx_where}: @map writes memory its input {i} reads at a later "
                        "element (e.g. out[i] = f(out[i-1])): whether an element reads the "
                        "value written for an earlier one depends on how far the DSD "
                        "pipeline reads ahead, which is not documented; not simulated "
                        f"(at {where})")
        lib = env[module] if module is not None else None
        core = not isinstance(out, D.FabDsd)
        for k in range(n):
            a = [scalar(x[y[k]]) if kind == "seq" else x for kind, x, y in inputs]
            if lib is None:
                r = yield from call_in_scope(ctx, env, callee, a)
            elif isinstance(lib, ModuleInstance):
                r = yield from lib.call(callee, a)
            else:
                r = lib.call(callee, a)
            if obuf is None:
                continue
            j = int(oidx[k])
            if core and ctx.watching:  # async ops of this PE read memory as they run
                ctx.core_write(obuf, (j,), r, ctx.t)
            else:
                obuf[j] = r
        if isinstance(out, D.FabDsd):
            send = ctx.dsd_op(_mov(obuf.dtype), (None, None), None, [out, D.MemDsd(obuf, 0, 1, n)])
            if send is not None:
                yield from send

    return run

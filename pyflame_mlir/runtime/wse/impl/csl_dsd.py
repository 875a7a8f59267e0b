"""`csl` DSDs: making memory and fabric DSDs, the mutators, and the DSD builtins.

A builtin is resolved to its `builtins.Builtin` when the program is planned,
so an unmodeled one (`@fs2xp16`, ...) is rejected before anything runs; the
PE (`Context.dsd_op`) executes it and times it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from xdsl.dialects import csl
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation

from pyflame_mlir.dialects import csl_ext

from .. import dsd as D
from ..builtins import BUILTINS, UNMODELED
from ..errors import ArchRuleError, ProgramError, UnsupportedError
from ..interpreter import Env, Functions, location
from ..modules import qualify
from ..values import np_dtype

CSL_DSD = Functions("csl DSDs")


@cache
def _resolved(then: csl_ext.AsyncAttr, kind: str, id: int) -> csl_ext.AsyncAttr:
    return csl_ext.AsyncAttr.get(then.action.data, csl.TaskKind(kind), id, then.ut_id)


def async_then(op: Operation) -> Callable[[Any, Env], Any]:
    """The `async` attribute of an op as a function of its PE and environment: as it is,
    or, for a target by name (`#csl_ext.async<activate @callback>`), with the task id
    that name has there: a task-id param's value, or the id a task is bound to."""
    then = op.attributes.get(csl_ext.ASYNC_ATTR)
    if not isinstance(then, csl_ext.AsyncAttr) or not then.target.data:
        return lambda ctx, env: then
    name, where = then.target.data, location(op)
    module = op.parent_op()
    while module is not None and not isinstance(module, csl.CslModuleOp):
        module = module.parent_op()
    assert module is not None
    param = next((o for o in module.body.block.ops
                  if isinstance(o, csl_ext.ParamOp) and o.param_name.data == name), None)
    if param is not None:
        if not isinstance(param.res.type, csl_ext.TaskIdType):
            raise ProgramError(f".{then.action.data} = {name} (at {where}): param '{name}' "
                               f"is a {param.res.type}, not a task id")
        res = param.res

        def by_param(ctx, env):
            tid = env[res]
            return _resolved(then, tid.kind, tid.id)

        return by_param
    if any(isinstance(o, csl.TaskOp) and o.sym_name.data == name
           for o in module.body.block.ops):
        def by_task(ctx, env):
            tid = ctx.task_id_of(qualify(env, name), f".{then.action.data} = {name} "
                                 f"(at {where})")
            return _resolved(then, tid.kind, tid.id)

        return by_task
    raise ProgramError(f".{then.action.data} = {name} (at {where}): no task-id param or task "
                       f"'{name}' in the module")


@CSL_DSD.impl(csl.GetMemDsdOp)
def _mem_dsd(op: csl.GetMemDsdOp):
    base, sizes, res = op.base_addr, tuple(op.sizes), op.result
    kind, amap = op.result.type.data.value, op.tensor_access.data if op.tensor_access else None

    cache: dict[tuple, tuple] = {}  # (id(base), sizes) -> (base, DSD); DSDs are values

    def run(ctx, env):
        arr, n = env[base], tuple(env[s] for s in sizes)
        hit = cache.get((id(arr), n))
        if hit is None or hit[0] is not arr:  # (a dead array's id may be reused)
            if len(cache) > 4096:
                cache.clear()
            hit = cache[(id(arr), n)] = (arr, D.make_mem_dsd(kind, arr, list(n), amap))
        env[res] = hit[1]

    return run


def fab_dsd(op, color: Callable[[Env], int], extent: Callable[[Env], int],
            control: bool = False, queue_of: Callable[[Env], int] | None = None):
    """The step of a fabric DSD op, given how to read its color, extent and (a queue
    value's) queue."""
    kind, res = op.result.type.data.value, op.result
    queue = None if queue_of is not None else csl_ext.queue_number(op.queue_id)

    def run(ctx, env):
        n = extent(env)
        D.check_length(kind, [n])
        d = D.FabDsd(kind, color(env), n, queue if queue_of is None else queue_of(env), control)
        ctx.check_fabric_dsd(d)
        env[res] = d

    return run


@CSL_DSD.impl(csl.GetFabDsdOp)
def _fab_dsd(op: csl.GetFabDsdOp):
    wio = op.wavelet_index_offset
    if wio is not None and wio.value.data:
        # sending these as data would hand the receiver a wrong value silently
        raise UnsupportedError("the WSE simulator does not model wavelet-indexed stores "
                               f"(.wavelet_index_offset = true) (at {location(op)})")
    control = op.control is not None and bool(op.control.value.data)
    if control and op.result.type.data != csl.DsdKind.fabout_dsd:
        raise UnsupportedError("the WSE simulator models control wavelets only as sent "
                               f"(.control = true on a fabout_dsd) (at {location(op)})")
    color, size = op.fabric_color.value.data, op.sizes[0]
    return fab_dsd(op, lambda env: color, lambda env: env[size], control)


@CSL_DSD.impl(csl.IncrementDsdOffsetOp)
def _inc_offset(op: csl.IncrementDsdOffsetOp):
    d, off, res = op.op, op.offset, op.result
    size = np_dtype(op.elem_type).itemsize

    def run(ctx, env):
        env[res] = D.increment_offset(env[d], env[off], size)

    return run


@CSL_DSD.impl(csl.SetDsdLengthOp)
def _set_length(op: csl.SetDsdLengthOp):
    d, length, res = op.op, op.length, op.result
    if length.type != csl.u16_value:  # cslc: the length field is a u16
        raise ArchRuleError(f"@set_dsd_length takes a u16 length, got {length.type} "
                            "(write @set_dsd_length(d, @bitcast(u16, n)))")

    def run(ctx, env):
        env[res] = D.set_length(env[d], env[length] & 0xFFFF)

    return run


@CSL_DSD.impl(csl.SetDsdStrideOp)
def _set_stride(op: csl.SetDsdStrideOp):
    d, stride, res = op.op, op.stride, op.result

    def run(ctx, env):
        env[res] = D.set_stride(env[d], env[stride])

    return run


@CSL_DSD.impl(csl.SetDsdBaseAddrOp)
def _set_base(op: csl.SetDsdBaseAddrOp):
    d, base, res = op.op, op.base_addr, op.result

    def run(ctx, env):
        env[res] = D.set_base_addr(env[d], env[base])

    return run


_BUILTIN_OPS = [o for o in csl.CSL.operations if issubclass(o, csl.BuiltinDsdOp)]


@CSL_DSD.impl_waiting(*_BUILTIN_OPS)
def _dsd_builtin(op: csl.BuiltinDsdOp):
    name = op.name.removeprefix("csl.")
    b = BUILTINS.get(name)
    if b is None:
        why = UNMODELED.get(name, "not modeled")
        raise UnsupportedError(f"@{name} is not simulated: {why} (at {location(op)})")
    ops = tuple(op.ops)
    types = tuple(o.type for o in ops)
    then_of = async_then(op)
    then: Any = op.attributes.get(csl_ext.ASYNC_ATTR)
    # the fast path's plan: which operands are whole arrays used as DSDs; a pointer
    # destination (a fold) or an async op always takes the general path
    whole = tuple(isinstance(t, MemRefType) for t in types)
    local = then is None and not any(isinstance(t, csl.PtrType) for t in types)

    def run(ctx, env):  # None when done at once, else a generator of its waits
        vals = [env[v] for v in ops]
        if local and not ctx.watching and ctx.dsd_local(b, whole, vals):
            return None
        return ctx.dsd_op(b, types, then_of(ctx, env), vals)

    return run

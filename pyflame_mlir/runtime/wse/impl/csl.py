"""`csl` apart from DSDs: module structure, params and imports, structs, variables and
pointers, functions and tasks, the layout.

What an op does to its surroundings (allocate SRAM, bind a task, set a route)
is the `Context`'s: a PE or the layout evaluator, which rejects what its kind
of module may not do.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects import csl

from ..errors import ProgramError
from ..interpreter import Functions, Planner, location, run_block, run_sync
from ..modules import (
    SCOPE,
    ModuleInstance,
    call_in_scope,
    find_module,
    import_target,
    is_library,
    qualify,
)
from ..values import Var, attr_value, is_numeric, np_dtype
from .memref import module_level, name_of, shape_of, static_shape

CSL = Functions("csl")
CSL.impl_terminator(csl.ReturnOp)


# --- module structure, params, imported modules --------------------------------------------


@CSL.impl(csl.ParamOp)
def _param(op: csl.ParamOp):
    res, name, type, init = op.res, op.param_name.data, op.res.type, op.init_value

    def run(ctx, env):
        default = env[init] if init is not None else None
        scope = env.get(SCOPE)  # a param of an imported module: from its import's struct
        env[res] = (scope or ctx).param(name, type, default)

    return run


@CSL.impl(csl.ImportModuleConstOp)
def _import(op: csl.ImportModuleConstOp):
    res, name, params = op.result, op.module.data, op.params
    if is_library(name):
        def run(ctx, env):
            env[res] = ctx.import_module(name, env[params] if params else None)

        return run
    # a file of the program's: the csl.module it resolved to (modules.py)
    key = import_target(op)
    target = find_module(op.parent_op().parent_op(), key)
    if target is None:
        raise ProgramError(
            f'@import_module("{name}") (at {location(op)}): no module \'{key}\' in the '
            "program (load the program from its file, so that imported files are found "
            "and merged, or give the module its own csl.module of that name)")

    def run_user(ctx, env):
        env[res] = ctx.instantiate(target, key, env[params] if params else None)

    return run_user


@CSL.impl(csl.MemberAccessOp)
def _member_access(op: csl.MemberAccessOp):
    struct, field, res = op.struct, op.field.data, op.result

    def run(ctx, env):
        obj = env[struct]
        if isinstance(obj, dict):
            if field not in obj:
                raise ProgramError(f"struct has no field .{field} (fields: {sorted(obj)})")
            env[res] = obj[field]
        else:
            env[res] = obj.access(field)

    return run


def _library_operand(v) -> bool:
    """An SDK library module (whose calls never wait), known at plan time."""
    owner = v.owner
    return isinstance(owner, csl.ImportModuleConstOp) and is_library(owner.module.data)


@CSL.impl_region(csl.MemberCallOp)
def _member_call(op: csl.MemberCallOp, planner: Planner):
    struct, field, args, res = op.struct, op.field.data, tuple(op.args), op.result

    def run(ctx, env):
        r = env[struct].call(field, [env[a] for a in args])
        if res is not None:
            env[res] = r

    if _library_operand(struct):
        return False, run

    def run_waiting(ctx, env):
        obj = env[struct]
        vals = [env[a] for a in args]
        if isinstance(obj, ModuleInstance):  # a user module's function may wait
            r = yield from obj.call(field, vals)
        else:
            r = obj.call(field, vals)
        if res is not None:
            env[res] = r

    return True, run_waiting


@CSL.impl(csl.SymbolExportOp)
def _export(op: csl.SymbolExportOp):
    name, value, type = op.get_name(), op.value, op.type

    def run(ctx, env):
        ctx.export(name, env[value] if value is not None else qualify(env, name), type)

    return run


@CSL.impl(csl.RpcOp)
def _rpc(op: csl.RpcOp):
    id = op.id

    def run(ctx, env):
        ctx.rpc(env[id])

    return run


# --- structs, colors, directions ------------------------------------------------------------


@CSL.impl(csl.ConstStructOp)
def _struct(op: csl.ConstStructOp):
    static = {k: attr_value(v) for k, v in op.items.data.items()} if op.items else {}
    fields = tuple(zip([f.data for f in op.ssa_fields or ()], op.ssa_values))
    res = op.res

    def run(ctx, env):
        s = dict(static)  # a new struct per execution
        for f, v in fields:
            s[f] = env[v]
        env[res] = s

    return run


@CSL.impl(csl.ConcatStructOp)
def _concat(op: csl.ConcatStructOp):
    this, other, res = op.this_struct, op.another_struct, op.result

    def run(ctx, env):
        a, b = env[this], env[other]
        if both := a.keys() & b.keys():
            raise ProgramError(f"@concat_structs: field(s) {sorted(both)} in both structs")
        env[res] = {**a, **b}

    return run


@CSL.impl(csl.ConstStrOp)
def _const_str(op: csl.ConstStrOp):
    res, value = op.res, op.value.data

    def run(ctx, env):  # a comptime string: a library's key, a trace message
        env[res] = value

    return run


@CSL.impl(csl.GetColorOp)
def _get_color(op: csl.GetColorOp):
    id, res = op.id, op.res

    def run(ctx, env):
        env[res] = int(env[id])

    return run


@CSL.impl(csl.DirectionOp)
def _direction(op: csl.DirectionOp):
    res, value = op.res, op.dir.data.value

    def run(ctx, env):
        env[res] = value

    return run


# --- arrays, variables, pointers ------------------------------------------------------------


@CSL.impl(csl.ZerosOp, csl.ConstantsOp)
def _zeros(op: csl.ZerosOp | csl.ConstantsOp):
    res, t, size = op.result, op.result.type, op.size
    name, dtype, static = name_of(res, "array"), np_dtype(t.element_type), static_shape(t)
    at_module = module_level(op)
    fill = op.value if isinstance(op, csl.ConstantsOp) else None

    def run(ctx, env):
        arr = ctx.alloc(name, dtype, shape_of(static, [env[size]] if size is not None else []),
                        at_module)  # fmt: skip
        if fill is not None:
            arr[...] = env[fill]
        env[res] = arr

    return run


@CSL.impl(csl.VariableOp)
def _variable(op: csl.VariableOp):
    res, t = op.res, op.res.type.get_element_type()
    name, at_module = name_of(res, "var"), module_level(op)
    dtype = np_dtype(t) if is_numeric(t) else None
    default = attr_value(op.default) if op.default is not None else None

    def run(ctx, env):
        var = Var(ctx.alloc(name, dtype, (1,), at_module) if dtype is not None else None)
        if default is not None:
            var.set(default)
        env[res] = var

    return run


@CSL.impl(csl.LoadVarOp)
def _load_var(op: csl.LoadVarOp):
    var, res = op.var, op.res

    def run(ctx, env):
        env[res] = env[var].get()

    return run


@CSL.impl(csl.StoreVarOp)
def _store_var(op: csl.StoreVarOp):
    var, value = op.var, op.new_value

    def run(ctx, env):
        env[var].set(env[value])

    return run


@CSL.impl(csl.AddressOfOp)
def _addressof(op: csl.AddressOfOp):
    value, res = op.value, op.res

    def run(ctx, env):
        v = env[value]
        if isinstance(v, Var):
            if v.cell is None:
                raise ProgramError(f"cannot take the address of non-numeric variable {value}")
            v = v.cell
        if not isinstance(v, np.ndarray):
            raise ProgramError(f"cannot take the address of SSA value {value}")
        env[res] = v

    return run


@CSL.impl(csl.AddressOfFnOp)
def _addressof_fn(op: csl.AddressOfFnOp):
    res, name = op.res, op.fn_name.string_value()

    def run(ctx, env):
        env[res] = qualify(env, name)

    return run


@CSL.impl(csl.PtrCastOp)
def _ptrcast(op: csl.PtrCastOp):
    ptr, res, dtype = op.ptr, op.result, np_dtype(op.result.type.type)

    def run(ctx, env):
        env[res] = env[ptr].reshape(-1).view(dtype)

    return run


# --- functions and tasks ----------------------------------------------------------------------


@CSL.impl_region(csl.FuncOp, csl.TaskOp)
def _define(op: csl.FuncOp | csl.TaskOp, planner: Planner):
    body = planner.block(op.body.block)

    def run(ctx, env):
        ctx.define(op, body, env)

    return False, run


@CSL.impl_waiting(csl.CallOp)
def _call(op: csl.CallOp):
    callee, args, res = op.callee.string_value(), tuple(op.args), op.result

    def run(ctx, env):
        if SCOPE in env:  # code of an imported module: its own functions and fn params
            r = yield from call_in_scope(ctx, env, callee, [env[a] for a in args])
        else:
            r = yield from ctx.call(callee, [env[a] for a in args])
        if res is not None:
            env[res] = r

    return run


@CSL.impl(csl.ActivateOp)
def _activate(op: csl.ActivateOp):
    kind, id = op.kind.data.value, op.id.value.data

    def run(ctx, env):
        ctx.activate(kind, id)

    return run


# --- the layout -------------------------------------------------------------------------------


@CSL.impl_region(csl.LayoutOp)
def _layout(op: csl.LayoutOp, planner: Planner):
    body = planner.block(op.body.block)

    def run_waiting(ctx, env):
        yield from run_block(ctx, env, body)

    def run(ctx, env):
        run_sync(ctx, env, body)

    return (True, run_waiting) if body.waits else (False, run)


@CSL.impl(csl.SetRectangleOp)
def _set_rectangle(op: csl.SetRectangleOp):
    x, y = op.x_dim, op.y_dim

    def run(ctx, env):
        ctx.set_rectangle(env[x], env[y])

    return run


@CSL.impl(csl.SetTileCodeOp)
def _set_tile_code(op: csl.SetTileCodeOp):
    x, y, file, params = op.x_coord, op.y_coord, op.file.data, op.params

    def run(ctx, env):
        ctx.set_tile_code(env[x], env[y], file, env[params] if params is not None else {})

    return run

"""`memref` on a PE: arrays (module-level ones in SRAM), globals, element loads and stores."""

from __future__ import annotations

import numpy as np
from xdsl.dialects import csl, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType, UnitAttr
from xdsl.ir import Operation, SSAValue

from ..errors import ProgramError
from ..interpreter import Functions, location
from ..modules import qualify
from ..values import attr_value, np_dtype, scalar

MEMREF = Functions("memref")


def module_level(op: Operation) -> bool:
    """Module-level arrays live in SRAM; a function's are on its stack."""
    return isinstance(op.parent_op(), csl.CslModuleOp)


def static_shape(t: MemRefType) -> tuple[int | None, ...]:
    """The shape with None for each dynamic size, filled in at run time by `shape_of`."""
    return tuple(None if d == DYNAMIC_INDEX else d for d in t.get_shape())


def shape_of(static: tuple[int | None, ...], dynamic: list[int]) -> tuple[int, ...]:
    it = iter(dynamic)
    return tuple(next(it) if d is None else d for d in static)


def name_of(v: SSAValue, fallback: str) -> str:
    return v.name_hint or fallback


@MEMREF.impl(memref.GlobalOp)
def _global(op: memref.GlobalOp):
    t, name = op.type, op.sym_name.data
    dtype, shape = op.type.element_type, shape_of(static_shape(t), [])
    init = None if isinstance(op.initial_value, UnitAttr) else attr_value(op.initial_value)
    dtype = np_dtype(dtype)

    def run(ctx, env):
        arr = ctx.alloc(name, dtype, shape, True)
        if init is not None:  # a splat, or every element in row-major order
            vals = np.asarray(init)
            arr[...] = vals.reshape(arr.shape) if vals.size == arr.size > 1 else vals
        ctx.globals_by_symbol[qualify(env, name)] = arr

    return run


@MEMREF.impl(memref.GetGlobalOp)
def _get_global(op: memref.GetGlobalOp):
    res, name = op.memref, op.name_.string_value()

    def run(ctx, env):
        env[res] = ctx.globals_by_symbol[qualify(env, name)]

    return run


def _out_of_bounds(op: Operation, arr, index: tuple) -> ProgramError:
    return ProgramError(f"{op.name} of element {list(index)} of a {list(arr.shape)} array "
                        f"(at {location(op)}): outside the array (on hardware, another "
                        "variable's memory)")


@MEMREF.impl(memref.LoadOp)
def _load(op: memref.LoadOp):
    mem, idx, res = op.memref, tuple(op.indices), op.res
    if len(idx) == 1:
        (i0,) = idx

        def run(ctx, env):
            arr, i = env[mem], env[i0]
            if not 0 <= i < arr.shape[0]:  # numpy would wrap a negative index
                raise _out_of_bounds(op, arr, (i,))
            env[res] = scalar(arr[i])

        return run

    def run_n(ctx, env):
        arr, i = env[mem], tuple(env[i] for i in idx)
        if not all(0 <= k < n for k, n in zip(i, arr.shape)):
            raise _out_of_bounds(op, arr, i)
        env[res] = scalar(arr[i])

    return run_n


@MEMREF.impl(memref.StoreOp)
def _store(op: memref.StoreOp):
    mem, idx, val = op.memref, tuple(op.indices), op.value

    def run(ctx, env):
        arr, i = env[mem], tuple(env[i] for i in idx)
        if not all(0 <= k < n for k, n in zip(i, arr.shape)):
            raise _out_of_bounds(op, arr, i)
        if ctx.watching:  # async ops of this PE read memory as they run
            ctx.core_write(arr, i, env[val], ctx.t)
        else:
            arr[i] = env[val]

    return run


@MEMREF.impl(memref.AllocOp, memref.AllocaOp)
def _alloc(op: memref.AllocOp | memref.AllocaOp):
    res, sizes, t = op.memref, tuple(op.dynamic_sizes), op.memref.type
    name, dtype, static = name_of(res, "alloc"), np_dtype(t.element_type), static_shape(t)
    at_module = module_level(op)

    def run(ctx, env):
        env[res] = ctx.alloc(name, dtype, shape_of(static, [env[v] for v in sizes]), at_module)

    return run

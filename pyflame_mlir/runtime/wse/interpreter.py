"""Op-by-op interpreter of `csl`/`csl_ext`/`arith`/`scf`/`memref` IR.

Blocks run as generators: an op that needs wavelets not yet delivered yields a
`Wait`, and the PE's scheduler resumes the generator when they arrive. Plain
ops are functions `(ctx, env, op) -> None` in `SIMPLE`; ops that contain
blocks or may wait are generator functions in `GEN`. `ctx` is a `Context`: a
PE for program modules, the layout evaluator for the layout module; each
provides the context-specific actions (params, allocation, tasks, routes).
The op set is the one xDSL's CSL printer can print, plus `csl_ext`.
"""

from __future__ import annotations

import operator
import weakref
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import arith, csl, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DictionaryAttr,
    Float16Type,
    Float32Type,
    MemRefType,
    UnitAttr,
)
from xdsl.ir import Block, Operation, SSAValue

from pyflame_mlir.dialects import csl_ext

from . import dsd as D
from .errors import ProgramError, UnsupportedError
from .values import Var, attr_value, int_info, is_numeric, np_dtype, scalar, wrap

Env = dict[SSAValue, Any]


@dataclass(frozen=True, slots=True)
class Wait:
    """Yielded by a blocked op: wake me when `count` wavelets of `color` are queued."""

    color: int
    count: int


class Context:
    """What the interpreter needs from its surroundings; the defaults reject the op."""

    kind = "module"
    t: float = 0.0
    op_cycles: float = 0.0

    def _reject(self, what: str):
        raise ProgramError(f"{what} is not allowed in a {self.kind} module")

    def param(self, name: str, type, default): self._reject("csl.param")
    def import_module(self, name: str, params: dict | None): self._reject(f"import {name}")
    def alloc(self, name: str, dtype: np.dtype, shape: tuple[int, ...], module_level: bool):
        self._reject("memory allocation")
    def define(self, op: csl.FuncOp | csl.TaskOp): self._reject(op.name)
    def export(self, name: str, value, type): self._reject("csl.export")
    def rpc(self, color: int): self._reject("csl.rpc")
    def activate(self, kind: str, id: int): self._reject("@activate")
    def set_blocked(self, kind: str, id: int, blocked: bool): self._reject("@block/@unblock")
    def initialize_queue(self, queue: int, color: int, output: bool):
        self._reject("@initialize_queue")
    def check_fabric_dsd(self, d: D.FabDsd): self._reject("fabric DSDs")
    def call(self, name: str, args: list) -> Generator[Wait, None, Any]: self._reject("csl.call")
    def dsd_op(self, op: csl.BuiltinDsdOp, vals: list) -> Generator[Wait, None, None]:
        self._reject(op.name)
    def set_rectangle(self, w: int, h: int): self._reject("@set_rectangle")
    def set_tile_code(self, x: int, y: int, file: str, params: dict):
        self._reject("@set_tile_code")
    def set_route(self, x: int, y: int, color: int, rx, tx): self._reject("@set_color_config")


Handler = Callable[[Context, Env, Any], None]
GenHandler = Callable[[Context, Env, Any], Generator[Wait, None, None]]
SIMPLE: dict[type[Operation], Handler] = {}
GEN: dict[type[Operation], GenHandler] = {}


def simple(*types: type[Operation]):
    def reg(f: Handler) -> Handler:
        SIMPLE.update(dict.fromkeys(types, f))
        return f

    return reg


def generator(*types: type[Operation]):
    def reg(f: GenHandler) -> GenHandler:
        GEN.update(dict.fromkeys(types, f))
        return f

    return reg


# Per block, what running each op takes, resolved once: the op's operands and
# results are looked up through xDSL's accessors only when the plan is made
# (hot ops get closures over their SSA values: `FAST`), not at every execution.
_PLANS: weakref.WeakKeyDictionary[Block, list[tuple[int, Any, Any]]] = (
    weakref.WeakKeyDictionary()
)
FAST: dict[type[Operation], Callable[[Any], Callable[[Context, Env], None]]] = {}
FAST_GEN: dict[type[Operation], Callable[[Any], Callable]] = {}


def fast(*types: type[Operation]):
    """Register a plan-time compiler: op -> run(ctx, env)."""
    def reg(f):
        FAST.update(dict.fromkeys(types, f))
        return f

    return reg


def _plan_block(block: Block) -> list[tuple[int, Any, Any]]:
    steps: list[tuple[int, Any, Any]] = []
    for op in block.ops:
        cls = op.__class__
        if cls in FAST:
            steps.append((0, FAST[cls](op), None))
        elif cls in SIMPLE:
            steps.append((1, SIMPLE[cls], op))
        elif cls in FAST_GEN:
            steps.append((2, FAST_GEN[cls](op), None))
        elif cls in GEN:
            steps.append((3, GEN[cls], op))
        elif isinstance(op, scf.YieldOp | csl.ReturnOp):
            steps.append((4, tuple(op.operands), None))
        else:
            steps.append((5, op.name, None))
    return steps


def run_block(ctx: Context, env: Env, block: Block) -> Generator[Wait, None, list | None]:
    """Run a block; return the operands of its terminator (scf.yield / csl.return)."""
    steps = _PLANS.get(block)
    if steps is None:
        steps = _PLANS[block] = _plan_block(block)
    cost = ctx.op_cycles
    for kind, fn, op in steps:
        ctx.t += cost
        if kind == 0:
            fn(ctx, env)
        elif kind == 1:
            fn(ctx, env, op)
        elif kind == 2:
            yield from fn(ctx, env)
        elif kind == 3:
            yield from fn(ctx, env, op)
        elif kind == 4:
            return [env[v] for v in fn]
        else:
            raise UnsupportedError(f"the WSE simulator does not model op {fn}")
    return None


def run_to_end(gen: Generator[Wait, None, Any], what: str) -> Any:
    """Drive a generator that must not wait (module-level code, the layout)."""
    try:
        w = next(gen)
    except StopIteration as stop:
        return stop.value
    raise ProgramError(f"{what} waits for wavelets on color {w.color}: only tasks may wait")


# --- arith --------------------------------------------------------------------------


@simple(arith.ConstantOp)
def _constant(ctx, env, op):
    env[op.result] = attr_value(op.value)


def _c_div(a: int, b: int) -> int:
    if b == 0:
        raise ProgramError("integer division by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _c_rem(a: int, b: int) -> int:
    return a - b * _c_div(a, b)


_INT_BINOPS: dict[type[Operation], tuple[Callable[[int, int], int], bool]] = {
    arith.AddiOp: (operator.add, False),
    arith.SubiOp: (operator.sub, False),
    arith.MuliOp: (operator.mul, False),
    arith.DivSIOp: (_c_div, False),
    arith.DivUIOp: (_c_div, True),
    arith.RemSIOp: (_c_rem, False),
    arith.RemUIOp: (_c_rem, True),
    arith.ShLIOp: (operator.lshift, False),
    arith.AndIOp: (operator.and_, False),
    arith.OrIOp: (operator.or_, False),
}


@simple(*_INT_BINOPS)
def _int_binop(ctx, env, op):
    fn, unsigned = _INT_BINOPS[op.__class__]
    bits, signed = int_info(op.result.type)
    a, b = env[op.lhs], env[op.rhs]
    if unsigned:
        a, b = a & ((1 << bits) - 1), b & ((1 << bits) - 1)
    env[op.result] = wrap(fn(a, b), bits, signed)


_FLOAT_BINOPS = {
    arith.AddfOp: operator.add,
    arith.SubfOp: operator.sub,
    arith.MulfOp: operator.mul,
    arith.DivfOp: operator.truediv,
}


@simple(*_FLOAT_BINOPS)
def _float_binop(ctx, env, op):
    t = np_dtype(op.result.type).type
    env[op.result] = t(_FLOAT_BINOPS[op.__class__](t(env[op.lhs]), t(env[op.rhs])))


_CMP = {
    "eq": operator.eq, "ne": operator.ne, "lt": operator.lt,
    "le": operator.le, "gt": operator.gt, "ge": operator.ge,
}  # fmt: skip


@simple(arith.CmpiOp)
def _cmpi(ctx, env, op):
    pred = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
    a, b = env[op.lhs], env[op.rhs]
    if pred[0] == "u":
        mask = (1 << int_info(op.lhs.type)[0]) - 1
        a, b = a & mask, b & mask
    env[op.result] = int(_CMP[pred[-2:]](a, b))


@simple(arith.CmpfOp)
def _cmpf(ctx, env, op):
    pred = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
    a, b = env[op.lhs], env[op.rhs]
    unordered = bool(np.isnan(a) or np.isnan(b))
    if pred in ("true", "false"):
        r = pred == "true"
    elif pred in ("ord", "uno"):
        r = unordered == (pred == "uno")
    else:
        r = bool(_CMP[pred[1:]](a, b)) and not unordered
        r = r or (pred[0] == "u" and unordered)
    env[op.result] = int(r)


@simple(arith.SelectOp)
def _select(ctx, env, op):
    env[op.result] = env[op.lhs] if env[op.cond] else env[op.rhs]


@simple(
    arith.IndexCastOp, arith.ExtSIOp, arith.TruncIOp, arith.SIToFPOp, arith.FPToSIOp,
    arith.ExtFOp, arith.TruncFOp, arith.ExtUIOp, csl.SignednessCastOp,
)  # fmt: skip
def _cast(ctx, env, op):
    v, to = env[op.operands[0]], op.results[0].type
    if isinstance(op, arith.ExtUIOp):
        v &= (1 << int_info(op.operands[0].type)[0]) - 1
    if isinstance(to, Float32Type | Float16Type):
        env[op.results[0]] = np_dtype(to).type(v)
    else:
        iv = int(np.trunc(v)) if isinstance(v, np.floating) else int(v)
        env[op.results[0]] = wrap(iv, *int_info(to))


@simple(arith.BitcastOp)
def _bitcast(ctx, env, op):
    bits = np.array(env[op.input], np_dtype(op.input.type)).view(np_dtype(op.result.type))
    env[op.result] = scalar(bits[()])


# --- memory -------------------------------------------------------------------------


def _module_level(op: Operation) -> bool:
    return isinstance(op.parent_op(), csl.CslModuleOp)


def _shape(t: MemRefType, dynamic: list[int]) -> tuple[int, ...]:
    it = iter(dynamic)
    return tuple(next(it) if d == DYNAMIC_INDEX else d for d in t.get_shape())


def _name(v: SSAValue, fallback: str) -> str:
    return v.name_hint or fallback


@simple(memref.GlobalOp)
def _global(ctx, env, op):
    t = op.type
    arr = ctx.alloc(op.sym_name.data, np_dtype(t.element_type), _shape(t, []), True)
    if not isinstance(op.initial_value, UnitAttr):
        arr[...] = attr_value(op.initial_value)
    ctx.globals_by_symbol[op.sym_name.data] = arr


@simple(memref.GetGlobalOp)
def _get_global(ctx, env, op):
    env[op.memref] = ctx.globals_by_symbol[op.name_.string_value()]


@simple(memref.LoadOp)
def _load(ctx, env, op):
    env[op.res] = scalar(env[op.memref][tuple(env[i] for i in op.indices)])


@simple(memref.StoreOp)
def _store(ctx, env, op):
    env[op.memref][tuple(env[i] for i in op.indices)] = env[op.value]


@simple(memref.AllocOp, memref.AllocaOp)
def _alloc(ctx, env, op):
    t = op.memref.type
    shape = _shape(t, [env[v] for v in op.dynamic_sizes])
    env[op.memref] = ctx.alloc(_name(op.memref, "alloc"), np_dtype(t.element_type), shape,
                               _module_level(op))  # fmt: skip


@simple(csl.ZerosOp, csl.ConstantsOp)
def _zeros(ctx, env, op):
    t = op.result.type
    dynamic = [env[op.size]] if op.size is not None else []
    arr = ctx.alloc(_name(op.result, "array"), np_dtype(t.element_type), _shape(t, dynamic),
                    _module_level(op))  # fmt: skip
    if isinstance(op, csl.ConstantsOp):
        arr[...] = env[op.value]
    env[op.result] = arr


@simple(csl.VariableOp)
def _variable(ctx, env, op):
    t = op.res.type.get_element_type()
    cell = None
    if is_numeric(t):
        cell = ctx.alloc(_name(op.res, "var"), np_dtype(t), (1,), _module_level(op))
    var = Var(cell)
    if op.default is not None:
        var.set(attr_value(op.default))
    env[op.res] = var


@simple(csl.LoadVarOp)
def _load_var(ctx, env, op):
    env[op.res] = env[op.var].get()


@simple(csl.StoreVarOp)
def _store_var(ctx, env, op):
    env[op.var].set(env[op.new_value])


@simple(csl.AddressOfOp)
def _addressof(ctx, env, op):
    v = env[op.value]
    if isinstance(v, Var):
        if v.cell is None:
            raise ProgramError(f"cannot take the address of non-numeric variable {op.value}")
        v = v.cell
    if not isinstance(v, np.ndarray):
        raise ProgramError(f"cannot take the address of SSA value {op.value}")
    env[op.res] = v


@simple(csl.AddressOfFnOp)
def _addressof_fn(ctx, env, op):
    env[op.res] = op.fn_name.string_value()


@simple(csl.PtrCastOp)
def _ptrcast(ctx, env, op):
    env[op.result] = env[op.ptr].reshape(-1).view(np_dtype(op.result.type.type))


# --- module structure, structs, imported modules -------------------------------------


@simple(csl.ParamOp)
def _param(ctx, env, op):
    default = env[op.init_value] if op.init_value is not None else None
    env[op.res] = ctx.param(op.param_name.data, op.res.type, default)


@simple(csl.ImportModuleConstOp)
def _import(ctx, env, op):
    env[op.result] = ctx.import_module(op.module.data, env[op.params] if op.params else None)


@simple(csl.ConstStructOp)
def _struct(ctx, env, op):
    items = op.items or DictionaryAttr({})
    s = {k: attr_value(v) for k, v in items.data.items()}
    for f, v in zip(op.ssa_fields or (), op.ssa_values):
        s[f.data] = env[v]
    env[op.res] = s


@simple(csl.ConcatStructOp)
def _concat(ctx, env, op):
    a, b = env[op.this_struct], env[op.another_struct]
    if both := a.keys() & b.keys():
        raise ProgramError(f"@concat_structs: field(s) {sorted(both)} in both structs")
    env[op.result] = {**a, **b}


@simple(csl.MemberAccessOp)
def _member_access(ctx, env, op):
    obj, f = env[op.struct], op.field.data
    if isinstance(obj, dict):
        if f not in obj:
            raise ProgramError(f"struct has no field .{f} (fields: {sorted(obj)})")
        env[op.result] = obj[f]
    else:
        env[op.result] = obj.access(f)


@simple(csl.MemberCallOp)
def _member_call(ctx, env, op):
    r = env[op.struct].call(op.field.data, [env[a] for a in op.args])
    if op.result is not None:
        env[op.result] = r


@simple(csl.GetColorOp)
def _get_color(ctx, env, op):
    env[op.res] = int(env[op.id])


@simple(csl.DirectionOp)
def _direction(ctx, env, op):
    env[op.res] = op.dir.data.value


@simple(csl.FuncOp, csl.TaskOp)
def _define(ctx, env, op):
    ctx.define(op)


@simple(csl.SymbolExportOp)
def _export(ctx, env, op):
    value = env[op.value] if op.value is not None else op.get_name()
    ctx.export(op.get_name(), value, op.type)


@simple(csl.RpcOp)
def _rpc(ctx, env, op):
    ctx.rpc(env[op.id])


# --- tasks --------------------------------------------------------------------------


@generator(csl.CallOp)
def _call(ctx, env, op):
    r = yield from ctx.call(op.callee.string_value(), [env[a] for a in op.args])
    if op.result is not None:
        env[op.result] = r


@simple(csl.ActivateOp)
def _activate(ctx, env, op):
    ctx.activate(op.kind.data.value, op.id.value.data)


@simple(csl_ext.BlockOp, csl_ext.UnblockOp)
def _block(ctx, env, op):
    ctx.set_blocked(op.kind.data.value, op.id.value.data, isinstance(op, csl_ext.BlockOp))


@simple(csl_ext.InitializeQueueOp)
def _init_queue(ctx, env, op):
    ctx.initialize_queue(csl_ext.queue_number(op.queue_id), env[op.color], op.is_output)


# --- DSDs -------------------------------------------------------------------------------


@simple(csl.GetMemDsdOp)
def _mem_dsd(ctx, env, op):
    base = env[op.base_addr]
    amap = op.tensor_access.data if op.tensor_access else None
    env[op.result] = D.make_mem_dsd(
        op.result.type.data.value, base, [env[s] for s in op.sizes], amap
    )


@simple(csl.GetFabDsdOp, csl_ext.GetFabDsdOp)
def _fab_dsd(ctx, env, op):
    if isinstance(op, csl.GetFabDsdOp):
        color, extent = op.fabric_color.value.data, env[op.sizes[0]]
    else:
        color, extent = env[op.color], env[op.extent]
    d = D.FabDsd(op.result.type.data.value, color, extent, csl_ext.queue_number(op.queue_id))
    ctx.check_fabric_dsd(d)
    env[op.result] = d


@simple(csl.IncrementDsdOffsetOp)
def _inc_offset(ctx, env, op):
    env[op.result] = D.increment_offset(env[op.op], env[op.offset], np_dtype(op.elem_type).itemsize)


@simple(csl.SetDsdLengthOp)
def _set_length(ctx, env, op):
    env[op.result] = D.set_length(env[op.op], env[op.length] & 0xFFFF)


@simple(csl.SetDsdStrideOp)
def _set_stride(ctx, env, op):
    env[op.result] = D.set_stride(env[op.op], env[op.stride])


@simple(csl.SetDsdBaseAddrOp)
def _set_base(ctx, env, op):
    env[op.result] = D.set_base_addr(env[op.op], env[op.base_addr])


def _dsd_builtin(ctx, env, op):
    yield from ctx.dsd_op(op, [env[v] for v in op.ops])


GEN.update(
    dict.fromkeys(
        [o for o in csl.CSL.operations if issubclass(o, csl.BuiltinDsdOp)], _dsd_builtin
    )
)


# --- control flow -----------------------------------------------------------------------


@generator(scf.ForOp)
def _for(ctx, env, op):
    body = op.body.block
    idx, *args = body.args
    bits, signed = int_info(idx.type)
    vals = [env[v] for v in op.iter_args]
    for i in range(env[op.lb], env[op.ub], env[op.step]):
        env[idx] = wrap(i, bits, signed)
        for a, v in zip(args, vals):
            env[a] = v
        vals = yield from run_block(ctx, env, body)
    for r, v in zip(op.res, vals):
        env[r] = v


@generator(scf.IfOp)
def _if(ctx, env, op):
    region = op.true_region if env[op.cond] else op.false_region
    vals = (yield from run_block(ctx, env, region.block)) if region.blocks else []
    for r, v in zip(op.output, vals or []):
        env[r] = v


# --- layout -------------------------------------------------------------------------------


@generator(csl.LayoutOp)
def _layout(ctx, env, op):
    yield from run_block(ctx, env, op.body.block)


@simple(csl.SetRectangleOp)
def _set_rectangle(ctx, env, op):
    ctx.set_rectangle(env[op.x_dim], env[op.y_dim])


@simple(csl.SetTileCodeOp)
def _set_tile_code(ctx, env, op):
    params = env[op.params] if op.params is not None else {}
    ctx.set_tile_code(env[op.x_coord], env[op.y_coord], op.file.data, params)


@simple(csl_ext.SetColorConfigOp)
def _set_color_config(ctx, env, op):
    r = op.routes
    ctx.set_route(env[op.x_coord], env[op.y_coord], env[op.color], r.rx_ports, r.tx_ports)



# --- plan-time compiled forms of the hottest ops (same semantics as the handlers) ---------


@fast(arith.ConstantOp)
def _fast_constant(op):
    res, value = op.result, attr_value(op.value)
    if isinstance(value, np.ndarray):  # mutable: a fresh copy per execution
        def run_array(ctx, env):
            env[res] = value.copy()

        return run_array

    def run(ctx, env):
        env[res] = value

    return run


@fast(*_INT_BINOPS)
def _fast_int_binop(op):
    fn, unsigned = _INT_BINOPS[op.__class__]
    bits, signed = int_info(op.result.type)
    lhs, rhs, res = op.lhs, op.rhs, op.result
    mask = (1 << bits) - 1

    def run(ctx, env):
        a, b = env[lhs], env[rhs]
        if unsigned:
            a, b = a & mask, b & mask
        env[res] = wrap(fn(a, b), bits, signed)

    return run


@fast(*_FLOAT_BINOPS)
def _fast_float_binop(op):
    t = np_dtype(op.result.type).type
    fn = _FLOAT_BINOPS[op.__class__]
    lhs, rhs, res = op.lhs, op.rhs, op.result

    def run(ctx, env):
        env[res] = t(fn(t(env[lhs]), t(env[rhs])))

    return run


@fast(arith.IndexCastOp)
def _fast_index_cast(op):
    src, res = op.operands[0], op.results[0]
    bits, signed = int_info(res.type)

    def run(ctx, env):
        v = env[src]
        env[res] = wrap(int(np.trunc(v)) if isinstance(v, np.floating) else int(v), bits, signed)

    return run


@fast(arith.SelectOp)
def _fast_select(op):
    cond, lhs, rhs, res = op.cond, op.lhs, op.rhs, op.result

    def run(ctx, env):
        env[res] = env[lhs] if env[cond] else env[rhs]

    return run


@fast(memref.LoadOp)
def _fast_load(op):
    mem, idx, res = op.memref, tuple(op.indices), op.res
    if len(idx) == 1:
        (i0,) = idx

        def run(ctx, env):
            env[res] = scalar(env[mem][env[i0]])

        return run

    def run_n(ctx, env):
        env[res] = scalar(env[mem][tuple(env[i] for i in idx)])

    return run_n


@fast(memref.StoreOp)
def _fast_store(op):
    mem, idx, val = op.memref, tuple(op.indices), op.value

    def run(ctx, env):
        env[mem][tuple(env[i] for i in idx)] = env[val]

    return run


@fast(csl.IncrementDsdOffsetOp)
def _fast_inc_offset(op):
    d, off, res = op.op, op.offset, op.result
    size = np_dtype(op.elem_type).itemsize

    def run(ctx, env):
        env[res] = D.increment_offset(env[d], env[off], size)

    return run


def _fast_dsd_builtin(op):
    ops = tuple(op.ops)

    def run(ctx, env):
        yield from ctx.dsd_op(op, [env[v] for v in ops])

    return run


FAST_GEN.update(
    dict.fromkeys(
        [o for o in csl.CSL.operations if issubclass(o, csl.BuiltinDsdOp)], _fast_dsd_builtin
    )
)

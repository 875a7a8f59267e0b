"""``pf.load_mlir``: ``pyflame`` MLIR text back into a Python callable.

What ``pyflame-opt`` writes (after any of our passes that keep the
``pyflame`` dialect) or ``pf.to_mlir`` prints, a user runs: the function is
parsed and verified once, then compiled per backend (autodiff expansion, the
backend's pipeline, its lowering: the path ``evaluate`` takes) on the first
call there, and run on the arguments, which are checked against the
function's type.

Hostile text is refused before it can exhaust the stack or memory
(``dialects/bounded_parser.py``, which ``pyflame-opt`` uses too).
"""

from __future__ import annotations

import math
import os
import re
from typing import TYPE_CHECKING, Any

import numpy as np

from .compiler import (
    CONFIG,
    expand_transforms,
    get_backend,
    make_context,
    pipeline_for,
    run_pipeline,
)
from .core import Tensor
from .dialects.dtypes import DType

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.ir import Operation

__all__ = ["MlirLoadError", "MlirProgram", "load_mlir"]


class MlirLoadError(ValueError):
    """MLIR text that ``load_mlir`` cannot run: ``file:line:col: error: ...``."""


def _where(op: Operation, name: str) -> str:
    """``file:line:col`` of ``op``: the place its own location names
    (``loc("model.py":10:2)``, also inside a name, call site or fused location
    as JAX writes them: as mlir-opt reports), or where the parser found it."""
    from .dialects.bounded_parser import file_location

    loc = file_location(op.location)
    if loc is not None:
        return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
    return _PARSED_AT.get(op, name)


# while _parse runs: where the parser found each op whose own location it
# read from the text (it may name no file position: loc("x"), loc(unknown))
_PARSED_AT: dict[Any, str] = {}


# elementwise ``arith``/``math`` ops on tensors (what upstream tools print for
# pointwise programs) and the ``pyflame`` op each one is: one type in and out,
# so no broadcast or promotion is implied. Ops whose semantics differ from every
# pyflame op (maxnumf's NaN rule, math.round's ties away from zero, fast-math
# flags) are refused; xDSL 0.74 has no tensor form of compares, selects and
# casts (its cmpf gives an i1, its casts verify scalars only).
_UPSTREAM_ELEMENTWISE = {
    **{f"arith.{k}": v for k, v in {
        "addf": "add", "addi": "add", "subf": "sub", "subi": "sub", "mulf": "mul",
        "muli": "mul", "divf": "div", "maximumf": "maximum", "minimumf": "minimum",
        "maxsi": "maximum", "minsi": "minimum", "negf": "neg", "andi": "bitwise_and",
        "ori": "bitwise_or", "xori": "bitwise_xor"}.items()},
    **{f"math.{k}": v for k, v in {
        "exp": "exp", "log": "log", "log1p": "log1p", "expm1": "expm1", "tanh": "tanh",
        "sqrt": "sqrt", "rsqrt": "rsqrt", "sin": "sin", "cos": "cos", "atan": "atan",
        "asin": "asin", "acos": "acos", "atan2": "atan2", "absf": "abs", "absi": "abs",
        "erf": "erf", "floor": "floor", "ceil": "ceil", "trunc": "trunc",
        "roundeven": "round", "powf": "pow"}.items()},
}


def _upstream_as_pyflame(op: Operation, scalar: bool = False) -> str | None:
    """The ``pyflame`` op an ``arith``/``math`` op on tensors (or, ``scalar``, on
    the scalars of a ``linalg.generic`` body) is, or None."""
    from xdsl.dialects.builtin import TensorType

    types = [v.type for v in (*op.operands, *op.results)]
    if not op.results or isinstance(types[0], TensorType) == scalar or any(
            t != types[0] for t in types):
        return None
    flags = op.properties.get("fastmath")
    if flags is not None and str(flags) not in ("#arith.fastmath<none>",
                                                "#arith.fastmath<contract>"):
        return None  # (fast-math flags license results the pyflame ops do not give)
    return _UPSTREAM_ELEMENTWISE.get(op.name)


def _legalize(module: ModuleOp, name: str) -> None:
    """Upstream spellings other tools print, as ``pyflame`` ops: a tensor
    ``arith.constant`` is a ``pyflame.constant``, elementwise ``arith``/``math``
    ops on tensors are their ``pyflame`` ops (``_UPSTREAM_ELEMENTWISE``); a
    ``func.call`` of a function of the module is inlined. Anything else of
    ``arith``/``math`` is refused with its place."""
    from xdsl.dialects import arith, func
    from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType
    from xdsl.rewriter import InsertPoint, Rewriter

    from .dialects.pyflame import OP_CLASSES

    _legalize_tensor_ops(module, name)
    for op in list(module.walk()):
        if op.dialect_name() not in ("arith", "math"):
            continue
        if isinstance(op, arith.ConstantOp):
            value = op.properties.get("value")
            if not (isinstance(value, DenseIntOrFPElementsAttr)
                    and isinstance(op.results[0].type, TensorType)):
                raise MlirLoadError(f"{_where(op, name)}: error: '{op.name}' is not supported "
                                    f"here (a {op.results[0].type}): load_mlir runs tensor "
                                    "programs (arith.constant dense<...> : tensor<...>)")
            new = OP_CLASSES["constant"].create(attributes={"value": value},
                                                result_types=[op.results[0].type])
        else:
            target = _upstream_as_pyflame(op)
            if target is None:
                raise MlirLoadError(f"{_where(op, name)}: error: '{op.name}' is not supported "
                                    "here: load_mlir runs pyflame ops and these elementwise "
                                    "ops on tensors of one type, without fast-math flags "
                                    f"but contract: {', '.join(sorted(_UPSTREAM_ELEMENTWISE))}")
            new = OP_CLASSES[target].create(operands=list(op.operands),
                                            result_types=[r.type for r in op.results])
        new.location = op.location
        Rewriter.replace_op(op, new)
    funcs = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
    _refuse_recursion(funcs, name)
    inlined = 0
    for _ in range(64):  # a call inside an inlined body is inlined in the next round
        calls = [op for op in module.walk() if isinstance(op, func.CallOp)]
        if not calls:
            break
        inlined += len(calls)
        if inlined > 10_000:  # calls fanning out: refused before the text blows up
            raise MlirLoadError(f"{_where(calls[0], name)}: error: inlining func.call: more "
                                "than 10000 calls")
        for call in calls:
            callee = funcs.get(call.callee.root_reference.data)
            if callee is None or len(callee.body.blocks) != 1:
                raise MlirLoadError(f"{_where(call, name)}: error: 'func.call' of "
                                    f"{call.callee}: only calls of a one-block function of "
                                    "the module are supported (they are inlined)")
            block = callee.body.clone().block
            ret = block.last_op
            if not isinstance(ret, func.ReturnOp):
                raise MlirLoadError(f"{_where(callee, name)}: error: @"
                                    f"{callee.sym_name.data} does not end with func.return")
            Rewriter.inline_block(block, InsertPoint.before(call), call.arguments)
            # read after inlining: a returned argument of the callee is now the caller's
            values = list(ret.arguments)
            for r, v in zip(call.results, values):
                r.replace_all_uses_with(v)
            Rewriter.erase_op(ret)
            Rewriter.erase_op(call)
    else:
        rest = next(op for op in module.walk() if isinstance(op, func.CallOp))
        raise MlirLoadError(f"{_where(rest, name)}: error: 'func.call' nested more than 64 "
                            "deep (a recursive function?)")
    if any(op.dialect_name() == "tosa" for op in module.walk()):
        from .tosa_import import TosaError, legalize_tosa

        try:
            legalize_tosa(module)
        except TosaError as e:
            raise MlirLoadError(f"{_where(e.op, name)}: error: '{e.op.name}' "
                                f"{e.reason}") from None
    _convert_stablehlo(module, funcs, name)
    _check_composites(module, name)


def _convert_stablehlo(module: ModuleOp, funcs: dict[str, Any], name: str) -> None:
    """The ``stablehlo``/``chlo`` ops of the functions that run (the public ones and
    those a transform names; called ones are inlined by now, so a helper's
    ``dynamic_slice`` sees the caller's constant indices) as ``pyflame`` ops
    (``passes/convert_stablehlo.py``); an op it cannot convert is a located error."""
    from .passes.convert_stablehlo import StablehloError, convert_stablehlo

    if not any(op.dialect_name() in ("stablehlo", "chlo") for op in module.walk()):
        return
    public = [f for f in funcs.values() if f.sym_visibility is None
              or f.sym_visibility.data != "private"]
    named = set().union(*(_symbols_named(f) for f in public)) if public else set()
    for f in funcs.values():
        if f in public or f.sym_name.data in named:
            try:
                convert_stablehlo(f, keep=frozenset({*_COMPOSITES, "stablehlo.while"}))
            except StablehloError as e:
                raise MlirLoadError(f"{_where(e.op, name)}: error: '{e.op.name}' "
                                    f"{e.reason}") from None


# StableHLO/CHLO ops no one pyflame op computes, as the library's composites
# (module, function): recorded by calling them (their values and derivatives are
# the library's, one place each), so a program holding them runs by recording
_COMPOSITES = {"chlo.erfc": ("composites2", "erfc"), "chlo.erf_inv": ("composites2", "erfinv"),
               "chlo.lgamma": ("composites2", "lgamma"),
               "chlo.digamma": ("composites2", "digamma"),
               **{f"chlo.{n}": ("ops", n) for n in ("sinh", "cosh", "tan", "asinh", "acosh",
                                                    "atanh")},
               "stablehlo.cbrt": ("numpy", "cbrt")}  # jax's cbrt: real, odd


def _composite(name: str) -> Any:
    import importlib

    module, fn = _COMPOSITES[name]
    return getattr(importlib.import_module(f"{__package__}.{module}"), fn)


def _check_composites(module: ModuleOp, name: str) -> None:
    """The composite ops take and give one floating-point tensor type."""
    from xdsl.dialects.builtin import TensorType

    from .dialects.dtypes import FLOAT
    from .dialects.pyflame import spec_of_type

    for op in module.walk():
        if op.name not in _COMPOSITES:
            continue
        ins, outs = [v.type for v in op.operands], [r.type for r in op.results]
        ok = len(ins) == len(outs) == 1 and ins == outs and isinstance(ins[0], TensorType)
        if ok:
            try:
                ok = spec_of_type(ins[0], op.name)[1].category == FLOAT
            except Exception:  # noqa: BLE001  (not a pyflame element type)
                ok = False
        if not ok:
            raise MlirLoadError(f"{_where(op, name)}: error: '{op.name}' is supported on one "
                                "floating-point tensor, its result of the same type; got "
                                f"{', '.join(map(str, ins))} -> {', '.join(map(str, outs))}")


def _refuse_recursion(funcs: dict[str, Any], name: str) -> None:
    """A function that calls itself, directly or through others, is refused at
    the call that closes the cycle (calls are inlined, so recursion cannot be)."""
    from xdsl.dialects import func

    calls = {k: [op for op in f.walk() if isinstance(op, func.CallOp)] for k, f in funcs.items()}
    state: dict[str, int] = {}  # 1: on the path, 2: done (iterative: chains may be long)
    for root in funcs:
        if root in state:
            continue
        path, todo = [root], [iter(calls[root])]
        state[root] = 1
        while todo:
            call = next(todo[-1], None)
            if call is None:
                state[path.pop()] = 2
                todo.pop()
                continue
            callee = call.callee.root_reference.data
            if state.get(callee) == 1:
                cycle = path[path.index(callee):] + [callee]
                raise MlirLoadError(f"{_where(call, name)}: error: 'func.call' of @{callee} "
                                    "is recursive (" + " -> ".join(f"@{c}" for c in cycle)
                                    + "): calls are inlined, so recursion is not supported")
            if callee in calls and callee not in state:
                state[callee] = 1
                path.append(callee)
                todo.append(iter(calls[callee]))


def _static_type(op: Operation, t: Any, name: str) -> tuple[tuple[int, ...], DType]:
    from .dialects.pyflame import spec_of_type

    try:
        return spec_of_type(t, f"'{op.name}'")
    except Exception as e:  # noqa: BLE001  (VerifyException: dynamic, unranked, element)
        raise MlirLoadError(f"{_where(op, name)}: error: '{op.name}': {e}") from None


def _legalize_tensor_ops(module: ModuleOp, name: str) -> None:
    """The ``tensor``/``linalg``/``scf`` ops upstream tools print for shape plumbing,
    products and loops on static tensors, as ``pyflame`` ops (an ``scf.for`` of
    constant bounds is unrolled, see ``_unroll``): ``tensor.expand_shape``/
    ``collapse_shape`` are ``reshape``; a static ``tensor.extract_slice`` is
    ``slice`` (then ``reshape`` when it drops unit dims); ``linalg.matmul`` is
    ``matmul`` plus its ``outs`` init (``add``); ``linalg.fill`` of an
    ``arith.constant`` is a splat ``constant``; ``tensor.empty`` (contents
    undefined in MLIR) is a zero ``constant``. Other ops of these dialects (and
    ``scf``) are refused with their place: their ops on scalars, other loops and
    ``linalg.generic`` regions have no pyflame op."""
    from xdsl.dialects import arith, tensor
    from xdsl.dialects.builtin import FloatAttr, IntegerAttr, TensorType
    from xdsl.dialects.linalg.ops import (
        BroadcastOp,
        FillOp,
        GenericOp,
        MatmulOp,
        ReduceOp,
        TransposeOp,
    )
    from xdsl.rewriter import Rewriter

    from .dialects.pyflame import OP_CLASSES, attr_to_ir, ir_element_type

    def create(kind: str, operands: list, result_type: Any, attrs: dict | None = None,
               like: Operation | None = None) -> Operation:
        new = OP_CLASSES[kind].create(operands=operands, result_types=[result_type],
                                      attributes=attrs or {})
        if like is not None:
            new.location = like.location
        return new

    for op in list(module.walk(region_first=True)):  # inner loops first
        if op.name == "scf.for" and op.get_toplevel_object() is module:
            _unroll(op, name)
    for op in list(module.walk()):
        if op.dialect_name() not in ("tensor", "linalg", "scf") or \
                op.get_toplevel_object() is not module:  # (in a region replaced already)
            continue
        if isinstance(op, tensor.ExpandShapeOp | tensor.CollapseShapeOp):
            _static_type(op, op.operands[0].type, name)
            shape, _ = _static_type(op, op.results[0].type, name)
            new = [create("reshape", [op.operands[0]], op.results[0].type,
                          {"shape": attr_to_ir("ints", shape)}, op)]
        elif isinstance(op, tensor.ExtractSliceOp) and not (
                op.offsets or op.sizes or op.strides):
            _static_type(op, op.source.type, name)
            out, d = _static_type(op, op.result.type, name)
            start = op.static_offsets.get_values()
            size = op.static_sizes.get_values()
            stride = op.static_strides.get_values()
            limit = [o + (n - 1) * st + 1 if n else o for o, n, st in zip(start, size, stride)]
            sliced = TensorType(ir_element_type(d), list(size))
            new = [create("slice", [op.source], sliced,
                          {"start": attr_to_ir("ints", start),
                           "limit": attr_to_ir("ints", limit),
                           "stride": attr_to_ir("ints", stride)}, op)]
            if tuple(size) != out:  # a rank-reducing slice
                new.append(create("reshape", [new[0].results[0]], op.result.type,
                                  {"shape": attr_to_ir("ints", out)}, op))
        elif isinstance(op, GenericOp | ReduceOp):
            from .linalg_generic_import import GenericError, as_generic, legalize_generic

            try:
                generic = as_generic(op) if isinstance(op, ReduceOp) else op
                legalize_generic(generic,
                                 lambda inner: _upstream_as_pyflame(inner, scalar=True))
            except GenericError as e:
                raise MlirLoadError(f"{_where(e.op, name)}: error: '{op.name}' "
                                    f"{e.reason}") from None
            continue
        elif isinstance(op, TransposeOp) and len(op.results) == 1:
            new = [create("permute", [op.inputs[0]], op.results[0].type,
                          {"perm": op.permutation}, op)]
        elif isinstance(op, BroadcastOp) and len(op.results) == 1:
            s, _ = _static_type(op, op.input.type, name)
            out, _ = _static_type(op, op.results[0].type, name)
            added = set(op.dimensions.get_values())
            placed = [1 if i in added else out[i] for i in range(len(out))]
            if len(s) + len(added) != len(out) or [n for i, n in enumerate(out)
                                                   if i not in added] != list(s):
                raise MlirLoadError(f"{_where(op, name)}: error: 'linalg.broadcast' of "
                                    f"{op.input.type} into {op.results[0].type} adding "
                                    f"dimensions {sorted(added)}: the shapes do not match")
            shaped = create("reshape", [op.input], TensorType(
                op.input.type.get_element_type(), placed),
                {"shape": attr_to_ir("ints", placed)}, op)
            new = [shaped, create("broadcast_to", [shaped.results[0]], op.results[0].type,
                                  {"shape": attr_to_ir("ints", out)}, op)]
        elif isinstance(op, tensor.EmptyOp) and not op.operands:
            shape, d = _static_type(op, op.results[0].type, name)
            new = [create("constant", [], op.results[0].type,
                          {"value": attr_to_ir("dense", _zeros(shape, d))}, op)]
        elif isinstance(op, FillOp) and len(op.results) == 1:
            scalar = op.inputs[0].owner if op.inputs else None
            value = (scalar.properties.get("value") if isinstance(scalar, arith.ConstantOp)
                     else None)
            if not isinstance(value, IntegerAttr | FloatAttr):
                raise MlirLoadError(f"{_where(op, name)}: error: 'linalg.fill' of a value "
                                    "that is not an arith.constant scalar is not supported")
            shape, d = _static_type(op, op.results[0].type, name)
            new = [create("constant", [], op.results[0].type,
                          {"value": attr_to_ir("dense", _splat(value.value.data, shape, d))},
                          op)]
        elif isinstance(op, MatmulOp) and len(op.results) == 1:
            maps = op.properties.get("indexing_maps")
            if maps is not None and [str(m) for m in maps] != _MATMUL_MAPS:
                raise MlirLoadError(f"{_where(op, name)}: error: 'linalg.matmul' with "
                                    "indexing_maps (a transposed or broadcast operand) is not "
                                    "supported")
            a, b = op.inputs
            c = op.outputs[0]
            types = {_static_type(op, v.type, name)[1] for v in (a, b, c)}
            if len(types) != 1:
                raise MlirLoadError(f"{_where(op, name)}: error: 'linalg.matmul' of mixed "
                                    f"element types ({a.type}, {b.type} into {c.type}) is not "
                                    "supported")
            prod = create("matmul", [a, b], c.type, like=op)
            new = [prod, create("add", [prod.results[0], c], c.type, like=op)]
        else:
            raise MlirLoadError(
                f"{_where(op, name)}: error: '{op.name}' is not supported here: load_mlir runs "
                "tensor programs; of the tensor/linalg dialects it takes static "
                "tensor.expand_shape, collapse_shape, extract_slice and empty, linalg.matmul, "
                "generic, reduce, transpose, broadcast and fill of an arith.constant, and "
                "unrolls scf.for of constant bounds (other loops and ops on scalars have no "
                "pyflame op)")
        Rewriter.replace_op(op, new, [new[-1].results[0]])
    for op in list(module.walk()):  # the scalar constants only fills read
        if isinstance(op, arith.ConstantOp) and not op.results[0].uses and isinstance(
                op.properties.get("value"), IntegerAttr | FloatAttr):
            Rewriter.erase_op(op)


MAX_UNROLLED = 4096  # iterations of one scf.for load_mlir unrolls


def _constant_int(v: Any) -> int | None:
    from xdsl.dialects import arith
    from xdsl.dialects.builtin import IntegerAttr

    owner = v.owner
    value = owner.properties.get("value") if isinstance(owner, arith.ConstantOp) else None
    return value.value.data if isinstance(value, IntegerAttr) else None


def _unroll(loop: Operation, name: str) -> None:
    """An ``scf.for`` with constant bounds whose body does not read its
    induction variable, unrolled: its body once per iteration, each taking the
    values the previous one yielded (``iter_args``), the loop's results the
    last ones. Anything else is refused with its place."""
    from xdsl.rewriter import InsertPoint, Rewriter

    lb, ub, step = (_constant_int(v) for v in loop.operands[:3])
    if lb is None or ub is None or step is None:
        raise MlirLoadError(f"{_where(loop, name)}: error: 'scf.for' with bounds or step "
                            "that are not arith.constant integers is not supported (it is "
                            "unrolled)")
    if step <= 0:
        raise MlirLoadError(f"{_where(loop, name)}: error: 'scf.for' step must be positive, "
                            f"got {step}")
    n = max(0, -(-(ub - lb) // step))
    block = loop.regions[0].block
    iv, carried = block.args[0], list(block.args[1:])
    if iv.uses:
        raise MlirLoadError(f"{_where(loop, name)}: error: 'scf.for' whose body reads its "
                            "induction variable is not supported (it is unrolled, and the "
                            "index would be a scalar)")
    if n > MAX_UNROLLED:
        raise MlirLoadError(f"{_where(loop, name)}: error: 'scf.for' of {n} iterations: more "
                            f"than {MAX_UNROLLED} are not unrolled")
    values = list(loop.operands[3:])
    body = list(block.ops)
    for _ in range(n):
        mapping: dict[Any, Any] = dict(zip(carried, values))
        for op in body[:-1]:
            new = op.clone(value_mapper=mapping)
            Rewriter.insert_op(new, InsertPoint.before(loop))
        values = [mapping.get(v, v) for v in body[-1].operands]  # the scf.yield
    Rewriter.replace_op(loop, [], values)


# linalg.matmul's own maps: C[i, j] += A[i, k] * B[k, j]
_MATMUL_MAPS = ["affine_map<(d0, d1, d2) -> (d0, d2)>", "affine_map<(d0, d1, d2) -> (d2, d1)>",
                "affine_map<(d0, d1, d2) -> (d0, d1)>"]


def _zeros(shape: tuple[int, ...], d: DType) -> Any:
    from .dialects.data import DenseValue

    return DenseValue(np.zeros((), d.np), shape, d)


def _splat(v: float | int, shape: tuple[int, ...], d: DType) -> Any:
    from .dialects.data import DenseValue

    with np.errstate(all="ignore"):  # a signless int's bits (200 : i8 is -56)
        return DenseValue(np.asarray(v).astype(d.np).reshape(()), shape, d)


def _resolve_resources(module: ModuleOp, ctx: Any, name: str) -> None:
    """Every ``dense_resource<key>`` a ``value`` attribute holds (how mlir-opt, torch-mlir
    and StableHLO exports write large constants, the bytes in the file's trailing
    ``{-# dialect_resources: {builtin: {key: "0x..."}} #-}``) as the ``dense<...>`` it
    stands for. The blob is a little-endian u32 alignment, then the elements' bytes."""
    from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
    from xdsl.dialects.builtin import (
        AnyFloat,
        BytesAttr,
        DenseIntOrFPElementsAttr,
        DenseResourceAttr,
        IntegerType,
    )

    interface = ctx.get_optional_dialect("builtin").get_interface(OpAsmDialectInterface)
    for op in module.walk():
        for where in (op.properties, op.attributes):
            value = where.get("value")
            if not isinstance(value, DenseResourceAttr):
                continue
            key, t = value.resource_handle.data, value.type
            blob = interface.lookup(key) if interface is not None else None
            if not blob or blob == "0x":
                raise MlirLoadError(
                    f"{_where(op, name)}: error: dense_resource<{key}> has no data: the "
                    "file's {-# dialect_resources: {builtin: {...}} #-} section does not "
                    "define it (printed with its blobs elided?)")
            el = t.get_element_type()
            width = el.bitwidth if isinstance(el, AnyFloat | IntegerType) else 0
            data = bytes.fromhex(blob[2:])[4:]  # after the alignment word
            n = math.prod(t.get_shape())
            if width % 8 or len(data) != n * width // 8:
                raise MlirLoadError(
                    f"{_where(op, name)}: error: dense_resource<{key}> holds {len(data)} "
                    f"bytes, but {t} needs {n} elements of {el}"
                    + ("" if width and width % 8 == 0 else " (only byte-sized elements are "
                       "supported)"))
            where["value"] = DenseIntOrFPElementsAttr(t, BytesAttr(data))


def _parse(text: str, name: str) -> ModuleOp:
    parsed = _PARSED_AT
    parsed.clear()
    try:
        return _parse_checked(text, name, parsed)
    finally:
        parsed.clear()


def _parse_checked(text: str, name: str, parsed: dict[Any, str]) -> ModuleOp:
    from xdsl.dialects.arith import Arith
    from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr, UnknownLoc
    from xdsl.dialects.linalg import Linalg
    from xdsl.dialects.math import Math
    from xdsl.dialects.scf import Scf
    from xdsl.dialects.tensor import Tensor
    from xdsl.utils.exceptions import ParseError

    from .dialects.bounded_parser import BoundedParser, inline_location_aliases, prescan_error

    class LocatingParser(BoundedParser):
        """Records where each op starts, so a verifier error can name the place."""

        def parse_operation(self) -> Operation:
            start = self._current_token.span
            op = super().parse_operation()
            loc = start.get_location()
            if isinstance(op.location, UnknownLoc) and not self.wrote_location():
                op.location = FileLineColLoc(StringAttr(loc.file), IntAttr(loc.line),
                                             IntAttr(loc.col))
            else:
                parsed[op] = f"{loc.file}:{loc.line}:{loc.col}"
            return op

    text = inline_location_aliases(text)
    where = prescan_error(text)
    if where is not None:
        line, col, msg = where
        raise MlirLoadError(f"{name}:{line}:{col}: error: {msg}")
    ctx = make_context()
    ctx.load_dialect(Arith)  # constants and elementwise ops as other tools print
    ctx.load_dialect(Math)  # them (see _legalize)
    from xdsl.dialects.tosa import TOSA

    for dialect in (Tensor, Linalg, Scf, TOSA):  # upstream ops (_legalize_tensor_ops, tosa)
        if ctx.get_optional_dialect(dialect.name) is None:
            ctx.load_dialect(dialect)
    from .dialects.stablehlo import CHLO, STABLEHLO

    for dialect in (STABLEHLO, CHLO):  # what JAX prints (_convert_stablehlo)
        ctx.load_dialect(dialect)
    try:
        module = LocatingParser(ctx, text, name).parse_module()
    except ParseError as e:
        loc = e.span.get_location()
        msg = re.sub(r"^Operation ((?:stablehlo|chlo)\.\w+) is not registered$",
                     r"'\1' is not supported: load_mlir runs the stablehlo/chlo ops "
                     "docs/guide/graph_files.md lists (no pyflame op computes this one)",
                     e.msg)
        raise MlirLoadError(f"{name}:{loc.line}:{loc.col}: error: {msg}") from None
    except RecursionError:
        raise MlirLoadError(f"{name}: error: input nested too deeply to parse") from None
    except Exception as e:  # noqa: BLE001  (xDSL raises plain exceptions on some bad input)
        raise MlirLoadError(f"{name}: error: {type(e).__name__}: {e}") from None
    assert isinstance(module, ModuleOp)
    _resolve_resources(module, ctx, name)
    from .dialects.upstream_checks import upstream_error

    for op in module.walk(reverse=False, region_first=True):  # innermost first, as mlir-opt
        try:
            op.verify(verify_nested_ops=False)
        except Exception as e:  # noqa: BLE001  (VerifyException and structural errors)
            msg = str(e.__cause__ or e).removeprefix("Operation does not verify: ")
            raise MlirLoadError(f"{_where(op, name)}: error: the module does not verify: "
                                f"'{op.name}' op {msg}") from None
        if (upstream := upstream_error(op)) is not None:
            raise MlirLoadError(f"{_where(op, name)}: error: the module does not verify: "
                                f"{upstream}")
    _legalize(module, name)
    try:
        module.verify()
    except Exception as e:  # noqa: BLE001  (VerifyException and structural errors)
        raise MlirLoadError(f"{name}: error: the module does not verify: {e}") from None
    return module


class MlirProgram:
    """A parsed ``func.func`` of ``pyflame`` ops, callable with one numpy
    array or Tensor per argument; returns lazy Tensors (one, or a tuple)."""

    def __init__(self, module: ModuleOp, entry: str | None, name: str):
        from xdsl.dialects import func
        from xdsl.dialects.builtin import ModuleOp

        from .dialects.pyflame import spec_of_type

        funcs = [op for op in module.ops if isinstance(op, func.FuncOp)]
        public = [f for f in funcs if f.sym_visibility is None
                  or f.sym_visibility.data != "private"]
        if entry is not None:
            chosen = [f for f in public if f.sym_name.data == entry]
        else:
            chosen = [f for f in public if f.sym_name.data == "main"] or public
        if len(chosen) != 1:
            names = ", ".join(f"@{f.sym_name.data}" for f in public) or "none"
            raise MlirLoadError(f"{name}: error: expected one public function"
                                f"{f' @{entry}' if entry else ''} to run; found {names} "
                                "(pass entry=...)")
        fn = chosen[0]
        self.name = name
        self.entry = fn.sym_name.data
        try:
            self.input_specs = [spec_of_type(t, f"argument {i} of @{self.entry}")
                                for i, t in enumerate(fn.function_type.inputs.data)]
            self.output_specs = [spec_of_type(t, f"result {i} of @{self.entry}")
                                 for i, t in enumerate(fn.function_type.outputs.data)]
        except Exception as e:  # noqa: BLE001  (VerifyException: not a pyflame tensor type)
            raise MlirLoadError(f"{name}: error: {e}") from None
        # the entry and the private functions a transform of it names (the
        # differentiated functions); called ones were inlined (_legalize)
        named = _symbols_named(fn)
        keep = [op.clone() for op in funcs
                if op is fn or (op not in public and op.sym_name.data in named)]
        self._module = ModuleOp(keep)
        self._executables: dict[tuple[str, str], Any] = {}
        self._steps: tuple | str = _recording_plan(self._module, self.entry)
        # ops with no compiled form: the library's composites, loops on data
        self._composites = sorted({op.name for op in self._module.walk()
                                   if op.name in _COMPOSITES or op.name == "stablehlo.while"})

    def __call__(self, *args: Any) -> Tensor | tuple[Tensor, ...]:
        """With a Tensor argument, records the function's ops on the arguments as
        every library op does (lazy results, run on the current backend when
        read), so ``pf.grad``, ``backward``, ``pf.vmap`` and ``pf.jit`` see
        through it; with arrays only, runs the compiled function (realized)."""
        if len(args) != len(self.input_specs):
            raise TypeError(f"@{self.entry} ({self.name}) takes {len(self.input_specs)} "
                            f"arguments, got {len(args)}")
        # a composite of the library's (chlo.erfc...) has no compiled form: recorded
        tensors = self._composites or any(isinstance(a, Tensor) for a in args)
        if isinstance(self._steps, str) or not tensors:  # compiled, outside the graph
            # (arrays alone cannot carry a gradient or a trace: the compiled function
            # runs them without recording, about half the time on small programs)
            from .core import requires_grad

            if any(isinstance(a, Tensor) and requires_grad(a) for a in args):
                raise TypeError(f"@{self.entry} ({self.name}) cannot be differentiated: "
                                f"{self._steps}")
            arrays = [_argument(a, i, s, d, self.entry) for i, (a, (s, d))
                      in enumerate(zip(args, self.input_specs))]
            results = self.executable().run(arrays)
            outs = [Tensor._leaf(np.asarray(r)) for r in results]
        else:
            outs = self._record([_argument_tensor(a, i, s, d, self.entry) for i, (a, (s, d))
                                 in enumerate(zip(args, self.input_specs))])
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _record(self, ins: list[Tensor]) -> list[Tensor]:
        args, steps, results = self._steps  # type: ignore[misc]
        env: dict[Any, Tensor] = dict(zip(args, ins))
        _run_steps(steps, env)
        return [env[v] for v in results]

    def executable(self, backend: str | None = None) -> Any:
        """The function compiled for ``backend`` (default: the current one)."""
        if self._composites:
            raise MlirLoadError(f"{self.name}: error: @{self.entry} has no compiled form: "
                                f"{', '.join(self._composites)} run as the library's "
                                "composites (a stablehlo.while whose condition reads data: "
                                "as lax.while_loop) when the function is called")
        name = backend or CONFIG.backend
        spec = pipeline_for(name, CONFIG.pipeline) if CONFIG.optimize else ""
        exe = self._executables.get((name, spec))
        if exe is None:
            b = get_backend(name)
            module = self._module.clone()
            expand_transforms(module)
            if spec:
                run_pipeline(module, spec)
            exe = self._executables[(name, spec)] = b.lower(module)
        return exe


def _recording_plan(module: ModuleOp, entry: str) -> tuple | str:
    """The entry function as steps the library records on Tensors: (block
    arguments, [(OpDef, operands, attributes, results)], returned values),
    after the transforms it names are expanded (``pyflame.vjp``/``jvp``/
    ``vmap`` become plain ops) and fused regions unfused; or why it cannot
    be (an op that is not one of the op table's, several blocks)."""
    from xdsl.dialects import func

    from .passes.pipeline import run_pipeline as run_passes

    module = module.clone()
    expand_transforms(module)
    if any(op.name == "pyflame.fused" for op in module.walk()):
        run_passes(module, "unfuse", make_context())
    fn = next(op for op in module.ops
              if isinstance(op, func.FuncOp) and op.sym_name.data == entry)
    if len(fn.body.blocks) != 1:
        return f"it has {len(fn.body.blocks)} blocks (only one-block functions record)"
    steps = _block_steps(fn.body.block)
    if isinstance(steps, str):
        return steps
    ret = fn.body.block.last_op
    results = list(ret.operands) if isinstance(ret, func.ReturnOp) else []
    return list(fn.body.block.args), steps, results


def _block_steps(block: Any) -> list[tuple] | str:
    """A block's ops (its terminator left out) as recording steps: (OpDef,
    operands, attributes, results); a composite of the library's has attributes
    None (a function to call), a loop a ``_Loop``; or why they cannot be."""
    from xdsl.traits import IsTerminator

    from .dialects.pyflame import PyflameOp

    steps: list[tuple] = []
    for op in block.ops:
        if isinstance(op, PyflameOp):
            steps.append((op.OPDEF, list(op.operands), op.py_attrs(), list(op.results)))
        elif op.name in _COMPOSITES:  # (attributes None: a library function to call)
            steps.append((_composite(op.name), list(op.operands), None, list(op.results)))
        elif op.name == "stablehlo.while":
            plans = [_block_steps(r.block) for r in op.regions]
            bad = next((p for p in plans if isinstance(p, str)), None)
            if bad is not None:
                return bad
            cond, body = op.regions[0].block, op.regions[1].block
            loop = _Loop(list(cond.args), plans[0], cond.last_op.operands[0],  # type: ignore[arg-type]
                         list(body.args), plans[1], list(body.last_op.operands))
            steps.append((loop, list(op.operands), None, list(op.results)))
        elif not op.has_trait(IsTerminator):
            return f"'{op.name}' is not a pyflame op of the op table"
    return steps


def _run_steps(steps: list[tuple], env: dict[Any, Tensor]) -> None:
    """Record ``steps`` on the Tensors of ``env`` (values by SSA value), adding
    their results to it."""
    from .core import record

    for opdef, operands, attrs, outs in steps:
        if isinstance(opdef, _Loop):
            got = opdef.run(env, [env[v] for v in operands])
        elif attrs is None:  # a composite of the library's (_COMPOSITES)
            got = opdef(*(env[v] for v in operands))
        else:
            got = record(opdef, tuple(env[v] for v in operands), attrs)
        env.update(zip(outs, got if isinstance(got, list) else [got]))


class _Loop:
    """A ``stablehlo.while`` whose condition reads data, run as the library's
    ``lax.while_loop``: ``cond`` and ``do`` recorded on the carried Tensors each
    trip, the predicate read as a Python bool (forward-mode differentiable only,
    as JAX's loop; values defined before the loop are read from the caller)."""

    def __init__(self, cond_args: list, cond: list[tuple], predicate: Any, body_args: list,
                 body: list[tuple], body_results: list):
        self.cond_args, self.cond, self.predicate = cond_args, cond, predicate
        self.body_args, self.body, self.body_results = body_args, body, body_results

    def run(self, outer: dict[Any, Tensor], init: list[Tensor]) -> list[Tensor]:
        from .lax import while_loop

        def cond_fun(carry: tuple) -> Tensor:
            env = {**outer, **dict(zip(self.cond_args, carry))}
            _run_steps(self.cond, env)
            return env[self.predicate]

        def body_fun(carry: tuple) -> tuple:
            env = {**outer, **dict(zip(self.body_args, carry))}
            _run_steps(self.body, env)
            return tuple(env[v] for v in self.body_results)

        return list(while_loop(cond_fun, body_fun, tuple(init)))


def _argument_tensor(a: Any, i: int, shape: tuple[int, ...], d: DType, entry: str) -> Tensor:
    """An argument as a Tensor, checked against its type without reading its
    value (it may be a tracer of ``pf.grad``, ``pf.vmap`` or ``pf.jit``)."""
    if not isinstance(a, Tensor):
        return Tensor._leaf(_argument(a, i, shape, d, entry))
    if a.shape != shape or a.dtype is not d:
        raise TypeError(f"@{entry}: argument {i} must be {d.name}{list(shape)} (tensor<"
                        f"{'x'.join(map(str, shape))}{'x' if shape else ''}{d.short}>), got "
                        f"{a.dtype.name}{list(a.shape)}")
    return a


def _symbols_named(fn: Operation) -> set[str]:
    """The function names the ops of ``fn`` (and of the functions those
    name, transitively) refer to: ``pyflame.vjp @f``, ``callee = @f``."""
    from xdsl.dialects.builtin import ModuleOp, SymbolRefAttr

    module = fn.parent_op()
    funcs = {op.sym_name.data: op for op in module.ops if hasattr(op, "sym_name")} \
        if isinstance(module, ModuleOp) else {}
    named: set[str] = set()
    todo = [fn]
    while todo:
        for op in todo.pop().walk():
            for a in [*op.attributes.values(), *op.properties.values()]:
                if isinstance(a, SymbolRefAttr) and a.root_reference.data not in named:
                    named.add(a.root_reference.data)
                    if a.root_reference.data in funcs:
                        todo.append(funcs[a.root_reference.data])
    return named


def _argument(a: Any, i: int, shape: tuple[int, ...], d: DType, entry: str) -> np.ndarray:
    if isinstance(a, Tensor):
        v = a.numpy()
    else:
        v = np.asarray(a)
        if v.dtype != d.np and not isinstance(a, np.ndarray) and v.dtype.kind == d.np.kind:
            v = v.astype(d.np)  # a Python list or scalar of the right kind
    if v.shape != shape or v.dtype != d.np:
        raise TypeError(f"@{entry}: argument {i} must be {d.name}{list(shape)} (tensor<"
                        f"{'x'.join(map(str, shape))}{'x' if shape else ''}{d.short}>), got "
                        f"{v.dtype}{list(v.shape)}")
    return v


def load_mlir(text_or_path: str | os.PathLike, entry: str | None = None) -> MlirProgram:
    """Parse ``pyflame`` MLIR (text, or a path to a ``.mlir`` file) into a
    callable running its function (``entry``, or ``@main``, or the one public
    function) on the current backend. Bad text raises ``MlirLoadError``
    (``file:line:col: error: ...``)."""
    if isinstance(text_or_path, os.PathLike) or (
            isinstance(text_or_path, str) and "\n" not in text_or_path
            and "{" not in text_or_path and text_or_path.endswith(".mlir")):
        from .dialects.bounded_parser import decode_mlir

        name = os.fspath(text_or_path)
        with open(name, "rb") as f:  # UTF-8 whatever the locale; any bytes in comments
            text, bad = decode_mlir(f.read())
        if bad is not None:
            raise MlirLoadError(f"{name}:{bad[0]}:{bad[1]}: error: {bad[2]}")
    elif isinstance(text_or_path, str):
        name, text = "<string>", text_or_path
    else:
        raise TypeError(f"load_mlir: expects MLIR text or a path, got "
                        f"{type(text_or_path).__name__}")
    return MlirProgram(_parse(text, name), entry, name)


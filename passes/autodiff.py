"""``pyflame-autodiff``: expand ``pyflame.vjp`` / ``pyflame.jvp`` into plain
``pyflame`` IR.

For each (function, wrt, mode) the pass builds the derivative function
``@f_vjp_0`` / ``@f_jvp_0`` (forward ops, then the rules of ``dialects.ad``
in reverse or forward order) and inlines it where the transform was used.
Innermost transforms go first, so a transform of a function that itself
contains transforms (grad of grad, jvp of vjp) composes. Private functions
left without users are erased, so the result has the single ``@main`` every
backend expects.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ..dialects import ad as ad_rules
from ..dialects.opdef import OpDef
from ..dialects.pyflame import JvpOp, PyflameOp, VjpOp, _TransformOp, spec_of_type
from .common import IRBuilder
from .fusion import unfuse_if_fused


class AutodiffError(DiagnosticException):
    pass


def _is_float(v: SSAValue) -> bool:
    return spec_of_type(v.type, "value")[1].is_floating_point


def _rule(table: dict[OpDef, Any], op: Operation, kind: str) -> Any:
    """The op's rule from ``table``; None for an op with no derivative to
    propagate (argmax, comparisons); an error for any other op without one."""
    if not isinstance(op, PyflameOp):
        raise AutodiffError(f"cannot differentiate through op {op.name}")
    rule = table.get(op.OPDEF)
    if rule is None and op.OPDEF not in ad_rules.NONDIFF:
        raise AutodiffError(f"pyflame.{op.OPDEF.name} is not differentiable (no {kind} rule)")
    return rule


def reverse_mode(b: IRBuilder, ops: Sequence[Operation], wrt: Sequence[SSAValue],
                 outputs: Sequence[SSAValue], seeds: Sequence[SSAValue]) -> list[SSAValue]:
    """Cotangents of ``wrt`` given the seeds of ``outputs`` (VJP rules in reverse)."""
    active: set[SSAValue] = set(wrt)
    for op in ops:
        if any(v in active for v in op.operands):
            active.update(r for r in op.results if _is_float(r))
    ct: dict[SSAValue, SSAValue] = {}

    def accumulate(v: SSAValue, c: SSAValue) -> None:
        ct[v] = b.add(ct[v], c) if v in ct else c

    for out, seed in zip(outputs, seeds):
        if out in active:
            accumulate(out, seed)
    for op in reversed(ops):
        cts = [ct.get(r) for r in op.results]
        if all(c is None for c in cts) or not any(v in active for v in op.operands):
            continue
        rule = _rule(ad_rules.VJP, op, "VJP")
        if rule is None:
            continue
        in_cts = rule(b, cts, list(op.operands), list(op.results), **op.py_attrs())
        for v, c in zip(op.operands, in_cts):
            if c is not None and v in active:
                accumulate(v, c)
    return [ct[v] if v in ct else ad_rules.zeros(b, b.shape(v), v) for v in wrt]


def forward_mode(b: IRBuilder, ops: Sequence[Operation], wrt: Sequence[SSAValue],
                 tangents: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> list[SSAValue]:
    """Tangents of ``outputs`` given the tangents of ``wrt`` (JVP rules in order)."""
    tan: dict[SSAValue, SSAValue] = dict(zip(wrt, tangents))
    for op in ops:
        ts = [tan.get(v) for v in op.operands]
        if all(t is None for t in ts):
            continue
        rule = _rule(ad_rules.JVP, op, "JVP")
        if rule is None:
            continue
        outs = rule(b, ts, list(op.operands), list(op.results), **op.py_attrs())
        for r, t in zip(op.results, outs):
            if t is not None and _is_float(r):
                tan[r] = t
    return [tan[o] if o in tan else ad_rules.zeros(b, b.shape(o), o) for o in outputs]


def _clone_body(fn: func.FuncOp, block: Block, args: Sequence[SSAValue]
                ) -> tuple[list[Operation], list[SSAValue]]:
    """Copy ``fn``'s ops to the end of ``block``; returns them and the returned values."""
    mapping: dict[SSAValue, SSAValue] = dict(zip(fn.body.block.args, args))
    ops: list[Operation] = []
    for op in fn.body.block.ops:
        if isinstance(op, func.ReturnOp):
            return ops, [mapping[v] for v in op.operands]
        new = op.clone(value_mapper=mapping)
        block.add_op(new)
        ops.append(new)
    raise AutodiffError(f"function @{fn.sym_name.data} has no func.return")


def derivative_function(fn: func.FuncOp, t: _TransformOp, name: str) -> func.FuncOp:
    """``@name(args..., seeds...) -> (outputs..., derivatives...)``."""
    arg_types = [a.type for a in t.args] + [s.type for s in t.seeds]
    block = Block(arg_types=arg_types)
    n = len(t.args)
    ops, outs = _clone_body(fn, block, block.args[:n])
    b = IRBuilder(block.add_op)
    wrt = [block.args[i] for i in t.wrt_indices]
    if isinstance(t, VjpOp):
        derivs = reverse_mode(b, ops, wrt, outs, block.args[n:])
    else:
        derivs = forward_mode(b, ops, wrt, block.args[n:], outs)
    block.add_op(func.ReturnOp(*outs, *derivs))
    return func.FuncOp(name, (arg_types, [v.type for v in [*outs, *derivs]]), Region(block),
                       visibility="private")


def _contains_transform(fn: func.FuncOp) -> bool:
    return any(isinstance(op, _TransformOp) for op in fn.walk())


def _inline(t: _TransformOp, derivative: func.FuncOp) -> None:
    """Replace the transform op by a copy of the derivative function's body."""
    block = t.parent_block()
    assert block is not None
    tmp = Block()
    _, results = _clone_body(derivative, tmp, [*t.args, *t.seeds])
    for op in list(tmp.ops):
        op.detach()
        block.insert_op_before(op, t)
    for old, new in zip(t.results, results):
        old.replace_all_uses_with(new)
    block.erase_op(t)


@dataclass(frozen=True)
class PyflameAutodiff(ModulePass):
    """Expand pyflame.vjp/pyflame.jvp into derivative functions and inline them."""

    name = "pyflame-autodiff"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not has_transforms(op):
            return
        unfuse_if_fused(ctx, op)
        derivatives: dict[tuple, func.FuncOp] = {}
        while True:
            pending = [t for t in op.walk() if isinstance(t, _TransformOp)]
            if not pending:
                break
            progressed = False
            for t in pending:
                fn = t.callee_func()
                if _contains_transform(fn):
                    continue  # its own transforms go first
                key = (fn.sym_name.data, type(t).__name__, t.wrt_indices)
                if key not in derivatives:
                    mode = "vjp" if isinstance(t, VjpOp) else "jvp"
                    name = f"{fn.sym_name.data}_{mode}_{len(derivatives)}"
                    derivatives[key] = derivative_function(fn, t, name)
                    op.body.block.add_op(derivatives[key])
                _inline(t, derivatives[key])
                progressed = True
            if not progressed:
                raise AutodiffError("pyflame-autodiff: transforms form a cycle through "
                                    + ", ".join(str(t.callee) for t in pending))
        _erase_unused_private_functions(op)


def _erase_unused_private_functions(module: ModuleOp) -> None:
    used = {t.callee.root_reference.data for t in module.walk()
            if isinstance(t, _TransformOp | func.CallOp)}
    for fn in list(module.ops):
        if isinstance(fn, func.FuncOp) and fn.sym_visibility is not None and \
                fn.sym_visibility.data == "private" and fn.sym_name.data not in used:
            module.body.block.erase_op(fn)


def has_transforms(module: ModuleOp) -> bool:
    return any(isinstance(t, VjpOp | JvpOp) for t in module.walk())

"""``pyflame-vmap``: expand ``pyflame.vmap`` into plain ``pyflame`` IR.

Each ``pyflame.vmap @f(args)`` is replaced by the batched body of ``@f``:
its mapped arguments get their batch axis moved to the front, every op of
the body goes through its batching rule (``dialects.batching``), and each
result gets the batch axis moved to its ``out_axes`` (an unbatched result is
broadcast, as JAX does).

Transforms compose innermost first, whatever their kind: a vmap of a
function that differentiates (per-example gradients, ``vmap(grad(f))``)
waits for ``pyflame-autodiff``'s expansion of that ``pyflame.vjp``, and a
``pyflame.vjp`` of a function holding a vmap (``grad(vmap(f))``) waits for
the vmap. So this pass expands the differentiation transforms too, in that
order, when vmaps are present (the autodiff pass then has nothing left).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ..dialects.batching import BatchingBuilder, BatchingError, BValue
from ..dialects.pyflame import PyflameOp, VmapOp, _TransformOp
from .autodiff import _erase_unused_private_functions, _inline, derivative_function
from .common import IRBuilder
from .fusion import unfuse_if_fused


class VmapError(DiagnosticException):
    pass


def _move_axis(b: IRBuilder, v: SSAValue, src: int, dst: int) -> SSAValue:
    if src == dst:
        return v
    order = [i for i in range(len(b.shape(v))) if i != src]
    order.insert(dst, src)
    return b.permute(v, perm=tuple(order))


def expand_vmap(t: VmapOp) -> None:
    """Replace ``t`` by the batched body of its callee (which holds no transforms)."""
    fn = t.callee_func()
    b = IRBuilder(lambda op: t.parent_block().insert_op_before(op, t))
    n = t.size
    bb = BatchingBuilder(b, n)
    env: dict[SSAValue, BValue] = {}
    for arg, v, axis in zip(fn.body.block.args, t.args, t.in_axes_list):
        env[arg] = BValue(v, False) if axis < 0 else BValue(_move_axis(b, v, axis, 0), True)
    for op in fn.body.block.ops:
        if isinstance(op, func.ReturnOp):
            outs = [env[v] for v in op.operands]
            break
        if not isinstance(op, PyflameOp):
            raise VmapError(f"vmap: cannot batch op {op.name}")
        try:
            res = bb.op(op.OPDEF.name, *[env[v] for v in op.operands], **op.py_attrs())
        except BatchingError as e:
            raise VmapError(str(e)) from None
        for r, bv in zip(op.results, res if isinstance(res, list) else [res]):
            env[r] = bv
    else:
        raise VmapError(f"function {fn.sym_name.data} has no func.return")
    results: list[SSAValue] = []
    for i, (bv, axis) in enumerate(zip(outs, t.out_axes_list)):
        if axis < 0:
            if bv.batched:
                raise VmapError(f"vmap: result #{i} of @{fn.sym_name.data} depends on a "
                                "batched argument but its out_axes is None")
            results.append(bv.value)
        else:
            results.append(_move_axis(b, bb.materialize(bv), 0, axis))
    for old, new in zip(t.results, results):
        old.replace_all_uses_with(new)
    t.parent_block().erase_op(t)


def _is_transform(op: Operation) -> bool:
    return isinstance(op, _TransformOp | VmapOp)


def has_vmap(module: ModuleOp) -> bool:
    return any(isinstance(op, VmapOp) for op in module.walk())


@dataclass(frozen=True)
class PyflameVmap(ModulePass):
    """Expand pyflame.vmap (and the pyflame.vjp/jvp it nests with), innermost first."""

    name = "pyflame-vmap"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not has_vmap(op):
            return
        unfuse_if_fused(ctx, op)
        derivatives: dict[tuple, func.FuncOp] = {}
        while True:
            pending = [t for t in op.walk() if _is_transform(t)]
            if not pending:
                break
            progressed = False
            for t in pending:
                fn = t.callee_func()
                if any(_is_transform(o) for o in fn.walk()):
                    continue  # its own transforms go first
                if isinstance(t, VmapOp):
                    expand_vmap(t)
                else:
                    key = (fn.sym_name.data, type(t).__name__, t.wrt_indices)
                    if key not in derivatives:
                        mode = "vjp" if t.KEYWORD == "cotangents" else "jvp"
                        name = f"{fn.sym_name.data}_{mode}_{len(derivatives)}"
                        derivatives[key] = derivative_function(fn, t, name)
                        op.body.block.add_op(derivatives[key])
                    _inline(t, derivatives[key])
                progressed = True
            if not progressed:
                raise VmapError("pyflame-vmap: transforms form a cycle")
        _erase_unused_private_functions(op)


__all__ = ["PyflameVmap", "VmapError", "expand_vmap", "has_vmap"]

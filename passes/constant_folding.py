"""``constant-fold``: evaluate ops whose operands are all constants.

The value comes from the op's own reference kernel in the op table (one
source of semantics, never a second implementation). Folding is bounded by
``size-limit`` (elements of a result) so huge constants are not materialized
in the IR; an elementwise op of splat constants folds to a splat at any size
up to its largest operand, computing one element (the IR already holds that
much). ``iota`` counts as a constant source when it is within the limit.

An op is folded only if that does not add ops: a multi-result op (``split``)
folds when its new constants are no more than the ops it removes. A
``pyflame.fused`` whose body folded down to what it yields (constants, its
own arguments) is replaced by those: a kernel with nothing to compute is no
kernel.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import BlockArgument, SSAValue

from ..dialects.opdef import numel
from ..dialects.pyflame import (  # type: ignore[attr-defined]
    ConstantOp,
    FusedOp,
    IotaOp,
    PyflameOp,
)
from .common import (
    PyflamePass,
    blocks_of,
    constant_array,
    defining,
    make_constant,
    replace_op,
    spec,
    splat_scalar,
)


@dataclass(frozen=True)
class ConstantFolding(PyflamePass):
    """Fold ops of constant operands with the op table's reference kernels."""

    name = "constant-fold"

    size_limit: int = 1024
    """Largest folded result, in elements (splats of elementwise ops excepted)."""

    def run(self, ctx: Context, module: ModuleOp) -> dict[str, int]:
        # a hand-written forward sweep rather than xDSL's pattern walker: folding
        # erases producers that died (replace_op) outside the walker's worklist
        folded = removed = 0
        for block in list(blocks_of(module)):
            op = block.first_op
            while op is not None:
                nxt = op.next_op
                if isinstance(op, PyflameOp) and op.operands and not isinstance(op, ConstantOp):
                    n = self.fold(op)
                    if n:
                        folded += 1
                        removed += n - 1
                op = nxt
        for fused in [o for o in module.walk() if isinstance(o, FusedOp)]:
            n = self.fold_fused(fused)
            if n:
                folded += 1
                removed += n - 1
        return {"folded": folded, "removed": removed}

    @staticmethod
    def fold_fused(op: FusedOp) -> int:
        """Replace a fused op that yields only constants of its body or its
        own block arguments by those constants (hoisted) and operands."""
        values: list[SSAValue] = []
        for y in op.yield_op.operands:
            if isinstance(y, BlockArgument) and y.owner is op.body.block:
                values.append(op.operands[y.index])
            elif isinstance(y.owner, ConstantOp) and y.owner.parent is op.body.block:
                values.append(make_constant(constant_array(y), spec(y), op))
            else:
                return 0
        return replace_op(op, values)

    def operand_value(self, value: SSAValue) -> np.ndarray | None:
        """The data of a constant (or small iota) operand, else None."""
        arr = constant_array(value)
        if arr is not None:
            return arr
        iota = defining(value, IotaOp)
        if iota is not None and numel(spec(value)[0]) <= self.size_limit:
            return iota.OPDEF.kernel(**iota.py_attrs())
        return None

    def fold(self, op: PyflameOp) -> int:
        """Fold ``op`` if possible; returns the number of ops erased (0: not folded)."""
        arrays = []
        for v in op.operands:
            a = self.operand_value(v)
            if a is None:
                return 0
            arrays.append(a)
        specs = [spec(r) for r in op.results]
        opdef = op.OPDEF
        # elementwise of splats: compute one element, at any size the IR already holds
        scalars = [splat_scalar(a) for a in arrays] if opdef.elementwise else []
        splat = bool(scalars) and all(s is not None for s in scalars) and \
            all(numel(s_) <= max(self.size_limit, *(a.size for a in arrays))
                for s_, _ in specs)
        if not splat and sum(numel(s_) for s_, _ in specs) > self.size_limit:
            return 0
        # a multi-result op must not turn into more constants than it removes
        operand_ops = {v.owner for v in op.operands}
        dying = sum(1 for o in operand_ops
                    if all(u.operation is op for r in o.results for u in r.uses))
        if len(specs) > 1 + dying:
            return 0
        inputs = ([np.asarray(s, dtype=a.dtype) for s, a in zip(scalars, arrays)]
                  if splat else list(arrays))
        try:
            with np.errstate(all="ignore"):
                out = opdef.kernel(*inputs, **op.py_attrs())
        except Exception:  # noqa: BLE001 - the kernel rejects it: leave the op to run
            return 0
        results = tuple(out) if opdef.num_results != 1 else (out,)
        if len(results) != len(specs):
            return 0
        values = []
        for r, (shape, d) in zip(results, specs):
            r = np.asarray(r)
            if r.dtype != d.np or (r.shape != shape and not (splat and r.ndim == 0)):
                return 0  # a kernel that breaks its own rule is not trusted here
            values.append(r)
        new = [make_constant(r, s_, op) for r, s_ in zip(values, specs)]
        return replace_op(op, new)

"""``legalize-for-wse``: make a pyflame module lowerable to the WSE.

Checks every op against what the CSL backend lowers (the first unsupported
one fails with its reason), unfuses with the one ``unfuse`` pass every
backend without fused kernels uses, and decomposes the ops the WSE has no
kernel for (the softmax family) with the ``decompose`` pass, whose
decompositions sit next to the ops' table entries. erf and gelu, which CSL's
``<math>`` lacks, are rewritten into the polynomial forms of
``lowering/pyflame_to_wse/polynomial.py`` (their accuracy is documented there).
An op on f16 tensors without an f16 DSD form (``support.HALF_NATIVE`` says which
have one) is computed in f32 between conversions, before the decompositions and
polynomials, so those run in f32 too (``support.py`` says why).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern

from ..dialects.data import DenseValue
from ..dialects.dtypes import float16, float32
from ..dialects.pyflame import OP_CLASSES, PyflameOp
from ..lowering.pyflame_to_wse.batched import flatten_rule
from ..lowering.pyflame_to_wse.polynomial import ON_PE
from ..lowering.pyflame_to_wse.support import (
    DECOMPOSED,
    HALF_NATIVE,
    check_supported,
    value_spec,
)
from ..lowering.to_wse import find_main
from .algebraic import AlgebraicSimplification
from .common import IRBuilder, PyflamePass
from .dce import DeadCodeElimination
from .decompose import decomposable, decompose
from .fusion import Unfuse


@dataclass(frozen=True)
class LegalizeForWse(PyflamePass):
    """Check the ops the CSL backend lowers, unfuse, decompose the softmax family."""

    name = "legalize-for-wse"

    def run(self, ctx: Context, module: ModuleOp) -> dict[str, int]:
        check_supported(find_main(module), before_flattening=True)
        unfused = Unfuse().run(ctx, module)["unfused"]
        islands = _HalfInF32()
        PatternRewriteWalker(islands).rewrite_module(module)
        decomposed = decompose(module, decomposable(DECOMPOSED))
        pattern = _OnPe()
        PatternRewriteWalker(pattern).rewrite_module(module)
        flat = _Flatten()
        PatternRewriteWalker(flat).rewrite_module(module)
        if flat.count:  # merge the reshapes between flattened ops
            AlgebraicSimplification().run(ctx, module)
            DeadCodeElimination().run(ctx, module)
        check_supported(find_main(module))
        return {"unfused": unfused, "decomposed": decomposed, "polynomials": pattern.count,
                "flattened": flat.count, "f16_in_f32": islands.count}


class _HalfInF32(RewritePattern):
    """An op with f16 operands or results and no f16 DSD form: its f16 operands
    converted to f32, the op in f32, its f16 results converted back (one rounding)."""

    def __init__(self) -> None:
        self.count = 0

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, PyflameOp):
            return
        name = op.OPDEF.name
        values = (*op.operands, *op.results)
        if not any(value_spec(v)[1] == float16 for v in values):
            return
        if name in HALF_NATIVE and not (name == "convert" and value_spec(
                op.results[0])[1] not in (float16, float32)):
            return  # f16 to a mask or index type: through f32 (the scalar form is f32's)
        new_ops: list[Operation] = []
        b = IRBuilder(new_ops.append)
        ins = [_in_f32(b, v) if value_spec(v)[1] == float16 else v for v in op.operands]
        res = b.op(name, *ins, **op.py_attrs())
        res = res if isinstance(res, list) else [res]
        outs = [b.convert(r, dtype=float16) if value_spec(old)[1] == float16 else r
                for r, old in zip(res, op.results)]
        rewriter.replace(op, new_ops, outs)
        self.count += 1


def _in_f32(b: IRBuilder, v: SSAValue) -> SSAValue:
    """v in f32: an f16 constant is written again in f32 (exactly), so rules that read
    constants (pow's exponent, splats folded into immediates) still see one."""
    src = v.owner
    if isinstance(src, OP_CLASSES["constant"]):
        dv = src.py_attrs()["value"]
        return b.op("constant", value=DenseValue(np.asarray(dv.materialize(), np.float32),
                                                 tuple(dv.shape), float32))
    return b.convert(v, dtype=float32)


class _OnPe(RewritePattern):
    """erf and gelu into their polynomial forms for the PE (``polynomial.ON_PE``)."""

    def __init__(self) -> None:
        self.count = 0

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, PyflameOp) or op.OPDEF.name not in ON_PE:
            return
        new_ops: list[Operation] = []
        result = ON_PE[op.OPDEF.name](IRBuilder(new_ops.append), *op.operands, **op.py_attrs())
        rewriter.replace(op, new_ops, [result])
        self.count += 1


class _Flatten(RewritePattern):
    """Ops on rank >= 3 tensors into rank-2 ones (``batched.flatten_rule``)."""

    def __init__(self) -> None:
        self.count = 0

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, PyflameOp) or len(op.results) != 1:
            return
        shapes = [value_spec(v)[0] for v in (*op.operands, *op.results)]
        rule = flatten_rule(op.OPDEF.name, op.OPDEF.family, shapes)
        if rule is None:
            return
        new_ops: list[Operation] = []
        result = rule(IRBuilder(new_ops.append), list(op.operands),
                      value_spec(op.results[0])[0], op.py_attrs())
        if result is None:
            return
        rewriter.replace(op, new_ops, [result])
        self.count += 1

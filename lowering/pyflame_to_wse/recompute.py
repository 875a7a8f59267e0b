"""Recomputation instead of keeping (issue #16: placement for whole steps).

A training step keeps forward activations alive until the backward reads them; on
a grid whose SRAM does not hold them all, a cheap activation is better computed
twice. ``recompute_cheap`` rewrites the pyflame function in place: an elementwise op
``y = f(x, ...)`` whose uses fall into two groups separated by a long stretch of the
program (the forward's uses, then the backward's) gets a clone placed right before
the later group, which reads the clone; ``y`` then dies after its early uses. Only
ops whose operands are still live at the later uses anyway (kept inputs) or are
constants are recomputed, so no other value lives longer: the rewrite can only
shorten lifetimes, at the price of one more elementwise pass per clone (priced by
the cycle model like any op). ``lower_to_wse`` applies it to a step that does not
fit the SRAM budget, plans again, and reports the recomputed values in its choices.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.ir import Operation, SSAValue

from ...dialects.pyflame import OP_CLASSES, PyflameOp
from .support import ELEMENTWISE

# an elementwise op is recomputed when the stretch between two of its uses (or its
# definition and its first use) spans at least this many ops
MIN_GAP = 8
# ops that recompute as one elementwise pass (the wse.map functions, masks and casts)
CHEAP = frozenset(ELEMENTWISE) | {"convert", "broadcast_to"}


def _constant(v: SSAValue) -> bool:
    return isinstance(v.owner, OP_CLASSES["constant"])


def recompute_cheap(fn: func.FuncOp, min_gap: int = MIN_GAP) -> list[str]:
    """Clone cheap elementwise ops before their far uses (see the module docstring).
    Returns one line per clone: what was recomputed, where, for how many uses."""
    ops = list(fn.body.block.ops)
    at = {op: i for i, op in enumerate(ops)}

    def last_use(v: SSAValue) -> int:
        return max((at[u.operation] for u in v.uses), default=-1)

    plans: list[tuple[Operation, Operation, list]] = []
    recomputed: set[SSAValue] = set()
    for op in ops:
        if not isinstance(op, PyflameOp) or op.OPDEF.name not in CHEAP or len(op.results) != 1:
            continue
        y = op.results[0]
        uses = sorted(y.uses, key=lambda u: at[u.operation])
        points = [at[op]] + [at[u.operation] for u in uses]
        gaps = [(points[k + 1] - points[k], k) for k in range(len(points) - 1)]
        if not gaps:
            continue
        gap, k = max(gaps)
        if gap < min_gap or k == 0:  # k == 0: the first use is already far: nothing kept
            continue
        far = uses[k:]
        first = at[far[0].operation]
        if any(x in recomputed or not (_constant(x) or last_use(x) >= first)
               for x in op.operands):
            continue  # recomputing would keep an operand alive longer
        plans.append((op, far[0].operation, far))
        recomputed.add(y)
    lines = []
    for op, before, far in plans:
        clone = op.clone()
        fn.body.block.insert_op_before(clone, before)
        for u in far:
            u.operation.operands[u.index] = clone.results[0]
        lines.append(f"recompute {op.name} (op #{at[op]}) before op #{at[before]} for "
                     f"{len(far)} later use{'s' if len(far) > 1 else ''} instead of keeping it")
    return lines

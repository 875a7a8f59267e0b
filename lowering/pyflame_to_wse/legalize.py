"""Legalization for the WSE: the softmax family into max / sub / exp / sum / div.

``legalize-for-wse`` (``passes/legalize_for_wse.py``) runs, on the whole
module: the support check, the ``unfuse`` pass (fused ops into their chains,
``pyflame.fused`` regions inline; one unfusing for every backend), then the
patterns here. The conversion (``lower_to_wse``) expects legalized IR and
rejects fused ops, naming the pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

from ...dialects import OPS
from ...dialects.dtypes import DType
from ...dialects.pyflame import OP_CLASSES, create_op, spec_of_type


def _spec(v: SSAValue) -> tuple[tuple[int, ...], DType]:
    return spec_of_type(v.type, "value")


class _OpList:
    """Builds pyflame ops (shapes from the op table) into a list, in order."""

    def __init__(self) -> None:
        self.ops: list[Operation] = []

    def __call__(self, name: str, operands: Sequence[SSAValue], attrs: dict[str, Any]
                 ) -> SSAValue:
        specs = OPS[name].check([_spec(v)[0] for v in operands],
                                [_spec(v)[1] for v in operands], attrs)
        op = create_op(name, list(operands), attrs, specs)
        self.ops.append(op)
        return op.results[0]


# TODO(merge): use the decompose pass (the ops branch puts these decompositions next to
# their table entries); this is today's expansion, isolated so it can be swapped.
def expand_softmax_family(op: Operation, new: _OpList) -> SSAValue:
    """softmax / log_softmax / logsumexp from max, sub, exp, sum, div, log, add."""
    name, attrs = op.OPDEF.name, op.py_attrs()  # type: ignore[attr-defined]
    x = op.operands[0]
    dims = (attrs["dim"],) if "dim" in attrs else tuple(attrs["dims"])
    m = new("max", [x], {"dims": dims, "keepdim": True})
    d = new("sub", [x, m], {})
    e = new("exp", [d], {})
    s = new("sum", [e], {"dims": dims, "keepdim": True})
    if name == "softmax":
        return new("div", [e, s], {})
    if name == "log_softmax":
        return new("sub", [d, new("log", [s], {})], {})
    out = new("add", [new("log", [s], {}), m], {})
    if not attrs["keepdim"]:
        out = new("reshape", [out], {"shape": _spec(op.results[0])[0]})
    return out


SOFTMAX_FAMILY = tuple(OP_CLASSES[n] for n in ("softmax", "log_softmax", "logsumexp"))


class ExpandSoftmaxFamily(RewritePattern):
    """One softmax-like op into its basic ops, in place."""

    def __init__(self) -> None:
        self.expanded = 0

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, SOFTMAX_FAMILY):
            return
        new = _OpList()
        out = expand_softmax_family(op, new)
        rewriter.replace(op, new.ops, [out])
        self.expanded += 1


def legalize_softmax(module: ModuleOp) -> int:
    """Apply the expansion patterns everywhere in ``module`` (each rewrite is local and
    makes no new softmax-like op, so one walk does); returns how many ops expanded."""
    pattern = ExpandSoftmaxFamily()
    PatternRewriteWalker(GreedyRewritePatternApplier([pattern]),
                         apply_recursively=False).rewrite_module(module)
    return pattern.expanded

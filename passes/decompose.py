"""``decompose``: replace ops by their decompositions (``OpDef.decomposition``).

For a backend without some primitive: ``decompose{ops=softmax,log_softmax,logsumexp}``
rewrites those ops into the ops their table entries say they are (max-shift,
exp, sum, div/log); the empty default decomposes every op that has a
decomposition. The ops a decomposition emits are rewritten in turn, so no
listed op is left.

One local rewrite per op, run by xDSL's pattern rewriter: the walker visits
each op once and the ops a rewrite inserts once more, so the pass is linear.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern
from xdsl.utils.exceptions import DiagnosticException

from ..dialects import OPS
from ..dialects.opdef import OpDef
from ..dialects.pyflame import PyflameOp
from .common import IRBuilder, PyflamePass


class DecomposeError(DiagnosticException, ValueError):
    """A bad ``ops`` option: reported as a pass error, not an internal one."""


def decomposable(names: Sequence[str] = ()) -> frozenset[OpDef]:
    """The op-table entries a list of op names means (an entry may itself be
    a comma-separated list; none: every op with a decomposition); an unknown
    name or one without a decomposition is an error."""
    wanted = [n.strip() for entry in names for n in entry.split(",") if n.strip()]
    if not wanted:
        return frozenset(d for d in OPS.values() if d.decomposition is not None)
    out: set[OpDef] = set()
    for name in wanted:
        opdef = OPS.get(name)
        if opdef is None:
            raise DecomposeError(f"decompose: unknown op {name!r}")
        if opdef.decomposition is None:
            raise DecomposeError(f"decompose: pyflame.{name} has no decomposition")
        out.add(opdef)
    return frozenset(out)


class DecomposePattern(RewritePattern):
    """Rewrite one op of ``opdefs`` into its decomposition (``count`` says how many)."""

    def __init__(self, opdefs: frozenset[OpDef]):
        self.opdefs = opdefs
        self.count = 0

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, PyflameOp) or op.OPDEF not in self.opdefs:
            return
        decomposition = op.OPDEF.decomposition
        assert decomposition is not None
        new_ops: list[Operation] = []
        results = decomposition(IRBuilder(new_ops.append), list(op.operands), **op.py_attrs())
        rewriter.replace(op, new_ops, results)
        self.count += 1


def decompose(module: ModuleOp, opdefs: frozenset[OpDef]) -> int:
    """Decompose every op of ``opdefs`` in ``module``; returns how many were."""
    pattern = DecomposePattern(opdefs)
    PatternRewriteWalker(pattern).rewrite_module(module)
    return pattern.count


@dataclass(frozen=True)
class Decompose(PyflamePass):
    """Replace the listed ops (default: every op with a decomposition) by
    their decompositions."""

    name = "decompose"

    ops: tuple[str, ...] = ()
    """The op names (``ops=softmax,logsumexp``); none: every op that has a
    decomposition."""

    def run(self, ctx: Context, module: ModuleOp) -> dict[str, int]:
        return {"decomposed": decompose(module, decomposable(self.ops))}

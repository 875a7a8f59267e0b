"""``convert-pyflame-to-linalg``: the whole module to upstream
``linalg``/``tensor``/``arith``/``math`` on tensors (rules in ``lowering/to_linalg.py``).

Fused regions are inlined first (``unfuse``): upstream elementwise fusion
regroups the chains, and the lowering keeps one rule per op.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ..lowering.to_linalg import lower_module
from .fusion import Unfuse


@dataclass(frozen=True)
class ConvertPyflameToLinalg(ModulePass):
    name = "convert-pyflame-to-linalg"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        Unfuse().run(ctx, op)
        lower_module(op)

"""``convert-pyflame-to-linalg``: the whole module to upstream
``linalg``/``tensor``/``arith``/``math`` on tensors (rules in ``lowering/to_linalg.py``).

Fused ops and regions are first expanded by ``unfuse`` (the one unfusing):
upstream elementwise fusion regroups them, and the lowering keeps one rule per op.
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
    """``bool-bits``: the element width of bool tensors, 1 (i1) or 8 (bytes:
    what the mlir backend uses, as MLIR 22 cannot load/store i1 memrefs).
    ``rational-tanh``: f32 tanh as arith ops (the backend's choice: vectorizes)."""

    name = "convert-pyflame-to-linalg"
    bool_bits: int = 1
    # f32 tanh as a rational approximation (vectorizes) instead of math.tanh
    rational_tanh: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.bool_bits not in (1, 8):
            raise ValueError(f"convert-pyflame-to-linalg: bool-bits must be 1 or 8, "
                             f"got {self.bool_bits}")
        Unfuse().apply(ctx, op)
        lower_module(op, self.bool_bits, self.rational_tanh)

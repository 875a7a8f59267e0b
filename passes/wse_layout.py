"""``wse-layout``: record the placements ``pyflame`` -> ``wse`` picks, for inspection.

The pass runs the placement choice of ``lowering/to_wse.py`` (priced with
the cost model of ``lowering/wse_cost.py``) on ``pyflame`` IR without
lowering, and annotates every op (after ``legalize-for-wse``) with the layout of its result
(``wse.layout``) and the matmul scheme (``wse.scheme``) (``pyflame-opt -p
legalize-for-wse,convert-pyflame-to-wse`` shows the lowered program itself).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ..dialects import wse
from ..lowering.to_wse import WseOptions, annotate_layouts, module_grid
from .legalize_for_wse import LegalizeForWse


@dataclass(frozen=True)
class WseLayout(ModulePass):
    """Choose, with the cycle cost model, the placement of every value on a
    width x height PE grid (0 x 0: automatic) and record it on the pyflame ops
    (``wse.layout``, ``wse.scheme``); the IR is not otherwise changed."""

    name = "wse-layout"

    width: int = 0
    """Grid columns (0 with height 0: the module's ``wse.grid``, else chosen from the sizes
    and the SRAM budget)."""

    height: int = 0
    """Grid rows."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        LegalizeForWse().run(ctx, op)
        # Without options, the grid convert-pyflame-to-wse would use: the module's
        # ``wse.grid`` attribute, else automatic.
        if self.width and self.height:
            grid = wse.Grid(self.width, self.height)
        else:
            grid = module_grid(op)
        annotate_layouts(op, WseOptions(grid=grid))

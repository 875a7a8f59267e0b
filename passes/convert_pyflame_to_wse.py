"""``convert-pyflame-to-wse``: the pyflame module becomes its ``wse.program``.

The conversion body is ``lowering/to_wse.py: convert_to_wse`` (placement on
the grid priced by the cycle model, the memory plan checked against the SRAM
budget); the module then holds the program, and its attributes the host
interface (``WseHost``: where each program input comes from, the output dtypes,
the placement decisions). Run ``legalize-for-wse`` first.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass

from ..dialects import wse
from ..dialects.wse_target import ARCH
from ..lowering.to_wse import WseOptions, convert_to_wse, module_grid


def parse_grid(text: str) -> wse.Grid:
    """``"4x4"`` -> Grid(4, 4)."""
    w, sep, h = text.partition("x")
    if not (sep and w.isdigit() and h.isdigit()) or not int(w) or not int(h):
        raise ValueError(f"convert-pyflame-to-wse: grid must be WIDTHxHEIGHT (e.g. \"4x4\") "
                         f"or \"auto\", not {text!r}")
    return wse.Grid(int(w), int(h))


@dataclass(frozen=True)
class ConvertPyflameToWse(ModulePass):
    """Place every tensor on the PE grid and lower @main to a wse.program (in place)."""

    name = "convert-pyflame-to-wse"

    grid: str = ""
    """``WIDTHxHEIGHT``, ``auto`` (the smallest that fits), or empty: the module's
    ``wse.grid`` attribute, else automatic."""

    max_pes: int = 1024
    """With an automatic grid: the largest grid tried."""

    budget: int = -1
    """Bytes of data per PE; -1: the cycle model's SRAM minus its reserve."""

    matmul: str = "auto"
    """auto | local (tiles, operands broadcast) | summa."""

    recompute: bool = True
    """A step that does not fit the budget recomputes cheap activations in the backward
    instead of keeping them (``lowering/pyflame_to_wse/recompute.py``)."""

    arch: str = ""
    """wse2 | wse3: the placements the arch's routes allow (WSE-3 has no SUMMA yet:
    its panel relays merge two input directions on one color); empty: the module's
    ``wse.arch`` attribute, else wse2."""

    def options(self, module: ModuleOp) -> WseOptions:
        if self.grid == "":
            grid = module_grid(module)
        else:
            grid = None if self.grid == "auto" else parse_grid(self.grid)
        arch = self.arch
        if not arch:
            a = module.attributes.get("wse.arch")
            arch = a.data if isinstance(a, StringAttr) else "wse2"
        if arch not in ARCH:
            raise ValueError(f"convert-pyflame-to-wse: arch must be one of {', '.join(ARCH)}, "
                             f"not {arch!r}")
        return WseOptions(grid=grid, max_pes=self.max_pes,
                          budget=None if self.budget < 0 else self.budget, matmul=self.matmul,
                          arch=arch, recompute=self.recompute)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        convert_to_wse(op, self.options(op))

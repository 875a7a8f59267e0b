"""``legalize-for-wse``: make a pyflame module lowerable to the WSE.

Checks every op against what the CSL backend lowers (the first unsupported
one fails with its reason), unfuses with the one ``unfuse`` pass every
backend without fused kernels uses, and expands the softmax family with the
rewrite patterns of ``lowering/pyflame_to_wse/legalize.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from ..lowering.pyflame_to_wse.legalize import legalize_softmax
from ..lowering.pyflame_to_wse.support import check_supported
from ..lowering.to_wse import find_main
from .common import PyflamePass
from .fusion import Unfuse


@dataclass(frozen=True)
class LegalizeForWse(PyflamePass):
    """Check the ops the CSL backend lowers, unfuse, expand the softmax family."""

    name = "legalize-for-wse"

    def run(self, ctx: Context, module: ModuleOp) -> dict[str, int]:
        check_supported(find_main(module))
        unfused = Unfuse().run(ctx, module)["unfused"]
        return {"unfused": unfused, "expanded": legalize_softmax(module)}

"""``legalize-for-wse``: make a pyflame module lowerable to the WSE.

Checks every op against what the CSL backend lowers (the first unsupported
one fails with its reason), unfuses with the one ``unfuse`` pass every
backend without fused kernels uses, and decomposes the ops the WSE has no
kernel for (the softmax family) with the ``decompose`` pass, whose
decompositions sit next to the ops' table entries.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from ..lowering.pyflame_to_wse.support import DECOMPOSED, check_supported
from ..lowering.to_wse import find_main
from .common import PyflamePass
from .decompose import decomposable, decompose
from .fusion import Unfuse


@dataclass(frozen=True)
class LegalizeForWse(PyflamePass):
    """Check the ops the CSL backend lowers, unfuse, decompose the softmax family."""

    name = "legalize-for-wse"

    def run(self, ctx: Context, module: ModuleOp) -> dict[str, int]:
        check_supported(find_main(module))
        unfused = Unfuse().run(ctx, module)["unfused"]
        return {"unfused": unfused, "decomposed": decompose(module, decomposable(DECOMPOSED))}

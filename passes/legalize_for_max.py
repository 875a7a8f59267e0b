"""``legalize-for-max``: make a ``pyflame`` module what the MAX lowering takes.

MAX's graph compiler fuses elementwise chains and matmul epilogues itself,
so fusion is undone (``unfuse``: named fused ops back to their chains,
``pyflame.fused`` regions inlined); any other op without a MAX rule but with
a decomposition is decomposed; then every op left must have a MAX rule
(``lowering/to_max.py: check_supported``), so a module MAX cannot run fails
here naming the op, never in the MAX compiler. ``pyflame-opt -t max`` and the
max backend run this pass (through the registry) before building graphs.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from ..dialects import OPS
from ..lowering import to_max
from .common import PyflamePass
from .decompose import decompose
from .fusion import Unfuse


@dataclass(frozen=True)
class LegalizeForMax(PyflamePass):
    """Unfuse, decompose the ops MAX has no rule for, and reject what is left
    without a MAX lowering."""

    name = "legalize-for-max"

    def run(self, ctx: Context, module: ModuleOp) -> dict[str, int]:
        counters = dict(Unfuse().run(ctx, module))
        lacking = frozenset(d for d in OPS.values()
                            if d.decomposition is not None and to_max.rule_for(d) is None)
        counters["decomposed"] = decompose(module, lacking)
        for fn in to_max.functions(module):
            to_max.check_supported(fn)
        return counters

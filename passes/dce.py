"""``dce``: erase ops whose results are unused and that have no other effect.

Every ``pyflame`` op (and ``pyflame.fused``) is pure; other ops follow xDSL's
side-effect traits. One sweep per block from the end: an op's users come
after it, so by the time the sweep reaches an op, every user that was going
to die is gone. Linear in the size of the module (a hand-written sweep: the
backward order is the whole algorithm, no pattern to match).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from .common import PyflamePass, blocks_of, is_pure


@dataclass(frozen=True)
class DeadCodeElimination(PyflamePass):
    """Erase unused pure ops."""

    name = "dce"

    def run(self, ctx: Context, module: ModuleOp) -> dict[str, int]:
        removed = 0
        for block in reversed(list(blocks_of(module))):  # nested blocks first
            op = block.last_op
            while op is not None:
                prev = op.prev_op
                if all(r.first_use is None for r in op.results) and is_pure(op):
                    block.erase_op(op)
                    removed += 1
                op = prev
        return {"removed": removed}

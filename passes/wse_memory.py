"""``wse-memory-plan``: per-PE buffers for the values of every ``wse.program``.

A thin pass over ``lowering/wse_memory.py: plan_memory``: it annotates every
value-producing op with ``wse.buffer`` (and ``wse.scratch``) and the program
with ``wse.buffers`` (sizes in words); it fails when a PE would exceed its
SRAM budget.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, IntAttr, ModuleOp
from xdsl.passes import ModulePass

from ..dialects import wse
from ..lowering.wse_memory import default_budget, plan_memory


@dataclass(frozen=True)
class WseMemoryPlan(ModulePass):
    """Assign per-PE buffers to the values of every wse.program (dead ones reused);
    fails when a PE would exceed its SRAM budget."""

    name = "wse-memory-plan"

    budget: int = -1
    """Bytes per PE for data; -1 means the cycle model's SRAM minus its reserve."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        budget = default_budget() if self.budget < 0 else self.budget
        for program in op.walk():
            if not isinstance(program, wse.ProgramOp):
                continue
            plan = plan_memory(program, budget)
            program.attributes["wse.buffers"] = ArrayAttr(IntAttr(n) for n in plan.sizes)
            for inner in program.body.block.ops:
                bufs = [plan.of[r] for r in inner.results if r in plan.of]
                if bufs:
                    inner.attributes["wse.buffer"] = IntAttr(bufs[0])
                if inner in plan.scratch:
                    inner.attributes["wse.scratch"] = ArrayAttr(
                        IntAttr(b) for b in plan.scratch[inner])

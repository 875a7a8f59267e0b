"""Memory planning for ``wse`` programs: per-PE buffers, with dead buffers reused.

Every PE runs the same program, so a value gets one buffer of its (padded)
tile size on every PE. The plan walks the program in order:

* an op that moves no bytes (``wse.reshape``, ``wse.broadcast``,
  ``wse.combine``: they work in place) gives its result its operand's buffer;
* a local elementwise op may write into the buffer of an operand of the same
  tile shape that dies at it;
* otherwise the result takes the smallest free buffer that is big enough
  (a free one is grown when none is, else a new one is made);
* scratch a lowering needs (``scratch_elems``) lives for the one op;
* a buffer is free once the last op reading its value has run; program
  inputs and outputs keep theirs (the host copies through them);
* resident state: an output that is the in-place update of an input (a
  parameter or optimizer state after ``p.sub_(...)``: the module attribute
  ``pyflame.writeback`` the compile driver sets, [[leaf, output], ...]) is
  written into the input's own buffer once the input is dead, when both have
  the same type (layout and tile): the state then stays in PE memory between
  launches and the host copies neither (``MemoryPlan.resident``).

``wse.constant`` scalars that only feed elementwise ops become immediates and
take no memory. The total must fit in the PE's SRAM minus the reserve for
code, stack and memcpy (``CycleModel.data_budget_bytes`` of ``dialects/wse_target.py``);
``MemoryBudgetError`` names the biggest live values otherwise.

``wse-memory-plan`` (``passes/wse_memory.py``) is the pass form.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects.builtin import ArrayAttr, IntAttr, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from ..dialects import wse
from ..dialects.wse_target import WORD_BYTES, CycleModel

WORD = WORD_BYTES


class MemoryBudgetError(DiagnosticException):
    """A PE would need more SRAM than the budget."""

    def __init__(self, message: str, needed: int, budget: int):
        super().__init__(message)
        self.needed, self.budget = needed, budget


def default_budget() -> int:
    """Bytes per PE for program data: SRAM minus the reserve (from the cycle model)."""
    return CycleModel().data_budget_bytes


def is_immediate(v: SSAValue) -> bool:
    """A 0-d ``wse.constant`` used only by ``wse.map``: lowered to an immediate."""
    op = v.owner
    return (isinstance(op, wse.ConstantOp) and not op.result.type.dims
            and all(isinstance(u.operation, wse.MapOp) for u in v.uses))


def scratch_elems(op: Operation, grid: wse.Grid) -> list[int]:
    """Words of scratch the CSL lowering of ``op`` needs on each PE."""
    if isinstance(op, wse.ReduceOp):
        t = op.input.type
        if len(t.dims) == 2 and len(op.reduced) == 2:
            return [t.tile(grid)[0]]
    elif isinstance(op, wse.GatherOp):
        return [op.input.type.elems(grid)]
    elif isinstance(op, wse.RelayoutOp) and grid.pes > 1:  # the tile passing through
        return [op.input.type.elems(grid)]
    elif isinstance(op, wse.SummaOp):  # two buffers per panel: one in use, one arriving
        na, nb = op.lhs.type.elems(grid), op.rhs.type.elems(grid)
        return [na, na, nb, nb]
    return []


ALIAS_OPS = (wse.ReshapeOp, wse.BroadcastOp, wse.CombineOp)
WRITEBACK_ATTR = "pyflame.writeback"  # set by the compile driver (compiler.py)
INPUTS_ATTR = "wse.inputs"  # lowering/to_wse.py: per program input, its leaf (or a constant)


def leaf_writebacks(module: Operation | None) -> dict[int, int]:
    """{output: leaf} of the compile driver's ``pyflame.writeback`` on ``module``."""
    pairs = module.attributes.get(WRITEBACK_ATTR) if module is not None else None
    if not isinstance(pairs, ArrayAttr):
        return {}
    return {k.data: j.data for j, k in (pair.data for pair in pairs.data)}  # type: ignore


def writeback_pairs(program: wse.ProgramOp) -> dict[int, int]:
    """{program input: program output} for the outputs that update an input in place
    (the enclosing module's ``pyflame.writeback`` over leaves, mapped through
    ``wse.inputs`` to program inputs); empty outside such a module."""
    module = program.parent_op()
    if not isinstance(module, ModuleOp):
        return {}
    pairs, sources = module.attributes.get(WRITEBACK_ATTR), module.attributes.get(INPUTS_ATTR)
    if not isinstance(pairs, ArrayAttr) or not isinstance(sources, ArrayAttr):
        return {}
    position = {src.data: i for i, src in enumerate(sources.data) if isinstance(src, IntAttr)}
    out: dict[int, int] = {}
    for pair in pairs.data:
        leaf, k = (a.data for a in pair.data)  # type: ignore[attr-defined]
        if leaf in position:
            out[position[leaf]] = k
    return out


@dataclass
class MemoryPlan:
    grid: wse.Grid
    sizes: list[int] = field(default_factory=list)  # words per buffer
    of: dict[SSAValue, int] = field(default_factory=dict)  # value -> buffer
    scratch: dict[Operation, list[int]] = field(default_factory=dict)
    resident: dict[int, int] = field(default_factory=dict)  # input -> output, one buffer
    half: set[int] = field(default_factory=set)  # buffers of f16 values (2 per word)

    @property
    def bytes(self) -> int:
        return sum(self.sizes) * WORD


# A hand-written sweep: buffer reuse needs the live set at every op, in program order.
def plan_memory(program: wse.ProgramOp, budget: int | None = None,
                reuse: bool = True) -> MemoryPlan:
    """Assign buffers (see the module docstring); raise MemoryBudgetError past ``budget``.
    ``reuse=False`` gives every value its own buffer (aliasing ops still share)."""
    grid = program.grid
    block = program.body.block
    plan = MemoryPlan(grid)
    ops = list(block.ops)
    last_use: dict[SSAValue, int] = {}
    for i, op in enumerate(ops):
        for v in op.operands:
            last_use[v] = i
    pinned = set(program.return_op.operands) | set(block.args)
    results = list(program.return_op.operands)
    updates: dict[SSAValue, SSAValue] = {}  # output value -> the input it updates
    for a, k in writeback_pairs(program).items():
        if k < len(results) and results.count(results[k]) == 1 \
                and results[k] not in block.args and results[k].type == block.args[a].type:
            updates[results[k]] = block.args[a]
    free: list[int] = []
    holders: dict[int, set[SSAValue]] = {}  # buffer -> live values in it

    def elems(v: SSAValue) -> int:  # words: f16 values take 2 bytes per element
        n = v.type.elems(grid)
        return -(-n // 2) if v.type.is_half else n

    def take(n: int, half: bool = False) -> int:
        # f16 and f32 buffers are different CSL arrays: reuse only within a kind
        b = _take(n, [b for b in free if (b in plan.half) == half])
        if half:
            plan.half.add(b)
        return b

    def _take(n: int, kind: list[int]) -> int:
        if not reuse:
            plan.sizes.append(n)
            return len(plan.sizes) - 1
        fits = [b for b in kind if plan.sizes[b] >= n]
        if fits:
            b = min(fits, key=lambda b: plan.sizes[b])
        elif kind:  # grow the largest free buffer rather than add one
            b = max(kind, key=lambda b: plan.sizes[b])
            plan.sizes[b] = n
        else:
            plan.sizes.append(n)
            return len(plan.sizes) - 1
        free.remove(b)
        return b

    def assign(v: SSAValue, b: int) -> None:
        plan.of[v] = b
        holders.setdefault(b, set()).add(v)

    def release(v: SSAValue) -> None:
        b = plan.of.get(v)
        if b is None or v in pinned:
            return
        live = holders[b]
        live.discard(v)
        if not live and b not in free:
            free.append(b)

    for a in block.args:
        assign(a, take(elems(a), a.type.is_half))
    for i, op in enumerate(ops):
        if isinstance(op, wse.ReturnOp):
            break
        dying = [v for v in dict.fromkeys(op.operands) if last_use.get(v) == i]
        # scratch of the tile's type
        half = isinstance(op, wse.GatherOp | wse.RelayoutOp) and op.input.type.is_half
        scratch = [take(-(-n // 2), True) if half else take(n) for n in scratch_elems(op, grid)]
        if scratch:
            plan.scratch[op] = scratch
        for r in op.results:
            if is_immediate(r):
                continue
            if isinstance(op, ALIAS_OPS):
                assign(r, plan.of[op.operands[0]])
                continue
            state = updates.get(r)
            dead = last_use.get(state, -1) if state is not None else i + 1
            if dead < i or (dead == i and isinstance(op, wse.MapOp)):  # elementwise: in place
                assign(r, plan.of[state])
                plan.resident[state.index] = results.index(r)
                continue
            inplace = None
            if isinstance(op, wse.MapOp) and reuse:
                for v in dying:
                    if (v not in pinned and v in plan.of and v.type.dims == r.type.dims
                            and v.type.is_half == r.type.is_half
                            and v.type.tile(grid) == r.type.tile(grid)
                            and len(holders[plan.of[v]]) == 1):
                        inplace = plan.of[v]
                        break
            assign(r, inplace if inplace is not None else take(elems(r), r.type.is_half))
        for b in scratch:
            free.append(b)
        for v in dying:
            release(v)
        for r in op.results:  # a value nobody reads dies at once
            if not r.uses and r in plan.of:
                release(r)
        total = sum(plan.sizes) * WORD
        if budget is not None and total > budget:
            raise MemoryBudgetError(_over_budget(grid, op, total, budget, holders, free,
                                                 plan.sizes), total, budget)
    return plan



def _over_budget(grid: wse.Grid, op: Operation, total: int, budget: int,
                 holders: dict[int, set[SSAValue]], free: list[int], sizes: list[int]) -> str:
    """The error of a plan past the budget: the largest live tensors by name (type and
    bytes per PE), and how much of the total is buffers free at that op (sized by
    values that died earlier: fragmentation, not live data)."""
    live = sorted({v for b, vs in holders.items() if b not in free for v in vs},
                  key=lambda v: -v.type.elems(grid))
    live_bytes = sum(sizes[b] for b, vs in holders.items() if vs and b not in free) * WORD
    listing = ", ".join(f"{v.type} ({v.type.elems(grid) * WORD} B/PE)" for v in live[:4])
    spare = sum(sizes[b] for b in free) * WORD
    return (f"csl backend: the {grid} grid needs {total} bytes of SRAM per PE at {op.name} "
            f"(largest live values: {listing}; {live_bytes} B/PE live, {spare} B/PE in "
            f"buffers free at this op), but the budget is {budget} bytes (48 KiB minus the "
            "reserve for code, stack and memcpy); use a larger grid")

"""``pyflame`` -> ``wse``: place every tensor on the PE grid and lower the ops.

``lower_to_wse(module, WseOptions(...))`` turns the one ``func.func @main``
into a ``wse.program``:

1. **Check** every op against what the CSL backend lowers (f32 tensors and
   bool masks of rank 0-2; see ``SUPPORTED``); anything else fails first with
   ``csl backend: op pyflame.X is not supported (...)``.
2. **Expand** fused ops (named ones into their chains, ``pyflame.fused``
   regions inline) and the softmax family into max / sub / exp / sum / div.
3. **Choose the grid**: the one given, else the smallest candidate (1x1,
   2x2, 4x4, 8x8, 16x16, 32x32 and the rectangles between, up to
   ``max_pes``) on which the program's memory plan fits the SRAM budget.
4. **Place and lower** op by op. Every candidate placement of an op (which
   grid axis carries each dim; for a matmul also the algorithm: K tiled with
   partial sums combined along a chain, K local with operands broadcast, or
   SUMMA) is priced with the cycle model of ``lowering/wse_cost.py``,
   relayouts of the operands included, and the cheapest whose tiles fit is
   emitted. Relayouts are sequences of ``wse.combine``, ``wse.gather``,
   ``wse.broadcast`` and ``wse.scatter``. Program inputs take the layout of
   their first use, with each element on one PE (the host copies each once;
   replication happens on the device, where it is timed). Splat constants
   feeding elementwise ops become immediates; other constants (and ``iota``)
   become program inputs whose data the host supplies.

The code is split along its seams in ``lowering/pyflame_to_wse/``: what is
supported (``support.py``; ``legalize-for-wse`` unfuses and decomposes the rest), placements and
relayouts (``placement.py``), the planner (``planner.py``, ``matmul.py``);
this module holds the grid and candidate search and the entry points.
"""


from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, IntAttr, ModuleOp, StringAttr
from xdsl.ir import Attribute, SSAValue

from ..dialects import wse
from ..dialects.data import DenseValue
from ..dialects.dtypes import DType
from ..dialects.fused import CHAINS
from ..dialects.pyflame import (
    FusedOp,
    PyflameOp,
    attr_from_ir,
    attr_to_ir,
    dtype_of_element,
    ir_element_type,
)
from .pyflame_to_wse.placement import default_layout
from .pyflame_to_wse.planner import INF, WseOptions, _Planner
from .pyflame_to_wse.recompute import recompute_cheap
from .pyflame_to_wse.support import (
    DECOMPOSED,
    ON_PE_POLYNOMIAL,
    CslUnsupportedError,
    check_supported,
)
from .pyflame_to_wse.support import value_spec as _spec
from .wse_cost import program_cost
from .wse_memory import (
    MemoryBudgetError,
    MemoryPlan,
    default_budget,
    leaf_writebacks,
    plan_memory,
)

__all__ = ["CslUnsupportedError", "WseHost", "WseModule", "WseOptions", "annotate_layouts",
           "check_supported", "convert_to_wse", "find_main", "grid_candidates", "lower_to_wse",
           "module_grid"]

# module attributes carrying the host interface of a converted module
INPUTS_ATTR, OUTPUTS_ATTR, CHOICES_ATTR = "wse.inputs", "wse.output_dtypes", "wse.choices"


@dataclass
class WseHost:
    """What running a wse program needs besides the program: per program input its
    source (``("arg", index)`` or ``("const", array)``), the output dtypes, and the
    placement decisions (one line each). In the IR: module attributes."""

    inputs: list[tuple[str, Any]]
    output_dtypes: list[DType]
    choices: list[str] = field(default_factory=list)

    def attributes(self) -> dict[str, Attribute]:
        ins: list[Attribute] = [
            IntAttr(src) if kind == "arg" else attr_to_ir("dense", DenseValue(src, src.shape))
            for kind, src in self.inputs]
        return {INPUTS_ATTR: ArrayAttr(ins),
                OUTPUTS_ATTR: ArrayAttr(ir_element_type(d) for d in self.output_dtypes),
                CHOICES_ATTR: ArrayAttr(StringAttr(c) for c in self.choices)}

    @staticmethod
    def of_module(module: ModuleOp) -> WseHost:
        """The host interface ``convert-pyflame-to-wse`` recorded on ``module``."""
        a = module.attributes
        if INPUTS_ATTR not in a or OUTPUTS_ATTR not in a:
            raise CslUnsupportedError("csl backend: the module has no host interface "
                                      f"({INPUTS_ATTR}); run convert-pyflame-to-wse")
        inputs: list[tuple[str, Any]] = []
        for x in a[INPUTS_ATTR]:  # type: ignore[attr-defined]
            if isinstance(x, IntAttr):
                inputs.append(("arg", x.data))
            else:
                inputs.append(("const", attr_from_ir("dense", INPUTS_ATTR, x).materialize()))
        dtypes = [dtype_of_element(t) for t in a[OUTPUTS_ATTR]]  # type: ignore[attr-defined]
        choices = [c.data for c in a.get(CHOICES_ATTR, ArrayAttr([]))]  # type: ignore[attr-defined]
        return WseHost(inputs, dtypes, choices)


@dataclass
class WseModule:
    """The lowered program and what running it needs."""

    module: ModuleOp
    program: wse.ProgramOp
    grid: wse.Grid
    inputs: list[tuple[str, Any]]  # per program input: ("arg", index) or ("const", array)
    output_dtypes: list[DType]
    memory: MemoryPlan
    choices: list[str] = field(default_factory=list)  # one line per placement decision

    def host(self) -> WseHost:
        return WseHost(self.inputs, self.output_dtypes, self.choices)



# ---- driver ----

def find_main(module: ModuleOp) -> func.FuncOp:
    funcs = [op for op in module.body.ops if isinstance(op, func.FuncOp)]
    mains = [f for f in funcs if f.sym_name.data == "main"] or funcs
    if len(mains) != 1:
        raise CslUnsupportedError(f"csl backend: expected one func.func @main, found "
                                  f"{len(funcs)} functions")
    return mains[0]


def grid_candidates(max_pes: int) -> list[wse.Grid]:
    out = [wse.Grid(1, 1)]
    s = 1
    while True:
        if (2 * s) * s <= max_pes:
            out.append(wse.Grid(2 * s, s))
        s *= 2
        if s * s > max_pes:
            break
        out.append(wse.Grid(s, s))
    return out


def _require_legal(module: ModuleOp) -> func.FuncOp:
    """@main of a module ``legalize-for-wse`` has run on: no fused op and none
    of the ops it decomposes is left."""
    fn = find_main(module)
    check_supported(fn)
    for op in fn.body.block.ops:
        if isinstance(op, FusedOp) or isinstance(op, PyflameOp) and (
                op.OPDEF.name in CHAINS or op.OPDEF.name in (*DECOMPOSED, *ON_PE_POLYNOMIAL)):
            raise CslUnsupportedError(f"csl backend: {op.name} must be legalized first; run "
                                      "legalize-for-wse (it unfuses and decomposes) before "
                                      "the conversion")
    return fn


def _prepare(module: ModuleOp) -> tuple[ModuleOp, func.FuncOp]:
    clone = module.clone()
    return clone, _require_legal(clone)


# A hand-written sweep, not rewrite patterns: placing an op depends on where its operands
# already live (and the relayouts already emitted), so the ops are walked in program order.
def _plan(fn: func.FuncOp, grid: wse.Grid, options: WseOptions,
          fixed: dict[int, str] | None = None, resident: str = "all") -> _Planner:
    p = _Planner(fn, grid, options, fixed)
    ret = None
    for op in fn.body.block.ops:
        if isinstance(op, func.ReturnOp):
            ret = op
            break
        p.lower(op)
    assert ret is not None
    outs = [_state_output(p, fn, k, v, resident) for k, v in enumerate(ret.operands)]
    for a in list(p.pending):  # inputs nobody reads still get a place
        if p.pending[a][0] == "arg":
            p._place_input(a, default_layout(_spec(a)[0], grid))
    p.block.add_op(wse.ReturnOp(*outs))
    return p


RESIDENT_MODES = ("all", "local", "none")


def _state_output(p: _Planner, fn: func.FuncOp, k: int, v: SSAValue, resident: str
                  ) -> SSAValue:
    """Output ``k``; when it updates a leaf in place (resident state: the module's
    ``pyflame.writeback``), of the type of that leaf's program input, so the memory
    plan can write it into the input's own buffer (a relayout on the device is
    cheaper than a trip through the host every step). ``resident``: "all" state
    outputs so, "local" those whose relayout gathers nothing (a gather replicates a
    tile: SRAM), "none"."""
    leaf = leaf_writebacks(fn.parent_op()).get(k) if resident != "none" else None
    if _spec(v)[1].name == "float16":  # f16 state goes through the host (16-bit memcpy);
        leaf = None  # mixed precision keeps its resident master weights in f32
    home = p.placed.get(fn.body.block.args[leaf]) if leaf is not None else None
    if not home:
        return p.output(v)
    lay, arg = home[0]
    if resident == "local" and all(
            any(s[0] == "gather" for s in p.steps(_spec(v)[0], have, lay) or [("gather",)])
            for have in p.current(v)):
        return p.output(v)
    try:
        w = p.get(v, lay)
        # a copy of its own (one fmovs) when w aliases another buffer or is held by more
        # PEs than the input (a value replicated along an axis the input is held at)
        wse.infer_map([(_spec(v)[0], w.type.layout)], arg.type.layout, p.grid)
    except (CslUnsupportedError, wse.LayoutError):
        return p.output(v)  # not movable there: an ordinary output (via the host)
    if w.type != arg.type or not isinstance(w.owner, wse.MapOp):
        w = p.emit(wse.MapOp("copy", [w], arg.type))
    return w


LOOKAHEAD = 4  # candidates per matmul tried with the whole program priced


# A search, not a rewrite: each candidate re-plans and prices the whole program.
def _search(fn: func.FuncOp, grid: wse.Grid, options: WseOptions, resident: str = "all"
            ) -> tuple[_Planner, wse.ProgramOp, MemoryPlan]:
    """Plan greedily, then revisit each matmul: try its cheapest candidates, each
    with the rest of the program planned greedily after it, and keep the one whose
    whole program the cycle model prices lowest (and whose memory plan fits).
    When no plan fits with the resident state relaid into its inputs' layouts (the
    relayouts take SRAM), plan again with less of it resident (``RESIDENT_MODES``)."""
    budget = options.budget or default_budget()

    def attempt(fixed: dict[int, str]):
        p = _plan(fn, grid, options, fixed, resident)
        program = wse.ProgramOp("main", grid, p.block)
        try:
            memory = plan_memory(program, budget)
        except MemoryBudgetError as e:
            return INF, p, program, e
        return program_cost(program, arch=options.arch), p, program, memory

    best = attempt({})
    fixed: dict[int, str] = {}
    # on one PE every candidate is the same local computation (relayouts are free):
    # nothing to search, and the re-plans dominate the compile time of larger steps
    for i in sorted(best[1].candidates) if grid.pes > 1 else ():
        chosen = best[1].chosen[i]
        for label in best[1].candidates[i][:LOOKAHEAD]:
            if label == chosen:
                continue
            trial = attempt({**fixed, i: label})
            if trial[0] < best[0]:
                best, chosen = trial, label
        fixed[i] = chosen
    cost, p, program, memory = best
    if isinstance(memory, Exception):
        if resident != "none" and leaf_writebacks(fn.parent_op()):
            fewer = RESIDENT_MODES[RESIDENT_MODES.index(resident) + 1]
            return _search(fn, grid, options, fewer)
        raise memory
    return p, program, memory


def _lower_on(fn: func.FuncOp, grid: wse.Grid, options: WseOptions) -> WseModule:
    recomputed: list[str] = []
    try:
        p, program, memory = _search(fn, grid, options)
    except MemoryBudgetError as keeping:
        # does not fit: recompute cheap activations in the backward instead of keeping
        # them, and plan again (the error stays the one of the plan keeping everything)
        if not options.recompute:
            raise
        fn = find_main(fn.parent_op().clone())  # type: ignore[union-attr]
        recomputed = recompute_cheap(fn)
        if not recomputed:
            raise
        try:
            p, program, memory = _search(fn, grid, options)
        except MemoryBudgetError:
            raise keeping from None
    module = ModuleOp([program])
    module.verify()
    ret = find_return(fn)
    dtypes = [_spec(v)[1] for v in ret.operands]
    return WseModule(module, program, grid, p.inputs, dtypes, memory,
                     recomputed + p.choices)


def find_return(fn: func.FuncOp) -> func.ReturnOp:
    last = fn.body.block.last_op
    assert isinstance(last, func.ReturnOp)
    return last


def lower_to_wse(module: ModuleOp, options: WseOptions | None = None) -> WseModule:
    """The pyflame module's @main as a wse.program (see the module docstring)."""
    options = options or WseOptions()
    _, fn = _prepare(module)
    if options.grid is not None:
        return _lower_on(fn, options.grid, options)
    errors = []
    for grid in grid_candidates(options.max_pes):
        try:
            return _lower_on(fn, grid, options)
        except (MemoryBudgetError, CslUnsupportedError) as e:
            if isinstance(e, CslUnsupportedError) and "fits" not in str(e):
                raise
            errors.append(f"{grid}: {e}")
    raise MemoryBudgetError(
        f"csl backend: the program does not fit any grid of at most {options.max_pes} PEs "
        f"(largest tried: {errors[-1] if errors else '-'})", 0, options.budget or 0)


def annotate_layouts(module: ModuleOp, options: WseOptions) -> None:
    """The ``wse-layout`` pass: record the chosen layouts on the (legalized) pyflame ops."""
    fn = _require_legal(module)
    grid = options.grid
    if grid is None:
        grid = lower_to_wse(module, options).grid
    p = _plan(fn, grid, options)
    for op, (lay, scheme) in p.annotations.items():
        op.attributes["wse.layout"] = wse.LayoutAttr.get(lay)
        op.attributes["wse.scheme"] = StringAttr(scheme)
    module.attributes["wse.grid"] = StringAttr(str(grid))


def module_grid(module: ModuleOp) -> wse.Grid | None:
    """The ``wse.grid`` module attribute (``"4x4"``; absent or ``"auto"``: None)."""
    g = module.attributes.get("wse.grid")
    if isinstance(g, StringAttr) and g.data != "auto":
        w, _, h = g.data.partition("x")
        return wse.Grid(int(w), int(h))
    return None


def convert_to_wse(module: ModuleOp, options: WseOptions) -> WseModule:
    """``convert-pyflame-to-wse``: replace the module's contents by its ``wse.program``
    and record the host interface (``WseHost``) as module attributes."""
    low = lower_to_wse(module, options)
    block = module.body.block
    for op in list(block.ops):
        op.detach()
    low.program.detach()
    block.add_op(low.program)
    module.attributes.update(low.host().attributes())
    low.module = module
    return low

"""The WSE target in one place: machine figures, per-arch rules, PE functions.

Plain Python (no xDSL), on the ground floor, so the ``wse`` dialect, the
lowerings, the cost model, the memory planner and the simulator all read the
same facts instead of copying them:

* ``CycleModel`` and ``FIGURES``: every figure of the cycle model, with its
  source (the simulator times programs with it; the layout search prices
  candidates with it; the memory planner takes the SRAM budget from it);
* ``ARCH``: one ``ArchRules`` record per architecture (reserved ids, routable
  colors, the queues user channels may take, the local task ids to try);
* ``WSE_FNS``: one ``MapFn`` record per function ``wse.map`` applies (arity,
  whether the result is a mask, the DSD builtin and operand form that computes
  it over whole tiles, the ``<math>`` call its scalar form makes, and so its
  cost class).

Adding an elementwise function for the CSL path is one ``MapFn`` record here
(``MAP_FNS``, the pyflame op it lowers, the DSD and cost tables follow); a
function with neither a DSD builtin nor a same-named ``<math>`` call also needs
its scalar form in ``lowering/wse_to_csl/map_gen.py: _scalar_fn``.

The SDK rules per arch (issue #15: WSE-3 local task ids 8-30 and data tasks
bound to input queues, WSE-2 has no output queues 6/7, one rx direction per
color on WSE-3, ...) are ``ArchRules``; the queue and router-buffer depths that
bound the simulator's queues (backpressure, send/send deadlocks) are
``CycleModel`` figures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

# ---- the cycle model (figures with their sources) ----

DOCS = "public Cerebras SDK documentation (summarized in CSL_NOTES.md)"
SDK_TIMING = "SDK example timing code (0.85 GHz)"
SECONDARY = "secondary source (published talks/papers), not SDK docs"
ESTIMATE = "estimate (no public source)"
UNVERIFIED = "stated publicly without a primary source (unverified)"


@dataclass(frozen=True)
class CycleModel:
    """The machine's figures; frozen so experiments can vary one
    (``dataclasses.replace(CycleModel(), hop_latency=2)``). ``FIGURES`` says
    where each default comes from; "estimate" figures are this project's guess."""

    clock_ghz: float = 0.85
    clock_ghz_alt: float = 1.1
    sram_bytes: int = 48 * 1024
    sram_reserve_bytes: int = 6 * 1024
    mem_reads_per_cycle: int = 2
    mem_writes_per_cycle: int = 1
    f32_elems_per_cycle: float = 1.0
    f16_simd_wse2: int = 4
    f16_simd_wse3: int = 8
    strided_f16_simd: int = 1
    int_elems_per_cycle: float = 1.0
    fabric_elems_per_cycle: float = 1.0
    link_wavelets_per_cycle: float = 1.0
    hop_latency: float = 1.0
    ramp_latency: float = 1.0
    dsd_issue_cycles: float = 2.0
    scalar_op_cycles: float = 1.0
    task_switch_cycles: float = 5.0
    launch_latency: float = 10.0
    math_call_cycles: float = 30.0
    input_queue_depth: int = 4
    output_queue_depth: int = 2
    router_buffer_depth: int = 2

    def f16_simd(self, arch: str) -> int:
        return self.f16_simd_wse3 if arch == "wse3" else self.f16_simd_wse2

    def dsd_cycles(self, n: int, elems_per_cycle: float) -> float:
        """Cycles of one synchronous DSD op over `n` elements at the given rate."""
        return self.dsd_issue_cycles + math.ceil(n / elems_per_cycle)

    @property
    def data_budget_bytes(self) -> int:
        """Bytes per PE for program data: SRAM minus the reserve."""
        return self.sram_bytes - self.sram_reserve_bytes

    def table(self) -> list[tuple[str, object, str, str]]:
        """(figure, value, unit, source) rows, in declaration order."""
        return [(f.name, getattr(self, f.name), *FIGURES[f.name]) for f in fields(self)]

    def format_table(self) -> str:
        rows = [("figure", "value", "unit", "source")]
        rows += [(n, str(v), u, s) for n, v, u, s in self.table()]
        widths = [max(len(r[i]) for r in rows) for i in range(4)]
        lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |" for r in rows]
        lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
        return "\n".join(lines)


FIGURES: dict[str, tuple[str, str]] = {
    "clock_ghz": ("GHz", SDK_TIMING),
    "clock_ghz_alt": ("GHz", SECONDARY + "; reported as the other common figure"),
    "sram_bytes": ("bytes/PE", DOCS + ": 48 KiB, 8 banks x 6 KiB"),
    "sram_reserve_bytes": ("bytes/PE", ESTIMATE + ": code, stack and memcpy buffers"),
    "mem_reads_per_cycle": ("32-bit reads/cycle", DOCS),
    "mem_writes_per_cycle": ("32-bit writes/cycle", DOCS),
    "f32_elems_per_cycle": ("elements/cycle", UNVERIFIED + ": about 1 f32 DSD element/cycle"),
    "f16_simd_wse2": ("f16 elements/cycle", SECONDARY),
    "f16_simd_wse3": ("f16 elements/cycle", SECONDARY),
    "strided_f16_simd": ("f16 elements/cycle", ESTIMATE + ": SIMD assumed to need stride 1"),
    "int_elems_per_cycle": ("elements/cycle", ESTIMATE + ": 16/32-bit integer DSD ops"),
    "fabric_elems_per_cycle": ("wavelets/cycle", DOCS + ": one wavelet per link per cycle"),
    "link_wavelets_per_cycle": ("wavelets/cycle/direction", DOCS),
    "hop_latency": ("cycles/hop", UNVERIFIED + ": one-cycle hop"),
    "ramp_latency": ("cycles", ESTIMATE + ": router <-> core"),
    "dsd_issue_cycles": ("cycles/op", ESTIMATE + ": DSD op set-up and issue"),
    "scalar_op_cycles": ("cycles/op", ESTIMATE + ": scalar arith, load/store, branch"),
    "task_switch_cycles": ("cycles/task", ESTIMATE + ": picking and entering a task"),
    "launch_latency": ("cycles", ESTIMATE + ": host RPC reaching a PE; memcpy is not timed"),
    "math_call_cycles": ("cycles/call", ESTIMATE + ": one <math> library call (exp, log, ...)"),
    "input_queue_depth": ("wavelets", UNVERIFIED + ": an input queue holds a few (2-8)"),
    "output_queue_depth": ("wavelets", ESTIMATE + ": an output queue holds a few"),
    "router_buffer_depth": ("wavelets/router", ESTIMATE + ": a router buffers a few per color"),
}

WORD_BYTES = 4
"""Every element occupies a 32-bit word on the PE (f32, and masks as 0.0/1.0)."""

# ---- per-arch rules ----

ROUTABLE_COLORS = range(0, 24)
"""Colors that can carry fabric traffic."""

RESERVED_IDS = frozenset({21, 22, 23, 27, 28, 29, 30, 31})
"""Colors / task ids used by memcpy and the runtime: user programs must not bind them."""

RESERVED_QUEUES_WSE3 = frozenset({0, 1})
"""WSE-3 input/output queues taken by memcpy."""

RESERVED_QUEUES_WSE2 = frozenset({0})
"""WSE-2 queue taken by memcpy."""

SDK_VERSIONS = (1, 2)
"""SDK major versions whose idioms the emitter writes (2: the default). 2.x dropped
``.fabric_color`` from fabin DSDs (and from fabout DSDs on WSE-3): their queues are
bound to colors with ``@initialize_queue`` on both archs."""

# On both archs a DSD length is a u16 (``@set_dsd_length(d, @bitcast(u16, n))``):
# the emitter writes it so and the simulator rejects other types at plan time.


@dataclass(frozen=True)
class ArchRules:
    """What a program may use on one architecture: the rules a real ``cslc``
    enforces (CSL_NOTES.md, "Per-architecture rules"). The emitter allocates
    within them; the simulator (``runtime/wse/rules.py``) checks every program
    against them before it runs."""

    name: str
    title: str
    """How people write it (``WSE-3``)."""
    local_task_id_range: tuple[int, int] = (0, 30)
    """Lowest and highest local task id (inclusive)."""
    data_task_from: str = "color"
    """What a data task id is made from: ``color`` (WSE-2) or ``input_queue`` (WSE-3)."""
    input_queues: tuple[int, ...] = tuple(range(8))
    output_queues: tuple[int, ...] = tuple(range(8))
    """Queues that exist (WSE-2 has no output queues 6 and 7)."""
    reserved_ids: frozenset[int] = RESERVED_IDS
    """Colors and task ids memcpy and the runtime own."""
    reserved_queues: frozenset[int] = frozenset()
    """Input/output queues memcpy owns."""
    queue_per_color: bool = False
    """Each input queue is bound to one color (``@initialize_queue``), so a program
    has at most ``len(user_queues)`` channels."""
    max_rx_per_color: int | None = None
    """Input directions a router accepts for one color (None: any)."""
    microthread_ids: tuple[int, ...] = ()
    """Microthread ids a program may name (``.ut_id = @get_ut_id(n)``); empty: the arch
    exposes none, an async op's microthread is its fabric operand's queue (WSE-2).
    Either way two operations must not use one microthread at the same time."""

    @property
    def user_queues(self) -> tuple[int, ...]:
        """Queues user channels take, in order: ones that exist as both input and
        output queue, without memcpy's (a channel uses the same number for both)."""
        return tuple(q for q in self.input_queues
                     if q in self.output_queues and q not in self.reserved_queues)

    @property
    def routable_colors(self) -> tuple[int, ...]:
        """Colors a user channel may take: 0-23 without the reserved ones."""
        return tuple(c for c in ROUTABLE_COLORS if c not in self.reserved_ids)

    def local_task_id_ok(self, tid: int) -> bool:
        lo, hi = self.local_task_id_range
        return lo <= tid <= hi and tid not in self.reserved_ids

    @property
    def local_task_ids(self) -> tuple[int, ...]:
        """Local task ids to try, in order (the lowering skips a color in use on an
        arch whose data task ids are colors)."""
        lo, hi = self.local_task_id_range
        return tuple(t for t in range(lo, hi + 1) if self.local_task_id_ok(t))


ARCH: dict[str, ArchRules] = {
    "wse2": ArchRules("wse2", "WSE-2", output_queues=tuple(range(6)),
                      reserved_queues=RESERVED_QUEUES_WSE2),
    "wse3": ArchRules("wse3", "WSE-3", local_task_id_range=(8, 30),
                      data_task_from="input_queue", reserved_queues=RESERVED_QUEUES_WSE3,
                      queue_per_color=True, max_rx_per_color=1,
                      microthread_ids=tuple(range(8))),
}
ARCHS: tuple[str, ...] = tuple(ARCH)

# ---- the functions wse.map applies ----

# How a DSD builtin computes the function over a range of the tile (dst first):
DSD_FORMS = {
    "unary": "@op(dst, x)",
    "binary": "@op(dst, a, b); a scalar operand goes second unless the op is sub",
    "with_zero": "@op(dst, x, 0.0)",
    "self": "@op(dst, x, x)",
    "one_minus": "@op(dst, 1.0, x)",
}


@dataclass(frozen=True)
class MapFn:
    """One function of ``wse.map``."""

    name: str
    arity: int
    mask: bool = False
    """The result is a 0/1 mask."""
    dsd: str | None = None
    """The DSD builtin (without ``@``) computing it over whole tiles, if one does."""
    form: str = "binary"
    """How that builtin takes its operands (a key of ``DSD_FORMS``)."""
    math: str | None = None
    """The ``<math>`` function (``<name>_f32``) its scalar form calls, if any."""
    op: str | None = ""
    """The pyflame op lowered to it: empty for the op of the same name, None for none
    (a function only the lowering uses)."""

    def __post_init__(self) -> None:
        if self.form not in DSD_FORMS:
            raise ValueError(f"wse function {self.name}: form {self.form!r} is not one of "
                             f"{sorted(DSD_FORMS)}")

    @property
    def pyflame_op(self) -> str | None:
        return self.name if self.op == "" else self.op

    @property
    def cost_class(self) -> str:
        """``dsd`` (DSD ops over tiles), ``math`` (scalar loop with a library call)
        or ``scalar`` (scalar loop of arith)."""
        return "dsd" if self.dsd else "math" if self.math else "scalar"


def _fns(*records: MapFn) -> dict[str, MapFn]:
    return {r.name: r for r in records}


WSE_FNS: dict[str, MapFn] = _fns(
    MapFn("copy", 1, dsd="fmovs", form="unary", op=None),
    MapFn("from_mask", 1, dsd="fmovs", form="unary", op=None),
    MapFn("neg", 1, dsd="fnegs", form="unary"),
    MapFn("abs", 1, dsd="fabss", form="unary"),
    MapFn("relu", 1, dsd="fmaxs", form="with_zero"),
    MapFn("square", 1, dsd="fmuls", form="self"),
    MapFn("not", 1, mask=True, dsd="fsubs", form="one_minus", op="logical_not"),
    MapFn("exp", 1, math="exp"),
    MapFn("log", 1, math="log"),
    MapFn("log1p", 1, math="log"),  # <math> has no log1p we know of: from log_f32, see map_gen
    MapFn("sqrt", 1, math="sqrt"),
    MapFn("rsqrt", 1, math="sqrt"),
    MapFn("tanh", 1, math="tanh"),
    MapFn("sigmoid", 1, math="exp"),
    MapFn("reciprocal", 1),
    MapFn("sin", 1, math="sin"),
    MapFn("cos", 1, math="cos"),
    MapFn("sign", 1),
    MapFn("to_mask", 1, mask=True, op=None),
    MapFn("add", 2, dsd="fadds"),
    MapFn("sub", 2, dsd="fsubs"),
    MapFn("mul", 2, dsd="fmuls"),
    MapFn("div", 2),
    MapFn("maximum", 2, dsd="fmaxs"),
    MapFn("minimum", 2),
    MapFn("gt", 2, mask=True),
    MapFn("ge", 2, mask=True),
    MapFn("lt", 2, mask=True),
    MapFn("le", 2, mask=True),
    MapFn("eq", 2, mask=True),
    MapFn("ne", 2, mask=True),
    MapFn("and", 2, mask=True, dsd="fmuls", op="logical_and"),
    MapFn("or", 2, mask=True, dsd="fmaxs", op="logical_or"),
    MapFn("select", 3, op="where"),
    MapFn("fma", 3, op=None),
)

DSD_BUILTINS: frozenset[str] = frozenset(
    {f.dsd for f in WSE_FNS.values() if f.dsd} | {"fmacs"})
"""Every DSD builtin the lowering emits (``fmacs``: the matmul's multiply-add)."""

# ---- half precision (issue #16) ----
# The SDK's 16-bit float type is IEEE binary16 (``f16``); its DSD builtins are the
# f32 ones with an ``h`` suffix, plus the mixed ``@fmachs`` (16-bit multiply, 32-bit
# add), ``@faddhs`` and the conversions ``@fh2s``/``@fs2h`` (SDK builtin reference;
# operand types as in xDSL's csl dialect). SIMD widths: ``CycleModel.f16_simd_wse2``
# and ``f16_simd_wse3`` (4 and 8 f16 elements per cycle, SECONDARY source; f32 runs
# at ``f32_elems_per_cycle``); the simulator and the layout search charge them.

HALF_FORMS: dict[str, str] = {
    "fmovs": "fmovh", "fadds": "faddh", "fsubs": "fsubh", "fmuls": "fmulh",
    "fmaxs": "fmaxh", "fnegs": "fnegh", "fabss": "fabsh", "fmacs": "fmach",
}
"""The f16 form of each f32 DSD builtin the lowering emits."""

HALF_BUILTINS: frozenset[str] = frozenset({*HALF_FORMS.values(), "fmachs", "fh2s", "fs2h"})
"""The 16-bit and mixed DSD builtins the lowering may emit."""


_NO_BF16 = ("the public SDK documents no bf16 type or bf16 DSD builtin for it (CSL's "
            "floats are f16 and f32; CSL_NOTES.md)")
BF16_REFUSED: dict[str, str] = {"wse2": _NO_BF16, "wse3": _NO_BF16}
"""Per arch, the rule refusing bf16 (an arch missing here would compute it)."""

"""The machine: every figure of the cycle model in one table, with its source.

`CycleModel` is a frozen dataclass so experiments can vary a figure
(`dataclasses.replace(CycleModel(), hop_latency=2)`); `FIGURES` says where
each default comes from. "estimate" means no public source was found: the
figure is this project's guess and the reports built on it are estimates too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

DOCS = "public Cerebras SDK documentation (summarized in CSL_NOTES.md)"
SDK_TIMING = "SDK example timing code (0.85 GHz)"
SECONDARY = "secondary source (published talks/papers), not SDK docs"
ESTIMATE = "estimate (no public source)"
UNVERIFIED = "stated publicly without a primary source (unverified)"

ARCHS = ("wse2", "wse3")

ROUTABLE_COLORS = range(0, 24)
"""Colors that can carry fabric traffic."""

RESERVED_IDS = frozenset({21, 22, 23, 27, 28, 29, 30, 31})
"""Colors / task ids used by memcpy and the runtime: user programs must not bind them."""

RESERVED_QUEUES_WSE3 = frozenset({0, 1})
"""WSE-3 input/output queues taken by memcpy."""


@dataclass(frozen=True)
class CycleModel:
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

    def f16_simd(self, arch: str) -> int:
        return self.f16_simd_wse3 if arch == "wse3" else self.f16_simd_wse2

    def dsd_cycles(self, n: int, elems_per_cycle: float) -> float:
        """Cycles of one synchronous DSD op over `n` elements at the given rate."""
        return self.dsd_issue_cycles + math.ceil(n / elems_per_cycle)

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
}

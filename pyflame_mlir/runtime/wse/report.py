"""The cycle report: per-PE busy/idle cycles, FLOPs, utilization, simulated time."""

from __future__ import annotations

from dataclasses import dataclass

from .machine import CycleModel


@dataclass(frozen=True)
class PeStats:
    x: int
    y: int
    busy: float  # core cycles running task code, stalls excluded
    stall: float  # core cycles waiting for wavelets inside a task
    async_cycles: float  # cycles of asynchronous DSD ops (beside the core)
    flops: float
    tasks: int
    dsd_ops: int


@dataclass(frozen=True)
class CycleReport:
    arch: str
    width: int
    height: int
    total_cycles: float  # sum over host launches of first start to last completion
    pes: list[PeStats]
    model: CycleModel
    launches: list[tuple[str, float]]
    wavelet_hops: int

    @property
    def flops(self) -> float:
        return sum(p.flops for p in self.pes)

    @property
    def peak_flops_per_cycle(self) -> float:
        """f32 roofline: one multiply-add (2 FLOPs) per element-cycle on every PE."""
        return 2 * self.model.f32_elems_per_cycle * len(self.pes)

    @property
    def utilization(self) -> float:
        if not self.total_cycles:
            return 0.0
        return self.flops / (self.peak_flops_per_cycle * self.total_cycles)

    def idle(self, p: PeStats) -> float:
        return max(0.0, self.total_cycles - p.busy)

    def seconds(self, ghz: float | None = None) -> float:
        return self.total_cycles / ((ghz or self.model.clock_ghz) * 1e9)

    def __str__(self) -> str:
        m = self.model
        busy = [p.busy for p in self.pes]
        lines = [
            f"WSE simulator cycle report ({self.arch}, {self.width}x{self.height} PEs, "
            "cycle figures partly estimates: see machine.FIGURES)",
            f"  total cycles      {self.total_cycles:,.0f}"
            + "".join(f"  ({n}: {c:,.0f})" for n, c in self.launches),
            f"  simulated time    {self.seconds() * 1e6:,.3f} us @ {m.clock_ghz} GHz, "
            f"{self.seconds(m.clock_ghz_alt) * 1e6:,.3f} us @ {m.clock_ghz_alt} GHz",
            f"  FLOPs             {self.flops:,.0f}",
            f"  utilization       {100 * self.utilization:.2f}% of the f32 FMA roofline",
            f"  PE busy cycles    min {min(busy):,.0f}  mean {sum(busy) / len(busy):,.0f}  "
            f"max {max(busy):,.0f}",
            f"  wavelet hops      {self.wavelet_hops:,}",
        ]
        if len(self.pes) <= 16:
            lines.append("  PE       busy      stall     idle      async     FLOPs     tasks")
            for p in self.pes:
                lines.append(
                    f"  ({p.x},{p.y})".ljust(9)
                    + "".join(f"{v:<10,.0f}" for v in
                              (p.busy, p.stall, self.idle(p), p.async_cycles, p.flops))  # fmt: skip
                    + f"{p.tasks}"
                )
        return "\n".join(lines)

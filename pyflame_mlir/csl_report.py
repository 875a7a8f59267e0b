"""``pf.csl_report()``: what the latest csl-backend run (one training step) cost on the
simulated wafer: cycles, achieved FLOP/cycle against the f32 roofline of the PEs it
used, fabric traffic (wavelet hops), SRAM per PE by tensor and its high-water mark,
host traffic (bytes in and out, the resident state that did not move); and a picture
of the grid (``write_png``): per PE its busy fraction and the resident state it holds.

The PNG is written by a small encoder here (zlib and the PNG chunk format), so the
report needs no imaging library.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["CslStepReport", "csl_report", "png_bytes", "sram_by_tensor"]

WORD = 4


@dataclass(frozen=True)
class CslStepReport:
    arch: str
    grid: tuple[int, int]  # (width, height) in PEs
    cycles: float  # the launch: first start to last completion
    flops: float
    roofline_flops_per_cycle: float  # f32 FMA on every PE of the grid, each cycle
    wavelet_hops: int  # fabric traffic: 32-bit wavelets x links crossed
    sram_bytes_per_pe: int  # the memory plan's high-water mark (data, every PE)
    sram_budget_bytes: int
    sram_by_tensor: tuple[tuple[str, int], ...]  # (what, bytes per PE), largest first
    h2d_bytes: int
    d2h_bytes: int
    resident_bytes: int  # state kept in PE memory (all PEs): not copied this step
    busy: np.ndarray  # (height, width): busy fraction of each PE during the launch
    resident_pe_bytes: np.ndarray  # (height, width): resident state bytes on each PE
    clock_ghz: tuple[float, float]
    recomputed: tuple[str, ...] = ()  # activations recomputed in the backward, not kept

    @property
    def flops_per_cycle(self) -> float:
        return self.flops / self.cycles if self.cycles else 0.0

    @property
    def roofline_fraction(self) -> float:
        peak = self.roofline_flops_per_cycle
        return self.flops_per_cycle / peak if peak else 0.0

    @property
    def host_bytes(self) -> int:
        return self.h2d_bytes + self.d2h_bytes

    def seconds(self, ghz: float | None = None) -> float:
        return self.cycles / ((ghz or self.clock_ghz[0]) * 1e9)

    def __str__(self) -> str:
        w, h = self.grid
        lines = [
            f"csl step on a {w}x{h} grid ({self.arch}): {self.cycles:,.0f} cycles "
            f"({self.seconds() * 1e6:,.2f} us @ {self.clock_ghz[0]} GHz, "
            f"{self.seconds(self.clock_ghz[1]) * 1e6:,.2f} us @ {self.clock_ghz[1]} GHz)",
            f"  compute     {self.flops:,.0f} FLOP, {self.flops_per_cycle:,.2f} FLOP/cycle = "
            f"{100 * self.roofline_fraction:.1f}% of the f32 roofline "
            f"({self.roofline_flops_per_cycle:,.0f} FLOP/cycle on {w * h} PEs)",
            f"  PE busy     min {100 * self.busy.min():.0f}%  mean "
            f"{100 * self.busy.mean():.0f}%  max {100 * self.busy.max():.0f}%",
            f"  fabric      {self.wavelet_hops:,} wavelet hops",
            f"  SRAM        {self.sram_bytes_per_pe:,} B per PE high-water mark of "
            f"{self.sram_budget_bytes:,} B for data",
        ]
        lines += [f"    {what:<34} {n:>8,} B/PE" for what, n in self.sram_by_tensor]
        lines.append(f"  host        {self.host_bytes:,} B: {self.h2d_bytes:,} B in, "
                     f"{self.d2h_bytes:,} B out; "
                     f"{self.resident_bytes:,} B of state resident (not copied)")
        lines += [f"  plan        {line}" for line in self.recomputed]
        return "\n".join(lines)

    def image(self, scale: int = 24) -> np.ndarray:
        """(H, W, 3) uint8: left the busy fraction of each PE (black idle .. yellow
        busy), right the resident state on each PE (black none .. blue the most)."""
        busy = np.clip(self.busy, 0, 1)
        heat = np.stack([255 * np.clip(2 * busy, 0, 1), 255 * np.clip(2 * busy - 1, 0, 1),
                         np.zeros_like(busy)], axis=-1)
        top = max(float(self.resident_pe_bytes.max()), 1.0)
        state = self.resident_pe_bytes / top
        cool = np.stack([64 * state, 128 * state, 255 * state], axis=-1)
        h, w = busy.shape
        gap = np.full((h, 1, 3), 255.0)
        grid = np.concatenate([heat, gap, cool], axis=1)
        pixels = np.repeat(np.repeat(grid, scale, axis=0), scale, axis=1)
        for k in range(0, pixels.shape[0], scale):  # PE borders
            pixels[k, :, :] = 96
        for k in range(0, pixels.shape[1], scale):
            pixels[:, k, :] = 96
        return pixels.astype(np.uint8)

    def write_png(self, path: str | Path, scale: int = 24) -> Path:
        out = Path(path)
        if out.is_dir():
            out = out / "grid.png"
        out.write_bytes(png_bytes(self.image(scale)))
        return out


def png_bytes(rgb: np.ndarray) -> bytes:
    """An 8-bit RGB PNG of an (H, W, 3) uint8 array."""
    h, w, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[y].tobytes() for y in range(h))  # filter type 0 per row

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    header = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def sram_by_tensor(program: Any) -> list[tuple[str, int]]:
    """Bytes per PE of each host-visible tensor (resident state, inputs, outputs) and
    of the rest (activations and scratch in reused buffers) of a lowered
    ``CslProgram``, largest first (also without a run: ``exe.current.program`` of
    ``pf.export_csl``)."""
    resident = program.resident
    shared = set(resident.values())
    rows: list[tuple[str, int]] = []
    for i, io in enumerate(program.inputs):
        kind = "resident state" if i in resident else "input"
        rows.append((f"{io.name} {list(io.shape)} ({kind})", WORD * io.elems))
    for k, io in enumerate(program.outputs):
        if k not in shared:  # resident outputs live in their input's buffer
            rows.append((f"{io.name} {list(io.shape)} (output)", WORD * io.elems))
    rest = program.memory_bytes - sum(n for _, n in rows)
    if rest > 0:
        rows.append(("activations and scratch (reused)", rest))
    return sorted(rows, key=lambda r: -r[1])


def csl_report(directory: str | Path | None = None) -> CslStepReport:
    """The report of the latest csl-backend run on the simulator; with ``directory``
    (e.g. where the program was emitted) the grid picture is written there as
    ``grid.png``."""
    # the csl runtime imports xDSL: loaded here, off the `import pyflame_mlir` path
    from .runtime.csl_backend import last_run

    run = last_run()
    if run is None:
        raise RuntimeError("csl_report: no csl-backend run yet (pf.set_backend('csl') and "
                           "evaluate something on the simulator first)")
    rep, prog = run.report, run.program
    w, h = rep.width, rep.height
    busy = np.zeros((h, w))
    for p in rep.pes:
        busy[p.y, p.x] = min(1.0, p.busy / rep.total_cycles) if rep.total_cycles else 0.0
    held = np.zeros((h, w))
    for i in prog.resident:
        io = prog.inputs[i]
        x0, y0, rw, rh = io.region
        held[y0:y0 + rh, x0:x0 + rw] += WORD * io.elems
    model = rep.model
    report = CslStepReport(
        rep.arch, (w, h), rep.total_cycles, rep.flops, rep.peak_flops_per_cycle,
        rep.wavelet_hops, prog.memory_bytes, model.data_budget_bytes,
        tuple(sram_by_tensor(prog)), run.traffic.h2d_bytes, run.traffic.d2h_bytes,
        run.resident_bytes, busy, held, (model.clock_ghz, model.clock_ghz_alt),
        run.recomputed)
    if directory is not None:
        report.write_png(Path(directory))
    return report

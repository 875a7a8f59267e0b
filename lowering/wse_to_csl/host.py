"""What the host needs to know about a lowered program: its memcpy symbols,
their placement on the grid, and the program record the emitter writes."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.utils.exceptions import DiagnosticException

from ...dialects import wse
from ..wse_memory import MemoryPlan

PROGRAM_FILE = "pe_program"
HOST_ATTR = "csl.host"  # module attribute: the host interface as JSON (CslProgram.host_json)
LAUNCH = "compute"


class CslLoweringError(DiagnosticException):
    """The wse program cannot be lowered (too many colors or queues, bad op)."""


class ColorBudgetError(CslLoweringError):
    """The program needs more routable colors than the fabric has."""


# ---- what the host needs to know ----


@dataclass(frozen=True)
class IoSpec:
    """A host-visible tensor: its memcpy symbol, placement and PE region."""

    name: str
    shape: tuple[int, ...]
    dims: tuple[str, ...]  # layout dims: "x", "y" or "-"
    tile: tuple[int, ...]
    region: tuple[int, int, int, int]  # x0, y0, w, h
    mask: bool = False
    half: bool = False  # f16 elements: memcpy moves them as 16-bit data (MEMCPY_16BIT)

    @property
    def elems(self) -> int:
        return max(1, math.prod(self.tile))

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "shape": list(self.shape), "dims": list(self.dims),
                "tile": list(self.tile), "region": list(self.region), "mask": self.mask,
                "half": self.half}

    @staticmethod
    def from_json(d: dict[str, Any]) -> IoSpec:
        return IoSpec(d["name"], tuple(d["shape"]), tuple(d["dims"]), tuple(d["tile"]),
                      tuple(d["region"]), bool(d.get("mask", False)),  # type: ignore[arg-type]
                      bool(d.get("half", False)))


def io_spec(name: str, t: wse.TensorTypeAttr, grid: wse.Grid) -> IoSpec:
    lay = t.layout
    region = []
    for a in wse.AXES:
        st = lay.state(a)
        if st == "dim":
            region.append((0, grid.size(a)))
        elif st == "*":
            region.append((0, 1))
        else:
            region.append((int(st), 1))
    (x0, w), (y0, h) = region
    return IoSpec(name, t.dims, lay.dims, t.tile(grid), (x0, y0, w, h), t.is_mask, t.is_half)


@dataclass
class CslProgram:
    """The lowered program: the csl module plus what the host side needs."""

    module: ModuleOp
    grid: wse.Grid
    arch: str
    inputs: list[IoSpec]
    outputs: list[IoSpec]
    memory: MemoryPlan
    colors: dict[str, list[int]]
    task_id: int
    launch: str = LAUNCH
    constants: dict[str, Any] = field(default_factory=dict)  # host-provided inputs by name

    @property
    def resident(self) -> dict[int, int]:
        """{input: output} sharing one buffer: state updated in place that stays in PE
        memory between launches (``MemoryPlan.resident``)."""
        return self.memory.resident

    @property
    def memory_bytes(self) -> int:
        return self.memory.bytes

    def host_json(self) -> dict[str, Any]:
        """The host interface (``HOST_ATTR`` of a converted module; no constants)."""
        return {"grid": [self.grid.width, self.grid.height], "arch": self.arch,
                "inputs": [io.to_json() for io in self.inputs],
                "outputs": [io.to_json() for io in self.outputs],
                "buffers": list(self.memory.sizes), "colors": self.colors,
                "resident": [[i, k] for i, k in sorted(self.memory.resident.items())],
                "task_id": self.task_id, "launch": self.launch}

    @staticmethod
    def of_module(module: ModuleOp) -> CslProgram:
        """The program ``convert-wse-to-csl`` left in ``module`` (its csl modules and
        the ``HOST_ATTR`` module attribute)."""
        attr = module.attributes.get(HOST_ATTR)
        if not isinstance(attr, StringAttr):
            raise CslLoweringError(f"csl backend: the module has no {HOST_ATTR} attribute; "
                                   "run convert-wse-to-csl")
        d = json.loads(attr.data)
        grid = wse.Grid(*d["grid"])
        memory = MemoryPlan(grid, list(d["buffers"]),
                            resident={int(i): int(k) for i, k in d.get("resident", [])})
        return CslProgram(module, grid, d["arch"], [IoSpec.from_json(x) for x in d["inputs"]],
                          [IoSpec.from_json(x) for x in d["outputs"]], memory,
                          dict(d["colors"]), int(d["task_id"]), d["launch"])


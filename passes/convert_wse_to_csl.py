"""``convert-wse-to-csl``: the ``wse.program`` becomes CSL, in place.

The conversion body is ``lowering/to_csl.py: convert_to_csl``: the module then
holds the layout and the PE-program ``csl.module`` ops side by side (the form
xDSL's ``lower-csl-wrapper`` produces), and its ``csl.host`` attribute the host
interface (memcpy symbols and their placement, colors, buffers), which
``CslProgram.of_module`` reads back for the emitter and the runtime.

``csl_pipeline(...)`` spells the whole pyflame -> CSL pipeline;
``lower_module_to_csl`` runs it and returns what the emitter and the runtime use.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass

from ..lowering.to_csl import CslProgram, convert_to_csl
from ..lowering.to_wse import INPUTS_ATTR, WseHost
from .pipeline import run_pipeline


@dataclass(frozen=True)
class ConvertWseToCsl(ModulePass):
    """Lower the wse.program to a layout and a PE-program csl.module (in place)."""

    name = "convert-wse-to-csl"

    arch: str = ""
    """wse2 | wse3; empty: the module's ``wse.arch`` attribute, else wse2."""

    overlap: bool = True
    """SUMMA's transfers overlap the multiply (a chain of tasks); false: synchronous."""

    sdk: int = 2
    """The SDK major version whose idioms the printed CSL uses (1 or 2)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        arch = self.arch
        if not arch:
            a = op.attributes.get("wse.arch")
            arch = a.data if isinstance(a, StringAttr) else "wse2"
        convert_to_csl(op, arch, overlap=self.overlap, sdk=self.sdk)


def csl_pipeline(grid: str = "", arch: str = "", max_pes: int = 1024, matmul: str = "auto",
                 from_wse: bool = False, sdk: int = 2, budget: int | None = None,
                 recompute: bool = True) -> str:
    """The pipeline lowering a pyflame module (``from_wse``: a wse module) to CSL.
    ``grid``: ``WIDTHxHEIGHT``, ``auto``, or empty for the module's ``wse.grid``;
    ``arch`` empty: the module's ``wse.arch``, else wse2."""
    csl_opts = ([f"arch={arch}"] if arch else []) + ([f"sdk={sdk}"] if sdk != 2 else [])
    to_csl = "convert-wse-to-csl" + (f"{{{' '.join(csl_opts)}}}" if csl_opts else "")
    if from_wse:
        return to_csl
    opts = [f'grid="{grid}"'] if grid else []
    if arch:
        opts.append(f"arch={arch}")
    if max_pes != 1024:
        opts.append(f"max-pes={max_pes}")
    if matmul != "auto":
        opts.append(f"matmul={matmul}")
    if budget is not None:
        opts.append(f"budget={budget}")
    if not recompute:
        opts.append("recompute=false")
    to_wse = "convert-pyflame-to-wse" + (f"{{{' '.join(opts)}}}" if opts else "")
    return f"legalize-for-wse,{to_wse},{to_csl}"


def lower_module_to_csl(module: ModuleOp, spec: str) -> tuple[CslProgram, WseHost | None]:
    """Run ``spec`` (a ``csl_pipeline``) on ``module`` in place; the program and, for a
    pyflame module, its host interface (constant inputs also filled in the program)."""
    run_pipeline(module, spec, Context())
    prog = CslProgram.of_module(module)
    host = WseHost.of_module(module) if INPUTS_ATTR in module.attributes else None
    if host is not None:
        for i, (kind, data) in enumerate(host.inputs):
            if kind == "const":
                prog.constants[f"in_{i}"] = data
    return prog, host

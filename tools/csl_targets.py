"""``pyflame-opt -t csl | csl-ir | wse``: print a module as CSL, csl IR or wse IR.

A pyflame or wse module is first lowered with the registered conversion
passes (``convert_wse_to_csl.csl_pipeline``: grid and arch from the module's
``wse.grid`` / ``wse.arch`` attributes); the target prints the result. The
Conversion tests run the same passes with ``-p`` and print the IR.
"""

from __future__ import annotations

from typing import IO

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from ..dialects import wse
from ..lowering.csl_printer import print_csl
from ..lowering.emit_csl import bare_ir_text, emit
from ..passes.convert_wse_to_csl import csl_pipeline, lower_module_to_csl
from ..passes.pipeline import run_pipeline


def _kind(module: ModuleOp) -> str | None:
    """"pyflame" (a func.func), "wse" (a wse.program) or None (csl, printed as is)."""
    ops = list(module.body.ops)
    if any(isinstance(op, func.FuncOp) for op in ops):
        return "pyflame"
    if any(isinstance(op, wse.ProgramOp) for op in ops):
        return "wse"
    return None


def target_csl(module: ModuleOp, stream: IO[str], output_dir: str | None = None) -> None:
    """CSL text of a csl, wse or pyflame module; with ``--output-dir`` also the whole
    SDK project (``emit``)."""
    kind = _kind(module)
    if kind is None:
        if output_dir:
            raise ValueError("--output-dir needs a pyflame or wse module (a csl module has "
                             "no host interface to write run.py for)")
        print_csl(module, stream)
        return
    prog, _ = lower_module_to_csl(module, csl_pipeline(from_wse=kind == "wse"))
    if output_dir:
        emit(prog, output_dir)
    print_csl(prog.module, stream)


def target_csl_ir(module: ModuleOp, stream: IO[str]) -> None:
    """The lowered ``csl`` IR (what the simulator runs)."""
    kind = _kind(module)
    if kind is not None:
        lower_module_to_csl(module, csl_pipeline(from_wse=kind == "wse"))
    stream.write(bare_ir_text(module) + "\n")


def target_wse(module: ModuleOp, stream: IO[str]) -> None:
    """The ``wse.program`` of a pyflame module (``wse.grid`` module attribute, e.g.
    ``"4x4"``, else automatic)."""
    run_pipeline(module, "legalize-for-wse,convert-pyflame-to-wse", Context())
    stream.write(bare_ir_text(module) + "\n")

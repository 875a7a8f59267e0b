"""A user module's instance: its top-level code run for one import on a PE or
the layout (`modules.py` resolves and describes modules; running one needs the
interpreter's handlers, which themselves use `modules.py`)."""

from __future__ import annotations

from xdsl.dialects import csl

from .errors import UnsupportedError
from .impl import plan_module
from .interpreter import Context, run_block, run_to_end
from .modules import ModuleInstance


def instantiate(ctx: Context, op: csl.CslModuleOp, file: str, params: dict | None,
                counts: dict[str, int]) -> ModuleInstance:
    """Run a user module's top-level code for one import on `ctx` (a PE or the layout)."""
    counts[file] = n = counts.get(file, 0) + 1
    if n > 64:
        raise UnsupportedError(f"@import_module(\"{file}.csl\") instantiated {n} times on one "
                               "PE: modules importing each other in a cycle?")
    inst = ModuleInstance(ctx, op, file, params, n)
    run_to_end(run_block(ctx, inst.globals, plan_module(op)), f"{inst.where()}'s module code")
    inst.check_fields()
    return inst

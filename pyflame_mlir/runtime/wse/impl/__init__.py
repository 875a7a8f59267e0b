"""The WSE interpreter's handlers, one module per dialect, merged into one registry.

`HANDLERS` is the only place an op is looked up; `plan_module` compiles a
`csl.module` with it once, before the module runs (see `interpreter.py`).
"""

from __future__ import annotations

from xdsl.dialects import csl

from ..interpreter import BlockPlan, Planner
from .arith import ARITH
from .csl import CSL
from .csl_dsd import CSL_DSD
from .csl_ext import CSL_EXT
from .memref import MEMREF
from .scf import SCF

HANDLERS = Planner(ARITH, SCF, MEMREF, CSL, CSL_DSD, CSL_EXT)


def plan_module(module: csl.CslModuleOp) -> BlockPlan:
    """The plan of a module's body (cached per module op); raises UnsupportedError for
    the first op without a handler."""
    return HANDLERS.module(module)


__all__ = ["HANDLERS", "plan_module"]

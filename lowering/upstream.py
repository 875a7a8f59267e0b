"""Between xDSL and upstream MLIR (the Python bindings of extra ``[mlir]``),
through generic text.

- ``mlir_context()``: an MLIR context with every upstream dialect and the
  ``pyflame`` dialect loaded from its IRDL definition
  (``dialects/pyflame_irdl.py``), so MLIR parses and verifies our ops;
- ``to_mlir(module)`` / ``from_mlir(mod, ctx)``: module objects across the
  two, by printing one's generic form and parsing it in the other;
- ``run_mlir_pipeline(text, pipeline)``: an upstream pass pipeline over a
  module (``pyflame-opt --mlir-pass-pipeline``).

``mlir`` is imported lazily: this module imports without the extra.
"""

from __future__ import annotations

from io import StringIO
from typing import TYPE_CHECKING, Any

from ..dialects.pyflame_irdl import irdl_text

if TYPE_CHECKING:
    from xdsl.context import Context
    from xdsl.dialects.builtin import ModuleOp


class UpstreamError(ValueError):
    """MLIR rejected a module or a pipeline; the message is MLIR's diagnostic."""


def mlir_context() -> Any:
    """A fresh ``mlir.ir.Context`` that knows ``pyflame`` (via IRDL)."""
    from mlir import ir
    from mlir.dialects import irdl

    ctx = ir.Context()
    with ctx, ir.Location.unknown():
        irdl.load_dialects(ir.Module.parse(irdl_text()))
    return ctx


def generic_text(module: ModuleOp) -> str:
    from xdsl.printer import Printer

    out = StringIO()
    Printer(stream=out, print_generic_format=True).print_op(module)
    return out.getvalue()


def parse_mlir(text: str, ctx: Any) -> Any:
    """Parse (and verify) ``text`` in the MLIR context ``ctx``."""
    from mlir import ir

    with ctx, ir.Location.unknown():
        try:
            return ir.Module.parse(text)
        except ir.MLIRError as e:
            raise UpstreamError(f"upstream MLIR rejected the module: {e}") from None


def to_mlir(module: ModuleOp, ctx: Any | None = None) -> Any:
    """The xDSL ``module`` as an ``mlir.ir.Module`` (verified by MLIR)."""
    return parse_mlir(generic_text(module), ctx or mlir_context())


def mlir_generic_text(mod: Any) -> str:
    return mod.operation.get_asm(print_generic_op_form=True)


def from_mlir(mod: Any, ctx: Context) -> ModuleOp:
    """An ``mlir.ir.Module`` as an xDSL module (parsed in ``ctx``)."""
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.parser import Parser

    parsed = Parser(ctx, mlir_generic_text(mod)).parse_module()
    assert isinstance(parsed, ModuleOp)
    return parsed


def run_mlir_pipeline(text: str, pipeline: str) -> str:
    """Run the upstream ``pipeline`` (``builtin.module(...)`` is added when
    missing) on the module ``text``; returns MLIR's printed result."""
    from mlir import ir, passmanager

    ctx = mlir_context()
    mod = parse_mlir(text, ctx)
    spec = pipeline.strip()
    if not spec.startswith("builtin.module("):
        spec = f"builtin.module({spec})"
    with ctx, ir.Location.unknown():
        try:
            passmanager.PassManager.parse(spec).run(mod.operation)
        except (ir.MLIRError, ValueError) as e:
            raise UpstreamError(f"upstream pipeline {spec!r} failed: {e}") from None
    return str(mod)

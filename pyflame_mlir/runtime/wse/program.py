"""Reading `csl`-dialect programs: parse text, or take a module built in Python."""

from __future__ import annotations

from pathlib import Path

from xdsl.context import Context
from xdsl.dialects import arith, builtin, csl, csl_wrapper, memref, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from pyflame_mlir.dialects.csl_ext import CSL_EXT


def csl_context() -> Context:
    ctx = Context()
    for d in (builtin.Builtin, arith.Arith, scf.Scf, memref.MemRef, csl.CSL,
              csl_wrapper.CSL_WRAPPER, CSL_EXT):  # fmt: skip
        ctx.load_dialect(d)
    return ctx


def parse_program(text: str, name: str = "<program>") -> ModuleOp:
    module = Parser(csl_context(), text, name).parse_module()
    module.verify()
    return module


def load_module(source: str | Path | ModuleOp) -> ModuleOp:
    """A module from a ModuleOp, a path to a .mlir file, or MLIR text."""
    if isinstance(source, ModuleOp):
        return source
    path = Path(source)
    if isinstance(source, Path) or (len(str(source)) < 4096 and path.suffix == ".mlir"):
        return parse_program(path.read_text(), str(path))
    return parse_program(str(source))

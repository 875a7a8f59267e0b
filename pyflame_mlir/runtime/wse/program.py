"""Reading `csl`-dialect programs: parse text, or take a module built in Python."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects import arith, builtin, csl, csl_wrapper, memref, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from pyflame_mlir.dialects.csl_ext import CSL_EXT

from .modules import resolve_file_imports


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


def load_module(source: str | Path | ModuleOp,
                import_paths: Sequence[str | Path] = ()) -> ModuleOp:
    """A module from a ModuleOp, a path to a .mlir file, or MLIR text, with the modules
    of the files it imports (`@import_module("lib.csl")`: found relative to the
    importing file, then under each of `import_paths`; `modules.py`) merged in."""
    path: Path | None = None
    if isinstance(source, ModuleOp):
        module = source
    else:
        p = Path(source)
        if isinstance(source, Path) or (len(str(source)) < 4096 and p.suffix == ".mlir"):
            path, module = p, parse_program(p.read_text(), str(p))
        else:
            module = parse_program(str(source))
    resolve_file_imports(module, path, import_paths, parse_program)
    return module

"""A program's own CSL modules: `@import_module("file.csl", .{ ... })`.

Resolution is `cslc`'s: a file name is taken relative to the importing file (an
absolute one as it is), then under each `--import-path` directory in order; a
name in angle brackets is an SDK library (`libs.py`). Our sources are
csl-dialect IR, so the file read for `"dir/pe.csl"` is `dir/pe.mlir` beside
where `dir/pe.csl` would be, holding that file's one `csl.module`. Every
`csl.module` of one `.mlir` input stands for a CSL file in that input's
directory (`sym_name` + ".csl"), so a program module may also import another
module of the same input by its file name.

`resolve_file_imports` (load time) merges each imported file's module into the
program as a `csl.module` named by its path relative to the main input's
directory (`"benchmark-libs/allreduce/pe"`: where `compile` prints its CSL) and
marks the import op with that name (`RESOLVED_ATTR`), so the merged program
(`program.mlir` in the compile directory) is complete by itself.

At run time each execution of an import makes an independent instance (CSL:
"importing the same file twice results in two independent copies"): its
params come from the import's struct, a param that gets no value and has no
default is an error naming it, and a struct field naming no param is a
warning (as `cslc` warns). An instance's functions and tasks live in its
PE's (or the layout's) tables under a qualified name `<file>::<name>`;
code of the instance finds its instance in its environment (`SCOPE`).
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Callable, Generator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xdsl.dialects import csl
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    FunctionType,
    IndexType,
    IntegerType,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Operation, SSAValue

from .errors import ProgramError
from .values import convert, int_info

if TYPE_CHECKING:
    from .interpreter import Context

# the env key under which a module instance's code finds its instance
SCOPE = "<module instance>"
# on a csl.import_module of a user file: the csl.module (sym_name) it resolved to
RESOLVED_ATTR = "csl_ext.resolved"


class ImportParamWarning(UserWarning):
    """An `@import_module` struct field names no param of the module (cslc warns)."""


def is_library(name: str) -> bool:
    return name.startswith("<") and name.endswith(">")


def _stem(name: str) -> str:
    return name[:-4] if name.endswith(".csl") else name


def relative_key(importer: str, name: str) -> str:
    """The module an import names, relative to its importer's module name:
    `"kernel"` importing `"lib/pe.csl"` -> `"lib/pe"`; `"lib/pe"` importing
    `"../util.csl"` -> `"util"`."""
    if os.path.isabs(name):
        return os.path.normpath(_stem(name))
    return os.path.normpath(os.path.join(os.path.dirname(importer), _stem(name)))


def import_target(op: csl.ImportModuleConstOp) -> str:
    """The `csl.module` name a user import refers to (its resolution, else the
    module beside its importer)."""
    attr = op.attributes.get(RESOLVED_ATTR)
    if isinstance(attr, StringAttr):
        return attr.data
    importer = op.parent_op()
    assert isinstance(importer, csl.CslModuleOp)
    return relative_key(importer.sym_name.data, op.module.data)


def user_imports(module: csl.CslModuleOp) -> list[csl.ImportModuleConstOp]:
    return [op for op in module.body.block.ops
            if isinstance(op, csl.ImportModuleConstOp) and not is_library(op.module.data)]


def library_modules(module: ModuleOp) -> set[str]:
    """The names of the csl.modules some module of `module` imports."""
    out: set[str] = set()
    for m in module.body.ops:
        if isinstance(m, csl.CslModuleOp):
            out.update(import_target(op) for op in user_imports(m))
    return out


def find_module(top: Operation | None, name: str) -> csl.CslModuleOp | None:
    if not isinstance(top, ModuleOp):
        return None
    for m in top.body.ops:
        if isinstance(m, csl.CslModuleOp) and m.sym_name.data == name:
            return m
    return None


# --- load time: files -----------------------------------------------------------------------


def resolve_file_imports(module: ModuleOp, source: Path | None,
                         import_paths: Sequence[str | Path],
                         parse_program: Callable[[str, str], ModuleOp]) -> None:
    """Merge into `module` the module of every file its modules import (recursively),
    found as `cslc` finds them (each read with `parse_program(text, path)`: the
    program reader's, which imports this module); mark each import with what it
    resolved to."""

    root = source.resolve().parent if source is not None else None
    # module name -> the directory its CSL file is in (None: not read from a file)
    dirs: dict[str, Path | None] = {}
    files: dict[str, Path] = {}  # merged module name -> the .mlir it came from
    work: list[csl.CslModuleOp] = []
    for m in module.body.ops:
        if isinstance(m, csl.CslModuleOp):
            name = m.sym_name.data
            dirs[name] = (root / os.path.dirname(name)) if root is not None else None
            work.append(m)
    while work:
        importer = work.pop()
        iname = importer.sym_name.data
        for op in user_imports(importer):
            if RESOLVED_ATTR in op.attributes:
                continue
            name = op.module.data
            key = relative_key(iname, name)
            if key != iname and find_module(module, key) is not None:
                # a module of the program (its own, or a file merged already)
                op.attributes[RESOLVED_ATTR] = StringAttr(key)
                continue
            here = dirs.get(iname)
            where = f'@import_module("{name}") in {iname}.csl'
            if here is None and not os.path.isabs(name):
                raise ProgramError(
                    f"{where}: no csl.module '{key}' in the program, and the program was not "
                    "read from a file, so there is no directory to look for the file in")
            tried = [Path(name)] if os.path.isabs(name) else \
                [here / name, *(Path(p) / name for p in import_paths)]  # type: ignore[operator]
            found = None
            for c in tried:
                ir = c.with_suffix(".mlir")
                if ir.is_file():
                    found = ir
                    break
            if found is None:
                csl_only = [str(c) for c in tried if c.is_file()]
                hint = (f" ({', '.join(csl_only)} exists, but the simulator reads a module's "
                        "csl-dialect IR: the .mlir beside it)") if csl_only else ""
                raise ProgramError(
                    f"{where}: file not found; looked for "
                    f"{', '.join(str(c.with_suffix('.mlir')) for c in tried)}{hint}")
            found = found.resolve()
            if key in files and files[key] != found:
                raise ProgramError(f"{where}: resolves to {found}, but module '{key}' is "
                                   f"already {files[key]}")
            parsed = parse_program(found.read_text(), str(found))
            mods = [m for m in parsed.body.ops if isinstance(m, csl.CslModuleOp)]
            if len(mods) != 1 or len(list(parsed.body.ops)) != 1:
                raise ProgramError(f"{where}: {found} must hold exactly one csl.module (one "
                                   f"CSL file), not {len(list(parsed.body.ops))} top-level ops")
            lib = mods[0]
            lib.detach()
            lib.properties["sym_name"] = StringAttr(key)
            module.body.block.add_op(lib)
            files[key], dirs[key] = found, found.parent
            op.attributes[RESOLVED_ATTR] = StringAttr(key)
            work.append(lib)


# --- run time: instances ---------------------------------------------------------------------


class FnRef:
    """A function as a value (a `fn` param's argument): one of the PE's (or layout's)
    functions by its qualified name, or a library module's (`sys_mod.unblock_cmd_stream`)."""

    __slots__ = ("name", "lib")

    def __init__(self, name: str, lib: Any = None):
        self.name, self.lib = name, lib

    def invoke(self, ctx: Context, args: list) -> Generator[Any, None, Any]:
        if self.lib is not None:
            return self.lib.call(self.name, args)
        return (yield from ctx.call(self.name, args))

    def __repr__(self) -> str:
        return f"fn {self.name}" if self.lib is None else f"fn {self.lib.name}.{self.name}"


def qualify(env: dict, name: str) -> str:
    """A function's name in its PE's tables, seen from the module whose code runs."""
    scope = env.get(SCOPE)
    return name if scope is None else scope.prefix + name


def call_in_scope(ctx: Context, env: dict, callee: str, args: list
                  ) -> Generator[Any, None, Any]:
    """`callee(args)` from the code of the module `env` belongs to: one of its functions,
    or a `fn` param it was given."""
    scope: ModuleInstance | None = env.get(SCOPE)
    if scope is not None:
        fn = scope.values.get(callee)
        if isinstance(fn, FnRef):
            return (yield from fn.invoke(ctx, args))
        callee = scope.prefix + callee
    return (yield from ctx.call(callee, args))


class ModuleInstance:
    """One `@import_module` of a user file on a PE (or in the layout)."""

    def __init__(self, ctx: Context, op: csl.CslModuleOp, file: str, params: dict | None,
                 n: int):
        self.ctx, self.op, self.file = ctx, op, file
        self.params = dict(params or {})
        self.prefix = f"{file}::" if n == 1 else f"{file}#{n}::"
        self.name = file
        self.values: dict[str, Any] = {}  # params by name
        self.globals: dict[Any, Any] = {SCOPE: self}
        self._named: dict[str, SSAValue] | None = None

    def param(self, name: str, type, default):
        if name in self.params:
            v = self.params[name]
            if isinstance(type, FunctionType) and not isinstance(v, FnRef):
                raise ProgramError(f"{self.where()}: param '{name}' is a function; the "
                                   f"import's struct gives {v} ({v.__class__.__name__})")
            self._check_fits(name, v, type)
            v = convert(v, type)
        elif default is not None:
            v = default
        else:
            raise ProgramError(
                f"{self.where()}: param '{name}' gets no value from the @import_module struct "
                f"(its fields: {sorted(self.params)}) and has no default")
        self.values[name] = v
        return v

    def _check_fits(self, name: str, v: Any, type: Any) -> None:
        """cslc refuses a struct field its param's type cannot hold (an integer
        out of the type's range, a fraction for an integer type, a finite number
        a float type overflows): the value is never wrapped or truncated."""
        if isinstance(type, IntegerType | IndexType):
            if hasattr(v, "__index__"):
                n: int | None = int(v)
            else:
                try:
                    f = float(v)
                except (TypeError, ValueError):
                    return
                n = int(f) if math.isfinite(f) and f == int(f) else None
            bits, signed = int_info(type)
            lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
            if n is None or not lo <= n <= hi:
                raise ProgramError(f"{self.where()}: param '{name}' ({type}) cannot hold the "
                                   f"import's struct field value {v!r} (an integer in "
                                   f"{lo}..{hi})")
        elif isinstance(type, Float32Type | Float16Type):
            try:
                f = float(v)
            except (TypeError, ValueError):
                return
            if math.isfinite(f) and not math.isfinite(float(convert(v, type))):
                raise ProgramError(f"{self.where()}: param '{name}' ({type}) cannot hold the "
                                   f"import's struct field value {v!r} (it overflows)")

    def where(self) -> str:
        return f"{getattr(self.ctx, 'where', 'the layout')}: @import_module(\"{self.file}.csl\")"

    def check_fields(self) -> None:
        unknown = sorted(set(self.params) - set(self.values))
        if unknown:
            warnings.warn(f"{self.where()}: struct field(s) {unknown} name no param of the "
                          f"module (its params: {sorted(self.values)})", ImportParamWarning,
                          stacklevel=2)

    def _names(self) -> dict[str, SSAValue]:
        if self._named is None:
            self._named = {r.name_hint: r for op in self.op.body.block.ops
                           for r in op.results if r.name_hint}
        return self._named

    def access(self, field: str):
        if field in self.values:
            return self.values[field]
        if self.prefix + field in self.ctx.functions:
            return FnRef(self.prefix + field)
        v = self._names().get(field)
        if v is not None and v in self.globals:
            return self.globals[v]
        raise ProgramError(f"{self.where()}: the module has no member '{field}'")

    def function(self, field: str) -> FnRef:
        if self.prefix + field in self.ctx.functions:
            return FnRef(self.prefix + field)
        fn = self.values.get(field)
        if isinstance(fn, FnRef):
            return fn
        raise ProgramError(f"{self.where()}: the module has no function '{field}'")

    def call(self, field: str, args: list) -> Generator[Any, None, Any]:
        return self.function(field).invoke(self.ctx, args)

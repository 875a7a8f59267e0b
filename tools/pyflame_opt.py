"""``pyflame-opt``: run pass pipelines on ``.mlir`` text, like ``mlir-opt``.

Built on xDSL's ``xDSLOptMain`` with our dialects, passes and targets
registered. Bad input never shows a Python traceback: parse and verifier
errors are printed as ``file:line:col: error: message`` with the offending
line, and the exit code is 1. ``--verify-diagnostics`` follows MLIR: every
``// expected-error {{...}}`` (with ``@+N``, ``@-N``, ``@above``, ``@below``)
must be produced on its line, and nothing else may be.
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import version as _version
from io import StringIO
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr, UnknownLoc
from xdsl.ir import Operation
from xdsl.utils.exceptions import (
    ArgSpecParseError,
    DiagnosticException,
    ParseError,
    PassFailedException,
)
from xdsl.xdsl_opt_main import xDSLOptMain

from ..dialects.bounded_parser import (
    BoundedParser,
    decode_mlir,
    file_location,
    inline_location_aliases,
    prescan_error,
)
from ..dialects.csl_ext import CSL_EXT
from ..dialects.pyflame import Pyflame
from ..dialects.sharding_ir import SHARDING
from ..dialects.stablehlo import CHLO, STABLEHLO
from ..dialects.upstream_checks import upstream_error
from ..dialects.wse import WSE
from ..lowering.to_linalg import LinalgLoweringError
from ..lowering.to_max import MaxLoweringError, print_max
from ..lowering.to_max_sharded import print_max_sharded
from ..passes import PASSES, PIPELINES
from ..passes.convert_stablehlo import StablehloError
from ..passes.pipeline import run_pipeline
from .csl_targets import target_csl, target_csl_ir, target_wse


@dataclass
class Diag:
    line: int  # 1-based, in the whole file
    col: int
    message: str
    file: str | None = None  # another file the op's own location names (as mlir-opt reports)
    kind: str = "error"  # error, warning, remark, note (expected ones: any of them)
    pattern: re.Pattern[str] | None = None  # an expected-*-re message
    written: int = 0  # an expected one: the line of its comment


class UserError(Exception):
    """Bad input or options: printed without a traceback, exit code 1."""


class LocatingParser(BoundedParser):
    """Records where each op starts, so verifier errors can point at it."""

    def __init__(self, *args, line_offset: int = 0, **kwargs):
        super().__init__(*args, **kwargs)
        self.line_offset = line_offset

    def parse_operation(self) -> Operation:
        start = self._current_token.span
        op = super().parse_operation()
        if isinstance(op.location, UnknownLoc) and not self.wrote_location():
            loc = start.get_location()
            op.location = FileLineColLoc(StringAttr(loc.file),
                                         IntAttr(loc.line + self.line_offset), IntAttr(loc.col))
        return op


def _op_diag(op: Operation, message: str) -> Diag:
    """A diagnostic at ``op``: where the parser found it, or the place its
    own location names (``loc("model.py":10:2)``), as mlir-opt reports it."""
    loc = file_location(op.location)  # (inside a name or call site, as JAX writes them)
    if loc is not None:
        return Diag(loc.line.data, loc.column.data, message, loc.filename.data)
    return Diag(0, 0, message)


def verify_module(module: ModuleOp) -> list[Diag]:
    """Verify op by op (innermost first) and collect located diagnostics."""
    diags: list[Diag] = []
    for op in module.walk(reverse=False, region_first=True):
        try:
            op.verify(verify_nested_ops=False)
            if (upstream := upstream_error(op)) is not None:
                diags.append(_op_diag(op, upstream))
                break
        except DiagnosticException as e:
            cause = e.__cause__ or e
            msg = str(cause).removeprefix("Operation does not verify: ")
            again = redefined_symbol(op, msg)
            diags.append(_op_diag(again, f"redefinition of symbol named "
                                  f"'{again.sym_name.data}'") if again is not None  # type: ignore[attr-defined]
                         else _op_diag(op, f"'{op.name}' op {msg}"))
            break  # like mlir-opt: the first failure
        except Exception as e:  # noqa: BLE001 - structural errors from xDSL
            diags.append(_op_diag(op, f"'{op.name}' op {e}"))
            break
    return diags


def redefined_symbol(op: Operation, message: str) -> Operation | None:
    """The second op of ``op``'s body defining the symbol its verifier says is
    redefined (``Redefinition of symbol "f"``), where mlir-opt reports it."""
    m = re.match(r'Redefinition of symbol "(.*)"', message)
    if m is None or not op.regions:
        return None
    seen = [o for o in op.regions[0].ops if getattr(getattr(o, "sym_name", None), "data",
                                                     None) == m.group(1)]
    return seen[1] if len(seen) > 1 else None


def _parse_error_diag(e: ParseError, line_offset: int) -> Diag:
    loc = e.span.get_location()
    return Diag(loc.line + line_offset, loc.col, e.msg)


_SHOWN = 160  # characters of the offending line shown under a diagnostic

# MLIR's: the message runs to the last ``}}`` of the line; ``-re`` takes ``{{regex}}`` parts
_EXPECTED = re.compile(r"expected-(error|warning|remark|note)(-re)?\s*"
                       r"(@[+-]?\d+|@above|@below|@unknown)?\s*\{\{(.*)\}\}\s*$")


def _expected_pattern(message: str) -> re.Pattern[str]:
    """An ``expected-error-re`` message: literal text with ``{{regex}}`` parts."""
    out, rest = [], message
    while "{{" in rest:
        lit, _, rest = rest.partition("{{")
        rx, found, rest = rest.partition("}}")
        if not found:
            raise UserError(f"error: expected-*-re: unclosed '{{{{' in {message!r}")
        out += [re.escape(lit), f"(?:{rx})"]
    out.append(re.escape(rest))
    try:
        return re.compile("".join(out))
    except re.error as e:
        raise UserError(f"error: expected-*-re: invalid regex in {message!r}: {e}") from None


def expected_diagnostics(text: str, line_offset: int) -> list[Diag]:
    """Every ``// expected-{error,warning,remark,note}[-re][@+N|@-N|@above|@below|
    @unknown] {{message}}`` of ``text``, at the line it names (0 for @unknown)
    and the column of its ``expected-``, as mlir-opt reports one not produced."""
    out = []
    for i, line in enumerate(text.splitlines(), start=1):
        m = _EXPECTED.search(line)
        if m is None:
            continue
        kind, regex, where, message = m.groups()
        target = i
        if where == "@above":
            target = i - 1
        elif where == "@below":
            target = i + 1
        elif where == "@unknown":
            target = -line_offset
        elif where:
            target = i + int(where[1:])
        out.append(Diag(target + line_offset, m.start() + 1, message, kind=kind,
                        pattern=_expected_pattern(message) if regex else None,
                        written=i + line_offset))
    return out


class PyflameOptMain(xDSLOptMain):
    version_format = (f"pyflame-opt (pyflame-mlir {_version('pyflame-mlir')}), built on xDSL "
                      "{xdsl_version}")

    def __init__(self, args: Sequence[str] | None = None):
        self.diagnostics_ok = True
        super().__init__(description="pyflame-opt: the pyflame MLIR optimizer driver",
                         args=args)

    # ---- registration ----
    def register_all_dialects(self) -> None:
        super().register_all_dialects()
        for dialect in (Pyflame, CSL_EXT, WSE, SHARDING, STABLEHLO, CHLO):
            self.ctx.register_dialect(dialect.name, lambda d=dialect: d)

    def register_all_passes(self) -> None:
        super().register_all_passes()
        for name, factory in PASSES.items():
            self.register_pass(name, factory)

    def register_all_targets(self) -> None:
        super().register_all_targets()
        for name, emit in _targets().items():
            self.available_targets[name] = emit

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument("--list-passes", action="store_true",
                                help="list the registered passes and exit")
        arg_parser.add_argument("--pass-statistics", action="store_true",
                                help="print per-pass statistics to stderr")
        _targets.output_dir = None  # type: ignore[attr-defined]
        arg_parser.add_argument(
            "--output-dir", metavar="DIR",
            type=lambda d: setattr(_targets, "output_dir", d) or d,
            help="with -t csl: also write the SDK project (layout.csl, pe_program.csl, run.py, "
                 "commands.sh, README.md) to DIR")
        # mlir-opt's spellings: a nested textual pipeline, its printing flags
        arg_parser.add_argument(
            "--pass-pipeline", metavar="PIPELINE", default=None,
            help="the pipeline as mlir-opt takes it, e.g. "
                 "'builtin.module(func.func(cse),canonicalize)' (-p takes this form too)")
        arg_parser.add_argument("--mlir-print-op-generic", dest="print_op_generic",
                                action="store_true", help="the same as --print-op-generic")
        arg_parser.add_argument("--mlir-print-debuginfo", dest="print_debuginfo",
                                action="store_true", help="the same as --print-debuginfo")
        # issue #18 (mlir branch): hand the module to upstream MLIR after the xDSL passes
        arg_parser.add_argument(
            "--mlir-pass-pipeline", metavar="PIPELINE", default=None,
            help="after the -p passes, run this upstream MLIR pipeline (extra [mlir]) on the "
                 "module, e.g. 'linalg-fuse-elementwise-ops,canonicalize', and print MLIR's "
                 "output")

    def register_all_frontends(self) -> None:
        super().register_all_frontends()

        def parse_mlir(io: IO[bytes], line_offset: int = 0) -> ModuleOp:
            text = io.read().decode()
            return LocatingParser(self.ctx, text, self.get_input_name(),
                                  line_offset=line_offset).parse_module(
                not self.args.no_implicit_module)

        self.available_frontends["mlir"] = parse_mlir  # type: ignore[assignment]

    def setup_pipeline(self) -> None:
        if getattr(self.args, "list_passes", False):
            return
        if self.args.input_file == "-":  # mlir-opt's name for stdin
            self.args.input_file = None
        if self.args.output_file == "-":
            self.args.output_file = None
        if self.args.pass_pipeline is not None:
            if self.args.passes:
                raise UserError("pyflame-opt: error: --pass-pipeline cannot be used with -p "
                                "or individual pass options")
            self.args.passes = self.args.pass_pipeline
        # mlir-opt's nested form: builtin.module(func.func(cse),canonicalize)
        passes = flat_pipeline(self.args.passes)
        # a named pipeline (-p default, portable, fast-math) stands for its passes
        self.args.passes = ",".join(PIPELINES.get(p, p) for p in _split_top(passes))
        try:
            super().setup_pipeline()
        except (Exception, ArgSpecParseError) as e:  # unknown pass or bad options
            raise UserError(f"pyflame-opt: error: {str(e).strip()}") from None
        self._wrap_statistics()

    def _wrap_statistics(self) -> None:
        """--pass-statistics / --time-passes: per pass, ops before and after and
        the pass's own counters (passes/common.py records them)."""
        if not (self.args.pass_statistics or self.args.time_passes):
            return
        from ..passes.common import PipelineStatistics, collecting, run_pass

        passes = self.pipeline.passes
        stats = PipelineStatistics()
        self.pass_stats = stats

        def run(ctx, module) -> None:
            with collecting(stats):
                for p in passes:
                    run_pass(p, ctx, module)
                    if not self.args.disable_verify:
                        module.verify()

        self.apply_passes = lambda prog: run(self.ctx, prog)  # type: ignore[method-assign]

    def get_input_name(self) -> str:
        return self.args.input_file or "<stdin>"  # as mlir-opt names it

    def get_input_stream(self) -> tuple[IO[bytes], str]:
        try:
            f, _ = super().get_input_stream()
        except OSError as e:  # as mlir-opt says it
            raise UserError(f"pyflame-opt: error: cannot open input file "
                            f"'{self.args.input_file}': {e.strerror}") from None
        return f, "mlir"  # any file name: the text is MLIR (mlir-opt ignores the suffix)

    def prepare_input(self) -> tuple[list[tuple[IO[bytes], int]], str]:
        """The input as mlir-opt reads it: UTF-8 (any bytes in comments), split
        at every ``// -----`` with ``--split-input-file`` (a longer rule of dashes
        too, as mlir-opt 22 splits)."""
        from io import BytesIO

        f, ext = self.get_input_stream()
        data = f.read()
        if f is not sys.stdin.buffer:
            f.close()
        text, bad = decode_mlir(data)
        if bad is not None:
            line, col, msg = bad
            raise UserError(f"{self.get_input_name()}:{line}:{col}: error: {msg}")
        chunks = text.split("// -----") if self.args.split_input_file else [text]
        offsets = itertools.accumulate([0, *(c.count("\n") for c in chunks[:-1])])
        return [(BytesIO(c.encode()), off) for c, off in zip(chunks, offsets, strict=True)], ext

    # ---- running ----
    def run(self) -> None:
        if self.args.list_passes:
            for name in sorted(PASSES):
                cls = PASSES[name]()
                doc = (cls.__doc__ or "").strip().splitlines()
                print(f"{name:28s} {doc[0] if doc else ''}")
            print("\nnamed pipelines:")
            for name, spec in PIPELINES.items():
                print(f"{name:28s} {spec or '(no passes)'}")
            return
        chunks, ext = self.prepare_input()
        out = StringIO()
        failed = False
        for i, (chunk, offset) in enumerate(chunks):
            text = chunk.read().decode()
            chunk.close()
            if i > 0:
                out.write("// -----\n")
            try:
                out.write(self._run_chunk(text, offset))
            except UserError as e:  # as mlir-opt: report, go on with the next chunk, fail
                if not self.args.split_input_file:
                    raise
                print(e, file=sys.stderr)
                failed = True
        if self.args.verify_diagnostics and not self.diagnostics_ok:
            raise SystemExit(1)
        if self.args.output_file:
            try:
                with open(self.args.output_file, "w") as f:
                    f.write(out.getvalue())
            except OSError as e:  # as mlir-opt says it
                raise UserError(f"pyflame-opt: error: cannot open output file "
                                f"'{self.args.output_file}': {e.strerror}") from None
        else:
            sys.stdout.write(out.getvalue())
        self._print_statistics()
        if failed:
            raise SystemExit(1)

    def _run_chunk(self, text: str, offset: int) -> str:
        from io import BytesIO

        diags: list[Diag] = []
        module = None
        text = inline_location_aliases(text)  # upstream MLIR's debug-info forms
        refused = prescan_error(text)  # what would overflow xDSL's stack or hang its lexer
        if refused is not None:
            line, col, msg = refused
            diags.append(Diag(line + offset, col, msg))
        else:
            try:
                module = self.available_frontends["mlir"](BytesIO(text.encode()), offset)
            except ParseError as e:
                diags.append(_parse_error_diag(e, offset))
            except RecursionError:
                raise UserError(f"{self.get_input_name()}: error: input nested too deeply to "
                                "parse") from None
            except Exception as e:  # noqa: BLE001 - xDSL's own exceptions on bad input
                if os.environ.get("PYFLAME_DEBUG"):
                    raise
                raise UserError(f"{self.get_input_name()}: error: cannot parse the input: "
                                f"{type(e).__name__}: {e}") from None
        if module is not None:
            diags = verify_module(module)
        if self.args.verify_diagnostics:
            self._check_expected(text, offset, diags)
            return ""
        if diags:
            self._report(diags[0], text, offset)
        if module is None:  # unreachable: a failed parse left a diagnostic, reported above
            raise UserError(f"{self.get_input_name()}: error: the input could not be parsed")
        try:
            self.apply_passes(module)
        except StablehloError as e:  # an op convert-stablehlo-to-pyflame cannot take
            self._report(_op_diag(e.op, f"'{e.op.name}' {e.reason}"), text, offset)
        except (PassFailedException, DiagnosticException) as e:
            raise UserError(f"{self.get_input_name()}: error: pass failed: {e}") from None
        except (MaxLoweringError, LinalgLoweringError) as e:  # an op the pass cannot take
            self._report_at_op(module, e, text, offset)
            raise UserError(f"{self.get_input_name()}: error: pass failed: {e}") from None
        except Exception as e:  # a bug in a pass: say so, keep the traceback on request
            if os.environ.get("PYFLAME_DEBUG"):
                raise
            self._refuse_blocks(module, e, text, offset)
            raise UserError(f"{self.get_input_name()}: internal error in the pass pipeline: "
                            f"{type(e).__name__}: {e} (set PYFLAME_DEBUG=1 for a traceback)"
                            ) from None
        if getattr(self.args, "mlir_pass_pipeline", None):  # issue #18 (mlir branch)
            return _run_upstream(module, self.args.mlir_pass_pipeline, self.get_input_name())
        try:
            return self.output_resulting_program(module)
        except DiagnosticException as e:  # a target that cannot print this module
            raise UserError(f"{self.get_input_name()}: error: {e}") from None
        except ValueError as e:
            self._refuse_blocks(module, e, text, offset)
            raise

    def _report_at_op(self, module: ModuleOp, e: MaxLoweringError | LinalgLoweringError,
                      text: str, offset: int) -> None:
        """A lowering's refusal at the first op of the kind it names."""
        named = re.search(r"cannot lower (\S+)", str(e))
        names = {e.op, f"pyflame.{e.op}"} if e.op else {named.group(1)} if named else set()
        for op in module.walk():
            if op.name in names and isinstance(op.location, FileLineColLoc):
                self._report(_op_diag(op, f"'{op.name}' op {e}"), text, offset)

    def _refuse_blocks(self, module: ModuleOp, e: Exception, text: str, offset: int) -> None:
        """A pass or target that handles one-block functions only met one of
        several blocks (``cf`` branches): a located error, not an internal one."""
        if "single-block" not in str(e):
            return
        for op in module.walk():
            if op.name == "func.func" and len(op.regions[0].blocks) > 1:
                self._report(_op_diag(op, f"'func.func' op @{op.sym_name.data} has "
                                  f"{len(op.regions[0].blocks)} blocks: this pipeline or "
                                  "target handles functions of one block only"), text, offset)

    def _report(self, d: Diag, text: str, offset: int) -> None:
        if d.line == 0:  # an op at loc(unknown): mlir-opt's way to say so
            raise UserError(f"<unknown>:0: error: {d.message}")
        if d.file is not None and d.file != self.get_input_name():
            raise UserError(f"{d.file}:{d.line}:{d.col}: error: {d.message}")
        lines = text.splitlines()
        src = lines[d.line - offset - 1] if 0 < d.line - offset <= len(lines) else ""
        col = max(d.col - 1, 0)
        if len(src) > _SHOWN:  # a very long line: the part around the column
            start = max(min(col - _SHOWN // 2, len(src) - _SHOWN), 0)
            src, col = src[start:start + _SHOWN], col - start
        caret = " " * col + "^"
        raise UserError(f"{self.get_input_name()}:{d.line}:{d.col}: error: {d.message}\n"
                        f"{src}\n{caret}")

    def _check_expected(self, text: str, offset: int, diags: list[Diag]) -> None:
        """mlir-opt's ``--verify-diagnostics``: every expected diagnostic produced on
        its line (of its kind, containing its text), and no other one."""
        expected = expected_diagnostics(text, offset)
        name = self.get_input_name()
        unmatched = list(diags)
        for e in expected:
            hit = next((d for d in unmatched if d.line == e.line and d.kind == e.kind
                        and (e.pattern.search(d.message) if e.pattern is not None
                             else e.message in d.message)
                        and d.file in (None, name)),
                       None)
            if hit is None:
                self.diagnostics_ok = False
                got = "; ".join(f"line {d.line}: {d.kind}: {d.message}" for d in diags)
                print(f"{name}:{e.written}:{e.col}: error: expected {e.kind} \"{e.message}\" was "
                      f"not produced (got: {got or 'none'})", file=sys.stderr)
            else:
                unmatched.remove(hit)
        for d in unmatched:
            self.diagnostics_ok = False
            where = "<unknown>:0" if d.line == 0 else f"{name}:{d.line}:{d.col}"
            print(f"{where}: error: unexpected {d.kind}: {d.message}", file=sys.stderr)

    def _print_statistics(self) -> None:
        stats = getattr(self, "pass_stats", None)
        if stats is None or not stats.records:
            return
        print(stats.format(times=self.args.time_passes), file=sys.stderr)


def _run_upstream(module: ModuleOp, pipeline: str, name: str) -> str:
    """``--mlir-pass-pipeline``: the module through upstream MLIR (issue #18)."""
    from ..lowering.upstream import UpstreamError, generic_text, run_mlir_pipeline

    try:
        return run_mlir_pipeline(generic_text(module), pipeline) + "\n"
    except ImportError as e:  # the optional [mlir] extra (upstream MLIR bindings)
        raise UserError(f"{name}: error: --mlir-pass-pipeline needs the upstream MLIR "
                        f"bindings ({e}); pip install 'pyflame-mlir[mlir]'") from None
    except UpstreamError as e:
        raise UserError(f"{name}: error: {e}") from None


def flat_pipeline(spec: str) -> str:
    """An mlir-opt pipeline (``builtin.module(func.func(cse),canonicalize)``)
    as our flat pass list (``cse,canonicalize``): every pass here runs on the
    whole module, which visits every function, so the op anchors (an op name
    before a parenthesis) are dropped. A flat list comes back unchanged."""
    out, depth, braces, quoted, word = [], 0, 0, False, ""
    for ch in spec:
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch == "{":
            braces += 1
        elif not quoted and ch == "}":
            braces -= 1
        if quoted or braces or ch not in "(),":
            word += ch
            continue
        if ch == "(":
            anchor = word.strip()
            if "." not in anchor and anchor != "any":
                raise UserError(f"pyflame-opt: error: bad pass pipeline {spec!r}: "
                                f"'{anchor}(' is not an op anchor (builtin.module, func.func, "
                                "any)")
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise UserError(f"pyflame-opt: error: bad pass pipeline {spec!r}: "
                                "unbalanced ')'")
            out.append(word)
        else:
            out.append(word)
        word = ""
    if depth or braces or quoted:
        raise UserError(f"pyflame-opt: error: bad pass pipeline {spec!r}: unbalanced "
                        f"{'quotes' if quoted else 'braces' if braces else 'parentheses'}")
    out.append(word)
    return ",".join(w.strip() for w in out if w.strip())


# pyflame-opt's long options (mlir-opt users write them with one dash too)
_LONG_OPTIONS = frozenset(
    "allow-unregistered-dialect disable-verify frontend help list-passes mlir-pass-pipeline "
    "mlir-print-debuginfo mlir-print-op-generic no-implicit-module output-dir output-file "
    "parsing-diagnostics pass-pipeline pass-statistics passes print-between-passes "
    "print-debuginfo print-no-properties print-op-generic shrink split-input-file "
    "syntax-highlight target time-passes verify-diagnostics".split())


def mlir_style_argv(argv: Sequence[str], pass_names: Sequence[str]) -> list[str]:
    """mlir-opt's command-line spellings as ours: ``-split-input-file``
    (LLVM options take one dash or two) and passes as flags (``--cse
    --canonicalize='max-iterations=3'``), which become one ``-p`` list."""
    names = set(pass_names)
    args, flags = [], []
    for a in argv:
        name, eq, value = a.lstrip("-").partition("=")
        if a.startswith("-") and not a.startswith("--") and (name in _LONG_OPTIONS
                                                             or name in names):
            a = "-" + a
        if a.startswith("--") and name in names and name not in _LONG_OPTIONS:
            flags.append(f"{name}{{{value}}}" if eq else name)
            continue
        args.append(a)
    if flags:
        if any(a in ("-p", "--passes") or a.startswith(("-p=", "--passes=", "--pass-pipeline"))
               for a in args):
            raise UserError("pyflame-opt: error: pass flags (" + ", ".join(
                f"--{f}" for f in flags) + ") cannot be combined with -p or --pass-pipeline")
        args += ["--passes", ",".join(flags)]
    return args


def _split_top(spec: str) -> list[str]:
    """Split a pipeline at the commas outside braces and quotes."""
    parts, depth, quoted, cur = [], 0, False, ""
    for ch in spec:
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch == "{":
            depth += 1
        elif not quoted and ch == "}":
            depth -= 1
        if ch == "," and depth == 0 and not quoted:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p for p in parts if p]


def _legalized_for_max(emit: Callable[[ModuleOp, IO[str]], None]
                       ) -> Callable[[ModuleOp, IO[str]], None]:
    """``-t max``: the ``legalize-for-max`` pass (from the registry), then ``emit``."""
    def target(module: ModuleOp, stream: IO[str]) -> None:
        run_pipeline(module, "legalize-for-max", Context())
        emit(module, stream)
    return target


def _targets() -> dict[str, Callable[[ModuleOp, IO[str]], None]]:
    """Our ``-t`` targets: pyflame or wse modules to CSL (and ``--output-dir``), the wse IR,
    the csl IR, and the MAX graph (``to_max`` imports ``max`` only when it builds a graph)."""
    return {
        "csl": lambda m, s: target_csl(m, s, getattr(_targets, "output_dir", None)),
        "csl-ir": target_csl_ir,
        "wse": target_wse,
        "max": _legalized_for_max(print_max),
        "max-sharded": print_max_sharded,  # issue 17: a partitioned program, every device
    }


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        from xdsl.universe import Universe

        argv = mlir_style_argv(argv, [*PASSES, *Universe.get_multiverse().all_passes])
        PyflameOptMain(argv).run()
    except SystemExit as e:  # argparse: --help exits 0, a bad command line 2 (mlir-opt: 1)
        return 0 if e.code in (0, None) else 1
    except UserError as e:
        print(e, file=sys.stderr)
        return 1
    except (ParseError, DiagnosticException) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except FileNotFoundError as e:
        print(f"pyflame-opt: error: {e.strerror}: {e.filename}", file=sys.stderr)
        return 1
    except ValueError as e:
        print(f"pyflame-opt: error: {e}", file=sys.stderr)
        return 1
    except RecursionError:
        print("pyflame-opt: error: input nested too deeply (the Python stack ran out)",
              file=sys.stderr)
        return 1
    except Exception as e:  # a bug of ours or xDSL's: one line, a traceback on request
        if os.environ.get("PYFLAME_DEBUG"):
            raise
        print(f"pyflame-opt: internal error: {type(e).__name__}: {e} (set PYFLAME_DEBUG=1 "
              "for a traceback)", file=sys.stderr)
        return 1
    return 0



if __name__ == "__main__":
    sys.exit(main())

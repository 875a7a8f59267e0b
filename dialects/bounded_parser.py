"""Parsing MLIR text that may be hostile: limits xDSL's parser does not have.

xDSL's parser recurses once (several Python frames) per nesting level, so
thousands of nested brackets or regions end in a ``RecursionError``; and a
splat ``dense<1.0> : tensor<100000000000xf32>`` makes it build a Python list
with one entry per element (a hang, then ``MemoryError``). ``prescan_error``
is a linear pre-scan that refuses such text (and numbers of thousands of
digits) with its line and column before parsing; ``BoundedParser`` refuses
dense literals above ``MAX_DENSE_ELEMENTS`` as a parse error at the literal.
``pyflame-opt`` and ``pf.load_mlir`` parse with both.

``BoundedParser`` also reads a hexadecimal integer in a float tensor literal
(``dense<0x7FC00000> : tensor<2xf32>``, ``dense<[0x7F800000, 1.0]>``) as the
element's bit pattern, as MLIR does and as ``mlir-opt`` prints NaN and
infinities; xDSL's parser took it as the integer's value (a NaN became
2143289344.0).

``dense_resource<key>`` handles keep their key in every text parsed in one
process (see ``_parse_dialect_resource_handle``).

``inline_location_aliases`` rewrites what upstream MLIR prints with debug
info and xDSL's parser does not read: location aliases used before they are
defined (``loc(#loc3)`` ... ``#loc3 = loc("model.py":10:2)`` at the end),
source ranges (``"f":1:2 to 3:4``, kept as their start) and fused metadata
(``fused<"m">[...]``, kept as the fused list).
"""

from __future__ import annotations

import math
import re
import struct

from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    CallSiteLoc,
    FileLineColLoc,
    Float16Type,
    Float32Type,
    Float64Type,
    FusedLoc,
    ModuleOp,
    NameLoc,
)
from xdsl.ir import Attribute
from xdsl.parser import Parser
from xdsl.parser.attribute_parser import AttrParser
from xdsl.utils.mlir_lexer import MLIRTokenKind

__all__ = ["MAX_DENSE_ELEMENTS", "MAX_DIGITS", "MAX_NESTING", "BoundedParser", "decode_mlir",
           "file_location", "inline_location_aliases", "prescan_error"]

# Deeper bracket nesting than this is refused: real programs stay far below,
# and 128 levels of any bracket kind parse within Python's default stack.
MAX_NESTING = 128
# Elements of one dense literal (the parser expands a splat element by element).
MAX_DENSE_ELEMENTS = 1 << 22
# Digits of one number: Python refuses to convert more than 4300 (CVE-2020-10735)
# with an error that has no location; no i64, f64 or dimension needs 100.
MAX_DIGITS = 1000
_OPEN, _CLOSE = "([{<", ")]}>"


def prescan_error(text: str, limit: int = MAX_NESTING) -> tuple[int, int, str] | None:
    """(line, col, message) of the first bracket nested deeper than ``limit``
    or the first run of more than ``MAX_DIGITS`` digits (string literals and
    ``//`` comments skipped; the ``>`` of ``->`` is not a bracket), else None.
    Linear time, no recursion."""
    depth, line, col, i, n = 0, 1, 0, 0, len(text)
    while i < n:
        ch = text[i]
        col += 1
        if ch == "\n":
            line, col = line + 1, 0
        elif ch == '"':  # a string literal: checked here, see _string_end
            end, why = _string_end(text, i)
            if why:
                return line, col + end - i, why
            col += end - i
            i = end
        elif ch == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        elif ch in _OPEN:
            depth += 1
            if depth > limit:
                return line, col, (f"brackets nested deeper than {limit} levels (refused: the "
                                   "parser would exhaust the Python stack)")
        elif ch in _CLOSE and not (ch == ">" and i > 0 and text[i - 1] == "-"):
            depth = max(depth - 1, 0)
        elif ch.isdigit():
            j = i
            while j < n and text[j].isdigit():
                j += 1
            if j - i > MAX_DIGITS:
                return line, col, f"a number of {j - i} digits (at most {MAX_DIGITS})"
            col += j - i - 1
            i = j
            continue
        i += 1
    return None


_HEX = frozenset("0123456789abcdefABCDEF")


def _string_end(text: str, i: int) -> tuple[int, str | None]:
    """Where the string literal opening at ``i`` closes (the index of its
    closing quote), or where and why it is invalid. xDSL lexes strings with a
    regular expression that backtracks exponentially in the string's length
    when it fails (an unterminated string, a bad escape), so such text must
    never reach it: this check is linear."""
    j, n = i + 1, len(text)
    while j < n:
        c = text[j]
        if c == '"':
            return j, None
        if c in "\n\v\f":
            break
        if c == "\\":
            nxt = text[j + 1:j + 3]
            if nxt[:1] in ('"', "n", "t", "\\") and nxt[:1]:
                j += 2
                continue
            if len(nxt) == 2 and nxt[0] in _HEX and nxt[1] in _HEX:
                j += 3
                continue
            return j, ("invalid escape in a string literal (allowed: \\n \\t \\\\ \\\" and "
                       "two hex digits)")
        j += 1
    return j, "unterminated string literal (it must close on its line)"


def decode_mlir(data: bytes) -> tuple[str, tuple[int, int, str] | None]:
    """MLIR text from bytes: UTF-8, as mlir-opt reads it, except that a comment
    may hold any bytes (mlir-opt's lexer skips them; they become U+FFFD here).
    A byte that is not UTF-8 elsewhere gives (line, col, message) as the error."""
    try:
        return data.decode(), None
    except UnicodeDecodeError:
        pass
    text = data.decode(errors="surrogateescape")  # bad bytes as U+DC80..U+DCFF
    out, line, col, i, n = [], 1, 0, 0, len(text)
    while i < n:
        ch = text[i]
        col += 1
        if ch == "\n":
            line, col = line + 1, 0
        elif ch == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append("".join("\ufffd" if "\udc80" <= c <= "\udcff" else c
                               for c in text[i:j]))
            i = j
            continue
        elif "\udc80" <= ch <= "\udcff":
            return "", (line, col, f"invalid UTF-8 byte 0x{ord(ch) - 0xDC00:02X}: MLIR text "
                        "must be UTF-8 outside comments")
        elif ch == '"':  # a string literal: UTF-8 too (xDSL's strings are text)
            end, why = _string_end(text, i)
            end = end if why else end + 1
            bad = next((k for k in range(i, end) if "\udc80" <= text[k] <= "\udcff"), None)
            if bad is not None:
                byte = ord(text[bad]) - 0xDC00
                return "", (line, col + bad - i, f"invalid UTF-8 byte 0x{byte:02X} in a string "
                            "literal (only UTF-8 strings are supported)")
            out.append(text[i:end])
            col += end - i - 1
            i = end
            continue
        out.append(ch)
        i += 1
    return "".join(out), None


# float types a hexadecimal literal can spell: struct format, and the shift into it
_FLOAT_BITS = {Float16Type: ("<e", "<H", 0), Float32Type: ("<f", "<I", 0),
               Float64Type: ("<d", "<Q", 0), BFloat16Type: ("<f", "<I", 16)}


class _HexElement(AttrParser._TensorLiteralElement):
    """A tensor literal element written in hexadecimal: for a float element type,
    its bit pattern (MLIR's reading); for an integer type, its value."""

    def to_type(self, parser, type):  # noqa: ANN001, ANN202  (xDSL's signature)
        kind = _FLOAT_BITS.get(type.__class__)
        if kind is None:
            if isinstance(type, AnyFloat):
                parser.raise_error(f"hexadecimal float literal for {type} is not supported "
                                   "(f16, bf16, f32 and f64 are)", at_position=self.span)
            return super().to_type(parser, type)
        if self.is_negative:
            parser.raise_error("hexadecimal float literal should not have a leading minus",
                               at_position=self.span)
        bits = int(self.value)
        if bits >= 1 << type.bitwidth:
            parser.raise_error(f"hexadecimal float constant out of range for type {type}",
                               at_position=self.span)
        fmt, ifmt, shift = kind
        return struct.unpack(fmt, struct.pack(ifmt, bits << shift))[0]


# the op name in an op's text: ``%0 = arith.addf ...`` or ``"arith.addf"(...)``
_OP_NAME = re.compile(r'(?:^|=)\s*"?([A-Za-z_][\w$]*\.[\w$.]+)')


class BoundedParser(Parser):
    """xDSL's parser, refusing dense literals of more than ``MAX_DENSE_ELEMENTS`` and
    reading hexadecimal float tensor elements as bit patterns."""

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        """xDSL's, except that text with no operation (empty, or only comments, aliases
        and file metadata) is an empty module, as mlir-opt reads it."""
        if allow_implicit_module:
            start = self._current_token.span.start
            while self._current_token.kind in (MLIRTokenKind.HASH_IDENT,
                                               MLIRTokenKind.EXCLAMATION_IDENT):
                self._parse_alias_def()
            if self._current_token.kind == MLIRTokenKind.FILE_METADATA_BEGIN:
                self._parse_file_metadata_dictionary()
            if self._current_token.kind == MLIRTokenKind.EOF:
                return ModuleOp([])
            self._resume_from(start)
            self.attribute_aliases.clear()  # parsed again from the start
        return super().parse_module(allow_implicit_module)

    def parse_operation(self):  # noqa: ANN202  (xDSL's own return type)
        """xDSL's, with a constraint its op classes check while the op is built
        (``arith.divf`` on integers: "Unexpected attribute i32", no place) a
        parse error at the op, naming it."""
        from xdsl.utils.exceptions import ParseError, VerifyException

        start = self._current_token.span.start
        try:
            return super().parse_operation()
        except ParseError as e:
            if "builtin.unregistered does not have a custom format" not in e.msg:
                raise
            m = _OP_NAME.search(self.lexer.input.content[start:e.span.start])
            name = m.group(1) if m else "?"
            at = start + m.start(1) if m else start
            self.raise_error(f"custom op '{name}' is unknown: dialect '{name.split('.')[0]}' "
                             "is not registered (an unregistered op must be written in the "
                             f"generic form, \"{name}\"(...) : ...)", at, at + len(name))
        except VerifyException as e:
            text = self.lexer.input.content[start:self._current_token.span.start]
            m = _OP_NAME.search(text)
            what = f"'{m.group(1)}' op " if m else ""
            self.raise_error(f"{what}{e} (an operand, result or attribute of a type the op "
                             "does not take)", start, start)

    def parse_optional_location(self):  # noqa: ANN202  (xDSL's own return type)
        """xDSL's, remembering the token after a location the text writes, so an
        op's explicit ``loc(unknown)`` can be told from no location at all
        (``wrote_location``): parsers that locate ops keep the former unknown."""
        loc = super().parse_optional_location()
        if loc is not None:
            self._after_location = self._current_token
        return loc

    def wrote_location(self) -> bool:
        """Whether the text gave the op just parsed its own ``loc(...)``."""
        return self._current_token is getattr(self, "_after_location", None)

    def parse_comma_separated_list(self, delimiter, parse, context_msg=""):  # noqa: ANN001, ANN202
        """xDSL's, except that an undelimited list of attributes written in
        parentheses and not followed by ``->`` is that list: the result types of
        a multi-result ``linalg.generic`` (``-> (tensor<4xf32>, tensor<4xi64>)``),
        as MLIR and xDSL print them and xDSL's own parser refused ("Expected
        '->'": it read a function type)."""
        from xdsl.utils.exceptions import ParseError

        if (delimiter is self.Delimiter.NONE and parse == self.parse_attribute
                and self._current_token.kind == MLIRTokenKind.L_PAREN):
            start = self._current_token.span.start
            try:
                items = super().parse_comma_separated_list(self.Delimiter.PAREN, parse,
                                                           context_msg)
            except ParseError:
                items = None
            if items and self._current_token.kind != MLIRTokenKind.ARROW:
                return items
            self._resume_from(start)
        return super().parse_comma_separated_list(delimiter, parse, context_msg)

    def _parse_dialect_resource_handle(self, dialect_name, interface):  # noqa: ANN001, ANN202
        """xDSL's, except that a key an earlier parse (of another text) declared is this
        text's own: xDSL keeps resource blobs in a process-wide store and renamed the
        handle (``blob1`` -> ``blob1_0``) while the text's resource section still set
        ``blob1``, so a second text with the same key lost its data."""
        key = self.parse_identifier(" for resource handle")
        if (dialect_name, key) not in self.dialect_resources:
            if interface.lookup(key) is None:
                interface.declare_resource(key)
            else:
                interface.parse_resource(key, "0x")  # no data until the section gives it
            self.dialect_resources.add((dialect_name, key))
        return key

    def parse_dense_int_or_fp_elements_attr(self, type):  # noqa: ANN001, ANN202
        """xDSL's, with what it leaves unlocated located at the literal: an element out of
        its type's range (``dense<5> : tensor<2xi1>``: a ValueError) and a hex string
        whose bytes do not fill the type (an error only when the attribute is printed)."""
        from xdsl.utils.exceptions import ParseError

        start = self._current_token.span.start
        try:
            attr = super().parse_dense_int_or_fp_elements_attr(type)
        except ParseError:
            raise
        except (ValueError, OverflowError, TypeError) as e:
            self.raise_error(f"dense literal: {e}", start, self._current_token.span.start)
        t = attr.get_type()
        size = getattr(t.get_element_type(), "compile_time_size", None)
        n = math.prod(t.get_shape())
        if size and len(attr.data.data) != n * size:
            self.raise_error(f"dense literal of {len(attr.data.data)} bytes, but {t} holds "
                             f"{n} elements of {size} bytes", start,
                             self._current_token.span.start)
        return attr

    def _parse_tensor_literal_element(self):  # noqa: ANN202  (xDSL's own return type)
        el = super()._parse_tensor_literal_element()
        if isinstance(el.value, int) and not isinstance(el.value, bool) and \
                el.span.text.lstrip("-").lstrip()[:2] in ("0x", "0X"):
            return _HexElement(el.is_negative, el.value, el.span)
        return el

    def _parse_dense_literal_type(self):  # noqa: ANN202  (xDSL's own return type)
        start = self._current_token.span.start
        t = super()._parse_dense_literal_type()
        n = math.prod(t.get_shape())
        if n > MAX_DENSE_ELEMENTS:
            self.raise_error(f"dense literal of {n} elements (the limit is "
                             f"{MAX_DENSE_ELEMENTS}: a larger constant belongs in a graph "
                             "input, not in the text)", start, self._current_token.span.start)
        return t


_LOC_ALIAS_DEF = re.compile(r"^[ \t]*(#loc[\w$.\-]*)[ \t]*=[ \t]*loc\((.*)\)[ \t]*$", re.M)
_LOC_ALIAS_USE = re.compile(r"#loc[\w$.\-]*(?![\w$.\-])")
_LOC_RANGE = re.compile(r'("(?:[^"\\]|\\.)*":\d+:\d+)\s+to\s+(?:\d+)?:\d+')
_FUSED_METADATA = re.compile(r"\bfused<[^\[\]]*>\[")


def inline_location_aliases(text: str) -> str:
    """``text`` with every location alias replaced by what it stands for and
    its definition line blanked (line numbers stay), ranges cut to their start
    and fused metadata dropped. Text without ``#loc`` or ``loc(`` is returned
    as it is."""
    if "loc(" not in text:
        return text
    aliases = {m.group(1): m.group(2) for m in _LOC_ALIAS_DEF.finditer(text)}
    if aliases:
        text = _LOC_ALIAS_DEF.sub("", text)
        for _ in range(len(aliases) + 1):  # an alias may name others (fused, callsite)
            changed = False
            for name, body in aliases.items():
                new = _LOC_ALIAS_USE.sub(lambda m: aliases.get(m.group(0), m.group(0)), body)
                if new != body:
                    aliases[name], changed = new, True
            if not changed:
                break
        text = _LOC_ALIAS_USE.sub(lambda m: aliases.get(m.group(0), m.group(0)), text)
    text = _LOC_RANGE.sub(r"\1", text)
    return _FUSED_METADATA.sub("fused[", text)


def file_location(loc: Attribute) -> FileLineColLoc | None:
    """The file position a location shows, as mlir-opt finds it for a
    diagnostic: a ``FileLineColLoc`` itself, a name's child (``loc("jit(f)/mul"
    ("f.py":3:4))``), a call site's callee, a fused location's first."""
    todo = [loc]
    while todo:
        cur = todo.pop(0)
        if isinstance(cur, FileLineColLoc):
            return cur
        if isinstance(cur, NameLoc):
            todo.insert(0, cur.location)
        elif isinstance(cur, CallSiteLoc):
            todo.insert(0, cur.callee)
        elif isinstance(cur, FusedLoc):
            todo[0:0] = list(getattr(cur.locations, "data", ()))
    return None

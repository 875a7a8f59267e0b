"""Parsing MLIR text that may be hostile: limits xDSL's parser does not have.

xDSL's parser recurses once (several Python frames) per nesting level, so
thousands of nested brackets or regions end in a ``RecursionError``; and a
splat ``dense<1.0> : tensor<100000000000xf32>`` makes it build a Python list
with one entry per element (a hang, then ``MemoryError``). ``prescan_error``
is a linear pre-scan that refuses such text (and numbers of thousands of
digits) with its line and column before parsing; ``BoundedParser`` refuses
dense literals above ``MAX_DENSE_ELEMENTS`` as a parse error at the literal.
``pyflame-opt`` and ``pf.load_mlir`` parse with both.
"""

from __future__ import annotations

import math

from xdsl.parser import Parser

__all__ = ["MAX_DENSE_ELEMENTS", "MAX_DIGITS", "MAX_NESTING", "BoundedParser", "prescan_error"]

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
        elif ch == '"':  # a string literal: skip to its closing quote
            i += 1
            while i < n and text[i] not in '"\n':
                step = 2 if text[i] == "\\" else 1
                i += step
                col += step
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


class BoundedParser(Parser):
    """xDSL's parser, refusing dense literals of more than ``MAX_DENSE_ELEMENTS``."""

    def _parse_dense_literal_type(self):  # noqa: ANN202  (xDSL's own return type)
        start = self._current_token.span.start
        t = super()._parse_dense_literal_type()
        n = math.prod(t.get_shape())
        if n > MAX_DENSE_ELEMENTS:
            self.raise_error(f"dense literal of {n} elements (the limit is "
                             f"{MAX_DENSE_ELEMENTS}: a larger constant belongs in a graph "
                             "input, not in the text)", start, self._current_token.span.start)
        return t

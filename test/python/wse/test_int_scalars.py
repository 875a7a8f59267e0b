# ruff: noqa: E501  (embedded MLIR lines)
"""16-bit integer DSD builtins with a signed scalar operand (`@add16(d, s, -1)`,
`@and16(d, s, 0xFF00 as i16)`, as the SDK examples write them): the scalar is read as
its two's complement bit pattern. It used to raise numpy's OverflowError. Oracle:
numpy on int32, wrapped to 16 bits."""

from __future__ import annotations

import numpy as np
import pytest
from _wse_harness import D1, array, dsd, make_program, run_main, simulate

A = np.array([1, -2, 300, -32768, 32767, 0, -1], np.int16)
N = A.size


def _wrap(x: np.ndarray) -> np.ndarray:
    return (np.asarray(x, np.int64) & 0xFFFF).astype(np.uint16).view(np.int16)


ORACLE = {
    "add16": lambda a, s: _wrap(a.astype(np.int64) + s),
    "sub16": lambda a, s: _wrap(a.astype(np.int64) - s),
    "and16": lambda a, s: _wrap(a.astype(np.int64) & s),
    "or16": lambda a, s: _wrap(a.astype(np.int64) | s),
    "xor16": lambda a, s: _wrap(a.astype(np.int64) ^ s),
}


@pytest.mark.parametrize("op", sorted(ORACLE))
@pytest.mark.parametrize("s", [-1, -256, -32768, 5, 32767])
def test_signed_scalar_operand(op: str, s: int):
    body = f"""{dsd('a', N, 'i16')}
      {dsd('c', N, 'i16')}
      %s0 = arith.constant {s} : i16
      %s = "csl.mlir.signedness_cast"(%s0) : (i16) -> si16
      "csl.{op}"(%c_dsd, %a_dsd, %s) : ({D1}, {D1}, si16) -> ()"""
    sim = run_main(simulate(make_program(body, arrays={"a": ("i16", N), "c": ("i16", N)})),
                   {"a": A})
    np.testing.assert_array_equal(array(sim, "c"), ORACLE[op](A, s))


def test_mov16_fills_with_a_negative_scalar():
    body = f"""{dsd('c', N, 'i16')}
      %s0 = arith.constant -5 : i16
      %s = "csl.mlir.signedness_cast"(%s0) : (i16) -> si16
      "csl.mov16"(%c_dsd, %s) : ({D1}, si16) -> ()"""
    sim = run_main(simulate(make_program(body, arrays={"c": ("i16", N)})), {})
    np.testing.assert_array_equal(array(sim, "c"), np.full(N, -5, np.int16))

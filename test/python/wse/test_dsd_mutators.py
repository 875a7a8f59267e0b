# ruff: noqa: E501  (embedded MLIR lines)
"""Memory DSD addressing: tensor_access maps, mem4d, and the four mutators."""

from __future__ import annotations

import numpy as np
import pytest
from _wse_harness import D1, array, dsd, make_program, run_main, simulate

from pyflame_mlir.runtime.wse import ProgramError
from pyflame_mlir.runtime.wse.errors import ArchRuleError

A = np.arange(24, dtype=np.float32) * 1.5 - 7
B = -np.arange(24, dtype=np.float32)


def _copy(body: str, n: int, src_type: str = D1) -> np.ndarray:
    """Run `body` (which must define %src) then d[:n] = src; return d."""
    text = make_program(
        f"""{body}
      {dsd("d", n)}
      "csl.fmovs"(%d_dsd, %src) : ({D1}, {src_type}) -> ()""",
        arrays={"a": ("f32", 24), "b": ("f32", 24), "d": ("f32", n)},
    )
    return array(run_main(simulate(text), {"a": A, "b": B}), "d")


def test_affine_tensor_access_gives_offset_and_stride():
    got = _copy(
        '%n = arith.constant 7 : i16\n      %src = "csl.get_mem_dsd"(%a, %n) '
        "<{tensor_access = affine_map<(d0) -> (d0 * 3 + 2)>}> : (memref<?xf32>, i16) -> "
        "!csl<dsd mem1d_dsd>",
        7,
    )
    np.testing.assert_array_equal(got, A[2::3][:7])


def test_negative_stride():
    got = _copy(
        '%n = arith.constant 5 : i16\n      %src = "csl.get_mem_dsd"(%a, %n) '
        "<{tensor_access = affine_map<(d0) -> (d0 * -2 + 10)>}> : (memref<?xf32>, i16) -> "
        "!csl<dsd mem1d_dsd>",
        5,
    )
    np.testing.assert_array_equal(got, A[10::-2][:5])


def test_increment_dsd_offset():
    got = _copy(
        f"""{dsd("a", 6)}
      %off = arith.constant 9 : i16
      %src = "csl.increment_dsd_offset"(%a_dsd, %off) <{{elem_type = f32}}> : ({D1}, i16) -> {D1}""",
        6,
    )
    np.testing.assert_array_equal(got, A[9:15])


def test_set_dsd_length_and_stride():
    got = _copy(
        f"""{dsd("a", 20)}
      %len16 = arith.constant 4 : i16
      %len = arith.bitcast %len16 : i16 to ui16
      %stride = arith.constant 5 : i8
      %short = "csl.set_dsd_length"(%a_dsd, %len) : ({D1}, ui16) -> {D1}
      %src = "csl.set_dsd_stride"(%short, %stride) : ({D1}, i8) -> {D1}""",
        4,
    )
    np.testing.assert_array_equal(got, A[0:20:5])


def test_set_dsd_length_rejects_a_signed_length():
    """cslc's DSD length field is a u16: an i16 length is rejected before the run."""
    with pytest.raises(ArchRuleError, match=r"u16 length, got i16"):
        _copy(
            f"""{dsd("a", 20)}
      %len = arith.constant 4 : i16
      %src = "csl.set_dsd_length"(%a_dsd, %len) : ({D1}, i16) -> {D1}""",
            4,
        )


def test_set_dsd_base_addr_keeps_the_access_pattern():
    got = _copy(
        '%n = arith.constant 4 : i16\n      %on_a = "csl.get_mem_dsd"(%a, %n) '
        "<{tensor_access = affine_map<(d0) -> (d0 * 2 + 1)>}> : (memref<?xf32>, i16) -> "
        f"""!csl<dsd mem1d_dsd>
      %src = "csl.set_dsd_base_addr"(%on_a, %b) : ({D1}, memref<?xf32>) -> {D1}""",
        4,
    )
    np.testing.assert_array_equal(got, B[1:9:2])


def test_mem4d_tensor_access_transposes():
    got = _copy(
        '%r = arith.constant 4 : i16\n      %c = arith.constant 3 : i16\n'
        '      %src = "csl.get_mem_dsd"(%a, %r, %c) '
        "<{tensor_access = affine_map<(d0, d1) -> (d1 * 4 + d0)>}> : "
        "(memref<?xf32>, i16, i16) -> !csl<dsd mem4d_dsd>",
        12,
        "!csl<dsd mem4d_dsd>",
    )
    np.testing.assert_array_equal(got, A[:12].reshape(3, 4).T.ravel())


def test_mem4d_offset_mutator():
    got = _copy(
        '%r = arith.constant 2 : i16\n      %c = arith.constant 3 : i16\n'
        '      %t = "csl.get_mem_dsd"(%a, %r, %c) '
        "<{tensor_access = affine_map<(d0, d1) -> (d0 * 6 + d1 * 2)>}> : "
        "(memref<?xf32>, i16, i16) -> !csl<dsd mem4d_dsd>\n"
        "      %off = arith.constant 1 : i16\n"
        '      %src = "csl.increment_dsd_offset"(%t, %off) <{elem_type = f32}> : '
        "(!csl<dsd mem4d_dsd>, i16) -> !csl<dsd mem4d_dsd>",
        6,
        "!csl<dsd mem4d_dsd>",
    )
    np.testing.assert_array_equal(got, (A[1:12:2].reshape(2, 3)).ravel())


def test_dsd_outside_its_array_is_an_error():
    with pytest.raises(ProgramError, match="outside its 24-element array"):
        _copy(
            f"""{dsd("a", 6)}
      %off = arith.constant 20 : i16
      %src = "csl.increment_dsd_offset"(%a_dsd, %off) <{{elem_type = f32}}> : ({D1}, i16) -> {D1}""",
            6,
        )


def test_offset_in_units_of_the_named_type():
    # an f16-sized increment on f32 memory moves half as many f32 elements
    got = _copy(
        f"""{dsd("a", 3)}
      %off = arith.constant 8 : i16
      %src = "csl.increment_dsd_offset"(%a_dsd, %off) <{{elem_type = f16}}> : ({D1}, i16) -> {D1}""",
        3,
    )
    np.testing.assert_array_equal(got, A[4:7])

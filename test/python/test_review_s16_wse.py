# ruff: noqa: E501  (embedded MLIR lines)
"""Session 16 review of s16-sdkhunt's user CSL modules: an `@import_module`
struct field its param's type cannot hold is refused (cslc refuses it), never
wrapped or truncated into a value the program then runs with."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "wse"))
from _wse_harness import make_program, simulate  # noqa: E402

from pyflame_mlir.runtime.wse.errors import ProgramError  # noqa: E402

LIB = """
  "csl.module"() <{kind = #csl<module_kind program>, sym_name = "util"}> ({
    %k = "csl.param"() <{param_name = "k"}> : () -> PTYPE
    csl.func @times(%v: f32) -> f32 {
      %kf = arith.sitofp %k : PTYPE to f32
      %r = arith.mulf %v, %kf : f32
      csl.return %r : f32
    }
  }) : () -> ()
"""


def _program(ptype: str, value: str, vtype: str) -> str:
    body = """
      %u = "csl.member_call"(%util, %v) <{field = "times"}> : (!csl.imported_module, f32) -> f32
      %i0 = arith.constant 0 : index
      memref.store %u, %out[%i0] : memref<?xf32>"""
    extra = f"""
    %v = arith.constant 1.0 : f32
    %kv = arith.constant {value} : {vtype}
    %s = "csl.const_struct"(%kv) <{{ssa_fields = ["k"]}}> : ({vtype}) -> !csl.comptime_struct
    %util = "csl.import_module"(%s) <{{module = "util.csl"}}> : (!csl.comptime_struct) -> !csl.imported_module"""
    text = make_program(body, arrays={"out": ("f32", 1)}, extra=extra)
    head, tail = text.rsplit("}", 1)
    return head + LIB.replace("PTYPE", ptype) + "}" + tail


@pytest.mark.parametrize(("ptype", "value", "vtype", "want"), [
    ("i16", "7", "i16", 7.0), ("i16", "-32768", "i32", -32768.0), ("i8", "127", "i32", 127.0),
    ("i16", "3.0", "f32", 3.0)])
def test_a_param_given_a_value_it_holds_runs(ptype: str, value: str, vtype: str,
                                             want: float) -> None:
    sim = simulate(_program(ptype, value, vtype))
    sim.launch("main")
    assert sim.symbol("out", 0, 0)[0] == want


@pytest.mark.parametrize(("ptype", "value", "vtype"), [
    ("i8", "300", "i32"), ("i16", "70000", "i32"), ("i16", "-40000", "i32"),
    ("i16", "2.5", "f32")])
def test_a_param_given_a_value_it_cannot_hold_is_refused(ptype: str, value: str,
                                                          vtype: str) -> None:
    """It ran with the value wrapped (300 -> 44 for an i8) or truncated (2.5 -> 2)."""
    with pytest.raises(ProgramError, match=rf"@import_module\(\"util.csl\"\): param 'k' "
                                           rf"\({ptype}\) cannot hold the import's struct "
                                           rf"field value"):
        simulate(_program(ptype, value, vtype))

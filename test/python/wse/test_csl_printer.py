"""`print_csl`: the csl_ext spellings, and refusal of what xDSL would print as a comment."""

from __future__ import annotations

import io

import pytest
from _wse_harness import FIXTURES, make_program
from pyflame_mlir.lowering.csl_printer import CslPrintError, print_csl, split_csl_files
from xdsl.dialects.builtin import ModuleOp

from pyflame_mlir.runtime.wse import parse_program


def _print(text: str) -> str:
    out = io.StringIO()
    print_csl(parse_program(text), out)
    return out.getvalue()


@pytest.mark.parametrize("name", ["vecadd_4x1", "gemv_1pe", "gemv_checkerboard", "gemm_bcast"])
def test_fixtures_print_to_one_file_per_module(name: str):
    files = split_csl_files(_print((FIXTURES / f"{name}.mlir").read_text()))
    assert "layout" in files and len(files) == 2
    program = next(f for n, f in files.items() if n != "layout")
    assert "unknown" not in program and "<!" not in program
    tile_file = next(n for n in files if n != "layout") + ".csl"
    assert f'"{tile_file}"' in files["layout"]  # @set_tile_code names the printed file


def test_async_completion_and_routes_are_spelled_out():
    text = _print((FIXTURES / "gemm_bcast.mlir").read_text())
    assert "@fmovs(A_all, row_in, .{ .async = true, .unblock = @get_local_task_id(11) });" in text
    assert ".rx = .{ WEST }, .tx = .{ RAMP, EAST }" in text


def test_unknown_op_is_an_error_not_a_comment():
    body = "%a = arith.constant 1.0 : f32\n      %b = arith.negf %a : f32"
    with pytest.raises(CslPrintError, match="no CSL spelling.*arith.negf"):
        _print(make_program(body))


def test_non_csl_module_at_top_level_is_an_error():
    with pytest.raises(CslPrintError, match="builtin.module is not a csl.module"):
        print_csl(ModuleOp([ModuleOp([])]), io.StringIO())


def test_integer_extensions_print_by_the_bits_not_by_the_csl_type():
    # xDSL prints extui/extsi as @as(T, x), which extends by x's CSL type: a signless
    # i16 (CSL i16) would be sign-extended by extui, a u16 zero-extended by extsi
    body = """%m = arith.constant -1 : i16
      %u = "csl.mlir.signedness_cast"(%m) : (i16) -> ui16
      %a = arith.extui %m : i16 to i32
      %b = arith.extsi %u : ui16 to i32
      %c = arith.extui %u : ui16 to ui32
      %d = arith.extsi %m : i16 to i32
      %v = "csl.variable"() : () -> !csl.var<i32>
      %w = "csl.variable"() : () -> !csl.var<ui32>
      %s = arith.addi %a, %b : i32
      %t = arith.addi %s, %d : i32
      "csl.store_var"(%v, %t) : (!csl.var<i32>, i32) -> ()
      "csl.store_var"(%w, %c) : (!csl.var<ui32>, ui32) -> ()"""
    text = _print(make_program(body))
    assert "@as(i32, @bitcast(u16, @as(i16, " in text
    assert "@as(i32, @bitcast(i16, @as(u16, " in text
    assert text.count("@bitcast(") == 2  # u16 -> u32 and i16 -> i32 stay plain @as


def test_module_level_task_actions_print_inside_comptime():
    # CSL allows no bare statement at the top level: a load-time @activate/@block is a
    # comptime action (the SDK's pipeline-01 and gemm-collectives_2d)
    for name, line in (("pipeline_01", "@activate(@get_local_task_id(8));"),
                       ("gemm_collectives_2d", "@block(@get_local_task_id(13));")):
        files = split_csl_files(_print((FIXTURES / f"{name}.mlir").read_text()))
        program = next(f for n, f in files.items() if n != "layout")
        assert f"comptime {{\n  {line}\n}}" in program
        assert f"\n{line}" not in program  # never at column 0


def test_unsigned_integer_ops_on_signless_values_print_on_the_bits():
    # signless i16 prints as CSL's i16: a bare `/`, `%` or `<` would be signed there,
    # while arith.divui/remui/cmpi ult (and the simulator) are unsigned
    body = """%m = arith.constant -7 : i16
      %two = arith.constant 2 : i16
      %v = "csl.variable"() : () -> !csl.var<i16>
      %w = "csl.variable"() : () -> !csl.var<i1>
      %q = arith.divui %m, %two : i16
      %r = arith.remui %m, %two : i16
      %s = arith.addi %q, %r : i16
      %lt = arith.cmpi ult, %m, %two : i16
      %slt = arith.cmpi slt, %m, %two : i16
      %both = arith.andi %lt, %slt : i1
      "csl.store_var"(%v, %s) : (!csl.var<i16>, i16) -> ()
      "csl.store_var"(%w, %both) : (!csl.var<i1>, i1) -> ()"""
    text = _print(make_program(body))
    u = "@bitcast(u16, @as(i16, {}))"
    assert f"@bitcast(i16, {u.format(-7)} / {u.format(2)})" in text
    assert f"@bitcast(i16, {u.format(-7)} % {u.format(2)})" in text
    assert f"{u.format(-7)} < {u.format(2)}" in text
    assert "(-7  <  2)" in text  # slt stays a plain signed comparison

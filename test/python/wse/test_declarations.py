# ruff: noqa: E501  (embedded MLIR lines)
"""Issue 15: CSL's top-level declarations are order-independent (an export names a
function declared below it; a value is used above its declaration), and
``@set_tile_code`` resolves its file to the program module and its params by
name (unknown or missing params name the PE and the param)."""

from __future__ import annotations

import numpy as np
import pytest
from _wse_harness import array, make_program, run_main, simulate

from pyflame_mlir.runtime.wse import ProgramError

# The program module's declarations in reverse: the export first, then the
# function it names, which reads `%k` and writes `%out`, declared last.
BACKWARDS = """
builtin.module {
  "csl.module"() <{kind = #csl<module_kind layout>, sym_name = "layout"}> ({
    %w = arith.constant 1 : i16
    %h = arith.constant 1 : i16
    %i0 = arith.constant 0 : i16
    %memcpy_init = "csl.const_struct"(%w, %h) <{ssa_fields = ["width", "height"]}> : (i16, i16) -> !csl.comptime_struct
    %memcpy = "csl.import_module"(%memcpy_init) <{module = "<memcpy/get_params>"}> : (!csl.comptime_struct) -> !csl.imported_module
    csl.layout {
      "csl.set_rectangle"(%w, %h) : (i16, i16) -> ()
      %mp = "csl.member_call"(%memcpy, %i0) <{field = "get_params"}> : (!csl.imported_module, i16) -> !csl.comptime_struct
      %tp = "csl.const_struct"(%mp, %scale) <{ssa_fields = ["memcpy_params", "scale"]}> : (!csl.comptime_struct, f32) -> !csl.comptime_struct
      "csl.set_tile_code"(%i0, %i0, %tp) <{file = "FILE"}> : (i16, i16, !csl.comptime_struct) -> ()
    }
    %scale = arith.constant 2.5 : f32
  }) : () -> ()
  "csl.module"() <{kind = #csl<module_kind program>, sym_name = "kernel"}> ({
    "csl.export"() <{var_name = @main, type = () -> ()}> : () -> ()
    "csl.export"(%out_ptr) <{var_name = "out", type = !csl.ptr<f32, #csl<ptr_kind many>, #csl<ptr_const var>>}> : (!csl.ptr<f32, #csl<ptr_kind many>, #csl<ptr_const var>>) -> ()
    csl.func @main() {
      %z = arith.constant 0 : index
      %v = arith.mulf %k, %k : f32
      memref.store %v, %out[%z] : memref<?xf32>
      "csl.member_call"(%sys_mod) <{field = "unblock_cmd_stream"}> : (!csl.imported_module) -> ()
      csl.return
    }
    %out_ptr = "csl.addressof"(%out) : (memref<?xf32>) -> !csl.ptr<f32, #csl<ptr_kind many>, #csl<ptr_const var>>
    %k = arith.mulf %scale, %two : f32
    %sys_mod = "csl.import_module"(%memcpy_params) <{module = "<memcpy/memcpy>"}> : (!csl.comptime_struct) -> !csl.imported_module
    %out = "csl.constants"(%n, %zero) : (i16, f32) -> memref<?xf32>
    %n = arith.constant 1 : i16
    %zero = arith.constant 0.0 : f32
    %two = arith.constant 2.0 : f32
    %scale = "csl.param"() <{param_name = "scale"}> : () -> f32
    %memcpy_params = "csl.param"() <{param_name = "memcpy_params"}> : () -> !csl.comptime_struct
  }) : () -> ()
}
"""


@pytest.mark.parametrize("file", ["kernel.csl", "src/kernel.csl", "pe_program.csl"])
def test_declarations_used_before_they_appear_run(file: str):
    """Every use above its declaration; the tile file named as the module, with a
    directory, or otherwise (the only program module is the one)."""
    sim = simulate(BACKWARDS.replace("FILE", file))
    sim.launch("main")
    assert array(sim, "out")[0] == np.float32((2.5 * 2.0) ** 2)


def test_tile_file_with_two_candidate_modules_is_an_error():
    text = make_program("")
    two = text.replace('sym_name = "pe"', 'sym_name = "pe_a"', 1)
    program = two[two.index('  "csl.module"() <{kind = #csl<module_kind program>'):two.rindex("}")]
    two = two[:two.rindex("}")] + program.replace('"pe_a"', '"pe_b"') + "}\n"
    with pytest.raises(ProgramError, match=r"@set_tile_code\(0, 0, \"pe.csl\"\): no program csl.module named 'pe'.*\['pe_a', 'pe_b'\]"):
        simulate(two)


def test_unknown_tile_param_names_the_pe_and_the_param():
    text = make_program("", width=2).replace(
        '<{ssa_fields = ["memcpy_params", "px", "py"]}> : (!csl.comptime_struct, i16, i16)',
        '<{ssa_fields = ["memcpy_params", "px", "py", "colour"]}> : (!csl.comptime_struct, i16, i16, i16)').replace(
        '"csl.const_struct"(%mp, %x, %y)', '"csl.const_struct"(%mp, %x, %y, %x)')
    with pytest.raises(ProgramError, match=r"PE \(0, 0\): @set_tile_code passes param\(s\) \['colour'\] that 'pe' does not declare"):
        simulate(text)


def test_missing_tile_param_names_the_pe_and_the_param():
    text = make_program("", extra='%k = "csl.param"() <{param_name = "k"}> : () -> i16')
    with pytest.raises(ProgramError, match=r"PE \(0, 0\): param 'k' of 'pe' gets no value from @set_tile_code"):
        simulate(text)


def test_a_cycle_of_top_level_uses_is_an_error():
    text = make_program("", extra="""
    %p = arith.addi %q, %q : i16
    %q = arith.addi %p, %p : i16""")
    with pytest.raises(ProgramError, match="top-level declarations use each other in a cycle"):
        run_main(simulate(text), {})

# ruff: noqa: E501  (embedded MLIR lines)
"""The interpreter's registry and plans: one handler per op class, looked up when a
program is planned; ops without one are rejected then, by name and place; every
handler is exercised here or by the program tests."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from _wse_harness import array, make_program, run_main, simulate
from pyflame_mlir.dialects import csl_ext
from xdsl.dialects import arith, csl

from pyflame_mlir.runtime.wse import ProgramError, UnsupportedError, parse_program
from pyflame_mlir.runtime.wse.impl import HANDLERS
from pyflame_mlir.runtime.wse.interpreter import Context, Functions, Planner, run_sync


def run_ops(ops: str) -> dict[str, Any]:
    """Plan and run straight-line ops on a bare Context; their results by name."""
    module = parse_program(f"builtin.module {{\n{ops}\n}}")
    env: dict = {}
    run_sync(Context(), env, HANDLERS.block(module.body.block))
    return {r.name_hint: env[r] for op in module.body.block.ops for r in op.results}


# --- plan time ------------------------------------------------------------------------------


def test_an_op_without_a_handler_fails_when_planned_with_its_place():
    # in a function nothing calls, and the layout would fail if it ran (two rectangles):
    # the op is rejected first, so before anything runs
    extra = """
    csl.func @never() {
      %a = arith.constant 1.0 : f32
      %b = arith.negf %a : f32
      csl.return
    }"""
    text = make_program(extra=extra, layout='"csl.set_rectangle"(%w, %h) : (i16, i16) -> ()')
    with pytest.raises(UnsupportedError,
                       match=r'does not model op arith.negf \(at csl.module "pe" > csl.func @never > op 1\)'):  # fmt: skip
        simulate(text)


def test_an_op_without_a_handler_in_the_layout_names_its_enclosing_ops():
    layout = """
      scf.for %k = %i0 to %w step %i1 : i16 {
        %z = arith.constant 1 : i16
        %n = arith.ceildivsi %z, %z : i16
      }"""
    with pytest.raises(UnsupportedError, match=r'arith.ceildivsi \(at csl.module "layout" > csl.layout > scf.for > op 1\)'):
        simulate(make_program(layout=layout))


def test_an_unmodeled_builtin_fails_when_planned():
    extra = """
    csl.func @never() {
      %n = arith.constant 4 : i16
      %d = "csl.get_mem_dsd"(%out, %n) : (memref<?xf32>, i16) -> !csl<dsd mem1d_dsd>
      "csl.fs2xp16"(%d, %d) : (!csl<dsd mem1d_dsd>, !csl<dsd mem1d_dsd>) -> ()
      csl.return
    }"""
    with pytest.raises(UnsupportedError, match=r"@fs2xp16 is not simulated: .*not publicly documented \(at .*@never > op 2\)"):
        simulate(make_program(extra=extra, arrays={"out": ("f32", 4)}))


@pytest.mark.parametrize("pred", ["ord", "uno", "ueq", "ugt", "uge", "ult", "ule"])
def test_cmpf_predicates_csl_cannot_express_are_rejected(pred: str):
    ops = f"""%a = arith.constant 1.0 : f32
    %c = arith.cmpf {pred}, %a, %a : f32"""
    with pytest.raises(UnsupportedError, match=f"arith.cmpf {pred} has no CSL form"):
        run_ops(ops)


def test_one_module_is_planned_once_for_all_its_pes():
    sim = simulate(make_program(arrays={"out": ("f32", 1)}, width=3))
    bodies = [pe.bodies["main"] for pe in sim.pes.values()]
    assert len(bodies) == 3 and all(b is bodies[0] for b in bodies)


def test_two_handlers_for_one_op_are_refused():
    first, second = Functions("a"), Functions("b")
    first.impl(arith.AddiOp)(lambda op: None)
    with pytest.raises(ValueError, match="arith.addi has two handlers in a"):
        first.impl(arith.AddiOp)(lambda op: None)
    second.impl_terminator(arith.AddiOp)
    with pytest.raises(ValueError, match="arith.addi has handlers in two dialect modules"):
        Planner(first, second)


def test_every_csl_op_has_a_handler_but_the_ones_listed():
    not_ops = {csl.CslModuleOp}  # modules are planned as a whole, not run as an op
    unmodeled = {csl.IntPtrCastOp}  # no semantics in the simulator yet
    missing = {o for o in (*csl.CSL.operations, *csl_ext.CSL_EXT.operations) if not HANDLERS.handles(o)}
    assert missing == not_ops | unmodeled


# --- handlers the program tests do not reach ---------------------------------------------------


def test_integer_ops_and_casts_follow_c():
    v = run_ops("""
    %a = arith.constant -7 : i16
    %b = arith.constant 2 : i16
    %divu = arith.divui %a, %b : i16
    %remu = arith.remui %a, %b : i16
    %shl = arith.shli %b, %b : i16
    %or = arith.ori %a, %b : i16
    %ext = arith.extsi %a : i16 to i32
    %extu = arith.extui %a : i16 to i32
    %big = arith.constant 70000 : i32
    %trunc = arith.trunci %big : i32 to i16
    %u = csl.mlir.signedness_cast %a : i16 to ui16
    %ult = arith.cmpi ult, %a, %b : i16
    %slt = arith.cmpi slt, %a, %b : i16""")
    assert (v["divu"], v["remu"]) == (65529 // 2, 65529 % 2)
    assert (v["shl"], v["or"]) == (8, -5)
    assert (v["ext"], v["extu"], v["trunc"], v["u"]) == (-7, 65529, 70000 - 65536, 65529)
    assert (v["ult"], v["slt"]) == (0, 1)


def test_extensions_act_on_the_bits_whatever_the_source_signedness():
    v = run_ops("""
    %m = arith.constant -1 : i16
    %u = csl.mlir.signedness_cast %m : i16 to ui16
    %s = arith.extsi %u : ui16 to i32
    %z = arith.extui %u : ui16 to ui32
    %zs = arith.extui %m : i16 to i32""")
    assert (v["s"], v["z"], v["zs"]) == (-1, 65535, 65535)


def test_float_ops_casts_and_comparisons():
    v = run_ops("""
    %f = arith.constant -2.75 : f32
    %nan = arith.constant 0x7FC00000 : f32
    %d = arith.subf %f, %f : f32
    %i = arith.fptosi %f : f32 to i32
    %h = arith.truncf %f : f32 to f16
    %e = arith.extf %h : f16 to f32
    %bits = arith.bitcast %f : f32 to i32
    %une = arith.cmpf une, %nan, %nan : f32
    %oeq = arith.cmpf oeq, %nan, %nan : f32
    %olt = arith.cmpf olt, %f, %d : f32
    %t = arith.cmpf true, %nan, %f : f32
    %no = arith.cmpf false, %f, %f : f32""")
    assert v["d"] == 0 and v["i"] == -2
    assert v["h"].dtype == np.float16 and v["e"].dtype == np.float32 and v["e"] == -2.75
    assert v["bits"] == int(np.float32(-2.75).view(np.int32))
    assert (v["une"], v["oeq"], v["olt"], v["t"], v["no"]) == (1, 0, 1, 1, 0)


def test_structs_directions_and_function_addresses():
    v = run_ops("""
    %one = arith.constant 1 : i16
    %s1 = "csl.const_struct"() <{items = {a = 5 : i16}}> : () -> !csl.comptime_struct
    %s2 = "csl.const_struct"(%one) <{ssa_fields = ["b"]}> : (i16) -> !csl.comptime_struct
    %s = "csl.concat_structs"(%s1, %s2) : (!csl.comptime_struct, !csl.comptime_struct) -> !csl.comptime_struct
    %fa = "csl.member_access"(%s) <{field = "a"}> : (!csl.comptime_struct) -> i16
    %fb = "csl.member_access"(%s) <{field = "b"}> : (!csl.comptime_struct) -> i16
    %dir = "csl.get_dir"() <{dir = #csl<dir_kind north>}> : () -> !csl.direction
    %fn = "csl.addressof_fn"() <{fn_name = @f}> : () -> !csl.ptr<() -> (), #csl<ptr_kind single>, #csl<ptr_const const>>""")
    assert v["s"] == {"a": 5, "b": 1} and (v["fa"], v["fb"]) == (5, 1)
    assert (v["dir"], v["fn"]) == ("north", "f")


def test_struct_field_errors():
    two = """%s = "csl.const_struct"() <{items = {a = 5 : i16}}> : () -> !csl.comptime_struct
    %t = "csl.concat_structs"(%s, %s) : (!csl.comptime_struct, !csl.comptime_struct) -> !csl.comptime_struct"""
    with pytest.raises(ProgramError, match=r"field\(s\) \['a'\] in both structs"):
        run_ops(two)
    with pytest.raises(ProgramError, match=r"struct has no field .z \(fields: \['a'\]\)"):
        run_ops(two.splitlines()[0] + '\n%z = "csl.member_access"(%s) <{field = "z"}> : (!csl.comptime_struct) -> i16')


def test_memref_globals_and_allocations():
    extra = """
    "memref.global"() <{sym_name = "g", sym_visibility = "private", type = memref<4xf32>, initial_value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>}> : () -> ()
    %m = memref.alloc() : memref<8xf32>"""
    body = """
      %i0 = arith.constant 0 : index
      %i2 = arith.constant 2 : index
      %g = memref.get_global @g : memref<4xf32>
      %v = memref.load %g[%i2] : memref<4xf32>
      %buf = memref.alloc() : memref<3xf32>
      %st = memref.alloca() : memref<3xf32>
      memref.store %v, %buf[%i2] : memref<3xf32>
      %w = memref.load %buf[%i2] : memref<3xf32>
      memref.store %w, %st[%i0] : memref<3xf32>
      %x = memref.load %st[%i0] : memref<3xf32>
      memref.store %x, %m[%i0] : memref<8xf32>
      %y = memref.load %m[%i0] : memref<8xf32>
      memref.store %y, %out[%i0] : memref<?xf32>"""
    sim = run_main(simulate(make_program(body, arrays={"out": ("f32", 1)}, extra=extra)), {})
    assert array(sim, "out")[0] == 3.0
    # the global and the module-level array are in SRAM; the function's are on its stack
    names = [n for n, _ in sim.pes[(0, 0)].sram.allocations]
    assert "g" in names and "m" in names and "buf" not in names and "st" not in names


def test_rpc_names_the_launch_color():
    extra = """
    %lc_id = arith.constant 8 : i16
    %lc = "csl.get_color"(%lc_id) : (i16) -> !csl.color
    "csl.rpc"(%lc) : (!csl.color) -> ()"""
    sim = simulate(make_program(extra=extra))
    assert sim.launch_colors == {8}

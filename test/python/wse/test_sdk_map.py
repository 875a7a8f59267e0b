# ruff: noqa: E501  (embedded MLIR lines)
"""`@map` (csl_ext.map) and pointer dereference (csl_ext.deref / store_ptr): the SDK
tutorial topic-10-map-builtin run unchanged through its host script on WSE-2 and WSE-3;
the power-method benchmark's blas.nrm2 (two @map folds through pointers, the exponent
trick of `approx` through `*f32` out-parameters) against numpy; fabric operands; the
verifier's rules and the simulator's refusals."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from _wse_harness import D1, array, dsd, make_program, run_main, simulate
from pyflame_mlir.dialects import csl_ext
from pyflame_mlir.lowering.csl_printer import print_csl
from xdsl.utils.exceptions import VerifyException

from pyflame_mlir.runtime.wse import parse_program
from pyflame_mlir.runtime.wse.compile import compile_program
from pyflame_mlir.runtime.wse.errors import ProgramError
from pyflame_mlir.runtime.wse.run_host import run_script

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "csl"
PS = "!csl.ptr<f32, #csl<ptr_kind single>, #csl<ptr_const var>>"
PM = "!csl.ptr<f32, #csl<ptr_kind many>, #csl<ptr_const var>>"


@pytest.mark.parametrize("arch", ["wse2", "wse3"])
def test_map_builtin_tutorial_runs_unchanged(arch: str, tmp_path: Path):
    out = compile_program(FIXTURES / "map_builtin.mlir", tmp_path / "map", {"size": "5"}, arch)
    (report,) = run_script(FIXTURES / "map_builtin_run.py", ["--name", str(out)], quiet=True)
    assert report.arch == arch
    text = (out / "pe_program.csl").read_text()
    # the three @map forms as the tutorial writes them (&sum[0] as a *i32 cast)
    assert "@map(math_lib.sqrt_f32, dsdA, dsd_sqrt_diag_A);" in text
    assert "@map(transformation, dsdA, 2.0, 6.0, dsd_weight, dsdA);" in text
    assert "@map(reduction, dsdB, @ptrcast(*i32, ptr_sum), @ptrcast(*i32, ptr_sum));" in text
    assert "fn reduction(value0 : i32, acc : *i32) i32 {" in text and "acc.*" in text
    assert "const B : [5]i32 = [5]i32{10, 20, 30, 40, 50};" in text


# power-method/src/blas.csl: nrm2(n, y) = |y|_2 without overflow, by two @map folds
NRM2 = f"""
    %dummy = "csl.zeros"() : () -> memref<1xf32>
    %mem_y0 = "csl.get_mem_dsd"(%dummy, %c1) : (memref<1xf32>, i16) -> {D1}
    %c1 = arith.constant 1 : i16
    %math_lib = "csl.import_module"() <{{module = "<math>"}}> : () -> !csl.imported_module

    csl.func @approx(%x: f32, %alpha: {PS}, %inv_alpha: {PS}) {{
      %mask_e = arith.constant 2139095040 : i32
      %mask_m = arith.constant 8388607 : i32
      %c23 = arith.constant 23 : i32
      %x_u32 = arith.bitcast %x : f32 to i32
      %exp = arith.andi %x_u32, %mask_e : i32
      %mantissa = arith.andi %x_u32, %mask_m : i32
      %e32 = arith.shrui %exp, %c23 : i32
      %e0 = arith.trunci %e32 : i32 to i16
      %z16 = arith.constant 0 : i16
      %z32 = arith.constant 0 : i32
      %c127 = arith.constant 127 : i16
      %one = arith.constant 1 : i16
      %c254 = arith.constant 254 : i16
      %c255 = arith.constant 255 : i16
      %e_is_0 = arith.cmpi eq, %e0, %z16 : i16
      %m_is_0 = arith.cmpi eq, %mantissa, %z32 : i32
      %e_sub = arith.select %m_is_0, %c127, %one : i16
      %e1 = arith.select %e_is_0, %e_sub, %e0 : i16
      %e_inf = arith.cmpi eq, %e1, %c255 : i16
      %e = arith.select %e_inf, %c127, %e1 : i16
      %e_u = arith.extui %e : i16 to i32
      %alpha_u32 = arith.shli %e_u, %c23 : i32
      %ie = arith.subi %c254, %e : i16
      %ie_u = arith.extui %ie : i16 to i32
      %inv_alpha_u32 = arith.shli %ie_u, %c23 : i32
      %a = arith.bitcast %alpha_u32 : i32 to f32
      %ia = arith.bitcast %inv_alpha_u32 : i32 to f32
      csl_ext.store_ptr %a, %alpha : f32, {PS}
      csl_ext.store_ptr %ia, %inv_alpha : f32, {PS}
      csl.return
    }}

    csl.func @reduce_fabs(%yval: f32, %ymax: {PS}) -> f32 {{
      %yreg = "csl.member_call"(%math_lib, %yval) <{{field = "abs"}}> : (!csl.imported_module, f32) -> f32
      %m = csl_ext.deref %ymax : {PS} -> f32
      %gt = arith.cmpf ogt, %yreg, %m : f32
      %r = arith.select %gt, %yreg, %m : f32
      csl.return %r : f32
    }}

    csl.func @reduce_scale_square(%yval: f32, %inv_alpha: f32, %sum: {PS}) -> f32 {{
      %yreg = arith.mulf %yval, %inv_alpha : f32
      %sq = arith.mulf %yreg, %yreg : f32
      %s = csl_ext.deref %sum : {PS} -> f32
      %r = arith.addf %s, %sq : f32
      csl.return %r : f32
    }}

    csl.func @nrm2(%n: i16, %yv: {PM}) -> f32 {{
      %alpha = "csl.variable"() : () -> !csl.var<f32>
      %inv_alpha = "csl.variable"() : () -> !csl.var<f32>
      %ymax = "csl.variable"() <{{default = 0.0 : f32}}> : () -> !csl.var<f32>
      %nu = "csl.mlir.signedness_cast"(%n) : (i16) -> ui16
      %mem_y1 = "csl.set_dsd_base_addr"(%mem_y0, %yv) : ({D1}, {PM}) -> {D1}
      %mem_y = "csl.set_dsd_length"(%mem_y1, %nu) : ({D1}, ui16) -> {D1}
      %ymax_p = csl_ext.addressof_var %ymax : !csl.var<f32> -> {PS}
      csl_ext.map @reduce_fabs(%mem_y, %ymax_p, %ymax_p) : {D1}, {PS}, {PS}
      %ym = "csl.load_var"(%ymax) : (!csl.var<f32>) -> f32
      %alpha_p = csl_ext.addressof_var %alpha : !csl.var<f32> -> {PS}
      %inv_alpha_p = csl_ext.addressof_var %inv_alpha : !csl.var<f32> -> {PS}
      "csl.call"(%ym, %alpha_p, %inv_alpha_p) <{{callee = @approx}}> : (f32, {PS}, {PS}) -> ()
      %sum = "csl.variable"() <{{default = 0.0 : f32}}> : () -> !csl.var<f32>
      %sum_p = csl_ext.addressof_var %sum : !csl.var<f32> -> {PS}
      %ia = "csl.load_var"(%inv_alpha) : (!csl.var<f32>) -> f32
      csl_ext.map @reduce_scale_square(%mem_y, %ia, %sum_p, %sum_p) : {D1}, f32, {PS}, {PS}
      %s = "csl.load_var"(%sum) : (!csl.var<f32>) -> f32
      %root = "csl.member_call"(%math_lib, %s) <{{field = "sqrt"}}> : (!csl.imported_module, f32) -> f32
      %a = "csl.load_var"(%alpha) : (!csl.var<f32>) -> f32
      %r = arith.mulf %root, %a : f32
      csl.return %r : f32
    }}"""


def _nrm2(y: np.ndarray, n: int) -> float:
    body = f"""%n = arith.constant {n} : i16
      %yp = "csl.addressof"(%y) : (memref<?xf32>) -> {PM}
      %r = "csl.call"(%n, %yp) <{{callee = @nrm2}}> : (i16, {PM}) -> f32
      %i0 = arith.constant 0 : index
      memref.store %r, %out[%i0] : memref<?xf32>"""
    sim = simulate(make_program(body, arrays={"y": ("f32", y.size), "out": ("f32", 1)},
                                extra=NRM2))
    return float(array(run_main(sim, {"y": y}), "out")[0])


@pytest.mark.parametrize("scale", [1.0, 1e30, 1e-30, 0.0])
def test_power_method_nrm2_matches_numpy_without_overflow(scale: float):
    # at 1e30 the plain sum of squares overflows f32; the scaled one does not
    y = (np.random.default_rng(3).standard_normal(12) * scale).astype(np.float32)
    got = _nrm2(y, 10)
    want = float(np.linalg.norm(y[:10].astype(np.float64)))
    assert got == pytest.approx(want, rel=1e-5, abs=1e-44)


def test_map_fabric_operands_move_whole():
    # PE (0,0): @map(sq, a, fabout east); PE (1,0): @map(fma, fabin, w, 3.0, d)
    n = 6
    extra = """
    csl.func @sq(%x: f32) -> f32 {
      %r = arith.mulf %x, %x : f32
      csl.return %r : f32
    }
    csl.func @fma(%x: f32, %wt: f32, %s: f32) -> f32 {
      %t = arith.mulf %x, %s : f32
      %r = arith.addf %t, %wt : f32
      csl.return %r : f32
    }"""
    body = f"""{dsd("a", n)}
      {dsd("w", n)}
      {dsd("d", n)}
      %n = arith.constant {n} : i16
      %zero = arith.constant 0 : i16
      %s = arith.constant 3.0 : f32
      %is_src = arith.cmpi eq, %px, %zero : i16
      scf.if %is_src {{
        %out = "csl.get_fab_dsd"(%n) <{{fabric_color = 1 : ui5, queue_id = 2 : i3}}> : (i16) -> !csl<dsd fabout_dsd>
        csl_ext.map @sq(%a_dsd, %out) : {D1}, !csl<dsd fabout_dsd>
      }} else {{
        %in = "csl.get_fab_dsd"(%n) <{{fabric_color = 1 : ui5, queue_id = 2 : i3}}> : (i16) -> !csl<dsd fabin_dsd>
        csl_ext.map @fma(%in, %w_dsd, %s, %d_dsd) : !csl<dsd fabin_dsd>, {D1}, f32, {D1}
      }}"""
    routes = """
      %x0 = arith.constant 0 : i16
      %x1 = arith.constant 1 : i16
      %y0 = arith.constant 0 : i16
      %c1 = arith.constant 1 : i16
      %col = "csl.get_color"(%c1) : (i16) -> !csl.color
      csl_ext.set_color_config %x0, %y0, %col routes <rx = [ramp], tx = [east]> : i16, i16
      csl_ext.set_color_config %x1, %y0, %col routes <rx = [west], tx = [ramp]> : i16, i16"""
    arrays = {"a": ("f32", n), "w": ("f32", n), "d": ("f32", n)}
    sim = simulate(make_program(body, arrays=arrays, extra=extra, layout=routes, width=2))
    a = np.arange(n, dtype=np.float32) - 2.5
    w = np.linspace(1, 2, n, dtype=np.float32)
    sim.symbol("a", 0, 0)[:] = a
    sim.symbol("w", 1, 0)[:] = w
    sim.launch("main")
    np.testing.assert_array_equal(array(sim, "d", (1, 0)), a * a * np.float32(3.0) + w)
    assert sim.report().wavelet_hops == n


INC = """
    csl.func @inc(%x: f32) -> f32 {
      %one = arith.constant 1.0 : f32
      %r = arith.addf %x, %one : f32
      csl.return %r : f32
    }"""


def test_map_in_place_is_elementwise():
    body = f"""{dsd("a", 5)}
      csl_ext.map @inc(%a_dsd, %a_dsd) : {D1}, {D1}"""
    sim = simulate(make_program(body, arrays={"a": ("f32", 5)}, extra=INC))
    a = np.arange(5, dtype=np.float32)
    np.testing.assert_array_equal(array(run_main(sim, {"a": a}), "a"), a + 1)


def test_map_reading_what_it_wrote_for_an_earlier_element_is_refused():
    # out = a[1:5], in = a[0:4]: element i reads a[i], written as element i-1's output
    body = f"""{dsd("a", 4)}
      %one = arith.constant 1 : i16
      %next = "csl.increment_dsd_offset"(%a_dsd, %one) <{{elem_type = f32}}> : ({D1}, i16) -> {D1}
      csl_ext.map @inc(%a_dsd, %next) : {D1}, {D1}"""
    sim = simulate(make_program(body, arrays={"a": ("f32", 5)}, extra=INC))
    with pytest.raises(ProgramError, match="@map writes memory its input 0 reads at a later"):
        run_main(sim, {})


def test_map_in_place_over_a_dsd_revisiting_an_address_is_refused():
    # one stride-0 DSD as input and output: element i reads a[0], written by element i-1
    body = f"""{dsd("a", 4, access="affine_map<(d0) -> (0)>")}
      csl_ext.map @inc(%a_dsd, %a_dsd) : {D1}, {D1}"""
    sim = simulate(make_program(body, arrays={"a": ("f32", 5)}, extra=INC))
    with pytest.raises(ProgramError, match="@map writes memory its input 0 reads at a later"):
        run_main(sim, {})


def test_map_dsds_of_different_lengths_are_refused():
    body = f"""{dsd("a", 4)}
      {dsd("b", 5)}
      csl_ext.map @inc(%a_dsd, %b_dsd) : {D1}, {D1}"""
    sim = simulate(make_program(body, arrays={"a": ("f32", 5), "b": ("f32", 5)}, extra=INC))
    with pytest.raises(ProgramError, match=r"different lengths \[4, 5\]"):
        run_main(sim, {})


def test_map_element_type_must_match_the_callback():
    body = f"""{dsd("a", 4, "i32")}
      {dsd("b", 4)}
      csl_ext.map @inc(%a_dsd, %b_dsd) : {D1}, {D1}"""
    sim = simulate(make_program(body, arrays={"a": ("i32", 4), "b": ("f32", 4)}, extra=INC))
    with pytest.raises(ProgramError, match="DSD of int32 elements but inc takes float32"):
        run_main(sim, {})


FIN, FOUT = "!csl<dsd fabin_dsd>", "!csl<dsd fabout_dsd>"


@pytest.mark.parametrize(("args", "types", "callee", "match"), [
    ("%fo, %a_dsd", f"{FOUT}, {D1}", "inc", "input 0 is a fabout_dsd, which cannot be read"),
    ("%a_dsd, %fi", f"{D1}, {FIN}", "inc", "output is a fabin_dsd, which cannot be written"),
    ("%f, %fp", f"f32, {PS}", "inc", "needs at least one DSD operand"),
    ("%a_dsd", D1, "inc", "takes a callback, at least one input and an output"),
    ("%a_dsd, %f", f"{D1}, f32", "inc", "output has type f32"),
    ("%a_dsd, %f, %a_dsd", f"{D1}, f32, {D1}", "inc", "takes 1 parameter\\(s\\) for 2 input"),
    # a callback returning nothing has no output: both operands are its inputs
    ("%a_dsd, %a_dsd", f"{D1}, {D1}", "nothing", "@nothing takes 1 parameter\\(s\\) for 2 input"),
    ("%a_dsd, %a_dsd", f"{D1}, {D1}", "missing", "is not a csl.func of this module"),
    ("%a_dsd, %ip", f"{D1}, !csl.ptr<i32, #csl<ptr_kind single>, #csl<ptr_const var>>", "inc",
     "output points to i32 but @inc returns f32"),
    ("%a_dsd, %pm", f"{D1}, {PM}", "inc", "output has type"),
])
def test_map_verifier_rules(args: str, types: str, callee: str, match: str):
    body = f"""{dsd("a", 4)}
      %n4 = arith.constant 4 : i16
      %f = arith.constant 1.0 : f32
      %fo = "csl.get_fab_dsd"(%n4) <{{fabric_color = 1 : ui5, queue_id = 2 : i3}}> : (i16) -> {FOUT}
      %fi = "csl.get_fab_dsd"(%n4) <{{fabric_color = 1 : ui5, queue_id = 2 : i3}}> : (i16) -> {FIN}
      %v = "csl.variable"() : () -> !csl.var<f32>
      %fp = csl_ext.addressof_var %v : !csl.var<f32> -> {PS}
      %iv = "csl.variable"() : () -> !csl.var<i32>
      %ip = csl_ext.addressof_var %iv : !csl.var<i32> -> !csl.ptr<i32, #csl<ptr_kind single>, #csl<ptr_const var>>
      %pm = "csl.addressof"(%a) : (memref<?xf32>) -> {PM}
      csl_ext.map @{callee}({args}) : {types}"""
    extra = INC + """
    csl.func @nothing(%x: f32) {
      csl.return
    }"""
    with pytest.raises(VerifyException, match=match):
        parse_program(make_program(body, arrays={"a": ("f32", 4)}, extra=extra))


def test_deref_rules():
    ok = csl_ext.DerefOp.__name__  # the op is registered in the dialect
    assert ok in {o.__name__ for o in csl_ext.CSL_EXT.operations}
    body = """%pm = "csl.addressof"(%a) : (memref<?xf32>) -> !csl.ptr<f32, #csl<ptr_kind many>, #csl<ptr_const var>>
      %x = csl_ext.deref %pm : !csl.ptr<f32, #csl<ptr_kind many>, #csl<ptr_const var>> -> f32"""
    with pytest.raises(VerifyException, match=r"dereferences a single pointer \(\*T\), not a many"):
        parse_program(make_program(body, arrays={"a": ("f32", 4)}))


def test_right_shifts_and_xor_print_as_csl_and_compute_as_c():
    # power-method's approx reads the exponent with `(x_u32 & MASK) >> 23`; xDSL 0.74
    # prints neither >> nor ^ (they came out as "unknown op")
    body = """%a = arith.constant -64 : i32
      %b = arith.constant 2 : i32
      %l = arith.shrui %a, %b : i32
      %r = arith.shrsi %a, %b : i32
      %x = arith.xori %a, %b : i32
      %au = "csl.mlir.signedness_cast"(%a) : (i32) -> ui32
      %bu = "csl.mlir.signedness_cast"(%b) : (i32) -> ui32
      %ru = arith.shrsi %au, %bu : ui32
      %rus = "csl.mlir.signedness_cast"(%ru) : (ui32) -> i32
      %i0 = arith.constant 0 : index
      %i1 = arith.constant 1 : index
      %i2 = arith.constant 2 : index
      %i3 = arith.constant 3 : index
      memref.store %l, %o[%i0] : memref<?xi32>
      memref.store %r, %o[%i1] : memref<?xi32>
      memref.store %x, %o[%i2] : memref<?xi32>
      memref.store %rus, %o[%i3] : memref<?xi32>"""
    text = make_program(body, arrays={"o": ("i32", 4)})
    out = array(run_main(simulate(text), {}), "o")
    a = np.int32(-64)
    np.testing.assert_array_equal(out, [np.uint32(a.view(np.uint32) >> 2).view(np.int32),
                                        a >> 2, a ^ 2, a >> 2])
    buf = io.StringIO()
    print_csl(parse_program(text), buf)
    csl = buf.getvalue()
    assert "o[0] = (@bitcast(i32, @bitcast(u32, @as(i32, -64)) >> 2));" in csl
    assert "o[1] = (-64 >> 2);" in csl and "o[2] = (-64 ^ 2);" in csl
    assert "@bitcast(u32, @bitcast(i32, @as(u32, " in csl  # arithmetic shift of a u32

# ruff: noqa: E501  (embedded MLIR lines)
"""User CSL modules (`pyflame_mlir.runtime.wse.modules`): `@import_module("file.csl",
struct)` resolved as cslc resolves it (relative to the importing file, then each
--import-path), in a PE program and in the layout, two independent copies of one file,
fn params (a kernel function, memcpy's unblock_cmd_stream), member access; the printed
tree; and the errors: a missing file, a missing param, a field naming no param (a
warning, as cslc's), a function param given something else."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from _wse_harness import make_program, simulate
from xdsl.utils.exceptions import VerifyException

from pyflame_mlir.runtime.wse import load_module
from pyflame_mlir.runtime.wse.compile import compile_program
from pyflame_mlir.runtime.wse.errors import ProgramError
from pyflame_mlir.runtime.wse.modules import ImportParamWarning
from pyflame_mlir.runtime.wse.run_host import run_script

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "csl"
MODULES = FIXTURES / "modules"


@pytest.mark.parametrize(("arch", "width"), [("wse2", 2), ("wse3", 3)])
def test_imported_files_run_through_the_host_script(arch: str, width: int, tmp_path: Path):
    out = compile_program(MODULES / "scale.mlir", tmp_path / "out", {"width": width}, arch,
                          [MODULES / "include"])
    (report,) = run_script(FIXTURES / "modules_run.py", ["--name", str(out)], quiet=True)
    assert report.arch == arch
    # the printed tree: each imported file where the importing file's import finds it
    # (common.csl, found on the import path, beside lib/scale.csl that imports it)
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*.csl")) == [
        "consts.csl", "layout.csl", "lib/common.csl", "lib/params.csl", "lib/scale.csl",
        "pe.csl"]
    pe = (out / "pe.csl").read_text()
    assert 'const scale_x : imported_module = @import_module("lib/scale.csl", sx);' in pe
    assert ".f_callback = count_done," in pe and ".f_callback = sys_mod.unblock_cmd_stream," in pe
    assert "const cx : i16 = scale_x.calls;" in pe
    scale = (out / "lib/scale.csl").read_text()
    assert "param factor : f32 = 2.0;" in scale and "param f_callback : fn() void;" in scale
    assert "  f_callback();" in scale
    assert "(px + consts.base)" in (out / "lib/params.csl").read_text()


def test_a_missing_file_is_named_with_where_it_was_looked_for(tmp_path: Path):
    with pytest.raises(ProgramError, match=r'@import_module\("common.csl"\) in lib/scale.csl: '
                                           r"file not found; looked for \S*/modules/lib/common.mlir, "
                                           r"\S*/elsewhere/common.mlir"):
        compile_program(MODULES / "scale.mlir", tmp_path / "out", {}, "wse2",
                        [tmp_path / "elsewhere"])


def test_a_csl_file_without_its_ir_is_named(tmp_path: Path):
    shutil.copytree(MODULES, tmp_path / "m")
    (tmp_path / "m" / "lib" / "common.csl").write_text("fn offset() f32 { return 0.5; }\n")
    with pytest.raises(ProgramError, match=r"lib/common.csl exists, but the simulator reads a "
                                           "module's csl-dialect IR"):
        compile_program(tmp_path / "m" / "scale.mlir", tmp_path / "out")


def test_an_import_leaving_the_program_directory_prints_below_it(tmp_path: Path):
    """`"../x.csl"` from the program in k/: the program's own files go one directory
    down, into out/k/, so the printed import still finds x.csl, and x's import of
    "k/consts.csl" finds consts.csl."""
    src = tmp_path / "src"
    shutil.copytree(MODULES, src / "k")
    text = (src / "k" / "scale.mlir").read_text()
    (src / "k" / "scale.mlir").write_text(text.replace('"lib/params.csl"', '"../params.csl"'))
    (src / "k" / "lib" / "params.mlir").rename(src / "params.mlir")
    (src / "params.mlir").write_text((src / "params.mlir").read_text()
                                     .replace('"../consts.csl"', '"k/consts.csl"'))
    out = compile_program(src / "k" / "scale.mlir", tmp_path / "out", {}, "wse2",
                          [MODULES / "include"])
    assert (out / "k" / "layout.csl").is_file() and (out / "params.csl").is_file()
    assert '@import_module("../params.csl", ps)' in (out / "k" / "layout.csl").read_text()
    assert (out / "k" / "consts.csl").is_file()
    run_script(FIXTURES / "modules_run.py", ["--name", str(out)], quiet=True)


LIB = """
  "csl.module"() <{kind = #csl<module_kind program>, sym_name = "util"}> ({
    %k = "csl.param"() <{param_name = "k"}> : () -> f32
    csl.func @times(%v: f32) -> f32 {
      %r = arith.mulf %v, %k : f32
      csl.return %r : f32
    }
  }) : () -> ()
"""


def _with_util(fields: str, values: str, types: str) -> str:
    body = """
      %u = "csl.member_call"(%util, %v) <{field = "times"}> : (!csl.imported_module, f32) -> f32
      %i0 = arith.constant 0 : index
      memref.store %u, %out[%i0] : memref<?xf32>"""
    extra = f"""
    %v = arith.constant 3.0 : f32
    %s = "csl.const_struct"({values}) <{{ssa_fields = [{fields}]}}> : ({types}) -> !csl.comptime_struct
    %util = "csl.import_module"(%s) <{{module = "util.csl"}}> : (!csl.comptime_struct) -> !csl.imported_module"""
    text = make_program(body, arrays={"out": ("f32", 1)}, extra=extra)
    head, tail = text.rsplit("}", 1)
    return head + LIB + "}" + tail


def test_a_module_of_the_same_input_is_imported_by_its_file_name():
    sim = simulate(_with_util('"k"', "%v", "f32"))
    sim.launch("main")
    assert sim.symbol("out", 0, 0)[0] == 9.0


def test_a_param_without_a_value_is_named():
    text = _with_util('"j"', "%v", "f32")
    with pytest.raises(
            ProgramError, match=r"PE \(0, 0\): @import_module\(\"util.csl\"\): param 'k' gets "
                                r"no value from the @import_module struct \(its fields: \['j'\]\)"):
        simulate(text)


def test_a_field_naming_no_param_is_a_warning():
    text = _with_util('"k", "kk"', "%v, %v", "f32, f32")
    with pytest.warns(ImportParamWarning, match=r"struct field\(s\) \['kk'\] name no param of "
                                                r"the module \(its params: \['k'\]\)"):
        sim = simulate(text)
    sim.launch("main")
    assert sim.symbol("out", 0, 0)[0] == 9.0


def test_an_import_of_a_file_not_in_a_program_read_from_text_is_refused():
    text = _with_util('"k"', "%v", "f32").replace('module = "util.csl"', 'module = "utill.csl"')
    with pytest.raises(ProgramError, match=r"no csl.module 'utill' in the program, and the "
                                           "program was not read from a file"):
        load_module(text)
    with pytest.raises(ProgramError, match=r"@import_module\(.utill.csl.\) \(at csl.module "
                                           r".pe. > op \d+\): no module 'utill' in the program"):
        simulate(text)


def test_a_fn_param_given_a_number_is_refused():
    text = _with_util('"k"', "%v", "f32").replace(
        '%k = "csl.param"() <{param_name = "k"}> : () -> f32',
        '%k = "csl.param"() <{param_name = "k"}> : () -> (() -> ())').replace(
        "%r = arith.mulf %v, %k : f32", "%r = arith.mulf %v, %v : f32")
    with pytest.raises(ProgramError, match=r"param 'k' is a function; the import's struct "
                                           r"gives 3.0 \(float32\)"):
        simulate(text)


ROUTED = """
builtin.module {
  "csl.module"() <{kind = #csl<module_kind layout>, sym_name = "layout"}> ({
    %w = arith.constant 2 : i16
    %h = arith.constant 1 : i16
    %c3 = arith.constant 3 : i16
    %color = "csl.get_color"(%c3) : (i16) -> !csl.color
    %memcpy_init = "csl.const_struct"(%w, %h) <{ssa_fields = ["width", "height"]}> : (i16, i16) -> !csl.comptime_struct
    %memcpy = "csl.import_module"(%memcpy_init) <{module = "<memcpy/get_params>"}> : (!csl.comptime_struct) -> !csl.imported_module
    %rs = "csl.const_struct"(%color) <{ssa_fields = ["c"]}> : (!csl.color) -> !csl.comptime_struct
    %routes = "csl.import_module"(%rs) <{module = "routes.csl"}> : (!csl.comptime_struct) -> !csl.imported_module
    csl.layout {
      %i0 = arith.constant 0 : i16
      %i1 = arith.constant 1 : i16
      "csl.set_rectangle"(%w, %h) : (i16, i16) -> ()
      scf.for %x = %i0 to %w step %i1 : i16 {
        %mp = "csl.member_call"(%memcpy, %x) <{field = "get_params"}> : (!csl.imported_module, i16) -> !csl.comptime_struct
        %tp = "csl.const_struct"(%mp, %x) <{ssa_fields = ["memcpy_params", "px"]}> : (!csl.comptime_struct, i16) -> !csl.comptime_struct
        "csl.set_tile_code"(%x, %i0, %tp) <{file = "pe.csl"}> : (i16, i16, !csl.comptime_struct) -> ()
        "csl.member_call"(%routes, %x, %i0) <{field = "set_routes"}> : (!csl.imported_module, i16, i16) -> ()
      }
    }
  }) : () -> ()
  "csl.module"() <{kind = #csl<module_kind program>, sym_name = "routes"}> ({
    %c = "csl.param"() <{param_name = "c"}> : () -> !csl.color
    csl.func @set_routes(%x: i16, %y: i16) {
      %z = arith.constant 0 : i16
      %first = arith.cmpi eq, %x, %z : i16
      scf.if %first {
        csl_ext.set_color_config %x, %y, %c routes <rx = [ramp], tx = [east]> : i16, i16
      } else {
        csl_ext.set_color_config %x, %y, %c routes <rx = [west], tx = [ramp]> : i16, i16
      }
      csl.return
    }
  }) : () -> ()
  "csl.module"() <{kind = #csl<module_kind program>, sym_name = "pe"}> ({
    %memcpy_params = "csl.param"() <{param_name = "memcpy_params"}> : () -> !csl.comptime_struct
    %px = "csl.param"() <{param_name = "px"}> : () -> i16
    %sys_mod = "csl.import_module"(%memcpy_params) <{module = "<memcpy/memcpy>"}> : (!csl.comptime_struct) -> !csl.imported_module
    %one = arith.constant 1 : i16
    %zero = arith.constant 0.0 : f32
    %out = "csl.constants"(%one, %zero) : (i16, f32) -> memref<?xf32>
    %c3 = arith.constant 3 : i16
    %color = "csl.get_color"(%c3) : (i16) -> !csl.color
    %tx = csl_ext.get_fab_dsd %one, %color {queue_id = 2 : i3} : i16 -> !csl<dsd fabout_dsd>
    csl.task @recv(%v: f32) attributes {kind = #csl<task_kind data>, id = 3 : ui5} {
      %i0 = arith.constant 0 : index
      memref.store %v, %out[%i0] : memref<?xf32>
      "csl.member_call"(%sys_mod) <{field = "unblock_cmd_stream"}> : (!csl.imported_module) -> ()
      csl.return
    }
    csl.func @main() {
      %z = arith.constant 0 : i16
      %first = arith.cmpi eq, %px, %z : i16
      scf.if %first {
        %v = arith.constant 2.5 : f32
        "csl.fmovs"(%tx, %v) : (!csl<dsd fabout_dsd>, f32) -> ()
        "csl.member_call"(%sys_mod) <{field = "unblock_cmd_stream"}> : (!csl.imported_module) -> ()
      }
      csl.return
    }
    "csl.export"() <{var_name = @main, type = () -> ()}> : () -> ()
    %out_ptr = "csl.addressof"(%out) : (memref<?xf32>) -> !csl.ptr<f32, #csl<ptr_kind many>, #csl<ptr_const var>>
    "csl.export"(%out_ptr) <{var_name = "out", type = !csl.ptr<f32, #csl<ptr_kind many>, #csl<ptr_const var>>}> : (!csl.ptr<f32, #csl<ptr_kind many>, #csl<ptr_const var>>) -> ()
  }) : () -> ()
}
"""


def test_a_module_the_layout_imports_sets_routes():
    """The SDK's routes.csl pattern: a function of a module the layout imports calls
    @set_color_config at compile time (PE 0 -> PE 1 on the color it was given)."""
    sim = simulate(ROUTED)
    sim.launch("main")
    assert sim.symbol("out", 1, 0)[0] == 2.5


def test_set_color_config_outside_a_layout_or_function_is_refused():
    text = ROUTED.replace('''    csl.func @set_routes(%x: i16, %y: i16) {''', '''    %q = arith.constant 0 : i16
    csl_ext.set_color_config %q, %q, %c routes <rx = [ramp], tx = [east]> : i16, i16
    csl.func @set_routes(%x: i16, %y: i16) {''')
    with pytest.raises(VerifyException, match="@set_color_config belongs in a layout block "
                                              "or in a function called from one"):
        simulate(text)


def test_a_program_calling_set_color_config_at_run_time_is_refused():
    text = ROUTED.replace('''        "csl.member_call"(%sys_mod) <{field = "unblock_cmd_stream"}> : (!csl.imported_module) -> ()
      }
      csl.return''', '''        "csl.member_call"(%sys_mod) <{field = "unblock_cmd_stream"}> : (!csl.imported_module) -> ()
        csl_ext.set_color_config %z, %z, %color routes <rx = [ramp], tx = [east]> : i16, i16
      }
      csl.return''')
    sim = simulate(text)
    with pytest.raises(ProgramError, match="@set_color_config is not allowed in a program "
                                           "module"):
        sim.launch("main")

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

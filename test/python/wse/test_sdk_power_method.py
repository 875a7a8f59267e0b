"""The SDK benchmark power-method (test/fixtures/csl/power_method_wse2/3.mlir: its kernel
with the allreduce and stencil_3d_7pts libraries, the latter in its WSE-2 and WSE-3
forms): its host script runs the power method on the device and checks x on every PE
against numpy's iterations with the same per-PE 7-point operator, at several rectangles
and block sizes (a last block shorter than BLOCK_SIZE, one block holding a whole
column); the WSE-2 form on WSE-3 is refused (its output queue is bound to no color);
the printed CSL."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pyflame_mlir.runtime.wse.compile import compile_program
from pyflame_mlir.runtime.wse.errors import ArchRuleError, ProgramError
from pyflame_mlir.runtime.wse.run_host import run_script

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "csl"


@pytest.mark.parametrize(("arch", "w", "h", "zdim", "block", "ite"), [
    ("wse2", 2, 2, 6, 4, 2),
    ("wse3", 2, 2, 6, 4, 2),
    ("wse2", 3, 3, 5, 2, 3),
    ("wse3", 4, 2, 3, 8, 2),
])
def test_power_method_runs_unchanged(arch: str, w: int, h: int, zdim: int, block: int,
                                     ite: int, tmp_path: Path):
    out = compile_program(FIXTURES / f"power_method_{arch}.mlir", tmp_path / "pm",
                          {"width": w, "height": h, "MAX_ZDIM": zdim, "BLOCK_SIZE": block},
                          arch)
    (report,) = run_script(FIXTURES / "power_method_run.py",
                           ["--name", str(out), "--max-ite", str(ite)], quiet=True)
    launches = dict(report.launches)
    assert set(launches) == {"f_sync", "f_power"}
    # each iteration is a stencil exchange plus two allreduces: f_power takes several
    # times f_sync's single allreduce
    assert ite * 2 < launches["f_power"] / launches["f_sync"] < ite * 12


def test_the_wse2_form_on_wse3_is_refused(tmp_path: Path):
    out = compile_program(FIXTURES / "power_method_wse2.mlir", tmp_path / "pm",
                          {"width": 2, "height": 2, "MAX_ZDIM": 4, "BLOCK_SIZE": 2}, "wse3")
    with pytest.raises(ArchRuleError, match="through output queue 3, which no "
                                            "@initialize_queue binds to a color: on WSE-3"):
        run_script(FIXTURES / "power_method_run.py", ["--name", str(out)], quiet=True)


def test_wse3_sends_on_microthread_3_through_bound_queues(tmp_path: Path):
    out = compile_program(FIXTURES / "power_method_wse3.mlir", tmp_path / "pm",
                          {"width": 2, "height": 2, "MAX_ZDIM": 4, "BLOCK_SIZE": 2}, "wse3")
    stencil = (out / "benchmark-libs/stencil_3d_7pts/wse3/pe.csl").read_text()
    assert ("@load_to_dsr(dest_dsr_send, fab, .{ .async = true, .activate = f_send, "
            ".ut_id = @get_ut_id(3) });") in stencil
    # the library's task ids are its params, as in the SDK; the kernel passes them on
    assert "param SEND : local_task_id;" in stencil and "@bind_local_task(f_send, SEND);" in stencil
    assert "@activate(COMM);" in stencil
    kernel = (out / "kernel_power.csl").read_text()
    assert "param COMM : local_task_id;" in kernel
    assert "@get_local_task_id(16)" in (out / "layout.csl").read_text()
    assert "@initialize_queue(@get_output_queue(6), .{ .color = c_send_north });" in stencil


def test_power_method_prints_as_csl(tmp_path: Path):
    out = compile_program(FIXTURES / "power_method_wse2.mlir", tmp_path / "pm",
                          {"width": 2, "height": 2, "MAX_ZDIM": 4, "BLOCK_SIZE": 2}, "wse2")
    # the kernel imports the two libraries, printed beside it as the SDK's tree has them
    pe = (out / "kernel_power.csl").read_text()
    reduce = (out / "benchmark-libs/allreduce/pe.csl").read_text()
    stencil = (out / "benchmark-libs/stencil_3d_7pts/wse2/pe.csl").read_text()
    for text, line in [
        (pe, "@map(reduce_fabs, mem_y, ymax_p, ymax_p);"),
        (pe, 'const reduce_mod : imported_module = @import_module('
             '"benchmark-libs/allreduce/pe.csl", reduce_params);'),
        (pe, ".f_callback = f_trigger_state_machine,"),
        (pe, "reduce_mod.allreduce_nrm2(pn);"),
        (pe, "stencil_mod.spmv(n1, ptr_stencil_coeff, ptr_x, ptr_y);"),
        (reduce, "param f_callback : fn() void;"),
        (reduce, "@set_teardown_handler(teardown_allreduce, C_ROUTE);"),
        (stencil, "@fmacs(dest_dsr_send, src0_dsr_st, src1_dsr_send, c);"),
        (stencil, "@initialize_queue(@get_input_queue(7), .{ .color = c_recv_north });"),
    ]:
        assert line in text, line
    assert "fn allreduce(" not in pe and "fn spmv(" not in pe


def test_one_column_is_refused_as_the_allreduce_library_asserts(tmp_path: Path):
    """The library's comptime `@comptime_assert(1 < width)`: cslc refuses a one-column
    rectangle (the simulator deadlocked on it)."""
    out = compile_program(FIXTURES / "power_method_wse2.mlir", tmp_path / "pm",
                          {"width": 1, "height": 2, "MAX_ZDIM": 4, "BLOCK_SIZE": 2}, "wse2")
    text = (out / "benchmark-libs/allreduce/pe.csl").read_text()
    assert re.search(r"@comptime_assert\(\(1\s+<\s+width\)\);", text)
    with pytest.raises(ProgramError, match=r"PE \(0, 0\): @comptime_assert fails \(at "
                                           r"csl.module \"benchmark-libs/allreduce/pe\" > "
                                           r"op \d+\): cslc refuses the program"):
        run_script(FIXTURES / "power_method_run.py", ["--name", str(out)], quiet=True)

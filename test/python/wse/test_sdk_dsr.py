# ruff: noqa: E501  (embedded MLIR lines)
"""Data structure registers (csl_ext.get_dsr / load_to_dsr / dsd_builtin): the form of the
SDK's allreduce library (benchmark-libs/allreduce/pe.csl): a sender moves x east through
a dsr_dest loaded with a fabout DSD whose load names the completion task; the receiver
adds the wavelets to its x through dsr_src1 (a fabin DSD) and dsr_src0/dsr_dest (memory),
checked against numpy; the SDK benchmark single-tile-matvec (registers with
.save_address under @map) run unchanged on WSE-2 and WSE-3; the printed CSL; the rules."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from _wse_harness import make_program, simulate
from pyflame_mlir.lowering.csl_printer import print_csl
from xdsl.utils.exceptions import VerifyException

from pyflame_mlir.runtime.wse import parse_program
from pyflame_mlir.runtime.wse.compile import compile_program
from pyflame_mlir.runtime.wse.errors import ProgramError, UnsupportedError
from pyflame_mlir.runtime.wse.run_host import run_script

N = 5
D1 = "!csl<dsd mem1d_dsd>"
DEST, SRC0, SRC1 = "!csl_ext.dsr<dest>", "!csl_ext.dsr<src0>", "!csl_ext.dsr<src1>"
FOUT, FIN = "!csl<dsd fabout_dsd>", "!csl<dsd fabin_dsd>"

REGS = f"""
    %dest_dsr = csl_ext.get_dsr 1 -> {DEST}
    %src0_dsr = csl_ext.get_dsr 1 -> {SRC0}
    %src1_dsr = csl_ext.get_dsr 1 -> {SRC1}
    %done = "csl.variable"() <{{default = 0 : i32}}> : () -> !csl.var<i32>
    csl.task @f_done() attributes {{kind = #csl<task_kind local>, id = 10 : ui5}} {{
      %one = arith.constant 1 : i32
      "csl.store_var"(%done, %one) : (!csl.var<i32>, i32) -> ()
      %i0 = arith.constant 0 : index
      memref.store %one, %flag[%i0] : memref<?xi32>
      csl.return
    }}"""

SEND = f"""%n = arith.constant {N} : i16
          %c1 = arith.constant 1 : i16
          %col = "csl.get_color"(%c1) : (i16) -> !csl.color
          %x_dsd = "csl.get_mem_dsd"(%x, %n) : (memref<?xf32>, i16) -> {D1}
          %fab = csl_ext.get_fab_dsd %n, %col {{queue_id = 2 : i3}} : i16 -> {FOUT}
          csl_ext.load_to_dsr %dest_dsr, %fab {{async = #csl_ext.async<activate local 10>}} : {DEST}, {FOUT}
          csl_ext.load_to_dsr %src1_dsr, %x_dsd : {SRC1}, {D1}
          csl_ext.dsd_builtin "mov32"(%dest_dsr, %src1_dsr) {{async = #csl_ext.async<>}} : {DEST}, {SRC1}"""

RECV = f"""%n = arith.constant {N} : i16
          %c1 = arith.constant 1 : i16
          %col = "csl.get_color"(%c1) : (i16) -> !csl.color
          %x_dsd = "csl.get_mem_dsd"(%x, %n) : (memref<?xf32>, i16) -> {D1}
          %fab = csl_ext.get_fab_dsd %n, %col {{queue_id = 2 : i3}} : i16 -> {FIN}
          csl_ext.load_to_dsr %src1_dsr, %fab {{async = #csl_ext.async<activate local 10>}} : {SRC1}, {FIN}
          csl_ext.load_to_dsr %src0_dsr, %x_dsd : {SRC0}, {D1}
          csl_ext.load_to_dsr %dest_dsr, %x_dsd : {DEST}, {D1}
          csl_ext.dsd_builtin "fadds"(%dest_dsr, %src0_dsr, %src1_dsr) {{async = #csl_ext.async<>}} : {DEST}, {SRC0}, {SRC1}"""

ROUTES = """
      %x0 = arith.constant 0 : i16
      %x1 = arith.constant 1 : i16
      %y0 = arith.constant 0 : i16
      %k1 = arith.constant 1 : i16
      %col = "csl.get_color"(%k1) : (i16) -> !csl.color
      csl_ext.set_color_config %x0, %y0, %col routes <rx = [ramp], tx = [east]> : i16, i16
      csl_ext.set_color_config %x1, %y0, %col routes <rx = [west], tx = [ramp]> : i16, i16"""


def _program(send: str = SEND, recv: str = RECV) -> str:
    body = f"""%zero = arith.constant 0 : i16
      %first = arith.cmpi eq, %px, %zero : i16
      scf.if %first {{
          {send}
      }} else {{
          {recv}
      }}"""
    return make_program(body, arrays={"x": ("f32", N), "flag": ("i32", 1)}, extra=REGS,
                        layout=ROUTES, width=2)


def test_reduce_step_through_registers_matches_numpy():
    sim = simulate(_program())
    x0 = np.linspace(-1, 1, N, dtype=np.float32)
    x1 = np.arange(N, dtype=np.float32) * np.float32(0.5)
    sim.symbol("x", 0, 0)[:] = x0
    sim.symbol("x", 1, 0)[:] = x1
    sim.launch("main")
    np.testing.assert_array_equal(sim.symbol("x", 1, 0), x1 + x0)
    np.testing.assert_array_equal(sim.symbol("x", 0, 0), x0)
    # each PE's completion task ran: the action its register's load named
    assert sim.symbol("flag", 0, 0)[0] == 1 and sim.symbol("flag", 1, 0)[0] == 1
    r = sim.report()
    assert r.flops == N and r.wavelet_hops == N


def test_registers_print_as_csl():
    buf = io.StringIO()
    print_csl(parse_program(_program()), buf)
    text = buf.getvalue()
    assert "const dest_dsr : dsr_dest = @get_dsr(dsr_dest, 1);" in text
    assert "const src1_dsr : dsr_src1 = @get_dsr(dsr_src1, 1);" in text
    assert "@load_to_dsr(dest_dsr, fab, .{ .async = true, .activate = @get_local_task_id(10) });" in text
    assert "@load_to_dsr(src1_dsr, x_dsd);" in text
    assert "@mov32(dest_dsr, src1_dsr, .{ .async = true });" in text
    assert "@fadds(dest_dsr, src0_dsr, src1_dsr, .{ .async = true });" in text


def test_a_register_used_before_it_is_loaded_is_an_error():
    send = SEND.replace(f"csl_ext.load_to_dsr %src1_dsr, %x_dsd : {SRC1}, {D1}", "")
    with pytest.raises(ProgramError, match="uses dsr_src1 1, which no @load_to_dsr loaded"):
        simulate(_program(send=send)).launch("main")


def test_a_register_used_again_without_reloading_is_refused():
    send = SEND + f"""
          csl_ext.load_to_dsr %dest_dsr, %x_dsd : {DEST}, {D1}
          csl_ext.dsd_builtin "mov32"(%dest_dsr, %src1_dsr) : {DEST}, {SRC1}"""
    with pytest.raises(UnsupportedError, match="uses dsr_src1 1 again without reloading it"):
        simulate(_program(send=send)).launch("main")


def test_an_async_load_used_by_a_synchronous_operation_is_refused():
    send = SEND.replace(f"{{async = #csl_ext.async<>}} : {DEST}, {SRC1}", f": {DEST}, {SRC1}")
    with pytest.raises(UnsupportedError, match="loaded with .async options but the operation using it is synchronous"):
        simulate(_program(send=send)).launch("main")


def test_two_completion_actions_are_refused():
    recv = RECV.replace(f"csl_ext.load_to_dsr %src0_dsr, %x_dsd : {SRC0}, {D1}",
                        f"csl_ext.load_to_dsr %src0_dsr, %x_dsd {{async = #csl_ext.async<unblock local 10>}} : {SRC0}, {D1}")
    with pytest.raises(UnsupportedError, match="several completion actions"):
        simulate(_program(recv=recv)).launch("main")


@pytest.mark.parametrize(("line", "match"), [
    (f'csl_ext.dsd_builtin "mov32"(%src1_dsr, %dest_dsr) : {SRC1}, {DEST}', "a dsr_src1 holds a source operand"),
    (f'csl_ext.dsd_builtin "mov32"(%src0_dsr, %dest_dsr) : {SRC0}, {DEST}', "operand 1 is a dsr_dest"),
    (f'csl_ext.load_to_dsr %dest_dsr, %fin : {DEST}, {FIN}', "a fabin_dsd \\(a source\\) cannot go to a dsr_dest"),
    (f'csl_ext.load_to_dsr %src1_dsr, %fout : {SRC1}, {FOUT}', "a fabout_dsd \\(a destination\\) cannot go to a dsr_src1"),
    ('%bad = csl_ext.get_dsr 1 -> !csl_ext.dsr<fifo_dest>', "DSR kind 'fifo_dest'"),
])
def test_register_rules(line: str, match: str):
    body = f"""%n = arith.constant 1 : i16
      %c1 = arith.constant 1 : i16
      %col = "csl.get_color"(%c1) : (i16) -> !csl.color
      %fin = csl_ext.get_fab_dsd %n, %col {{queue_id = 2 : i3}} : i16 -> {FIN}
      %fout = csl_ext.get_fab_dsd %n, %col {{queue_id = 2 : i3}} : i16 -> {FOUT}
      {line}"""
    with pytest.raises(VerifyException, match=match):
        parse_program(make_program(body, arrays={"x": ("f32", N), "flag": ("i32", 1)}, extra=REGS))


FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "csl"


@pytest.mark.parametrize(("arch", "params"), [
    ("wse2", {}), ("wse3", {}), ("wse2", {"tile_size": 25, "iters": 2, "width": 1, "height": 1}),
])
def test_single_tile_matvec_runs_unchanged(arch: str, params: dict, tmp_path: Path):
    # @map over x of a callback whose @fmacs works on three registers: y's two start over
    # every step (.save_address = false), A's goes on to the next column (true)
    out = compile_program(FIXTURES / "single_tile_matvec.mlir", tmp_path / "stm", params, arch)
    (report,) = run_script(FIXTURES / "single_tile_matvec_run.py", ["--name", str(out)],
                           quiet=True)
    nb, iters = params.get("tile_size", 6), params.get("iters", 1)
    padded = -(-nb // 4) * 4
    pes = params.get("width", 2) * params.get("height", 2)
    assert report.flops == pes * iters * nb * padded * 2
    text = (out / "pe_matvec.csl").read_text()
    assert "@load_to_dsr(A_src1_dsr, A_dsd, .{ .save_address = true });" in text
    assert "@load_to_dsr(y_dest_dsr, y_dsd, .{ .save_address = false });" in text
    assert "@map(gemv_static_step_A, x_dsd);" in text
    assert "@fmacs(y_dest_dsr, y_src0_dsr, A_src1_dsr, curX);" in text


def test_reusing_a_register_whose_load_said_nothing_is_refused(tmp_path: Path):
    text = (FIXTURES / "single_tile_matvec.mlir").read_text().replace(
        "%A_dsd {save_address = true}", "%A_dsd")
    src = tmp_path / "p.mlir"
    src.write_text(text)
    out = compile_program(src, tmp_path / "o", {}, "wse2")
    with pytest.raises(UnsupportedError, match="uses dsr_src1 0 again without reloading it, "
                                               "and its load did not say .save_address"):
        run_script(FIXTURES / "single_tile_matvec_run.py", ["--name", str(out)], quiet=True)

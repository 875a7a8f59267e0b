# ruff: noqa: E501  (embedded MLIR lines)
"""FIFOs (csl_ext.allocate_fifo, pushed and popped by csl_ext.dsd_builtin): the SDK
tutorial topic-09-fifos run unchanged through its host script on WSE-2 and WSE-3 (a
streamed input pushed through a FIFO, popped to a loopback color and a data task,
streamed out), against numpy; the order of producer and consumer; the refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from _wse_harness import array, make_program, run_main, simulate
from xdsl.utils.exceptions import VerifyException

from pyflame_mlir.runtime.wse import parse_program
from pyflame_mlir.runtime.wse.compile import compile_program
from pyflame_mlir.runtime.wse.errors import UnsupportedError
from pyflame_mlir.runtime.wse.run_host import run_script

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "csl"
PARAMS = {"MEMCPYH2D_DATA_1_ID": 0, "MEMCPYD2H_DATA_1_ID": 1}


def _tutorial(arch: str, n: int, tmp_path: Path):
    out = compile_program(FIXTURES / f"fifos_{arch}.mlir", tmp_path / "fifo",
                          {**PARAMS, "num_elems_to_process": n}, arch)
    (report,) = run_script(FIXTURES / "fifos_run.py", ["--name", str(out)], quiet=True)
    return out, report


@pytest.mark.parametrize("arch", ["wse2", "wse3"])
def test_fifo_tutorial_runs_unchanged(arch: str, tmp_path: Path):
    out, report = _tutorial(arch, 24, tmp_path)
    assert report.arch == arch
    assert report.flops == 24  # the @fadds into the FIFO
    text = (out / "buffer.csl").read_text()
    assert "const fifo = @allocate_fifo(fifo_buffer);" in text
    assert "@fadds(fifo, in_dsd, ten_dsd, .{ .async = true });" in text
    assert "@fnegs(loopback_dsd, fifo, .{ .async = true });" in text
    unblock = ("@get_data_task_id(@get_input_queue(4))" if arch == "wse3"
               else "@get_data_task_id(@get_color(2))")
    assert f".unblock = {unblock} }});" in text


def test_streaming_more_than_the_fifo_holds_is_refused(tmp_path: Path):
    with pytest.raises(UnsupportedError, match="moves 1100 elements through a FIFO of 1024"):
        _tutorial("wse2", 1100, tmp_path)


FIFO = """
    %cap = arith.constant 8 : i16
    %zf = arith.constant 0.0 : f32
    %fifo_buffer = "csl.constants"(%cap, %zf) : (i16, f32) -> memref<?xf32>
    %fifo = csl_ext.allocate_fifo %fifo_buffer : memref<?xf32>"""
D1 = "!csl<dsd mem1d_dsd>"


def test_a_consumer_issued_before_its_producer_waits_for_it():
    body = f"""%n = arith.constant 6 : i16
      %a_dsd = "csl.get_mem_dsd"(%a, %n) : (memref<?xf32>, i16) -> {D1}
      %d_dsd = "csl.get_mem_dsd"(%d, %n) : (memref<?xf32>, i16) -> {D1}
      csl_ext.dsd_builtin "fnegs"(%d_dsd, %fifo) {{async = #csl_ext.async<>}} : {D1}, !csl_ext.fifo
      csl_ext.dsd_builtin "fmovs"(%fifo, %a_dsd) {{async = #csl_ext.async<>}} : !csl_ext.fifo, {D1}"""
    sim = simulate(make_program(body, arrays={"a": ("f32", 6), "d": ("f32", 6)}, extra=FIFO))
    a = np.arange(6, dtype=np.float32) + 0.5
    np.testing.assert_array_equal(array(run_main(sim, {"a": a}), "d"), -a)


def test_a_synchronous_operation_on_a_fifo_is_refused():
    body = f"""%n = arith.constant 6 : i16
      %a_dsd = "csl.get_mem_dsd"(%a, %n) : (memref<?xf32>, i16) -> {D1}
      csl_ext.dsd_builtin "fmovs"(%fifo, %a_dsd) : !csl_ext.fifo, {D1}"""
    sim = simulate(make_program(body, arrays={"a": ("f32", 6)}, extra=FIFO))
    with pytest.raises(UnsupportedError, match="a synchronous @fmovs on a FIFO"):
        run_main(sim, {})


def test_pushing_past_a_full_fifo_is_refused():
    body = f"""%n = arith.constant 6 : i16
      %a_dsd = "csl.get_mem_dsd"(%a, %n) : (memref<?xf32>, i16) -> {D1}
      csl_ext.dsd_builtin "fmovs"(%fifo, %a_dsd) {{async = #csl_ext.async<>}} : !csl_ext.fifo, {D1}
      csl_ext.dsd_builtin "fmovs"(%fifo, %a_dsd) {{async = #csl_ext.async<>}} : !csl_ext.fifo, {D1}"""
    sim = simulate(make_program(body, arrays={"a": ("f32", 6)}, extra=FIFO))
    with pytest.raises(UnsupportedError, match="moves 12 elements through a FIFO of 8"):
        run_main(sim, {})


@pytest.mark.parametrize(("line", "match"), [
    ('%f2 = csl_ext.allocate_fifo %m2 : memref<2x4xf32>', "one-dimensional array"),
    (f'csl_ext.dsd_builtin "fmovs"(%a_dsd, %a_dsd) : {D1}, {D1}', "has no DSR or FIFO operand"),
])
def test_fifo_rules(line: str, match: str):
    body = f"""%n = arith.constant 6 : i16
      %a_dsd = "csl.get_mem_dsd"(%a, %n) : (memref<?xf32>, i16) -> {D1}
      %m2 = "csl.zeros"() : () -> memref<2x4xf32>
      {line}"""
    with pytest.raises(VerifyException, match=match):
        parse_program(make_program(body, arrays={"a": ("f32", 6)}, extra=FIFO))

# ruff: noqa: E501  (embedded MLIR lines)
"""Streaming memcpy (`memcpy_h2d/d2h(..., streaming=True)`, the stream named by its
color) and the SDK programs that use it, transcribed from Cerebras's public examples:
pipeline-01-basic (no launched function: a task activated at load time streams the
host's data through one async @add16) and GEMV tutorial 9 (x and b streamed in, y
streamed out; data tasks that @block themselves until their async send unblocks
them). The host scripts compare with numpy and raise on a mismatch."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from _wse_harness import FIXTURES

from pyflame_mlir.runtime.wse.compile import compile_program
from pyflame_mlir.runtime.wse.errors import (
    ArchRuleError,
    DeadlockError,
    HostError,
    ProgramError,
    ReservedIdError,
    RouteError,
    StaleWaveletError,
)
from pyflame_mlir.runtime.wse.report import CycleReport
from pyflame_mlir.runtime.wse.run_host import run_script
from pyflame_mlir.runtime.wse.sdkruntime import (
    MemcpyDataType,
    MemcpyOrder,
    SdkRuntime,
    input_array_to_u32,
    memcpy_view,
)

PIPE = dict(size=12, MEMCPYH2D_DATA_1_ID=0, MEMCPYD2H_DATA_1_ID=1)
GEMV = dict(kernel_x_dim=4, kernel_y_dim=3, M=6, N=8, MEMCPYH2D_DATA_1_ID=0,
            MEMCPYH2D_DATA_2_ID=1, MEMCPYD2H_DATA_1_ID=2)


def run_example(program: str, arch: str, script: str, params: dict, tmp_path: Path
                ) -> CycleReport:
    out = compile_program(FIXTURES / f"{program}.mlir", tmp_path / program, params, arch)
    (report,) = run_script(FIXTURES / f"{script}_run.py", ["--name", str(out)], quiet=True)
    return report


@pytest.mark.parametrize("arch", ["wse2", "wse3"])
@pytest.mark.parametrize("size", [12, 1, 20])
def test_pipeline_01_streams_through_an_async_add16(arch: str, size: int, tmp_path: Path):
    r = run_example("pipeline_01", arch, "pipeline_01", {**PIPE, "size": size}, tmp_path)
    assert r.arch == arch
    assert sum(p.dsd_ops for p in r.pes) == 1 and r.flops == 0  # one integer DSD op
    assert r.total_cycles >= size  # one wavelet per cycle in, one out


@pytest.mark.parametrize("size", [21, 40])
def test_pipeline_01_stalls_when_the_stream_outgrows_the_queues(size: int, tmp_path: Path):
    # the tutorial's warning: the @add16 stops reading once its D2H path is full, the
    # H2D cannot finish, and the D2H that would drain it waits for the H2D (the
    # threshold is the model's queue depths, an estimate: in + out path room, 10 each)
    with pytest.raises(DeadlockError, match=(
            f"memcpy_h2d on color 0 never finishes: PE \\(0, 0\\) read 10 of its {size} "
            f"wavelets.*still holds {size - 10} to send(?s:.*)the host does not read them")):
        run_example("pipeline_01", "wse3", "pipeline_01", {**PIPE, "size": size}, tmp_path)


@pytest.mark.parametrize(("program", "arch", "params"), [
    ("gemv_streaming_wse2", "wse2", GEMV),
    ("gemv_streaming_wse3", "wse3", GEMV),
    ("gemv_streaming_wse3", "wse3", {**GEMV, "kernel_x_dim": 3, "kernel_y_dim": 2,
                                     "M": 10, "N": 9}),
    ("gemv_streaming_wse2", "wse2", {**GEMV, "kernel_x_dim": 2, "kernel_y_dim": 2,
                                     "M": 4, "N": 6}),
])
def test_gemv_streaming_runs_unchanged(program: str, arch: str, params: dict, tmp_path: Path):
    r = run_example(program, arch, "gemv_streaming", params, tmp_path)
    M, N, kx = params["M"], params["N"], params["kernel_x_dim"]
    assert r.flops == 2 * M * N + M * kx  # every multiply-add, and b plus kx partial sums


@pytest.mark.parametrize(("program", "arch", "message"), [
    ("gemv_streaming_wse2", "wse3", "WSE-3 data task ids come from an input queue"),
    ("gemv_streaming_wse3", "wse2", "WSE-2 data task ids come from a color"),
])
def test_the_other_archs_form_is_refused(program: str, arch: str, message: str,
                                         tmp_path: Path):
    with pytest.raises(ArchRuleError, match=message):
        run_example(program, arch, "gemv_streaming", GEMV, tmp_path)


def test_a_stream_no_task_reads_is_a_deadlock_not_a_wrong_answer(tmp_path: Path):
    # the WSE-2 form binds its data task to color 0: streaming x on color 7 leaves
    # the wavelets unread, and the host's read of y waits forever
    with pytest.raises(DeadlockError, match="(?s)memcpy_d2h on color 2 waits.*color 7 have no"):
        run_example("gemv_streaming_wse2", "wse2", "gemv_streaming",
                    {**GEMV, "MEMCPYH2D_DATA_1_ID": 7}, tmp_path)


def _runtime(tmp_path: Path, arch: str = "wse3", **params) -> SdkRuntime:
    out = compile_program(FIXTURES / "pipeline_01.mlir", tmp_path / "p", {**PIPE, **params},
                          arch)
    rt = SdkRuntime(out)
    rt.load()
    rt.run()
    return rt


def test_streams_check_their_color_and_direction(tmp_path: Path):
    rt = _runtime(tmp_path)
    x = np.arange(12, dtype=np.uint32)
    with pytest.raises(HostError, match=r"memcpy_h2d on color 5.*MEMCPYH2D_1 = 0"):
        rt.memcpy_h2d(5, x, 0, 0, 1, 1, 12, streaming=True)
    with pytest.raises(HostError, match="memcpy_h2d on color 1"):  # the D2H stream
        rt.memcpy_h2d(1, x, 0, 0, 1, 1, 12, streaming=True)
    with pytest.raises(HostError, match="by color"):
        rt.memcpy_h2d("x", x, 0, 0, 1, 1, 12, streaming=True)
    with pytest.raises(HostError, match="memcpy_d2h on color 0"):
        rt.memcpy_d2h(x, 0, 0, 0, 1, 1, 12, streaming=True)


def test_reading_more_than_was_sent_is_a_deadlock(tmp_path: Path):
    rt = _runtime(tmp_path)
    x = np.arange(12, dtype=np.uint32)
    rt.memcpy_h2d(0, x, 0, 0, 1, 1, 12, streaming=True, nonblock=True)
    out = np.zeros(24, np.uint32)
    with pytest.raises(DeadlockError, match="waits for 24 wavelets from PE \\(0, 0\\), which "
                                            "sent 12"):
        rt.memcpy_d2h(out, 1, 0, 0, 1, 1, 24, streaming=True)


def test_streamed_out_wavelets_nobody_reads_are_reported_at_stop(tmp_path: Path):
    rt = _runtime(tmp_path, size=4)
    rt.memcpy_h2d(0, np.arange(4, dtype=np.uint32), 0, 0, 1, 1, 4, streaming=True)
    with pytest.raises(StaleWaveletError, match="no memcpy_d2h read.*color 1 from PE"):
        rt.stop()


def test_16_bit_streams_carry_whole_words(tmp_path: Path):
    # the high half travels too (a two-argument data task gets it); @add16 reads the
    # low half, and the PE's 16-bit results go out zero-extended
    rt = _runtime(tmp_path, size=3)
    x = np.array([0xABCD0005, 7, 0xFFFF], np.uint32)
    rt.memcpy_h2d(0, x, 0, 0, 1, 1, 3, streaming=True, data_type=MemcpyDataType.MEMCPY_16BIT,
                  order=MemcpyOrder.COL_MAJOR)
    out = np.full(3, 0xDEAD0000, np.uint32)
    rt.memcpy_d2h(out, 1, 0, 0, 1, 1, 3, streaming=True, data_type=MemcpyDataType.MEMCPY_16BIT)
    rt.stop()
    assert out.tolist() == [6, 8, 0]  # 0xFFFF + 1 wraps in 16 bits
    assert rt.traffic[-1].h2d == {"<stream 0>": 6} and rt.traffic[-1].d2h == {"<stream 1>": 6}


TWO_HALVES = FIXTURES / "streaming_wavelet_wse3.mlir"


def test_a_two_argument_data_task_gets_the_index_input_array_to_u32_puts_above(
        tmp_path: Path):
    # topic-03's program with the data task taking (value, index): it stores each value
    # at its index, so the values arrive in reverse order and land in order
    text = TWO_HALVES.read_text()
    text = text.replace("""    csl.task @main_task(%wavelet_data: i16) attributes {kind = #csl<task_kind data>} {
      "csl.store_var"(%global, %wavelet_data) : (!csl.var<i16>, i16) -> ()""", """    %n4 = arith.constant 4 : i16
    %zero = arith.constant 0 : i16
    %got = "csl.constants"(%n4, %zero) : (i16, i16) -> memref<?xi16>
    %got_ptr = "csl.addressof"(%got) : (memref<?xi16>) -> !csl.ptr<i16, #csl<ptr_kind many>, #csl<ptr_const var>>
    "csl.export"(%got_ptr) <{var_name = "got", type = !csl.ptr<i16, #csl<ptr_kind many>, #csl<ptr_const var>>}> : (!csl.ptr<i16, #csl<ptr_kind many>, #csl<ptr_const var>>) -> ()
    csl.task @main_task(%wavelet_data: i16, %index: i16) attributes {kind = #csl<task_kind data>} {
      %i = arith.index_cast %index : i16 to index
      memref.store %wavelet_data, %got[%i] : memref<?xi16>
      "csl.store_var"(%global, %wavelet_data) : (!csl.var<i16>, i16) -> ()""")
    prog = tmp_path / "two.mlir"
    prog.write_text(text)
    out = compile_program(prog, tmp_path / "o", dict(MEMCPYH2D_DATA_1_ID=0,
                                                     MEMCPYD2H_DATA_1_ID=1), "wse3")
    rt = SdkRuntime(out)
    got = rt.get_id("got")
    rt.load()
    rt.run()
    values = np.array([11, -22, 33, -44], np.int16)
    words = input_array_to_u32(values, 1, 4)[::-1].copy()  # sent last index first
    rt.memcpy_h2d(0, words, 0, 0, 1, 1, 4, streaming=True,
                  data_type=MemcpyDataType.MEMCPY_16BIT)
    echo = np.zeros(4, np.uint32)
    rt.memcpy_d2h(echo, 1, 0, 0, 1, 1, 4, streaming=True, data_type=MemcpyDataType.MEMCPY_16BIT)
    host = np.zeros(4, np.uint32)
    rt.memcpy_d2h(host, got, 0, 0, 1, 1, 4, data_type=MemcpyDataType.MEMCPY_16BIT)
    rt.stop()
    np.testing.assert_array_equal(memcpy_view(host, np.int16), values)
    np.testing.assert_array_equal(memcpy_view(echo, np.int16), values[::-1])


@pytest.mark.parametrize("count", [1, 6])
def test_topic_03_streams_wavelets_through_a_data_task(count: int, tmp_path: Path):
    out = compile_program(FIXTURES / "streaming_wavelet_wse3.mlir", tmp_path / "s",
                          dict(MEMCPYH2D_DATA_1_ID=0, MEMCPYD2H_DATA_1_ID=1), "wse3")
    (r,) = run_script(FIXTURES / "streaming_wavelet_run.py",
                      ["--name", str(out), "--count", str(count)], quiet=True)
    assert r.pes[0].tasks == count


def test_sdk_utils_helpers():
    x = np.array([1, -2, 3, -4, 5], np.int16)
    zero = input_array_to_u32(x, None, 2)
    assert zero.dtype == np.uint32 and (zero >> 16).tolist() == [0] * 5
    indexed = input_array_to_u32(x, 1, 2)
    assert (indexed >> 16).tolist() == [0, 1, 0, 1, 0]
    # only None extends with zero: the SDK's sdk_utils tests `sentinel is not None`, so a
    # sentinel of 0 (the gemv-checkerboard benchmark's "extend with zero") indexes too
    assert (input_array_to_u32(x, 0, 2) == indexed).all()
    np.testing.assert_array_equal(memcpy_view(indexed, np.dtype(np.int16)), x)
    f = np.array([1.5, -2.0], np.float32)
    np.testing.assert_array_equal(memcpy_view(input_array_to_u32(f, 1, 2), np.float32), f)
    h = np.array([0.5, 65504], np.float16)
    np.testing.assert_array_equal(memcpy_view(input_array_to_u32(h, None, 1), np.float16), h)
    with pytest.raises(TypeError, match="16-bit"):
        input_array_to_u32(np.zeros(2, np.int8), None, 1)
    with pytest.raises(ValueError, match="must be flat"):
        input_array_to_u32(x.reshape(5, 1), None, 1)
    f32 = np.array([1.5], np.float32)
    assert np.shares_memory(input_array_to_u32(f32, None, 1), f32)  # a view, as the SDK's
    with pytest.raises(RuntimeError, match="u32 words"):
        memcpy_view(x, np.int16)
    with pytest.raises(RuntimeError, match="not a 1-, 2- or 4-byte type"):
        memcpy_view(zero, np.float64)
    np.testing.assert_array_equal(memcpy_view(np.array([0x1234ABCD], np.uint32), np.uint8),
                                  [0xCD])


def _with(text: str, old: str, new: str, tmp_path: Path) -> Path:
    assert old in text
    path = tmp_path / "prog.mlir"
    path.write_text(text.replace(old, new))
    return path


def test_memcpy_owns_the_routes_of_its_streams(tmp_path: Path):
    text = (FIXTURES / "pipeline_01.mlir").read_text()
    prog = _with(text, '"csl.set_rectangle"(%i1, %i1) : (i16, i16) -> ()',
                 '"csl.set_rectangle"(%i1, %i1) : (i16, i16) -> ()\n'
                 "      csl_ext.set_color_config %i0, %i0, %d2h routes <rx = [ramp], "
                 "tx = [ramp]> : i16, i16", tmp_path)
    out = compile_program(prog, tmp_path / "o", PIPE, "wse3")
    with pytest.raises(RouteError, match="memcpy's streaming color .MEMCPYD2H_1"):
        SdkRuntime(out)


@pytest.mark.parametrize(("params", "error", "message"), [
    ({"MEMCPYD2H_DATA_1_ID": 0}, ProgramError, "color 0 is both memcpy's .MEMCPYH2D_1 and"),
    ({"MEMCPYD2H_DATA_1_ID": 22}, ReservedIdError, "MEMCPYD2H_1 uses color 22, reserved"),
    ({"MEMCPYH2D_DATA_1_ID": 24}, RouteError, "routable colors are 0-23"),
])
def test_stream_colors_are_checked(params: dict, error: type, message: str, tmp_path: Path):
    with pytest.raises(error, match=message):
        out = compile_program(FIXTURES / "pipeline_01.mlir", tmp_path / "o", {**PIPE, **params},
                              "wse3")
        SdkRuntime(out)


def test_a_pe_may_not_send_on_a_host_to_device_stream(tmp_path: Path):
    text = (FIXTURES / "pipeline_01.mlir").read_text()
    prog = _with(text, "%out_dsd = csl_ext.get_fab_dsd %size, %d2h {queue_id = 3 : i3}",
                 "%out_dsd = csl_ext.get_fab_dsd %size, %h2d {queue_id = 3 : i3}", tmp_path)
    prog = _with(prog.read_text(), "csl_ext.initialize_queue %d2h {queue_id = 3 : i3, "
                 "output = true}", "", tmp_path)
    out = compile_program(prog, tmp_path / "o", PIPE, "wse2")
    rt = SdkRuntime(out)
    rt.load()
    rt.run()
    with pytest.raises(ProgramError, match="host-to-device stream .MEMCPYH2D_1: only the host"):
        rt.memcpy_h2d(0, np.arange(12, dtype=np.uint32), 0, 0, 1, 1, 12, streaming=True)


@pytest.mark.parametrize(("num_bits", "seed"), [(256, 7), (64, 1), (128, 2)])
def test_wide_multiplication_runs_unchanged(num_bits: int, seed: int, tmp_path: Path):
    # u16 shift-and-add with carries (unsigned compares, wrap-around), operands streamed
    # in with their word index in each wavelet's high half; checked against Python's
    # exact product by the host script
    out = compile_program(FIXTURES / "wide_multiplication_wse3.mlir", tmp_path / "w",
                          dict(num_bits=num_bits, MEMCPYH2D_DATA_1_ID=0,
                               MEMCPYD2H_DATA_1_ID=1), "wse3")
    (r,) = run_script(FIXTURES / "wide_multiplication_run.py",
                      ["--name", str(out), "--seed", str(seed)], quiet=True)
    assert r.pes[0].tasks == 1 + 2 * num_bits // 16 + 1  # f_run, one per word, multiply


def test_memcpy_view_is_a_view_host_scripts_fill():
    # the SDK's fft-1d-2d host script fills a 16-bit memcpy_view and sends the words
    words = np.zeros(6, np.uint32)
    halves = memcpy_view(words, np.float16)
    halves[::2] = np.float16(1.5)
    assert words[0] == np.float16(1.5).view(np.uint16) and words[1] == 0
    floats = memcpy_view(words.reshape(2, 3), np.float32)
    floats[1, 2] = np.float32(2.0)
    assert words[5] == np.float32(2.0).view(np.uint32)
    with pytest.raises(RuntimeError, match="contiguous in their last axis"):
        memcpy_view(words[::2], np.int16)

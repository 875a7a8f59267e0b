"""Issue 15: programs transcribed from Cerebras's public SDK examples (the GEMV
tutorials 6, 7 and 8: routes and fabric DSDs, data tasks, async DSD ops with
completion tasks, a checkerboard chain; the benchmark "residual": async @mov32
receives and sends, DSDs rebased from a dummy i16 DSD, a scalar sent through a
fabout DSD, a 2-D reduction of partial sums and norms; the benchmark "bandwidth-test":
relayed async fabric-to-fabric @mov32 chains, a multicast broadcast, <time> timestamps
packed with @bitcast; the benchmark "gemm-collectives_2d": SUMMA over <collectives_2d>
broadcasts, a task blocked at load, unblocked and activated by the two callbacks; the
benchmark "gemv-collectives_2d": scatter, broadcast, reduce_fadds and gather chained
by callback tasks, the library imported without .queues; the benchmark "fft-1d-2d" in
its 1-D form, f32 and f16: strided, rebased and re-lengthened DSDs, @fmach/@fmulh/
@faddh/@fsubh/@fmovh, 16-bit memcpy through sdk_utils.memcpy_view; the benchmark
"mandelbrot": a pipeline of PEs passing packets with async @mov32 ops that re-arm their
tasks, streamed to the host while the kernel runs, receives left pending at stop()) in
their WSE-2 and WSE-3 forms, run
unchanged through SDK-style host scripts, which compare with numpy and raise on
a mismatch. Loading each program checks it against its arch's rules."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from _wse_harness import FIXTURES

from pyflame_mlir.runtime.wse.compile import compile_program
from pyflame_mlir.runtime.wse.errors import ArchRuleError, HostError, ProgramError, RouteError
from pyflame_mlir.runtime.wse.report import CycleReport
from pyflame_mlir.runtime.wse.run_host import run_script
from pyflame_mlir.runtime.wse.sdkruntime import MemcpyDataType, MemcpyOrder, SdkRuntime

# (program, arch, host script, params, FLOPs: 2 M N for A x, + M per chain add)
CASES = [
    ("gemv_routes_1x2", "wse2", "gemv_routes_1x2", dict(M=4, N=6), 2 * 4 * 6 + 4),
    ("gemv_routes_1x2", "wse3", "gemv_routes_1x2", dict(M=4, N=6), 2 * 4 * 6 + 4),
    ("gemv_routes_1x2", "wse3", "gemv_routes_1x2", dict(M=5, N=8), 2 * 5 * 8 + 5),
    ("gemv_routes_2x2_wse2", "wse2", "gemv_routes_2x2", dict(M=4, N=6), 2 * 4 * 6 + 4),
    ("gemv_routes_2x2_wse3", "wse3", "gemv_routes_2x2", dict(M=4, N=6), 2 * 4 * 6 + 4),
    ("gemv_routes_2x2_wse3", "wse3", "gemv_routes_2x2", dict(M=8, N=10), 2 * 8 * 10 + 8),
    ("gemv_checkerboard_wse3", "wse3", "gemv_checkerboard", {}, 2 * 32 * 32 + 32 * 3),
    ("gemv_checkerboard_wse3", "wse3", "gemv_checkerboard",
     dict(kernel_x_dim=3, kernel_y_dim=2, M=8, N=9), 2 * 8 * 9 + 8 * 2),
    # benchmark "residual" on 2x2 PEs: per PE 2 m n (gemv) + 2 m (its alpha @fmacs)
    # + 2 m (axpy), m x n = LOCAL_OUT_SZ x LOCAL_IN_SZ
    ("residual", "wse2", "residual", dict(LOCAL_OUT_SZ=3, LOCAL_IN_SZ=2), 4 * (12 + 12)),
    ("residual", "wse3", "residual", dict(LOCAL_OUT_SZ=3, LOCAL_IN_SZ=2), 4 * (12 + 12)),
    ("residual", "wse3", "residual", dict(LOCAL_OUT_SZ=8, LOCAL_IN_SZ=6), 4 * (96 + 32)),
    # benchmark "gemm-collectives_2d": SUMMA with <collectives_2d> broadcasts, 2 M K N
    ("gemm_collectives_2d", "wse2", "gemm_collectives_2d", {}, 2 * 6 * 8 * 6),
    ("gemm_collectives_2d", "wse3", "gemm_collectives_2d", dict(P=3, Mt=4, Kt=5, Nt=6),
     2 * 12 * 15 * 18),
    # benchmark "gemv-collectives_2d" (the library without .queues): 2 M N, + M for b on
    # column 0, + Mt per row PE that adds in the row reduction (all but the far end)
    ("gemv_collectives_2d", "wse2", "gemv_collectives_2d", {}, 2 * 32 * 16 + 32 + 4 * 3 * 8),
    ("gemv_collectives_2d", "wse3", "gemv_collectives_2d",
     dict(kernel_rows=3, kernel_cols=2, matrix_rows=9, matrix_cols=10), 180 + 9 + 3 * 1 * 3),
    # benchmark "fft-1d-2d", 1-D on one PE, f32 and f16 (FP 2 / 1): 5 N log2 N FLOPs
    ("fft_1d_f32", "wse2", "fft_1d", dict(Nz=8), 5 * 8 * 3),
    ("fft_1d_f32", "wse3", "fft_1d", dict(Nz=32), 5 * 32 * 5),
    ("fft_1d_f16", "wse2", "fft_1d", dict(Nz=4), 5 * 4 * 2),
    ("fft_1d_f16", "wse3", "fft_1d", dict(Nz=32), 5 * 32 * 5),
    # benchmark "mandelbrot": scalar arithmetic and <math> calls only (no DSD FLOPs)
    ("mandelbrot", "wse2", "mandelbrot", dict(MEMCPYD2H_DATA_1_ID=1), 0),
    ("mandelbrot", "wse3", "mandelbrot", dict(MEMCPYD2H_DATA_1_ID=1), 0),
    # benchmark "bandwidth-test" (its sync module, timestamps): no arithmetic
    ("bandwidth_sync", "wse2", "bandwidth_sync", {}, 0),
    ("bandwidth_sync", "wse3", "bandwidth_sync", dict(width=5, height=4, pe_length=100), 0),
]


def run_example(program: str, arch: str, script: str, params: dict, tmp_path: Path
                ) -> tuple[Path, CycleReport]:
    out = compile_program(FIXTURES / f"{program}.mlir", tmp_path / program, params, arch)
    (report,) = run_script(FIXTURES / f"{script}_run.py", ["--name", str(out)], quiet=True)
    return out, report


@pytest.mark.parametrize(("program", "arch", "script", "params", "flops"), CASES,
                         ids=[f"{c[0]}-{c[1]}-{c[3]}" for c in CASES])
def test_sdk_example_runs_unchanged(program, arch, script, params, flops, tmp_path: Path):
    _, r = run_example(program, arch, script, params, tmp_path)
    assert r.arch == arch
    assert r.flops == flops  # every multiply-add and chain add ran


def test_wse3_form_binds_its_data_task_to_an_input_queue(tmp_path: Path):
    out, _ = run_example("gemv_routes_2x2_wse3", "wse3", "gemv_routes_2x2", dict(M=4, N=6),
                         tmp_path)
    text = (out / "pe_program.csl").read_text()
    assert "@bind_data_task(recv_x, @get_data_task_id(@get_input_queue(3)));" in text
    assert "@initialize_queue(@get_input_queue(3), .{ .color = x_color });" in text


@pytest.mark.parametrize(("program", "arch", "message"), [
    ("gemv_routes_2x2_wse2", "wse3", "WSE-3 data task ids come from an input queue"),
    ("gemv_checkerboard", "wse3", "WSE-3 data task ids come from an input queue"),
    ("gemv_routes_2x2_wse3", "wse2", "WSE-2 data task ids come from a color"),
])
def test_a_form_on_the_other_arch_is_refused(program: str, arch: str, message: str,
                                             tmp_path: Path):
    out = compile_program(FIXTURES / f"{program}.mlir", tmp_path / program,
                          dict(M=4, N=6) if "routes" in program else {}, arch)
    with pytest.raises(ArchRuleError, match=message):
        run_script(FIXTURES / f"{program.removesuffix('_wse2').removesuffix('_wse3')}_run.py",
                   ["--name", str(out)], quiet=True)


@pytest.mark.parametrize("arch", ["wse2", "wse3"])
def test_bandwidth_sync_d2h_and_its_fabric_traffic(arch: str, tmp_path: Path):
    w, h = 4, 3
    out = compile_program(FIXTURES / "bandwidth_sync.mlir", tmp_path / "bw",
                          dict(width=w, height=h, pe_length=33), arch)
    (r,) = run_script(FIXTURES / "bandwidth_sync_run.py",
                      ["--name", str(out), "--d2h", "--loop_count", "3"], quiet=True)
    # one wavelet per link: the row chains, column 0's chain and the broadcast's tree
    assert r.wavelet_hops == h * (w - 1) + (h - 1) + (w * h - 1)


def test_bandwidth_sync_on_one_column_sends_off_its_routes(tmp_path: Path):
    # width 1: PE (0, y) is the first and the last of its row and sends west on a color
    # no route of its own carries (on hardware the wavelet has nowhere to go)
    out = compile_program(FIXTURES / "bandwidth_sync.mlir", tmp_path / "bw",
                          dict(width=1, height=2), "wse3")
    with pytest.raises(RouteError, match="leaves the kernel rectangle|no route for color"):
        run_script(FIXTURES / "bandwidth_sync_run.py", ["--name", str(out)], quiet=True)


@pytest.mark.parametrize("fixture", ["fft_1d_f32", "fft_1d_f16"])
def test_fft_inverse_of_the_sdk_reaches_past_its_twiddles_and_is_refused(fixture: str,
                                                                         tmp_path: Path):
    # the SDK's ifft() conjugates the twiddles with a DSD of length N and stride 2 from
    # element 1 of the N-element f_twiddle: it negates N/2 elements past the array (and
    # negates them back after the FFT). What lies there depends on the memory layout:
    # refused, naming the PE, the builtin and the DSD
    out = compile_program(FIXTURES / f"{fixture}.mlir", tmp_path / "fft", dict(Nz=8), "wse3")
    with pytest.raises(ProgramError, match=r"PE \(0, 0\): @fneg[sh]: mem1d_dsd reaches "
                       r"outside its 8-element array \(offset 1, stride 2, length 8\)"):
        run_script(FIXTURES / "fft_1d_run.py", ["--name", str(out), "--inverse"], quiet=True)


def test_mandelbrot_streams_its_rows_side_by_side(tmp_path: Path):
    # memcpy drains the column's four PEs together: the stream's window is about the
    # busiest PE's work, not the four PE rows one after the other
    _, r = run_example("mandelbrot", "wse3", "mandelbrot", dict(MEMCPYD2H_DATA_1_ID=1),
                       tmp_path)
    busiest = max(p.busy for p in r.pes)
    assert busiest < r.total_cycles < 1.5 * busiest


@pytest.mark.parametrize("extra", [
    [], ["--is_row_bcast"], ["--use_col_major", "--roi", "1,1,3,2"],
    ["--is_row_bcast", "--use_col_major", "--roi", "2,0,2,3", "--loop_count", "2"],
])
def test_row_col_broadcast_host_script_runs_unchanged(extra: list[str], tmp_path: Path):
    # the SDK's row-col-broadcast benchmark: the bandwidth test's kernel, the host's
    # memcpy_h2d_rowbcast / memcpy_h2d_colbcast
    out = compile_program(FIXTURES / "bandwidth_sync.mlir", tmp_path / "rcb",
                          dict(width=5, height=4, pe_length=7), "wse3")
    run_script(FIXTURES / "row_col_broadcast_run.py", ["--name", str(out), *extra], quiet=True)


@pytest.mark.parametrize("kind", ["rowbcast", "colbcast"])
def test_broadcast_memcpy_sends_one_column_or_row(kind: str, tmp_path: Path):
    w, h, n = 5, 4, 3
    out = compile_program(FIXTURES / "bandwidth_sync.mlir", tmp_path / "rcb",
                          dict(width=w, height=h, pe_length=n), "wse2")
    runner = SdkRuntime(out)
    runner.load()
    runner.run()
    traffic = runner.count_traffic()
    rows, cols = (h, 1) if kind == "rowbcast" else (1, w)
    data = np.arange(rows * cols * n, dtype=np.float32) + 1
    getattr(runner, f"memcpy_h2d_{kind}")("A", data, 0, 0, w, h, n, streaming=False,
                                           data_type=MemcpyDataType.MEMCPY_32BIT,
                                           order=MemcpyOrder.ROW_MAJOR, nonblock=False)
    assert traffic.h2d_bytes == 4 * data.size  # one column / row, not the region
    blocks = data.reshape(rows, cols, n)
    for x in range(w):
        for y in range(h):
            want = blocks[y, 0] if kind == "rowbcast" else blocks[0, x]
            np.testing.assert_array_equal(runner.sim.symbol("A", x, y)[:n], want)
    with pytest.raises(HostError, match="host array has 7 elements"):
        getattr(runner, f"memcpy_h2d_{kind}")("A", data[:7], 0, 0, w, h, n)
    runner.stop()

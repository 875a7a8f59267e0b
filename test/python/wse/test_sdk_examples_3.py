# ruff: noqa: E501  (embedded MLIR lines)
"""Round 3 of the SDK's public examples on the simulator, in their WSE-2 and WSE-3 forms,
run unchanged through SDK-style host scripts that compare with numpy and raise on a
mismatch: the tutorial gemv-05-multiple-pes (a global column DSD moved by each @fmacs,
np.tile'd host data); the benchmark "cholesky", cut down to P <= 2 where no router needs
switches (tasks blocked and unblocked by async @mov32 receives, re-lengthened and
re-offset DSDs, math.invsqrt_f32, two tile programs, per-PE COL_MAJOR memcpy); the
tutorials topic-04-sparse-tensors (a data task taking both 16-bit halves of a streamed
word, value and index; an int32 host array; a nonblocking streaming memcpy_h2d),
topic-12-debug-library (<debug> trace buffers of strings, u32 values and timestamps,
read after the run with the SDK's debug_util at fabric coordinates) and topic-13-simprint
(<simprint> lines in sim.log, each prefixed with its cycle); and <math>'s generic sqrt,
abs and inv."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from _wse_harness import D1, array, dsd, make_program, run_main, simulate

from pyflame_mlir.runtime.wse.compile import compile_program
from pyflame_mlir.runtime.wse.errors import (
    ArchRuleError,
    HostError,
    ProgramError,
    RouteError,
    UnsupportedError,
)
from pyflame_mlir.runtime.wse.report import CycleReport
from pyflame_mlir.runtime.wse.run_host import run_script
from pyflame_mlir.runtime.wse.sdkruntime import DebugUtil, SdkRuntime

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "csl"


def run_example(program: str, arch: str, params: dict, tmp_path: Path,
                script: str | None = None, argv: tuple[str, ...] = ()) -> CycleReport:
    out = compile_program(FIXTURES / f"{program}.mlir", tmp_path / program, params, arch)
    (report,) = run_script(FIXTURES / f"{script or program}_run.py",
                           ["--name", str(out), *argv], quiet=True)
    return report


def _one_pe_cholesky_flops(nt: int) -> int:
    # per pivot ti: Nt multiplies scaling the column, then 2 (i - ti) per row i > ti
    return sum(nt + sum(2 * (i - ti) for i in range(ti + 1, nt)) for ti in range(nt))


@pytest.mark.parametrize("arch", ["wse2", "wse3"])
@pytest.mark.parametrize(("P", "Nt"), [(1, 4), (2, 3), (2, 4), (2, 1)])
def test_cholesky_runs_unchanged(arch: str, P: int, Nt: int, tmp_path: Path):
    r = run_example("cholesky", arch, dict(P=P, Nt=Nt), tmp_path)
    assert r.arch == arch
    if P == 1:
        assert r.flops == _one_pe_cholesky_flops(Nt)
    else:  # each of the Nt columns of the first fringe: Nt words south and Nt east
        assert r.wavelet_hops == 2 * Nt * Nt


def test_cholesky_beyond_two_pes_needs_switches_and_is_refused(tmp_path: Path):
    # the SDK relays its row color through switches for P >= 3 (not spellable): the
    # relay routes are absent, and the first wavelet that needs one says so
    with pytest.raises(RouteError, match="has no route for color 0"):
        run_example("cholesky", "wse3", dict(P=3, Nt=2), tmp_path)


def test_a_longer_source_is_read_for_the_destination_length():
    # @fmacs(d[0:3], d[0:3], a (length 5, its tail past the array), s): the cholesky idiom
    body = f"""{dsd("d", 3)}
      %a_len = arith.constant 5 : i16
      %a_all = "csl.get_mem_dsd"(%a, %a_len) : (memref<?xf32>, i16) -> {D1}
      %a_off = arith.constant 2 : i16
      %a_dsd = "csl.increment_dsd_offset"(%a_all, %a_off) <{{elem_type = f32}}> : ({D1}, i16) -> {D1}
      %s = arith.constant 2.0 : f32
      "csl.fmacs"(%d_dsd, %d_dsd, %a_dsd, %s) : ({D1}, {D1}, {D1}, f32) -> ()"""
    a = np.arange(5, dtype=np.float32) + 1
    d = np.array([10, 20, 30, 40], np.float32)
    sim = run_main(simulate(make_program(body, arrays={"d": ("f32", 4), "a": ("f32", 5)})),
                   {"a": a, "d": d})
    np.testing.assert_array_equal(array(sim, "d"), [10 + 2 * 3, 20 + 2 * 4, 30 + 2 * 5, 40])


def test_a_longer_fabric_source_than_a_memory_destination_is_still_refused():
    # only memory sources are cut to the destination: how many wavelets a shorter
    # destination takes from a fabric DSD is not documented
    body = f"""{dsd("d", 2)}
      %n = arith.constant 3 : i16
      %c = "csl.get_color"(%n) : (i16) -> !csl.color
      %in = csl_ext.get_fab_dsd %n, %c {{queue_id = 2 : i3}} : i16 -> !csl<dsd fabin_dsd>
      "csl.fmovs"(%d_dsd, %in) : ({D1}, !csl<dsd fabin_dsd>) -> ()"""
    with pytest.raises(ProgramError, match="different lengths"):
        run_main(simulate(make_program(body, arrays={"d": ("f32", 2)})), {})


STREAMS = dict(MEMCPYH2D_DATA_1_ID=0, MEMCPYD2H_DATA_1_ID=1)


@pytest.mark.parametrize("arch", ["wse2", "wse3"])
@pytest.mark.parametrize("pairs", ["0:42,3:26", "3:-7,1:32767,2:-32768,0:0"])
def test_topic_04_sparse_tensors_runs_unchanged(arch: str, pairs: str, tmp_path: Path):
    r = run_example(f"sparse_tensors_{arch}", arch, STREAMS, tmp_path, "sparse_tensors",
                    ("--pairs", pairs))
    assert r.pes[0].tasks == pairs.count(":")  # one data task per wavelet


def test_topic_04_index_past_the_result_array_is_refused(tmp_path: Path):
    # result is [4]i16: the data task's store of index 4 would hit another variable
    with pytest.raises(ProgramError, match=r"memref.store of element \[4\] of a \[4\] array"):
        run_example("sparse_tensors_wse3", "wse3", STREAMS, tmp_path, "sparse_tensors",
                    ("--pairs", "1:5,4:6"))


@pytest.mark.parametrize(("form", "arch", "message"), [
    ("wse2", "wse3", "WSE-3 data task ids come from an input queue"),
    ("wse3", "wse2", "WSE-2 data task ids come from a color"),
])
def test_topic_04_form_on_the_other_arch_is_refused(form: str, arch: str, message: str,
                                                    tmp_path: Path):
    with pytest.raises(ArchRuleError, match=message):
        run_example(f"sparse_tensors_{form}", arch, STREAMS, tmp_path, "sparse_tensors")


@pytest.mark.parametrize("arch", ["wse2", "wse3"])
@pytest.mark.parametrize(("width", "num_elems"), [(4, 5), (2, 8)])
def test_topic_12_debug_library_runs_unchanged(arch: str, width: int, num_elems: int,
                                               tmp_path: Path):
    r = run_example(f"debug_trace_{arch}", arch, dict(width=width, num_elems=num_elems),
                    tmp_path, "debug_trace")
    assert r.wavelet_hops == num_elems * (width - 1)


def test_topic_12_trace_buffer_overflow_is_refused(tmp_path: Path):
    # a receiver traces 12 u16 words per wavelet ("Start recv_task" 9, a u32 3) into a
    # 100-word buffer: the ninth wavelet does not fit
    with pytest.raises(ProgramError, match=r"trace_string needs 9 more u16 words in trace "
                       r"buffer 'trace', which has 4 of 100 left \(.buffer_size\)"):
        run_example("debug_trace_wse3", "wse3", dict(width=2, num_elems=9), tmp_path,
                    "debug_trace")


DEBUG_BODY = """%key = "csl.const_str"() <{value = "k"}> : () -> !csl.comptime_string
      %s = "csl.const_str"() <{value = "odd"}> : () -> !csl.comptime_string
      %v = arith.constant -5 : i16
      %w = arith.constant 70000 : i32
      "csl.member_call"(%dbg, %s) <{field = "trace_string"}> : (!csl.imported_module, !csl.comptime_string) -> ()
      "csl.member_call"(%dbg, %v) <{field = "trace_i16"}> : (!csl.imported_module, i16) -> ()
      "csl.member_call"(%dbg, %w) <{field = "trace_u32"}> : (!csl.imported_module, i32) -> ()
      "csl.member_call"(%dbg) <{field = "trace_timestamp"}> : (!csl.imported_module) -> ()"""
DEBUG_IMPORT = """%dkey = "csl.const_str"() <{value = "k"}> : () -> !csl.comptime_string
    %dsize = arith.constant 16 : i16
    %dparams = "csl.const_struct"(%dkey, %dsize) <{ssa_fields = ["key", "buffer_size"]}> : (!csl.comptime_string, i16) -> !csl.comptime_struct
    %dbg = "csl.import_module"(%dparams) <{module = "<debug>"}> : (!csl.comptime_struct) -> !csl.imported_module"""


def test_debug_util_reads_traces_and_symbols_at_fabric_coordinates(tmp_path: Path):
    text = make_program(DEBUG_BODY, arrays={"a": ("f32", 2)}, extra=DEBUG_IMPORT, width=2)
    rt = SdkRuntime(compile_program(text, tmp_path / "dbg"))
    rt.load()
    rt.run()
    rt.memcpy_h2d(rt.get_id("a"), np.array([1.5, 2.5, 3.5, 4.5], np.float32), 0, 0, 2, 1, 2)
    rt.launch("main", nonblock=False)
    rt.stop()
    dbg = DebugUtil(tmp_path / "dbg")
    trace = dbg.read_trace(5, 1, "k")  # kernel PE (1, 0)
    assert trace[:3] == ["odd", -5, 70000] and isinstance(trace[3], int)
    # "odd" is padded to 4 bytes: tag + 2 words, i16: 2, u32: 3, timestamp: 4
    assert dbg.get_symbol(5, 1, "$$csl_debug.k.buffer_index", np.uint16).tolist() == [12]
    np.testing.assert_array_equal(dbg.get_symbol(4, 1, "a", np.float32), [1.5, 2.5])
    with pytest.raises(HostError, match="no <debug> trace with key 'x'"):
        dbg.read_trace(4, 1, "x")
    with pytest.raises(HostError, match=r"fabric PE \(3, 1\) is kernel PE \(-1, 0\), outside"):
        dbg.read_trace(3, 1, "k")
    with pytest.raises(HostError, match="no SdkRuntime of that directory"):
        DebugUtil(tmp_path)


def test_debug_library_needs_a_key_and_a_buffer_size():
    bad = DEBUG_IMPORT.replace('ssa_fields = ["key", "buffer_size"]', 'ssa_fields = ["name", "buffer_size"]')
    with pytest.raises(ProgramError, match="<debug> needs .key"):
        simulate(make_program("", extra=bad))
    body = """%x = arith.constant 1.0 : f32
      "csl.member_call"(%dbg, %x) <{field = "trace_f32"}> : (!csl.imported_module, f32) -> ()"""
    with pytest.raises(UnsupportedError, match=r"<debug>.trace_f32\(\) is not modeled by the "
                       r"WSE simulator \(modeled: trace_i16, trace_string, trace_timestamp, "
                       r"trace_u32\)"):
        run_main(simulate(make_program(body, extra=DEBUG_IMPORT)), {})


@pytest.mark.parametrize("arch", ["wse2", "wse3"])
def test_topic_13_simprint_runs_unchanged(arch: str, tmp_path: Path):
    run_example(f"simprint_{arch}", arch, dict(width=3, num_elems=4), tmp_path, "simprint")
    assert (tmp_path / f"simprint_{arch}" / "sim.log").read_text().count("\n") == 2 + 2 * 4


def test_simprint_flushes_a_line_per_newline_only():
    extra = '%prt = "csl.import_module"() <{module = "<simprint>"}> : () -> !csl.imported_module'
    body = """%a = "csl.const_str"() <{value = "a\\nb"}> : () -> !csl.comptime_string
      %v = arith.constant 70000 : i32
      "csl.member_call"(%prt, %a) <{field = "print_string"}> : (!csl.imported_module, !csl.comptime_string) -> ()
      "csl.member_call"(%prt, %v) <{field = "print_u32_decimal"}> : (!csl.imported_module, i32) -> ()"""
    sim = run_main(simulate(make_program(body, extra=extra)), {})
    assert [text.split(" ", 1)[1] for _, text in sim.sim_log] == ["a"]  # "b70000" unflushed
    with pytest.raises(UnsupportedError, match=r"<simprint>.print_f32\(\) is not modeled"):
        bad = body.replace('field = "print_u32_decimal"', 'field = "print_f32"')
        run_main(simulate(make_program(bad, extra=extra)), {})


@pytest.mark.parametrize(("arch", "params"), [
    ("wse2", dict(width=4, M=4, N=6)), ("wse3", dict(width=3, M=5, N=7)),
])
def test_gemv_05_multiple_pes_runs_unchanged(arch: str, params: dict, tmp_path: Path):
    r = run_example("gemv_multiple_pes", arch, params, tmp_path)
    assert r.flops == params["width"] * (2 * params["M"] * params["N"] + params["M"])


def test_gemv_05_second_launch_reads_past_a_with_its_moved_column_dsd(tmp_path: Path):
    # the tutorial's column DSD is a global that gemv() leaves N columns on: a second
    # compute() starts past A's last column and is refused, not run on neighbouring memory
    with pytest.raises(ProgramError, match=r"@fmacs: mem1d_dsd reaches outside its "
                       r"24-element array \(offset 6, stride 6, length 4\)"):
        run_example("gemv_multiple_pes", "wse3", dict(width=2, M=4, N=6), tmp_path,
                    argv=("--launches", "2"))


MATH = '%math = "csl.import_module"() <{module = "<math>"}> : () -> !csl.imported_module'


@pytest.mark.parametrize("t", ["f32", "f16"])
def test_generic_math_functions_work_in_their_argument_type(t: str):
    # sqrt, abs and inv as the SDK's CG / BiCGStab / power-method kernels call them
    # (math_lib.inv(nrm2[0]), math_lib.sqrt(sum), math_lib.abs(yval)): numpy in that type
    dt = np.dtype(np.float32 if t == "f32" else np.float16)
    x = np.array([-6.5, 0.3, 2.0], dtype=dt)
    body = "\n".join(f"""%c{i}_x = arith.constant 0 : index
      %c{i}_i = arith.constant {i} : index
      %x{i} = memref.load %v[%c{i}_i] : memref<?x{t}>
      %r{i} = "csl.member_call"(%math, %x{i}) <{{field = "{f}"}}> : (!csl.imported_module, {t}) -> {t}
      memref.store %r{i}, %v[%c{i}_i] : memref<?x{t}>""" for i, f in enumerate(["abs", "inv", "sqrt"]))
    sim = run_main(simulate(make_program(body, arrays={"v": (t, 3)}, extra=MATH)), {"v": x})
    got = array(sim, "v")
    assert got.dtype == dt
    np.testing.assert_array_equal(got, [np.abs(x[0]), np.divide(x.dtype.type(1), x[1]),
                                        np.sqrt(x[2])])
    with pytest.raises(UnsupportedError, match=r"math_lib.cbrt\(\) is not modeled .*abs, "
                       r"cos_f32, exp_f32, inv, invsqrt_f32"):
        run_main(simulate(make_program(body.replace('"abs"', '"cbrt"'), arrays={"v": (t, 3)},
                                       extra=MATH)), {"v": x})

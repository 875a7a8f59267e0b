"""The SdkRuntime stand-in: memcpy orders and word sizes, host errors, the module shim."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from _wse_harness import make_program

from pyflame_mlir.runtime.wse import HostError, SramOverflowError
from pyflame_mlir.runtime.wse.compile import compile_program, parse_params
from pyflame_mlir.runtime.wse.sdkruntime import (
    SDK_MODULE,
    MemcpyDataType,
    MemcpyOrder,
    SdkRuntime,
    install_sdk_shim,
)

W, H, E = 3, 2, 4


@pytest.fixture(scope="module")
def bindir(tmp_path_factory) -> Path:
    text = make_program(arrays={"a": ("f32", E), "h": ("f16", E)}, width=W, height=H)
    return compile_program(text, tmp_path_factory.mktemp("memcpy"))


@pytest.fixture
def rt(bindir: Path) -> SdkRuntime:
    r = SdkRuntime(str(bindir), cmaddr=None)
    r.load()
    r.run()
    return r


@pytest.mark.parametrize("order", [MemcpyOrder.ROW_MAJOR, MemcpyOrder.COL_MAJOR])
def test_h2d_places_the_flattening_of_h_w_elems(rt: SdkRuntime, order: MemcpyOrder):
    host = np.arange(W * H * E, dtype=np.float32)
    rt.memcpy_h2d(rt.get_id("a"), host, 0, 0, W, H, E, streaming=False, order=order,
                  data_type=MemcpyDataType.MEMCPY_32BIT, nonblock=False)  # fmt: skip
    blocks = host.reshape((H, W, E), order="C" if order == MemcpyOrder.ROW_MAJOR else "F")
    for x in range(W):
        for y in range(H):
            np.testing.assert_array_equal(rt.sim.symbol("a", x, y), blocks[y, x])


@pytest.mark.parametrize("order", [MemcpyOrder.ROW_MAJOR, MemcpyOrder.COL_MAJOR])
def test_d2h_is_the_inverse_on_a_sub_rectangle(rt: SdkRuntime, order: MemcpyOrder):
    host = np.random.default_rng(0).standard_normal(2 * 1 * E).astype(np.float32)
    a = rt.get_id("a")
    rt.memcpy_h2d(a, host, 1, 1, 2, 1, E, order=order)
    assert not rt.sim.symbol("a", 0, 1).any() and not rt.sim.symbol("a", 1, 0).any()
    back = np.zeros_like(host)
    rt.memcpy_d2h(back, a, 1, 1, 2, 1, E, order=order)
    np.testing.assert_array_equal(back, host)
    rt.stop()


def test_16_bit_memcpy_uses_the_low_half_of_each_word(rt: SdkRuntime):
    vals = np.float16([1.5, -2, 65504, 0.000061035156] * (W * H))
    words = vals.view(np.uint16).astype(np.uint32) | np.uint32(0xABCD0000)  # junk high halves
    h = rt.get_id("h")
    rt.memcpy_h2d(h, words, 0, 0, W, H, E, data_type=MemcpyDataType.MEMCPY_16BIT)
    np.testing.assert_array_equal(rt.sim.symbol("h", 2, 1), vals[-E:])
    out = np.zeros(W * H * E, np.uint32)
    rt.memcpy_d2h(out, h, 0, 0, W, H, E, data_type=MemcpyDataType.MEMCPY_16BIT)
    np.testing.assert_array_equal(out, vals.view(np.uint16).astype(np.uint32))


def test_host_errors_are_explicit(rt: SdkRuntime):
    a = rt.get_id("a")
    with pytest.raises(HostError, match="has 5 elements, but a 1x1 region of 4 per PE needs 4"):
        rt.memcpy_h2d(a, np.zeros(5, np.float32), 0, 0, 1, 1, 4)
    with pytest.raises(HostError, match=r"overflows 'a' \(4 elements\) on PE \(0, 0\)"):
        rt.memcpy_h2d(a, np.zeros(5, np.float32), 0, 0, 1, 1, 5)
    with pytest.raises(HostError, match="32-bit words"):
        rt.memcpy_h2d(a, np.zeros(4, np.float64), 0, 0, 1, 1, 4)
    with pytest.raises(HostError, match="16-bit elements; memcpy uses MEMCPY_32BIT"):
        rt.memcpy_h2d(rt.get_id("h"), np.zeros(4, np.uint32), 0, 0, 1, 1, 4)
    with pytest.raises(HostError, match="outside the 3x2 rectangle"):
        rt.memcpy_h2d(a, np.zeros(4, np.float32), 3, 0, 1, 1, 4)
    with pytest.raises(HostError, match="no PE exports symbol 'nope'"):
        rt.get_id("nope")
    with pytest.raises(HostError, match="'a' is not an exported function"):
        rt.launch("a", nonblock=False)
    # a stream is named by its color; this layout's memcpy has no streams
    with pytest.raises(HostError, match="streaming memcpy_h2d on color .* no .MEMCPYH2D_n"):
        rt.memcpy_h2d(a, np.zeros(4, np.float32), 0, 0, 1, 1, 4, streaming=True)


def test_commands_need_load_and_run(bindir: Path):
    r = SdkRuntime(bindir)
    with pytest.raises(HostError, match="not running"):
        r.launch("main")
    with pytest.raises(HostError, match="only runs the WSE simulator"):
        SdkRuntime(bindir, cmaddr="10.0.0.1:9000")


def test_constructor_takes_the_sdk_keyword_arguments(bindir: Path):
    SdkRuntime(bindir, cmaddr=None, suppress_simfab_trace=True, simfab_numthreads=64,
               msg_level="INFO")
    for kwargs, message in [(dict(suppress_simfab_traces=True), "unknown keyword argument "
                                                                "'suppress_simfab_traces'"),
                            (dict(simfab_numthreads=65), "an int of 1-64"),
                            (dict(msg_level="VERBOSE"), "msg_level one of DEBUG")]:
        with pytest.raises(HostError, match=message):
            SdkRuntime(bindir, **kwargs)


def test_launch_nonblocking_then_wait(rt: SdkRuntime):
    handle = rt.launch("main", nonblock=True)
    rt.task_wait(handle)
    assert rt.report.launches[0][0] == "main"


def test_nonblocking_commands_return_tasks_blocking_ones_none(rt: SdkRuntime):
    # as the SDK's SdkRuntime: a Task (wait(), done()) for nonblock=True, else None
    a = rt.get_id("a")
    data = np.arange(W * H * E, dtype=np.float32)
    common = dict(streaming=False, order=MemcpyOrder.ROW_MAJOR,
                  data_type=MemcpyDataType.MEMCPY_32BIT)
    assert rt.memcpy_h2d(a, data, 0, 0, W, H, E, nonblock=False, **common) is None
    t = rt.memcpy_h2d(a, data + 1, 0, 0, W, H, E, nonblock=True, **common)
    assert isinstance(t, SdkRuntime.Task)
    t.wait()
    assert t.done() and rt.is_task_done(t)
    launched = rt.launch("main", nonblock=True)
    launched.wait()
    out = np.zeros_like(data)
    rt.memcpy_d2h(out, a, 0, 0, W, H, E, nonblock=True, **common).wait()
    np.testing.assert_array_equal(out, data + 1)
    assert rt.launch("main", nonblock=False) is None
    with pytest.raises(HostError, match="takes a Task this runtime returned"):
        rt.task_wait(3)
    rt.stop()


PUT = """csl.func @put(%v: f32, %i: i16) {
      %idx = arith.index_cast %i : i16 to index
      memref.store %v, %a[%idx] : memref<?xf32>
      "csl.member_call"(%sys_mod) <{field = "unblock_cmd_stream"}> : (!csl.imported_module) -> ()
      csl.return
    }
    "csl.export"() <{var_name = @put, type = (f32, i16) -> ()}> : () -> ()
    csl.func @main() {"""


@pytest.fixture
def put_rt(tmp_path: Path) -> SdkRuntime:
    text = make_program(arrays={"a": ("f32", 4)}).replace("csl.func @main() {", PUT)
    r = SdkRuntime(compile_program(text, tmp_path))
    r.load()
    r.run()
    return r


def _a(r: SdkRuntime) -> np.ndarray:
    out = np.zeros(4, np.float32)
    r.memcpy_d2h(out, r.get_id("a"), 0, 0, 1, 1, 4)
    return out


def test_launch_takes_the_numpy_scalar_of_each_parameter_type(put_rt: SdkRuntime):
    put_rt.launch("put", np.float32(2.5), np.int16(1), nonblock=False)
    put_rt.launch("put", -1.25, np.int16(3), nonblock=False)  # a float is an f32
    np.testing.assert_array_equal(_a(put_rt), [0, 2.5, 0, -1.25])
    # the SDK's launch checks each argument's type (check_rpc_api): no plain int, no
    # other width or signedness; the count too
    for args, bad in [((np.float32(1), 1), "argument 1 \\(1, int\\) for a parameter of type "
                       "i16.*np.int16"),
                      ((np.float32(1), np.uint16(1)), "argument 1 .*uint16.* type i16"),
                      ((np.int16(1), np.int16(1)), "argument 0 .*int16.* type f32"),
                      ((np.float32(1),), "takes 2 arguments, got 1")]:
        with pytest.raises(HostError, match=bad):
            put_rt.launch("put", *args, nonblock=False)


def test_launch_takes_an_int_for_an_i32_parameter_within_its_range(tmp_path: Path):
    # check_rpc_api means a Python int (and np.int_, 64-bit here) for an i32 or u32
    # parameter (its FIXME); a value outside the type's range is refused, not wrapped
    text = make_program(arrays={"a": ("f32", 4)}).replace(
        "csl.func @main() {", PUT.replace("i16", "i32"))
    r = SdkRuntime(compile_program(text, tmp_path))
    r.load()
    r.run()
    r.launch("put", np.float32(1.5), 2, nonblock=False)
    r.launch("put", np.float32(-3), np.int64(3), nonblock=False)
    np.testing.assert_array_equal(_a(r), [0, 0, 1.5, -3])
    for bad in (2**31, np.int64(-2**31 - 1)):
        with pytest.raises(HostError, match="does not fit the parameter's type i32"):
            r.launch("put", np.float32(1), bad, nonblock=False)
    with pytest.raises(HostError, match="argument 1 .*float.* type i32"):
        r.launch("put", np.float32(1), 1.0, nonblock=False)


def test_call_sends_words_each_parameter_reads_as_its_type(put_rt: SdkRuntime):
    # the SDK's call sends cast_uint32 of each argument, unchecked: an i16 parameter
    # reads the low half of its word (np.int16(-2) -> 0xFFFE -> -2; a float's f32 bits)
    put_rt.call("put", [np.float32(0.5), np.int16(2)], nonblock=False)
    put_rt.call("put", [0.75, 65536 + 1], nonblock=False)  # the word 0x10001: index 1
    np.testing.assert_array_equal(_a(put_rt), [0, 0.75, 0.5, 0])


def test_call_passes_converted_arguments(put_rt: SdkRuntime):
    put_rt.call("put", [2.5, 1], nonblock=False)
    np.testing.assert_array_equal(_a(put_rt), [0, 2.5, 0, 0])


def test_shim_installs_the_sdk_module_path_without_a_cerebras_package(monkeypatch):
    for name in [m for m in sys.modules if m == "cerebras" or m.startswith("cerebras.")]:
        monkeypatch.delitem(sys.modules, name)
    assert install_sdk_shim(force=True)
    from cerebras.sdk.runtime.sdkruntimepybind import SdkRuntime as Shimmed  # noqa: PLC0415

    assert Shimmed is SdkRuntime and sys.modules[SDK_MODULE].MemcpyOrder is MemcpyOrder
    for name in [m for m in sys.modules if m == "cerebras" or m.startswith("cerebras.")]:
        monkeypatch.delitem(sys.modules, name)
    root = Path(__file__).resolve().parents[3]
    assert not (root / "cerebras").exists()


def test_compile_writes_sdk_metadata_and_csl(bindir: Path):
    import json

    meta = json.loads((bindir / "out.json").read_text())
    assert meta["rectangle"] == [W, H] and meta["fabric_dims"] == [W + 7, H + 2]
    assert "@set_tile_code" in (bindir / "layout.csl").read_text()
    assert "fn main() void" in (bindir / "pe.csl").read_text()
    assert parse_params("M:8, N:16") == {"M": "8", "N": "16"}


def test_sram_budget_error_names_the_pe_and_the_budget():
    from _wse_harness import simulate

    from pyflame_mlir.runtime.wse import CycleModel

    text = make_program(arrays={"big": ("f32", 11000)}, width=2)
    want = r"PE \(0, 0\) running 'pe'.*big: 44000 B.*budget is 43008 bytes \(49152-byte SRAM minus "
    want += "6144"
    with pytest.raises(SramOverflowError, match=want):
        simulate(text)
    simulate(text, model=CycleModel(sram_reserve_bytes=1024))  # a smaller reserve fits


def test_sdk_utils_cycle_and_word_helpers():
    from pyflame_mlir.runtime.wse.sdkruntime import (  # noqa: PLC0415
        SDK_UTILS,
        SDK_UTILS_MODULE,
        calculate_cycles,
        cast_uint32,
        make_u48,
        sub_ts,
    )

    assert cast_uint32(np.float16(1.0)) == 0x3C00 and cast_uint32(np.int16(-1)) == 0xFFFF
    assert cast_uint32(2.5) == cast_uint32(np.float32(2.5)) == 0x40200000
    assert cast_uint32(np.int32(-2)) == 0xFFFFFFFE and cast_uint32(7) == 7
    assert all(type(cast_uint32(v)) is np.uint32 for v in (np.uint16(3), 1.0, 5))
    with pytest.raises(RuntimeError, match="not supported"):
        cast_uint32(np.int64(1))  # (an np.float64 is a float: its f32 bits, as the SDK)
    # a 48-bit timestamp, three u16 words least significant first (no 16-bit overflow)
    start, end = [0xFFFF, 0x0001, 0x0002], [0x0003, 0x0000, 0x0003]
    assert make_u48(np.array(start, np.uint16)) == 0xFFFF + (1 << 16) + (2 << 32)
    assert sub_ts(np.array(start + end, np.uint16)) == make_u48(end) - make_u48(start)
    # calculate_cycles: three f32 words whose bits hold the six u16 words, low half first
    words = np.array([start[0] | start[1] << 16, start[2] | end[0] << 16,
                      end[1] | end[2] << 16], np.uint32)
    assert calculate_cycles(words.view(np.float32)) == make_u48(end) - make_u48(start)
    install_sdk_shim()
    utils = sys.modules[SDK_UTILS_MODULE]
    assert all(callable(getattr(utils, name)) for name in SDK_UTILS)


def test_16_bit_memcpy_of_u16_col_major_from_input_array_to_u32(tmp_path: Path):
    # u16 data packed by sdk_utils.input_array_to_u32 (its index in the high half, as a
    # sentinel puts it) copied COL_MAJOR into a u16 symbol: each PE gets its (h, w, e)
    # block of the Fortran-order flattening, the high halves dropped; back zero-extended
    from pyflame_mlir.runtime.wse.sdkruntime import input_array_to_u32  # noqa: PLC0415

    w, h, e = 3, 2, 4
    r = SdkRuntime(compile_program(make_program(arrays={"u": ("u16", e)}, width=w, height=h),
                                   tmp_path))
    r.load()
    r.run()
    vals = np.arange(w * h * e, dtype=np.uint16) * 1001
    words = input_array_to_u32(vals, 1, e)
    assert (words >> 16).any()
    r.memcpy_h2d(r.get_id("u"), words, 0, 0, w, h, e, streaming=False, nonblock=False,
                 data_type=MemcpyDataType.MEMCPY_16BIT, order=MemcpyOrder.COL_MAJOR)
    blocks = vals.reshape((h, w, e), order="F")
    for x in range(w):
        for y in range(h):
            np.testing.assert_array_equal(r.sim.symbol("u", x, y), blocks[y, x])
    out = np.zeros(w * h * e, np.uint32)
    r.memcpy_d2h(out, r.get_id("u"), 0, 0, w, h, e, streaming=False, nonblock=False,
                 data_type=MemcpyDataType.MEMCPY_16BIT, order=MemcpyOrder.COL_MAJOR)
    np.testing.assert_array_equal(out, vals.astype(np.uint32))
    r.stop()

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


def test_launch_nonblocking_then_wait(rt: SdkRuntime):
    handle = rt.launch("main", nonblock=True)
    rt.task_wait(handle)
    assert rt.report.launches[0][0] == "main"


def test_call_passes_converted_arguments(tmp_path: Path):
    text = make_program(arrays={"a": ("f32", 2)}).replace(
        "csl.func @main() {",
        """csl.func @put(%v: f32, %i: i16) {
      %idx = arith.index_cast %i : i16 to index
      memref.store %v, %a[%idx] : memref<?xf32>
      "csl.member_call"(%sys_mod) <{field = "unblock_cmd_stream"}> : (!csl.imported_module) -> ()
      csl.return
    }
    "csl.export"() <{var_name = @put, type = (f32, i16) -> ()}> : () -> ()
    csl.func @main() {""",
    )
    r = SdkRuntime(compile_program(text, tmp_path))
    r.load()
    r.run()
    r.call("put", [2.5, 1], nonblock=False)
    out = np.zeros(2, np.float32)
    r.memcpy_d2h(out, r.get_id("a"), 0, 0, 1, 1, 2)
    np.testing.assert_array_equal(out, [0, 2.5])


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

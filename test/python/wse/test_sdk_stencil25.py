# ruff: noqa: E501  (embedded MLIR lines)
"""The SDK benchmark 25-pt-stencil (test/fixtures/csl/stencil_25pt.mlir: layout, task,
oned_exch imported four times with pointer, task-id and queue params, routes, switches,
consts, util) at 5 x 5 PEs, zDim 8: its host script runs f_activate_comp(iterations)
and f_prepare_zout and checks every PE's wavefield and max/min against numpy's
leapfrog with the same 25-point operator. WSE-3 is refused as cslc refuses it (its
local task ids 2 and 3), and so is the SDK's one-op reduceBuffer (a destination that
is its own source revisiting each accumulator element)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyflame_mlir.runtime.wse import load_module
from pyflame_mlir.runtime.wse.compile import compile_program
from pyflame_mlir.runtime.wse.errors import ArchRuleError, ProgramError
from pyflame_mlir.runtime.wse.run_host import run_script
from pyflame_mlir.runtime.wse.simulator import Simulator

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "csl"
PARAMS = {"width": 5, "height": 5, "zDim": 8, "sourceLength": 3, "dx": 20, "srcX": 2,
          "srcY": 2, "srcZ": 4}
D1 = "!csl<dsd mem1d_dsd>"
D4 = "!csl<dsd mem4d_dsd>"


@pytest.fixture(scope="module")
def wse2_build(tmp_path_factory) -> Path:
    return compile_program(FIXTURES / "stencil_25pt.mlir", tmp_path_factory.mktemp("st25") / "out",
                           PARAMS, "wse2")


@pytest.mark.parametrize("iterations", [2, 5])
def test_the_host_script_checks_the_wavefield_against_numpy(wse2_build: Path, iterations: int):
    (report,) = run_script(FIXTURES / "stencil_25pt_run.py",
                           ["--name", str(wse2_build), "--iterations", str(iterations)], quiet=True)
    assert report.arch == "wse2"
    launches = dict(report.launches)
    assert set(launches) == {"f_activate_comp", "f_prepare_zout"}
    # each time step: 4 x 5 chunks of 8 (through the switches) and ~30 DSD ops per PE
    assert 300 * iterations < launches["f_activate_comp"] < 2000 * iterations
    assert launches["f_prepare_zout"] < 100
    assert report.wavelet_hops == 1800 * iterations  # 4 directions, same every step


def test_the_printed_modules_keep_the_sdk_params(wse2_build: Path):
    exch = (wse2_build / "oned_exch.csl").read_text()
    for line in ("param dataFin_task_id : local_task_id;", "param callback : local_task_id;",
                 "param constants : *const [5]f32;", "param zValues : *[2, 16]f32;",
                 "param buffer : *[4, 5, 8]f32;", "@bind_local_task(dataFinTask, dataFin_task_id);",
                 ".activate = callback", ".activate = ctrlFin_task_id",
                 "@get_input_queue((4 + queueId))", ".input_queue = iq,", "zValues.*[ 1, "):
        assert line in exch, line
    task = (wse2_build / "task.csl").read_text()
    assert "@bind_local_task(sendTask, send);" in task and "@activate(COMP);" in task
    layout = (wse2_build / "layout.csl").read_text()
    assert "param eastChannel : color = @get_color(4);" in layout
    assert "param southFin : local_task_id = southFin_id;" in layout
    assert "@get_local_task_id(26)" in layout


def test_wse3_is_refused_as_cslc_refuses_it():
    with pytest.raises(ArchRuleError, match=r"@bind_local_task\(sendTask\) uses local task id 3; "
                                            r"WSE-3 local task ids are 8-30"):
        Simulator(load_module(FIXTURES / "stencil_25pt.mlir"), PARAMS, arch="wse3")


def test_the_sdk_one_op_reduce_buffer_is_refused():
    text = (FIXTURES / "stencil_25pt.mlir").read_text()
    a = text.index("    csl.func @reduceBuffer(%offset: i16) {")
    b = text.index("    csl.func @startReceiving() {")
    sdk = f"""    csl.func @reduceBuffer(%offset: i16) {{
      %four = arith.constant 4 : i16
      %bufferDsd = "csl.get_mem_dsd"(%buffer, %four, %pattern, %chunkSize) <{{tensor_access = affine_map<(d0, d1, d2) -> (d0, d1, d2)>}}> : (memref<4x5x8xf32>, i16, i16, i16) -> {D4}
      %accumulatorDsd = "csl.get_mem_dsd"(%accumulator, %four, %pattern, %chunkSize) <{{tensor_access = affine_map<(d0, d1, d2) -> (d2)>}}> : (memref<?xf32>, i16, i16, i16) -> {D4}
      %dstDsd = "csl.increment_dsd_offset"(%accumulatorDsd, %offset) <{{elem_type = f32}}> : ({D4}, i16) -> {D4}
      "csl.fadds"(%dstDsd, %dstDsd, %bufferDsd) : ({D4}, {D4}, {D4}) -> ()
      csl.return
    }}
"""
    sim = Simulator(load_module(text[:a] + sdk + text[b:]), PARAMS)
    with pytest.raises(ProgramError, match="@fadds writes memory its source 0 reads at a later "
                                           "element"):
        sim.launch("f_activate_comp", [2])

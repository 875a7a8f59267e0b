"""Issue 15: programs transcribed from Cerebras's public SDK examples (the GEMV
tutorials 6, 7 and 8: routes and fabric DSDs, data tasks, async DSD ops with
completion tasks, a checkerboard chain; the benchmark "residual": async @mov32
receives and sends, DSDs rebased from a dummy i16 DSD, a scalar sent through a
fabout DSD, a 2-D reduction of partial sums and norms) in their WSE-2 and WSE-3 forms, run
unchanged through SDK-style host scripts, which compare with numpy and raise on
a mismatch. Loading each program checks it against its arch's rules."""

from __future__ import annotations

from pathlib import Path

import pytest
from _wse_harness import FIXTURES

from pyflame_mlir.runtime.wse.compile import compile_program
from pyflame_mlir.runtime.wse.errors import ArchRuleError
from pyflame_mlir.runtime.wse.report import CycleReport
from pyflame_mlir.runtime.wse.run_host import run_script

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

"""The four hand-written fixture programs, run through their SDK-style host scripts
(the transcribed SDK examples: test_sdk_examples.py).

Each host script compares against numpy itself and raises on a mismatch.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _wse_harness import FIXTURES

from pyflame_mlir.runtime.wse.compile import compile_program
from pyflame_mlir.runtime.wse.report import CycleReport
from pyflame_mlir.runtime.wse.run_host import run_script


def run_fixture(name: str, tmp_path: Path, **params) -> CycleReport:
    out = compile_program(FIXTURES / f"{name}.mlir", tmp_path / name, params)
    (report,) = run_script(FIXTURES / f"{name}_run.py", ["--name", str(out)], quiet=True)
    return report


CASES = [
    ("vecadd_4x1", {}, 4 * 16),
    ("vecadd_4x1", {"width": 3, "n": 5}, 3 * 5),
    ("gemv_1pe", {}, 2 * 4 * 6),
    ("gemv_1pe", {"M": 16, "N": 3}, 2 * 16 * 3),
    ("gemv_checkerboard", {}, 2 * 32 * 32 + 32 * 3),
    ("gemv_checkerboard", dict(kernel_x_dim=3, kernel_y_dim=2, M=8, N=9), 2 * 8 * 9 + 8 * 2),
    ("gemv_checkerboard", dict(kernel_x_dim=1, kernel_y_dim=1, M=4, N=4), 2 * 4 * 4),
    ("gemm_bcast", {}, 2 * 8 * 8 * 8),
    ("gemm_bcast", dict(kernel_x_dim=3, kernel_y_dim=4, M=16, K=10, N=9), 2 * 16 * 10 * 9),
]


@pytest.mark.parametrize(("name", "params", "flops"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_fixture_matches_numpy(name: str, params: dict, flops: int, tmp_path: Path):
    r = run_fixture(name, tmp_path, **params)
    # FLOPs are counted by the DSD ops that ran: a second check that all the work happened
    assert r.flops == flops
    assert 0 < r.utilization <= 1
    assert all(p.busy <= r.total_cycles for p in r.pes)
    assert "total cycles" in str(r)


def test_gemv_32x32_pes_of_a_1024x1024_matrix(tmp_path: Path):
    # its wall time is measured by bench/wse_gemv.py, not asserted here (a loaded machine
    # would fail a timed test for nothing)
    r = run_fixture("gemv_checkerboard", tmp_path, kernel_x_dim=32, kernel_y_dim=32, M=1024, N=1024)
    assert r.flops == 2 * 1024 * 1024 + 1024 * 31
    # the per-PE roofline (32x32 f32 multiply-adds) bounds the cycles from below
    assert r.total_cycles > 32 * 32

"""The SDK benchmark conjugateGradient (test/fixtures/csl/conjugate_gradient_wse2/3.mlir:
its kernel with the allreduce and stencil_3d_7pts libraries): its host script solves
A x = b on the device and checks x and |r|^2 on every PE against numpy's conjugate
gradient in float64, for a fixed number of iterations and until convergence, on WSE-2
and WSE-3; the printed CSL (the dot product's @map, r -= alpha w)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyflame_mlir.runtime.wse.compile import compile_program
from pyflame_mlir.runtime.wse.run_host import run_script

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "csl"


@pytest.mark.parametrize(("arch", "w", "h", "zdim", "block", "extra"), [
    ("wse2", 2, 2, 6, 4, ["--max-ite", "4"]),
    ("wse3", 3, 2, 5, 2, ["--max-ite", "3"]),
    # until |r| <= tol: 2x2x3 = 12 unknowns, CG converges in at most 12 steps
    ("wse2", 2, 2, 3, 8, ["--max-ite", "40", "--tol", "1e-5"]),
])
def test_conjugate_gradient_runs_unchanged(arch: str, w: int, h: int, zdim: int, block: int,
                                           extra: list[str], tmp_path: Path):
    out = compile_program(FIXTURES / f"conjugate_gradient_{arch}.mlir", tmp_path / "cg",
                          {"width": w, "height": h, "MAX_ZDIM": zdim, "BLOCK_SIZE": block},
                          arch)
    (report,) = run_script(FIXTURES / "conjugate_gradient_run.py",
                           ["--name", str(out), *extra], quiet=True)
    assert set(dict(report.launches)) == {"f_sync", "f_cg"}


def test_conjugate_gradient_prints_as_csl(tmp_path: Path):
    out = compile_program(FIXTURES / "conjugate_gradient_wse2.mlir", tmp_path / "cg",
                          {"width": 2, "height": 2, "MAX_ZDIM": 4, "BLOCK_SIZE": 2}, "wse2")
    pe = (out / "kernel_cg.csl").read_text()
    assert "@map(reduce_dot, mx, my, sum_p, sum_p);" in pe
    assert "@fmacs(dr, dr, dw, (0.0 - ((rho[0]) / (eta[0]))));" in pe  # r -= alpha w
    assert "@fsubs(dr, db, dw);" in pe

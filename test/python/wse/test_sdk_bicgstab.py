"""The SDK benchmark bicgstab (test/fixtures/csl/bicgstab_wse2/3.mlir: its kernel with
the allreduce and stencil_3d_7pts libraries): its host script solves A x = b for a
nonsymmetric operator on the device and checks x and |r|^2 on every PE against numpy's
BiCGStab in float64, for a fixed number of iterations and until convergence, on WSE-2
and WSE-3; the printed CSL."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyflame_mlir.runtime.wse.compile import compile_program
from pyflame_mlir.runtime.wse.run_host import run_script

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "csl"


@pytest.mark.parametrize(("arch", "w", "h", "zdim", "block", "extra"), [
    ("wse2", 2, 2, 6, 4, ["--max-ite", "4"]),
    ("wse3", 3, 2, 5, 2, ["--max-ite", "3"]),
    # until |r| <= tol
    ("wse2", 2, 2, 3, 8, ["--max-ite", "40", "--tol", "1e-5"]),
])
def test_bicgstab_runs_unchanged(arch: str, w: int, h: int, zdim: int, block: int,
                                           extra: list[str], tmp_path: Path):
    out = compile_program(FIXTURES / f"bicgstab_{arch}.mlir", tmp_path / "bi",
                          {"width": w, "height": h, "MAX_ZDIM": zdim, "BLOCK_SIZE": block},
                          arch)
    (report,) = run_script(FIXTURES / "bicgstab_run.py",
                           ["--name", str(out), *extra], quiet=True)
    assert set(dict(report.launches)) == {"f_sync", "f_bicgstab"}


def test_bicgstab_prints_as_csl(tmp_path: Path):
    out = compile_program(FIXTURES / "bicgstab_wse2.mlir", tmp_path / "bi",
                          {"width": 2, "height": 2, "MAX_ZDIM": 4, "BLOCK_SIZE": 2}, "wse2")
    pe = (out / "kernel_bicgstab.csl").read_text()
    assert "@map(reduce_dot, mx, my, sum_p, sum_p);" in pe
    assert "@fmacs(dp, dp, dv, (0.0 - wv));" in pe  # p = r + beta (p - w v), in place
    assert "@fmacs(dp, dr, dp, (((rho[0]) / (rho_old[0])) * (al / wv)));" in pe
    assert "@fmovs(dp, dr0);" in pe

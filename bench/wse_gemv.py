"""Hand-written checkerboard GEMV on the WSE simulator: cycles vs the per-PE roofline.

Runs `test/fixtures/csl/gemv_checkerboard.mlir` through its SDK host script
(which checks the result against numpy) at several grid sizes and prints a
markdown table. The roofline is the per-PE f32 multiply-add bound: a PE with
an Mt x Nt tile needs at least Mt*Nt cycles at one FMA per cycle. Cycle
figures are those of `machine.CycleModel` (several are estimates).

    python bench/wse_gemv.py            # the table of docs/perf/wse.md
"""

from __future__ import annotations

import contextlib
import io
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "test" / "fixtures" / "csl"

# (kernel_x_dim, kernel_y_dim, M, N)
CASES = [
    (1, 1, 32, 32),
    (4, 4, 128, 128),
    (8, 8, 256, 256),
    (16, 16, 512, 512),
    (32, 32, 1024, 1024),
    (16, 16, 1024, 1024),
    (8, 8, 1024, 512),
]


def main() -> None:
    from pyflame_mlir.runtime.wse import CycleModel
    from pyflame_mlir.runtime.wse.compile import compile_program
    from pyflame_mlir.runtime.wse.run_host import run_script

    m = CycleModel()
    head = (
        "| PEs | matrix | tile/PE | cycles | roofline cycles/PE | roofline/cycles | "
        f"utilization | time @{m.clock_ghz} GHz | time @{m.clock_ghz_alt} GHz | wall |"
    )
    print(head)
    print("|---" * (head.count("|") - 1) + "|")
    with tempfile.TemporaryDirectory() as tmp:
        for kx, ky, M, N in CASES:
            params = {"kernel_x_dim": kx, "kernel_y_dim": ky, "M": M, "N": N}
            fixture = FIXTURES / "gemv_checkerboard.mlir"
            out = compile_program(fixture, Path(tmp) / f"{kx}x{ky}", params)
            t0 = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()) as said:  # the script's "SUCCESS!"
                (r,) = run_script(FIXTURES / "gemv_checkerboard_run.py", ["--name", str(out)])
            assert "SUCCESS!" in said.getvalue()
            wall = time.perf_counter() - t0
            mt, nt = M // ky, N // kx
            roof = mt * nt / m.f32_elems_per_cycle
            print(
                f"| {kx}x{ky} | {M}x{N} | {mt}x{nt} | {r.total_cycles:,.0f} | {roof:,.0f} | "
                f"{roof / r.total_cycles:.2f} | {100 * r.utilization:.1f}% | "
                f"{r.seconds() * 1e6:.2f} us | {r.seconds(m.clock_ghz_alt) * 1e6:.2f} us | "
                f"{wall:.1f} s |",
                flush=True,
            )


if __name__ == "__main__":
    sys.exit(main())

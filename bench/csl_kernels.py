"""Generated CSL vs hand-written CSL on the WSE simulator: cycles and the roofline.

* GEMV ``y = A x + b``: the generated program (``A @ x + b`` through the csl
  backend) beside the hand-written checkerboard fixture
  (``test/fixtures/csl/gemv_checkerboard.mlir``) at the same sizes and grids.
* GEMM ``C = A B``: the generated program (the algorithm the cost model picks,
  and each one forced) beside the hand-written broadcast fixture
  (``gemm_bcast.mlir``: whole K per PE, A's row blocks multicast east, B's
  column blocks south).
* The demo MLP (forward, and forward + backward via ``pf.grad``): generated only.

"roofline" is the per-PE f32 bound: the busiest PE's multiply-adds at one per
cycle (GEMV: Mt*Nt; GEMM: Mt*K*Nt; MLP: the FLOPs / 2 / PEs, balanced). Every
result is checked against numpy. Cycle figures come from the simulator's
``CycleModel`` (several are estimates: see docs/perf/wse.md).

    python bench/csl_kernels.py            # the tables of docs/perf/csl.md
    python bench/csl_kernels.py --quick    # smaller cases only
"""

from __future__ import annotations

import contextlib
import io
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "test" / "fixtures" / "csl"

GEMV_CASES = [  # (kernel_x_dim, kernel_y_dim, M, N), as bench/wse_gemv.py
    (1, 1, 32, 32), (4, 4, 128, 128), (8, 8, 256, 256), (16, 16, 512, 512),
    (16, 16, 1024, 1024), (8, 8, 1024, 512),
]
GEMM_CASES = [  # (kx, ky, M, K, N)
    (2, 2, 8, 8, 8), (2, 2, 32, 32, 32), (4, 4, 64, 64, 64), (4, 4, 128, 64, 128),
]
MLP_CASES = [  # (grid, batch, dim, hidden, classes)
    ((4, 4), 64, 32, 16, 10), ((8, 8), 256, 128, 64, 10),
]


def _fixture(name: str, params: dict, tmp: Path):
    from pyflame_mlir.runtime.wse.compile import compile_program
    from pyflame_mlir.runtime.wse.run_host import run_script

    out = compile_program(FIXTURES / f"{name}.mlir", tmp / f"{name}_{len(list(tmp.iterdir()))}",
                          params)
    with contextlib.redirect_stdout(io.StringIO()) as said:
        (r,) = run_script(FIXTURES / f"{name}_run.py", ["--name", str(out)])
    assert "SUCCESS!" in said.getvalue()
    return r


def _generated(grid, fn, check, matmul: str = "auto"):
    import pyflame_mlir as pf
    from pyflame_mlir.runtime import csl_backend

    csl_backend.configure(grid=grid, matmul=matmul, mode="simulator")
    pf.set_backend("csl")
    t0 = time.perf_counter()
    outs = fn()
    pf.eval(*outs)
    got = [o.numpy() for o in outs]
    wall = time.perf_counter() - t0
    check(got)
    return csl_backend.last_report(), wall


def _row(cells) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def gemv(cases, tmp: Path) -> None:
    import pyflame_mlir as pf

    print(_row(["PEs", "A", "tile/PE", "hand-written", "generated", "generated/hand",
                "roofline/PE", "roofline/generated", "wall (gen)"]))
    print("|---" * 9 + "|")
    for kx, ky, M, N in cases:
        params = {"kernel_x_dim": kx, "kernel_y_dim": ky, "M": M, "N": N}
        hand = _fixture("gemv_checkerboard", params, tmp).total_cycles
        rng = np.random.default_rng(7)
        a, x, b = (rng.random(s, dtype=np.float32) for s in ((M, N), (N,), (M,)))

        def check(got, a=a, x=x, b=b):
            np.testing.assert_allclose(got[0], a @ x + b, rtol=1e-5)

        r, wall = _generated((kx, ky), lambda a=a, x=x, b=b: [pf.tensor(a) @ pf.tensor(x)
                                                           + pf.tensor(b)], check)
        roof = (M // ky) * (N // kx)
        print(_row([f"{kx}x{ky}", f"{M}x{N}", f"{M // ky}x{N // kx}", f"{hand:,.0f}",
                    f"{r.total_cycles:,.0f}", f"{r.total_cycles / hand:.2f}", f"{roof:,}",
                    f"{roof / r.total_cycles:.2f}", f"{wall:.1f} s"]), flush=True)


def gemm(cases, tmp: Path) -> None:
    import pyflame_mlir as pf

    print(_row(["PEs", "A x B", "hand-written", "generated (auto)", "local", "SUMMA",
                "auto/hand", "roofline/PE", "roofline/auto"]))
    print("|---" * 9 + "|")
    for kx, ky, M, K, N in cases:
        params = {"kernel_x_dim": kx, "kernel_y_dim": ky, "M": M, "K": K, "N": N}
        hand = _fixture("gemm_bcast", params, tmp).total_cycles
        rng = np.random.default_rng(3)
        a = rng.standard_normal((M, K)).astype(np.float32)
        b = rng.standard_normal((K, N)).astype(np.float32)

        def check(got, a=a, b=b):
            np.testing.assert_allclose(got[0], a @ b, rtol=1e-4, atol=1e-4)

        cycles = {}
        for algo in ("auto", "local", "summa"):
            r, _ = _generated((kx, ky), lambda a=a, b=b: [pf.tensor(a) @ pf.tensor(b)], check,
                              algo)
            cycles[algo] = r.total_cycles
        auto = cycles["auto"]
        roof = (M // ky) * K * (N // kx)
        print(_row([f"{kx}x{ky}", f"{M}x{K} x {K}x{N}", f"{hand:,.0f}", f"{auto:,.0f}",
                    f"{cycles['local']:,.0f}", f"{cycles['summa']:,.0f}", f"{auto / hand:.2f}",
                    f"{roof:,}", f"{roof / auto:.2f}"]), flush=True)


def _mlp_graphs(B: int, D: int, H: int, C: int) -> dict:
    """{name: (build outputs, check outputs)} for the MLP at one size."""
    import pyflame_mlir as pf

    rng = np.random.default_rng(0)
    xn = rng.standard_normal((B, D)).astype(np.float32)
    w1n = (rng.standard_normal((D, H)) * 0.05).astype(np.float32)
    w2n = (rng.standard_normal((H, C)) * 0.05).astype(np.float32)

    def loss(w1, w2):
        h = pf.relu(pf.tensor(xn) @ w1 + pf.full([H], 0.01))
        return -pf.log(pf.softmax(h @ w2, dim=1)).sum()

    def params():
        return pf.tensor(w1n), pf.tensor(w2n)

    pf.set_backend("reference")
    ref_loss = loss(*params()).item()
    ref_grads = [g.numpy() for g in pf.grad(loss, argnums=(0, 1))(*params())]

    def check_grads(got):
        for g, r in zip(got[1:], ref_grads):
            np.testing.assert_allclose(g, r, rtol=1e-3, atol=1e-5)

    return {
        "forward": (lambda: [loss(*params())],
                    lambda got: np.testing.assert_allclose(got[0], ref_loss, rtol=1e-4)),
        "forward+backward": (lambda: [loss(*params()), *pf.grad(loss, argnums=(0, 1))(*params())],
                             check_grads),
    }


def mlp(cases) -> None:
    print(_row(["PEs", "x, w1, w2", "graph", "cycles", "FLOPs", "utilization",
                "roofline/PE", "roofline/cycles", "wall"]))
    print("|---" * 9 + "|")
    for grid, B, D, H, C in cases:
        for name, (fn, check) in _mlp_graphs(B, D, H, C).items():
            r, wall = _generated(grid, fn, check)
            roof = r.flops / 2 / (grid[0] * grid[1])
            print(_row([f"{grid[0]}x{grid[1]}", f"{B}x{D}, {D}x{H}, {H}x{C}", name,
                        f"{r.total_cycles:,.0f}", f"{r.flops:,.0f}",
                        f"{100 * r.utilization:.1f}%", f"{roof:,.0f}",
                        f"{roof / r.total_cycles:.2f}", f"{wall:.1f} s"]), flush=True)


def main() -> None:
    quick = "--quick" in sys.argv
    with tempfile.TemporaryDirectory() as tmp:
        print("### GEMV y = A x + b\n")
        gemv(GEMV_CASES[:3] if quick else GEMV_CASES, Path(tmp))
        print("\n### GEMM C = A B\n")
        gemm(GEMM_CASES[:2] if quick else GEMM_CASES, Path(tmp))
        print("\n### Demo MLP\n")
        mlp(MLP_CASES[:1] if quick else MLP_CASES)


if __name__ == "__main__":
    sys.exit(main())

"""``pf.load_mlir``: a call with Tensor arguments (recorded, so gradients and
traces see through it) against one with numpy arrays only (the compiled
function, realized), same program, same process, timed alternately.

    OPENBLAS_NUM_THREADS=1 python bench/load_mlir_call.py
"""

from __future__ import annotations

import time

import numpy as np

import pyflame_mlir as pf

TEXT = """func.func @main(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<f32> {
  %0 = pyflame.matmul %a, %b : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %1 = math.tanh %0 : tensor<64x64xf32>
  %2 = arith.addf %1, %a : tensor<64x64xf32>
  %3 = pyflame.sum %2 {dims = array<i64: 0, 1>} : (tensor<64x64xf32>) -> tensor<f32>
  func.return %3 : tensor<f32>
}"""


def main(calls: int = 300, repeats: int = 5) -> None:
    f = pf.load_mlir(TEXT)
    rng = np.random.default_rng(0)
    a, b = (rng.random((64, 64), dtype=np.float32) for _ in range(2))
    ta, tb = pf.tensor(a), pf.tensor(b)
    runs = {"tensors (recorded)": lambda: f(ta, tb).numpy(),
            "arrays (compiled)": lambda: f(a, b).numpy()}
    for run in runs.values():
        run()
    for _ in range(repeats):
        us = {}
        for name, run in runs.items():
            t0 = time.perf_counter()
            for _ in range(calls):
                run()
            us[name] = (time.perf_counter() - t0) / calls * 1e6
        rec, comp = us.values()
        print(f"recorded {rec:6.1f} us  compiled {comp:6.1f} us  ratio {rec / comp:4.2f}")


if __name__ == "__main__":
    main()

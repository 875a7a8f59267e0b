"""numpy's OpenBLAS sgemm before and after ``runtime/openblas.py``'s warm-up.

Each row runs in two fresh processes side by side (cold: no warm-up;
warmed: ``warm_sgemm()`` first) and reports GFLOP/s of the best of 7 rounds
(process CPU time, so other jobs on the machine inflate both alike), then the
ratio. The shapes are the products of ``bench/train_step.py``, the GPT and
the CNN benches. ``OPENBLAS_NUM_THREADS=1`` unless given.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time

SHAPES = [(64, 784, 256), (784, 64, 256), (64, 256, 10), (1024, 128, 512), (1024, 512, 128),
          (128, 1024, 512), (256, 256, 256), (6272, 288, 32)]


def _child(warm: bool, shape: int) -> None:
    """One shape in a fresh process: a product with many result columns warms
    OpenBLAS up by itself, so shapes measured one after another would not be cold."""
    import numpy as np

    if warm:
        from pyflame_mlir.runtime.openblas import warm_sgemm
        warm_sgemm()
    m, k, n = SHAPES[shape]
    a = np.random.rand(m, k).astype(np.float32)
    b = np.random.rand(k, n).astype(np.float32)
    reps = max(2, int(5e7 / (2 * m * k * n)))
    best = float("inf")
    for _ in range(7):
        t0 = time.process_time()
        for _ in range(reps):
            np.matmul(a, b)
        best = min(best, (time.process_time() - t0) / reps)
    print(json.dumps(2 * m * k * n / best / 1e9))


def main() -> None:
    env = dict(os.environ)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    got: dict[bool, list[float]] = {False: [], True: []}
    for i in range(len(SHAPES)):
        for warm in (False, True):
            out = subprocess.run([sys.executable, __file__, "--child", str(int(warm)), str(i)],
                                 capture_output=True, text=True, env=env, check=True)
            got[warm].append(json.loads(out.stdout))
    print(f"machine: {platform.machine()}, {platform.processor() or 'cpu'}, Python "
          f"{platform.python_version()}, date {time.strftime('%Y-%m-%d')}, "
          f"OPENBLAS_NUM_THREADS={env['OPENBLAS_NUM_THREADS']}, load {os.getloadavg()[0]:.1f}\n")
    print("| (M, K) @ (K, N) float32 | cold GFLOP/s | warmed GFLOP/s | warmed/cold |")
    print("| --- | ---: | ---: | ---: |")
    for (m, k, n), c, w in zip(SHAPES, got[False], got[True]):
        print(f"| ({m}, {k}) @ ({k}, {n}) | {c:.1f} | {w:.1f} | {w / c:.2f} |")


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[1] == "--child":
        _child(bool(int(sys.argv[2])), int(sys.argv[3]))
    else:
        main()

"""pf.linalg's decompositions on the reference backend vs torch eager (CPU),
side by side in one run: forward + backward of a small loss per op, float64,
a batch of matrices. Prints one row per op: ms per step for both and the
ratio (torch / pyflame: > 1 means pyflame is faster), and the load average.

    python bench/linalg_decomp.py [--batch 64] [--n 32] [--reps 30]
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable

import numpy as np
import torch

import pyflame_mlir as pf


def _spd(lib, x):
    return x @ x.transpose(-2, -1) + lib.eye(x.shape[-1], dtype=x.dtype)


LOSSES: dict[str, Callable] = {
    "solve": lambda lib, x: lib.linalg.solve(_spd(lib, x), x).sum(),
    "inv": lambda lib, x: lib.linalg.inv(_spd(lib, x)).sum(),
    "det": lambda lib, x: lib.linalg.det(x * 0.5).sum(),
    "slogdet": lambda lib, x: lib.linalg.slogdet(_spd(lib, x)).logabsdet.sum(),
    "cholesky": lambda lib, x: lib.linalg.cholesky(_spd(lib, x)).sum(),
    "qr": lambda lib, x: lib.linalg.qr(x).R.abs().sum(),
    "eigvalsh": lambda lib, x: lib.linalg.eigvalsh(_spd(lib, x)).sum(),
    "svdvals": lambda lib, x: lib.linalg.svdvals(x).sum(),
    "pinv": lambda lib, x: lib.linalg.pinv(x).sum(),
    "matrix_exp": lambda lib, x: lib.linalg.matrix_exp(x * 0.1).sum(),
}


def _time(step: Callable[[], None], reps: int) -> float:
    step()
    step()  # compiled / warm
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(reps):
            step()
        best = min(best, (time.perf_counter() - t0) / reps)
    return best * 1e3


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--n", type=int, default=32)
    p.add_argument("--reps", type=int, default=30)
    args = p.parse_args()
    torch.set_num_threads(1)
    x = np.random.default_rng(0).uniform(-1, 1, (args.batch, args.n, args.n))
    print(f"batch {args.batch} of {args.n}x{args.n} float64, forward + backward; "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'op':12s} {'pyflame ms':>11s} {'torch ms':>9s} {'torch/pf':>9s}")
    for name, loss in LOSSES.items():
        grad = pf.grad(lambda t, loss=loss: loss(pf, t))

        def pf_step(grad=grad) -> None:
            grad(pf.from_numpy(x)).numpy()

        def torch_step(loss=loss) -> None:
            t = torch.from_numpy(x).requires_grad_()
            loss(torch, t).backward()

        ours, theirs = _time(pf_step, args.reps), _time(torch_step, args.reps)
        print(f"{name:12s} {ours:11.2f} {theirs:9.2f} {theirs / ours:9.2f}")
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()

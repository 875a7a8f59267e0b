"""Max pooling, GELU and the softmax family, forward and backward, as the
issue-14 benchmarks use them (attention's rows, the loss's log_softmax):
thread CPU time of a ``pf.compile``d step (the reference backend) beside
torch eager, in one process, as a ratio. Run it on two trees to compare them
by their ratios to torch (run with ``OPENBLAS_NUM_THREADS=1``).

    python bench/pool_gelu.py [--reps 20] [--rounds 5]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import torch

import pyflame_mlir as pf

CASES = {  # name: (input shape, pyflame function, torch function)
    "max_pool2d 2x2 (64, 16, 28, 28)": ((64, 16, 28, 28), lambda x: pf.nn.functional.max_pool2d(
        x, 2), lambda x: torch.nn.functional.max_pool2d(x, 2)),
    "max_pool2d 2x2 (64, 32, 14, 14)": ((64, 32, 14, 14), lambda x: pf.nn.functional.max_pool2d(
        x, 2), lambda x: torch.nn.functional.max_pool2d(x, 2)),
    "max_pool2d 3x3/2 pad 1 (64, 16, 28, 28)": (
        (64, 16, 28, 28), lambda x: pf.nn.functional.max_pool2d(x, 3, 2, 1),
        lambda x: torch.nn.functional.max_pool2d(x, 3, 2, 1)),
    "gelu (16, 64, 512)": ((16, 64, 512), pf.nn.functional.gelu, torch.nn.functional.gelu),
    "softmax (16, 4, 64, 64)": ((16, 4, 64, 64), lambda x: pf.nn.functional.softmax(x, -1),
                                lambda x: torch.nn.functional.softmax(x, -1)),
    "log_softmax (1024, 256)": ((1024, 256), lambda x: pf.nn.functional.log_softmax(x, -1),
                                lambda x: torch.nn.functional.log_softmax(x, -1)),
}


def _best(fn: Callable[[], object], reps: int, rounds: int) -> float:
    fn()
    best = float("inf")
    for _ in range(rounds):
        t0 = time.thread_time()
        for _ in range(reps):
            fn()
        best = min(best, (time.thread_time() - t0) / reps)
    return best * 1e3


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print("| forward + backward | pyflame ms | torch ms | ratio |")
    print("| --- | ---: | ---: | ---: |")
    for name, (shape, pf_fn, torch_fn) in CASES.items():
        rng = np.random.default_rng(0)
        x = rng.standard_normal(shape).astype(np.float32)

        @pf.compile
        def step(v: pf.Tensor, f: Callable = pf_fn) -> pf.Tensor:
            y = f(v)
            y.backward(pf.ones_like(y))
            return v.grad

        def run_pf(data: np.ndarray = x) -> None:
            step(pf.tensor(data, requires_grad=True)).numpy()

        def run_torch(f: Callable = torch_fn, data: np.ndarray = x) -> None:
            t = torch.tensor(data, requires_grad=True)
            y = f(t)
            y.backward(torch.ones_like(y))

        a, b = _best(run_pf, args.reps, args.rounds), _best(run_torch, args.reps, args.rounds)
        print(f"| {name} | {a:.2f} | {b:.2f} | {a / b:.2f} |")


if __name__ == "__main__":
    main()

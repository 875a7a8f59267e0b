"""The cost of memory shared with numpy on the common path: a training step
fed by ``x = pf.from_numpy(batch)`` (batch 64, MLP 784 -> 256 -> 10, SGD: the
model of ``bench/train_step.py``), side by side in one process with the same
step fed by an unshared leaf of the same array (``Tensor._leaf(batch)``: what
``from_numpy`` was before sharing). Rounds alternate the two; the ratio of
the medians is printed (> 1: sharing is slower). The batches cycle through 8
arrays, as a data loader hands out new ones. Run with OPENBLAS_NUM_THREADS=1."""

from __future__ import annotations

import time
from collections.abc import Callable
from statistics import median

import numpy as np

import pyflame_mlir as pf
from pyflame_mlir.core import Tensor

B, D, H, C, LR = 64, 784, 256, 10, 0.01
rng = np.random.default_rng(0)
BATCHES = [rng.standard_normal((B, D)).astype(np.float32) for _ in range(8)]
Y = np.eye(C, dtype=np.float32)[rng.integers(0, C, B)]
INIT = [(rng.standard_normal((D, H)) * 0.05).astype(np.float32), np.zeros(H, np.float32),
        (rng.standard_normal((H, C)) * 0.05).astype(np.float32), np.zeros(C, np.float32)]


def make_step(feed: Callable[[np.ndarray], Tensor]) -> Callable[[int], float]:
    params = [pf.tensor(p, requires_grad=True) for p in INIT]
    y = pf.tensor(Y)

    def step(i: int) -> float:
        x = feed(BATCHES[i % len(BATCHES)])
        w1, b1, w2, b2 = params
        logits = pf.relu(x @ w1 + b1) @ w2 + b2
        loss = -(pf.log_softmax(logits, dim=1) * y).sum(dim=1).mean()
        loss.backward()
        with pf.no_grad():
            for p in params:
                p -= LR * p.grad
                p.grad = None
        return loss.item()

    return step


def main(n: int = 200, rounds: int = 7) -> None:
    steps = {"from_numpy (shared)": make_step(pf.from_numpy),
             "unshared leaf": make_step(Tensor._leaf)}
    for s in steps.values():  # warm: traces and plans cached
        for i in range(3):
            s(i)
    a, b = (steps[k](0) for k in steps)
    assert abs(a - b) < 1e-5, (a, b)
    times: dict[str, list[float]] = {k: [] for k in steps}
    for _ in range(rounds):
        for k, s in steps.items():
            t0 = time.perf_counter()
            for i in range(n):
                s(i)
            times[k].append((time.perf_counter() - t0) / n)
    for k, v in times.items():
        print(f"{k:22s} {median(v) * 1e6:8.1f} us/step (min {min(v) * 1e6:.1f})")
    ratio = median(times["from_numpy (shared)"]) / median(times["unshared leaf"])
    print(f"ratio shared / unshared: {ratio:.3f}")


if __name__ == "__main__":
    main()

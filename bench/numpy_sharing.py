"""The cost of memory shared with numpy on the common path: a training step
fed by ``x = pf.from_numpy(batch)`` (batch 64, MLP 784 -> 256 -> 10, SGD: the
model of ``bench/train_step.py``), and ``bench/overhead.py``'s README
forward fed the same way, each side by side in one process with the same
work fed by an unshared leaf of the same array (``Tensor._leaf(batch)``: what
``from_numpy`` was before sharing). Rounds alternate the two; the ratios are
printed (> 1: sharing is slower). The batches cycle through a few arrays, as
a data loader hands out new ones. Run with OPENBLAS_NUM_THREADS=1."""

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


def make_forward(feed: Callable[[np.ndarray], Tensor]) -> Callable[[int], float]:
    """``bench/overhead.py``'s README forward (1024 x 512 data, MLP 512 -> 256 -> 10)."""
    r = np.random.default_rng(1)
    w1 = pf.tensor((r.standard_normal((512, 256)) * 0.05).astype(np.float32))
    b1 = pf.tensor(np.full(256, 0.01, np.float32))
    w2 = pf.tensor((r.standard_normal((256, 10)) * 0.05).astype(np.float32))
    data = [r.standard_normal((1024, 512)).astype(np.float32) for _ in range(4)]

    def forward(i: int) -> float:
        x = feed(data[i % len(data)])
        return float(pf.softmax(pf.relu(x @ w1 + b1) @ w2, dim=1)[0, 0])

    return forward


def compare(name: str, make: Callable, n: int, rounds: int) -> None:
    steps = {"from_numpy (shared)": make(pf.from_numpy), "unshared leaf": make(Tensor._leaf)}
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
    print(name)
    for k, v in times.items():
        print(f"  {k:22s} {median(v) * 1e6:8.1f} us (min {min(v) * 1e6:.1f})")
    pairs = [x / y for x, y in zip(times["from_numpy (shared)"], times["unshared leaf"])]
    print(f"  shared / unshared: median of rounds {median(pairs):.3f} "
          f"(rounds {min(pairs):.2f}-{max(pairs):.2f}), of the minima "
          f"{min(times['from_numpy (shared)']) / min(times['unshared leaf']):.3f}")


def main() -> None:
    compare("training step, batch 64, MLP 784-256-10 + SGD", make_step, 200, 7)
    compare("README forward, 1024 x 512 data", make_forward, 100, 7)


if __name__ == "__main__":
    main()

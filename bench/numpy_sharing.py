"""The cost of numpy memory sharing on the common path: a training step
(the MLP of ``nn_train_step.py``: 784 -> 256 -> 10, ReLU, SGD) fed a new
batch each step through

- ``pf.from_numpy(batch)``: shared with ``batch`` (the first op reading it,
  the first Linear, is computed when recorded; the rest of the step stays
  one lazy graph; backward reads a private copy of the batch);
- ``pf.tensor(batch)``: a copy, an ordinary leaf (no sharing);
- ``Tensor._leaf(batch)``: the old ``from_numpy`` (no sharing, no copy, and
  silently wrong if ``batch`` is written before the step is computed).

Rounds alternate the three in one process (blocks of 10 steps of one way:
the first step after a switch, which plans again, is not timed); the
medians per step and their ratios are printed. ``python bench/numpy_sharing.py [batch] [rounds]``"""

from __future__ import annotations

import platform
import sys
import time
from statistics import median

import numpy as np

import pyflame_mlir as pf
from pyflame_mlir.core import Tensor

B = int(sys.argv[1]) if len(sys.argv) > 1 else 64
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 30
D, H, C = 784, 256, 10
rng = np.random.default_rng(0)
BATCHES = [rng.standard_normal((B, D)).astype(np.float32) for _ in range(4)]
Y = pf.tensor(np.eye(C, dtype=np.float32)[rng.integers(0, C, B)])

pf.manual_seed(0)
model = pf.nn.Sequential(pf.nn.Linear(D, H), pf.nn.ReLU(), pf.nn.Linear(H, C))
opt = pf.optim.SGD(model.parameters(), lr=0.01)
WAYS = {"from_numpy (shared)": pf.from_numpy, "tensor (copy)": pf.tensor,
        "unshared leaf (old from_numpy)": Tensor._leaf}


def infer(make, batch: np.ndarray) -> float:
    with pf.no_grad():  # the first op reading the shared batch is computed when recorded
        return float(pf.log_softmax(model(make(batch)), dim=1).sum())


def step(make, batch: np.ndarray) -> float:
    x = make(batch)
    loss = -(pf.log_softmax(model(x), dim=1) * Y).sum(dim=1).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss.item()


print(f"{platform.processor() or platform.machine()}, batch {B}, {ROUNDS} rounds, "
      f"native={pf.core.native_enabled()}")
for what, fn in (("training step", step), ("no_grad forward", infer)):
    times: dict[str, list[float]] = {k: [] for k in WAYS}
    for make in WAYS.values():  # warm the caches
        for b in BATCHES:
            fn(make, b)
    for _r in range(ROUNDS):  # blocks of 10 calls of one way (a loop feeds one way)
        for name, make in WAYS.items():
            fn(make, BATCHES[0])  # (the first call after another way's plans again)
            t0 = time.perf_counter()
            for i in range(10):
                fn(make, BATCHES[i % len(BATCHES)])
            times[name].append((time.perf_counter() - t0) / 10)
    base = median(times["unshared leaf (old from_numpy)"])
    print(f" {what}:")
    for name, ts in times.items():
        print(f"  {name:32s} {median(ts) * 1e3:8.3f} ms  ratio {median(ts) / base:5.2f}")

"""Training-step throughput of one ``nn`` model (784 -> 256 -> 10, SGD with
momentum, batch 64) three ways in one process: parameters never touched
through ``.data``; initialized through it (``p.data.normal_``: aliases taken
and dropped); assigned new data (``p.data = ...``: the value becomes the
parameter's alias). The ratios (of this process's CPU time: the machine may
be shared) show what ``Parameter.data`` leaves behind on a parameter (an
alias list) costs the steps after it.

    python bench/param_data_step.py [rounds]
"""

from __future__ import annotations

import sys
import time
from statistics import median

import numpy as np

import pyflame_mlir as pf

B, D, H, C = 64, 784, 256, 10


def make(touch: str):
    rng = np.random.default_rng(0)
    x = pf.tensor(rng.standard_normal((B, D)).astype(np.float32))
    y = pf.tensor(np.eye(C, dtype=np.float32)[rng.integers(0, C, B)])
    pf.manual_seed(0)
    m = pf.nn.Sequential(pf.nn.Linear(D, H), pf.nn.ReLU(), pf.nn.Linear(H, C))
    for p in m.parameters():
        if touch == "init through .data":
            p.data.normal_(0, 0.02)
        elif touch == "p.data = new":
            p.data = pf.randn(*p.shape) * 0.02
    opt = pf.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)

    def step() -> float:
        opt.zero_grad()
        loss = pf.nn.functional.cross_entropy(m(x), y)
        loss.backward()
        opt.step()
        return loss.item()
    return step


def main(rounds: int = 5, n: int = 30) -> None:
    kinds = ["untouched", "init through .data", "p.data = new"]
    steps = {k: make(k) for k in kinds}
    for s in steps.values():
        for _ in range(5):
            s()
    rates: dict[str, list[float]] = {k: [] for k in kinds}
    for _ in range(rounds):
        for k, s in steps.items():
            t0 = time.process_time()
            for _ in range(n):
                s()
            rates[k].append(n / (time.process_time() - t0))
    base = median(rates[kinds[0]])
    for k in kinds:
        r = median(rates[k])
        print(f"{k:20s} {r:7.1f} steps/s  ratio {r / base:.3f}  "
              f"(rounds {min(rates[k]):.1f}-{max(rates[k]):.1f})")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:2]))

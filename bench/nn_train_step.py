"""Training-step throughput with the module and optimizer APIs: the MLP of
``train_step.py`` (batch 64, 784 -> 256 -> 10, ReLU, softmax cross-entropy)
written with ``pf.nn.Linear``/``Sequential`` and stepped by ``pf.optim.SGD``
and ``pf.optim.AdamW``, beside the same model in ``torch.nn`` + ``torch.optim``
(eager), side by side in one run. Each implementation runs in its own
process (no thread pool beside another's); both start from the same weights
and their losses after two steps must agree, or the run fails.

    python bench/nn_train_step.py [rounds]
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from statistics import median

import numpy as np

B, D, H, C = 64, 784, 256, 10
LR = {"SGD": 0.01, "AdamW": 1e-3}
rng = np.random.default_rng(0)
X = rng.standard_normal((B, D)).astype(np.float32)
Y = np.eye(C, dtype=np.float32)[rng.integers(0, C, B)]
# torch's Linear layout: weight (out, in)
STATE = {"0.weight": (rng.standard_normal((H, D)) * 0.05).astype(np.float32),
         "0.bias": np.zeros(H, np.float32),
         "2.weight": (rng.standard_normal((C, H)) * 0.05).astype(np.float32),
         "2.bias": np.zeros(C, np.float32)}


def pyflame_bench(opt_name: str) -> tuple[Callable[[], float], float, float]:
    import pyflame_mlir as pf
    from pyflame_mlir import nn

    class ReLU(nn.Module):  # (nn.ReLU comes with the nn-func branch)
        def forward(self, x: pf.Tensor) -> pf.Tensor:
            return pf.relu(x)

    model = nn.Sequential(nn.Linear(D, H), ReLU(), nn.Linear(H, C))
    model.load_state_dict({k: pf.tensor(v) for k, v in STATE.items()})
    opt = getattr(pf.optim, opt_name)(model.parameters(), lr=LR[opt_name])
    x, y = pf.tensor(X), pf.tensor(Y)

    def step() -> float:
        loss = -(pf.log_softmax(model(x), dim=1) * y).sum(dim=1).mean()
        loss.backward()
        opt.step()  # recorded: computed with the loss, in one graph
        opt.zero_grad()
        return loss.item()

    pf.clear_cache()
    t0 = time.perf_counter()
    step()
    first = time.perf_counter() - t0
    return step, first, step()


def torch_bench(opt_name: str) -> tuple[Callable[[], float], float, float]:
    import torch

    model = torch.nn.Sequential(torch.nn.Linear(D, H), torch.nn.ReLU(), torch.nn.Linear(H, C))
    model.load_state_dict({k: torch.tensor(v) for k, v in STATE.items()})
    opt = getattr(torch.optim, opt_name)(model.parameters(), lr=LR[opt_name])
    x, y = torch.tensor(X), torch.tensor(Y)

    def step() -> float:
        loss = -(torch.log_softmax(model(x), dim=1) * y).sum(dim=1).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss.item()

    step()
    return step, 0.0, step()


def timed(step: Callable[[], float], n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        step()
    return n / (time.perf_counter() - t0)


def _child(impl: str, opt_name: str, n: int) -> None:
    step, first, loss = {"pyflame": pyflame_bench, "torch": torch_bench}[impl](opt_name)
    print(json.dumps({"sps": max(timed(step, n) for _ in range(3)), "first": first,
                      "loss": loss}))


def _run_child(impl: str, opt_name: str, n: int) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", impl, opt_name, str(n)],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{impl} {opt_name} benchmark failed:\n{out.stderr}")
    return json.loads(out.stdout)


def main(rounds: int = 3, n: int = 100) -> None:
    print(f"machine: {platform.machine()}, Python {platform.python_version()}, numpy "
          f"{np.__version__}, date {time.strftime('%Y-%m-%d')}; each implementation in its "
          f"own process; {rounds} rounds, each the best of 3x{n} steps\n")
    print("| optimizer | pyflame steps/s | torch eager steps/s | ratio: median (range) "
          "of the rounds | pyflame first step |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for opt_name in LR:
        ratios, best = [], {"pyflame": 0.0, "torch": 0.0}
        first = float("inf")
        for k in range(rounds):
            order = ("pyflame", "torch") if k % 2 == 0 else ("torch", "pyflame")
            got = {impl: _run_child(impl, opt_name, n) for impl in order}
            a, b = got["pyflame"], got["torch"]
            if abs(a["loss"] - b["loss"]) > 1e-4 * abs(b["loss"]):
                raise RuntimeError(f"{opt_name}: losses after two steps differ: pyflame "
                                   f"{a['loss']}, torch {b['loss']}")
            ratios.append(a["sps"] / b["sps"])
            best = {impl: max(best[impl], got[impl]["sps"]) for impl in best}
            first = min(first, a["first"])
        print(f"| {opt_name} | {best['pyflame']:.0f} | {best['torch']:.0f} | "
              f"{median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f}) | "
              f"{first * 1e3:.0f} ms |")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _child(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        main(rounds=int(sys.argv[1]) if len(sys.argv) > 1 else 3)

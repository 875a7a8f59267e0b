"""Session 12: the explicit derivative rules of the composite math functions
(``pyflame_mlir/math_rules.py``) against differentiating the composites
through (what pf did before), in one process: record + evaluate + backward
of ``f(x).sum()`` (its value read, as a training loop
reads its loss) on float64, eager, small (10) and large (100000) inputs.

    OPENBLAS_NUM_THREADS=1 python bench/math_rules.py

Prints, per function and size, the best of ``REPEAT`` runs for each path and
their ratio (rule / composite). Speed is never asserted."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

import pyflame_mlir as pf
from pyflame_mlir import composites, composites2

REPEAT = 15


def _best(f: Callable[[pf.Tensor], pf.Tensor], x: np.ndarray) -> float:
    times = []
    for _ in range(REPEAT):
        t0 = time.perf_counter()
        t = pf.tensor(x, requires_grad=True)
        loss = f(t).sum()
        loss.backward()
        loss.item(), t.grad.numpy()  # (a training step reads its loss too)
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    cases = {
        "lgamma": (pf.lgamma, composites2._lgamma_value),
        "digamma": (pf.digamma, composites2._digamma_value),
        "erfinv": (pf.erfinv, composites2._erfinv_value),
        "xlogy(x, x + 1)": (lambda t: pf.xlogy(t, t + 1),
                            lambda t: composites._xlogy_value(t, t + 1)),
    }
    rng = np.random.default_rng(0)
    for n in (10, 100_000):
        x = rng.uniform(0.05, 0.95, n)
        for name, (rule, composite) in cases.items():
            _best(rule, x), _best(composite, x)  # warm up both
            a, b = _best(rule, x), _best(composite, x)
            print(f"{name:16s} n={n:<7d} rule {a * 1e3:8.2f} ms  composite {b * 1e3:8.2f} ms"
                  f"  ratio {a / b:5.2f}")


if __name__ == "__main__":
    main()

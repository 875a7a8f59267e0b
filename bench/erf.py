"""erf and exact gelu on a million float32 values: pyflame's reference kernel
(vectorized below float64) beside math.erf one element at a time (what
float64 still uses) and torch, in one run (best of 5)."""

from __future__ import annotations

import math
import platform
import time

import numpy as np
from pyflame_mlir.dialects.elementwise import _erf

import pyflame_mlir as pf

N = 1_000_000


def best(fn, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    x = np.random.default_rng(0).standard_normal(N).astype(np.float32)
    per_element = np.frompyfunc(math.erf, 1, 1)
    rows = [("erf kernel (vectorized, float32)", best(lambda: _erf(x))),
            ("erf, math.erf per element", best(lambda: per_element(x.astype(np.float64)))),
            ("pf.erf (record + cache hit + run)", best(lambda: pf.erf(pf.tensor(x)).numpy())),
            ("pf.gelu exact (record + cache hit + run)",
             best(lambda: pf.gelu(pf.tensor(x)).numpy()))]
    try:
        import torch

        t = torch.from_numpy(x)
        rows += [("torch.erf", best(lambda: torch.erf(t))),
                 ("torch gelu exact", best(lambda: torch.nn.functional.gelu(t)))]
    except ImportError:
        pass
    print(f"machine: {platform.machine()}, Python {platform.python_version()}, "
          f"numpy {np.__version__}, date {time.strftime('%Y-%m-%d')}; {N} float32 values")
    print()
    print("| what | ms |")
    print("| --- | ---: |")
    for name, s in rows:
        print(f"| {name} | {s * 1e3:.1f} |")


if __name__ == "__main__":
    main()

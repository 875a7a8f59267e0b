"""Frontend overhead, side by side with torch eager in one run.

- µs to record one op (add, relu, matmul) on 4x4 tensors vs torch eager's
  dispatch of the same op;
- µs for one cache-hit evaluation of a 50-op graph (recording excluded) and
  for the whole step (record 50 ops + evaluate) vs torch eager running the
  same 50 ops.

Prints a markdown table; docs/PERFORMANCE.md records the results.
"""

from __future__ import annotations

import platform
import time
from collections.abc import Callable

import numpy as np

import pyflame_mlir as pf

try:
    import torch
except ImportError:  # torch is a test extra
    torch = None


def best_us(fn: Callable[[], object], number: int, repeat: int = 7) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best * 1e6


def chain50(x, y):
    """50 elementwise ops (PyTorch and pyflame spell them the same)."""
    h = x
    for _ in range(10):
        h = h * y
        h = h + x
        h = h.relu() if hasattr(h, "relu") else h
        h = h - y
        h = h.tanh()
    return h


def main() -> None:
    a, b = pf.randn(4, 4), pf.randn(4, 4)
    rows: list[tuple[str, float, float | None]] = []
    ta = tb = None
    if torch is not None:
        torch.set_num_threads(1)
        ta, tb = torch.from_numpy(a.numpy()), torch.from_numpy(b.numpy())
    for name, pf_fn, torch_fn in [
        ("record add (4x4)", lambda: a + b, lambda: ta + tb),
        ("record relu (4x4)", lambda: pf.relu(a), lambda: torch.relu(ta)),
        ("record matmul (4x4)", lambda: a @ b, lambda: ta @ tb),
    ]:
        rows.append((name, best_us(pf_fn, 20000), best_us(torch_fn, 20000) if ta is not None
                     else None))

    chain50(a, b).numpy()  # compile once
    record = best_us(lambda: chain50(a, b), 300)

    def step() -> None:
        chain50(a, b).numpy()
    whole = best_us(step, 300)
    torch_chain = best_us(lambda: chain50(ta, tb), 300) if ta is not None else None
    rows.append(("record 50 ops", record, None))
    rows.append(("cache-hit evaluation of 50 ops", whole - record, None))
    rows.append(("record + evaluate 50 ops", whole, torch_chain))
    assert pf.cache_stats()["misses"] >= 1

    print(f"machine: {platform.machine()}, {platform.python_implementation()} "
          f"{platform.python_version()}, numpy {np.__version__}, "
          f"torch {torch.__version__ if torch else 'absent'}, "
          f"date {time.strftime('%Y-%m-%d')}")
    print()
    print("| measurement | pyflame µs | torch eager µs | ratio pyflame/torch |")
    print("| --- | ---: | ---: | ---: |")
    for name, p, t in rows:
        ratio = f"{p / t:.2f}" if t else "—"
        ts = f"{t:.2f}" if t else "—"
        print(f"| {name} | {p:.2f} | {ts} | {ratio} |")


if __name__ == "__main__":
    main()

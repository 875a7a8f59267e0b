"""Session 13: masked ``scaled_dot_product_attention`` with torch's handling of
fully masked queries (``nn/functional.py``'s ``_live_mask``: 0s, no NaN)
against the plain masked softmax pf computed before (NaN on such rows), in one
process: forward + backward of ``sdpa(q, q, q, attn_mask).sum()`` with a
causal bool mask (B=8, H=4, L=128, E=32, float32), the gradient read.

    OPENBLAS_NUM_THREADS=1 python bench/attention_mask.py

Prints the median of ``REPEAT`` interleaved runs of each and their ratio
(torch's handling / plain). Speed is never asserted."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

import pyflame_mlir as pf
from pyflame_mlir.nn import functional as F

REPEAT = 15
B, H, L, E = 8, 4, 128, 32


def main() -> None:
    rng = np.random.default_rng(0)
    q = pf.tensor(rng.standard_normal((B, H, L, E)).astype(np.float32), requires_grad=True)
    mask = pf.tensor(np.tril(np.ones((L, L), bool)))

    def plain(x: pf.Tensor) -> pf.Tensor:
        s = pf.matmul(x, x.transpose(-2, -1)) * (1 / math.sqrt(E))
        return pf.matmul(pf.softmax(pf.where(mask, s, -math.inf), -1), x)

    def torch_like(x: pf.Tensor) -> pf.Tensor:
        return F.scaled_dot_product_attention(x, x, x, attn_mask=mask)

    def step(f: Callable[[pf.Tensor], pf.Tensor]) -> float:
        q.grad = None
        t0 = time.perf_counter()
        f(q).sum().backward()
        q.grad.numpy()
        return time.perf_counter() - t0

    runs: dict[str, list[float]] = {"plain": [], "torch_like": []}
    for f in (plain, torch_like):
        step(f)
        step(f)
    for _ in range(REPEAT):
        runs["plain"].append(step(plain))
        runs["torch_like"].append(step(torch_like))
    p, t = (float(np.median(runs[k])) for k in ("plain", "torch_like"))
    print(f"plain {p * 1e3:.2f} ms  torch-like {t * 1e3:.2f} ms  ratio {t / p:.2f}")


if __name__ == "__main__":
    main()

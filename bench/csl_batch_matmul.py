"""Batched matmul on the WSE simulator: the batch laid over the PE grid
(``wse.batch_matmul``, issue 16) against the loop of before (one rank-2 matmul per
batch element between a slice and a concat; ``batched.LAY_BATCH = False``), side by
side in one run: simulated cycles of ``q @ k^T`` and of ``(q @ k^T) @ v`` for
attention heads ``[batch * heads, T, d_head]``, f32 and f16.

    python bench/csl_batch_matmul.py                 # the table of docs/PERFORMANCE.md
    python bench/csl_batch_matmul.py --heads 16 --t 16 --d-head 8 --grids 4x4
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from pyflame_mlir.lowering.pyflame_to_wse import batched

import pyflame_mlir as pf
from pyflame_mlir.runtime import csl_backend


def attention_scores(args: argparse.Namespace, half: bool) -> pf.Tensor:
    rng = np.random.default_rng(0)
    q, k, v = (pf.tensor(rng.standard_normal((args.heads, args.t, args.d_head))
                         .astype(np.float32)) for _ in range(3))
    if half:
        q, k, v = (t.to(pf.float16) for t in (q, k, v))
    return ((q @ k.transpose(-1, -2)) @ v).float()


def measure(args: argparse.Namespace, grid: tuple[int, int], half: bool, laid: bool
            ) -> tuple[float, float, float]:
    """(cycles, max |error| against the reference backend, wall seconds to compile + run)."""
    batched.LAY_BATCH = laid
    pf.clear_cache()  # the switch is not part of the graph's key
    pf.set_backend("reference")
    ref = attention_scores(args, half).numpy()
    csl_backend.configure(mode="simulator", grid=grid)
    pf.set_backend("csl")
    t0 = time.perf_counter()
    got = attention_scores(args, half).numpy()
    wall = time.perf_counter() - t0
    return pf.csl_report().cycles, float(np.abs(got - ref).max()), wall


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--heads", type=int, default=8, help="batch x heads")
    ap.add_argument("--t", type=int, default=8)
    ap.add_argument("--d-head", type=int, default=8)
    ap.add_argument("--grids", default="2x2,4x4")
    args = ap.parse_args()
    print(f"(q @ k^T) @ v, [{args.heads}, {args.t}, {args.d_head}], load average "
          f"{os.getloadavg()[0]:.1f}\n")
    print("| grid | dtype | looped cycles | laid over the grid cycles | ratio | max error "
          "(laid) |")
    print("|---|---|---:|---:|---:|---:|")
    for spec in args.grids.split(","):
        w, _, h = spec.partition("x")
        grid = (int(w), int(h))
        for half in (False, True):
            loop = measure(args, grid, half, False)
            laid = measure(args, grid, half, True)
            print(f"| {spec} | {'f16' if half else 'f32'} | {loop[0]:,.0f} | {laid[0]:,.0f} | "
                  f"{laid[0] / loop[0]:.2f} | {laid[1]:.2g} |", flush=True)
    batched.LAY_BATCH = True


if __name__ == "__main__":
    main()

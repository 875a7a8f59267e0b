"""vmap(axis_name=...) with a collective (session 13): the per-example
lockstep run against the same computation written batched, and against
jax.vmap(jax.jit), for growing batch sizes. Centering by the batch mean
(``v - lax.pmean(v, "i")``) and its gradient; times per call, one process,
the ratios are what to compare.

    OPENBLAS_NUM_THREADS=1 python bench/vmap_collectives.py
"""

from __future__ import annotations

import time

import numpy as np

import pyflame_mlir as pf

pnp, plax = pf.numpy, pf.lax


def _time(f, reps: int) -> float:
    f()
    t0 = time.perf_counter()
    for _ in range(reps):
        f()
    return (time.perf_counter() - t0) / reps


def _row(n: int, jax: object | None) -> str:
    x = np.random.RandomState(0).randn(n, 32).astype(np.float32)
    xt = pnp.asarray(x)
    lock = pf.vmap(lambda v: v - plax.pmean(v, "i"), axis_name="i")

    def batched(a: pf.Tensor) -> pf.Tensor:
        return a - a.mean(0, keepdims=True)

    def g_lock() -> np.ndarray:
        return pf.grad(lambda a: (lock(a) ** 2 * a).sum())(xt).numpy()

    def g_batched() -> np.ndarray:
        return pf.grad(lambda a: (batched(a) ** 2 * a).sum())(xt).numpy()
    np.testing.assert_allclose(g_lock(), g_batched(), rtol=1e-5, atol=1e-5)
    reps = 20 if n <= 16 else 5
    t_lock = _time(lambda: lock(xt).numpy(), reps)
    t_b = _time(lambda: batched(xt).numpy(), reps)
    tg_lock = _time(g_lock, reps)
    tg_b = _time(g_batched, reps)
    t_jax = float("nan")
    if jax is not None:
        jf = jax.jit(jax.vmap(lambda v: v - jax.lax.pmean(v, "i"), axis_name="i"))
        xj = jax.numpy.asarray(x)
        t_jax = _time(lambda: jf(xj).block_until_ready(), reps)
    return (f"| {n} | {t_lock * 1e3:.1f} ms | {t_b * 1e3:.2f} ms | {t_lock / t_b:.0f}x | "
            f"{tg_lock * 1e3:.1f} ms | {tg_b * 1e3:.2f} ms | {tg_lock / tg_b:.0f}x | "
            f"{t_jax * 1e3:.3f} ms |")


def main() -> None:
    try:
        import jax
    except ImportError:
        jax = None
    print("| batch | pf vmap+pmean | pf batched | ratio | pf grad(vmap+pmean) | pf grad batched "
          "| ratio | jax vmap+pmean (jit) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for n in (4, 16, 64):
        print(_row(n, jax))


if __name__ == "__main__":
    main()

"""``pf.load_mlir`` of what JAX prints: a 24-layer block's ``value_and_grad``
(matmuls, GELU, softmax, layer norm; ~3400 lines of StableHLO) loaded once,
then its compiled call against ``jax.jit``'s, same process, timed alternately.

    OPENBLAS_NUM_THREADS=1 python bench/load_stablehlo.py
"""

from __future__ import annotations

import time

import numpy as np

import pyflame_mlir as pf


def main(calls: int = 50, repeats: int = 5) -> None:
    import jax

    rng = np.random.default_rng(0)
    c = rng.standard_normal((32, 64)).astype(np.float32)

    def block(x, w):
        for k in range(w.shape[0]):
            h = jax.nn.gelu(x @ w[k] + 0.1)
            x = x + jax.nn.softmax(h, -1) @ w[k].T
            x = (x - x.mean(-1, keepdims=True)) * jax.lax.rsqrt(x.var(-1, keepdims=True) + 1e-5)
        return (x * c).sum()

    x = rng.standard_normal((32, 64)).astype(np.float32)
    w = (rng.standard_normal((24, 64, 64)) * 0.1).astype(np.float32)
    step = jax.jit(jax.value_and_grad(block, argnums=1))
    text = step.lower(x, w).as_text()
    for _ in range(2):  # the second load: without the first's imports
        t0 = time.perf_counter()
        f = pf.load_mlir(text)
        loaded = time.perf_counter() - t0
    v, g = f(x, w)
    jv, jg = step(x, w)
    err = np.abs(g.numpy() - np.asarray(jg)).max() / np.abs(np.asarray(jg)).max()
    print(f"{text.count(chr(10))} lines loaded in {loaded:.2f} s; value {float(v.numpy()):.5f} "
          f"(jax {float(jv):.5f}), gradient max relative error {err:.1e}")
    runs = {"pyflame": lambda: f(x, w)[1].numpy(),
            "jax.jit": lambda: step(x, w)[1].block_until_ready()}
    for run in runs.values():
        run()
    for _ in range(repeats):
        ms = {}
        for name, run in runs.items():
            t0 = time.perf_counter()
            for _ in range(calls):
                run()
            ms[name] = (time.perf_counter() - t0) / calls * 1e3
        ours, theirs = ms.values()
        print(f"pyflame {ours:6.2f} ms  jax.jit {theirs:6.2f} ms  ratio {ours / theirs:4.2f}")


if __name__ == "__main__":
    main()

"""pf.random's samplers beside jax.random's on the same keys, in one run
(best of 5 after a warm call, so JAX's compile is not counted): normal,
gamma (the rejection loop vectorized over elements), poisson and binomial.
Times in ms and the ratio pf/jax; the draws' agreement is tested in
test/python/test_random_samplers.py, not here."""

from __future__ import annotations

import platform
import time

import jax
import numpy as np

from pyflame_mlir import random as pr

jr = jax.random


def best(fn, repeats: int = 5) -> float:
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


CASES = {
    "normal (1e6,)": (lambda k: jr.normal(k, (1_000_000,)),
                      lambda k: pr.normal(k, (1_000_000,))),
    "gamma a=2.5 (1e4,)": (lambda k: jr.gamma(k, 2.5, (10_000,)),
                           lambda k: pr.gamma(k, 2.5, (10_000,))),
    "gamma a=0.3 (1e4,)": (lambda k: jr.gamma(k, 0.3, (10_000,)),
                           lambda k: pr.gamma(k, 0.3, (10_000,))),
    "poisson lam=40 (1e5,)": (lambda k: jr.poisson(k, 40.0, (100_000,)),
                              lambda k: pr.poisson(k, 40.0, (100_000,))),
    "binomial n=100 p=0.4 (1e5,)": (lambda k: jr.binomial(k, 100.0, 0.4, (100_000,)),
                                    lambda k: pr.binomial(k, 100.0, 0.4, (100_000,))),
}


def main() -> None:
    print(f"{platform.processor() or platform.machine()}, numpy {np.__version__}, "
          f"jax {jax.__version__}")
    kj, kp = jr.PRNGKey(0), pr.PRNGKey(0)
    for name, (fj, fp) in CASES.items():
        tj = best(lambda fj=fj: np.asarray(fj(kj)))
        tp = best(lambda fp=fp: fp(kp).numpy())
        print(f"{name:30s} jax {tj * 1e3:8.2f} ms   pf {tp * 1e3:8.2f} ms   pf/jax {tp / tj:6.2f}")


if __name__ == "__main__":
    main()

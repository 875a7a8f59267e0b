"""pf.random against jax.random: the same keys and the same draws bit for
bit (threefry2x32, JAX's partitionable counters, each sampler's transform;
normal and gumbel to float32 rounding of erfinv/log), under vmap over keys
and inside pf.compile."""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf
from pyflame_mlir import random as pr

jax = pytest.importorskip("jax", reason="jax (the bench extra) is the oracle here")
jnp = pytest.importorskip("jax.numpy")
jr = jax.random

LOGITS = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)
DRAWS = {
    "key": lambda r, k, L: k,
    "split": lambda r, k, L: r.split(k),
    "split5": lambda r, k, L: r.split(k, 5),
    "split_shape": lambda r, k, L: r.split(k, (2, 3)),
    "fold_in": lambda r, k, L: r.fold_in(k, 7),
    "bits": lambda r, k, L: r.bits(k, (5,)),
    "uniform": lambda r, k, L: r.uniform(k, (3, 4)),
    "uniform_range": lambda r, k, L: r.uniform(k, (1000,), minval=-2, maxval=3),
    "normal": lambda r, k, L: r.normal(k, (1000,)),
    "normal_scalar": lambda r, k, L: r.normal(k),
    "randint": lambda r, k, L: r.randint(k, (50,), 0, 10),
    "randint_negative": lambda r, k, L: r.randint(k, (50,), -100, 7),
    "randint_full_range": lambda r, k, L: r.randint(k, (50,), -2**31, 2**31 - 1),
    "bernoulli": lambda r, k, L: r.bernoulli(k, 0.3, (100,)),
    "bernoulli_p": lambda r, k, L: r.bernoulli(k, L.asarray(np.array([0.1, 0.5, 0.9],
                                                                      np.float32))),
    "gumbel": lambda r, k, L: r.gumbel(k, (100,)),
    "categorical": lambda r, k, L: r.categorical(k, L.asarray(LOGITS)),
    "exponential": lambda r, k, L: r.exponential(k, (100,)),
    "permutation_int": lambda r, k, L: r.permutation(k, 50),
    "permutation_int_2_rounds": lambda r, k, L: r.permutation(k, 3000),
    "permutation_rows": lambda r, k, L: r.permutation(k, L.asarray(LOGITS), axis=1),
    "categorical_axis0": lambda r, k, L: r.categorical(k, L.asarray(LOGITS), axis=0,
                                                       shape=(3, 6)),
}


@pytest.mark.parametrize("seed", [0, 42, -3])
@pytest.mark.parametrize("name", sorted(DRAWS))
def test_draws_match_jax(name: str, seed: int) -> None:
    want = np.asarray(DRAWS[name](jr, jr.PRNGKey(seed), jnp))
    got = DRAWS[name](pr, pr.PRNGKey(seed), pf).numpy()
    assert got.shape == want.shape
    tol = 1e-5 if name in ("normal", "normal_scalar", "gumbel", "exponential") else 0
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol,
                               atol=tol)


def test_vmap_over_keys_and_a_compiled_step_match_jax() -> None:
    kj, kp = jr.PRNGKey(1), pr.PRNGKey(1)
    np.testing.assert_allclose(
        pf.vmap(lambda k: pr.normal(k, (3,)))(pr.split(kp, 4)).numpy(),
        np.asarray(jax.vmap(lambda k: jr.normal(k, (3,)))(jr.split(kj, 4))), rtol=1e-5)
    step = pf.jit(lambda k, x: x + pr.uniform(k, (3,)))
    for _ in range(3):  # a new key each call: never a replayed draw
        kj, sj = jr.split(kj)
        kp, sp = pr.split(kp)
        np.testing.assert_allclose(step(sp, pf.ones(3)).numpy(),
                                   np.asarray(1 + jr.uniform(sj, (3,))), rtol=1e-6)
    with pytest.raises(TypeError, match="single key"):
        pr.normal(pr.split(kp, 3), (2,))

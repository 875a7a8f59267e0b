"""64-bit draws under jax_enable_x64 (``uniform``/``normal`` float64,
``randint`` int64, 64-bit seeds) against jax's threefry: uniform and randint
bit for bit; normal through XLA's float64 erfinv (Giles' polynomials with
fused multiply-adds) to the last bits of ``log1p``'s rounding. Without x64,
``dtype=float64``/``int64`` draw JAX's 32-bit values."""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf

jax = pytest.importorskip("jax", reason="jax (the bench extra) is not installed")
jnp = pytest.importorskip("jax.numpy")


@pytest.fixture
def x64():
    prev = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    pf.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", prev)
    pf.config.update("jax_enable_x64", False)


@pytest.mark.parametrize("seed", [0, 42, 2**40 + 3, -1])
def test_uniform_and_randint_64_are_jax_bits(x64, seed: int) -> None:
    k, kp = jax.random.PRNGKey(seed), pf.random.PRNGKey(seed)
    np.testing.assert_array_equal(np.asarray(kp), np.asarray(k))
    for lo, hi in [(0.0, 1.0), (-3.3, 7.1), (1e-3, 2.5)]:
        want = np.asarray(jax.random.uniform(k, (2000,), minval=lo, maxval=hi))
        got = np.asarray(pf.random.uniform(kp, (2000,), minval=lo, maxval=hi))
        assert got.dtype == want.dtype == np.float64
        np.testing.assert_array_equal(got, want)
    for lo, hi in [(0, 10), (-5, 2**40), (-2**63, 2**63 - 1), (3, 3), (0, 2**62 + 12345)]:
        want = np.asarray(jax.random.randint(k, (1000,), lo, hi))
        got = np.asarray(pf.random.randint(kp, (1000,), lo, hi))
        assert got.dtype == want.dtype == np.int64
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(
        np.asarray(pf.random.randint(kp, (50,), 0, 7, pf.numpy.int32)),
        np.asarray(jax.random.randint(k, (50,), 0, 7, jnp.int32)))


def test_bernoulli_64_matches_jax(x64) -> None:
    k, kp = jax.random.PRNGKey(2), pf.random.PRNGKey(2)
    for p in (0.5, 0.9, np.float32(0.3)):  # (a float32 p draws 32-bit words)
        np.testing.assert_array_equal(np.asarray(pf.random.bernoulli(kp, p, (2000,))),
                                      np.asarray(jax.random.bernoulli(k, p, (2000,))))


def test_normal_64_matches_jax(x64) -> None:
    k, kp = jax.random.PRNGKey(0), pf.random.PRNGKey(0)
    want = np.asarray(jax.random.normal(k, (20000,)))
    got = np.asarray(pf.random.normal(kp, (20000,)))
    assert got.dtype == np.float64
    assert (got == want).mean() > 0.94  # (log1p: numpy's and XLA's round apart)
    np.testing.assert_array_less(np.abs(got - want), 40 * np.spacing(np.abs(want)))


def test_64_bit_dtypes_without_x64_draw_32_bit_values() -> None:
    k, kp = jax.random.PRNGKey(3), pf.random.PRNGKey(3)
    with pytest.warns(UserWarning):
        want = np.asarray(jax.random.normal(k, (5,), jnp.float64))
    got = np.asarray(pf.random.normal(kp, (5,), pf.numpy.float64))
    assert got.dtype == want.dtype == np.float32
    np.testing.assert_array_equal(got, want)
    with pytest.warns(UserWarning):
        want = np.asarray(jax.random.randint(k, (5,), 0, 9, jnp.int64))
    got = np.asarray(pf.random.randint(kp, (5,), 0, 9, pf.numpy.int64))
    assert got.dtype == want.dtype == np.int32
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["uniform", "normal", "randint", "bits", "choice",
                                  "rademacher", "geometric"])
def test_scalar_draws_are_arrays(name: str) -> None:
    # np.asarray of a shape-() draw raised (its value was a numpy scalar)
    args = {"randint": ((), 0, 9), "choice": (5,), "rademacher": ((),), "geometric": (0.3,)}
    k, kp = jax.random.PRNGKey(0), pf.random.PRNGKey(0)
    got = np.asarray(getattr(pf.random, name)(kp, *args.get(name, ())))
    want = np.asarray(getattr(jax.random, name)(k, *args.get(name, ())))
    assert got.shape == want.shape == ()
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-6)

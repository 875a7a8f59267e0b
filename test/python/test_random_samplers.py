"""pf.random's samplers beyond the basics against jax.random: JAX's keys and
algorithms (jax/_src/random.py), so integer draws equal JAX's and float draws
equal them to float32 rounding of the transcendental functions (XLA's log,
erf, tan and numpy's may differ in the last bit); the rejection samplers
(gamma, poisson, binomial) run JAX's loops on JAX's keys. Gradients in the
parameters against jax.grad, gamma's being JAX's implicit reparameterization
(its second derivative raises); a rejection sampler's statistics where a
last-bit difference can change an acceptance (JAX's lam 1e5 placeholders in a
mixed poisson)."""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf
from pyflame_mlir import random as pr

jax = pytest.importorskip("jax", reason="jax (the bench extra) is the oracle here")
jnp = pytest.importorskip("jax.numpy")
jr = jax.random

M = np.array([0.5, -1.0, 2.0], np.float32)
COV = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]], np.float32)
PROBS = np.array([0.1, 0.2, 0.3, 0.15, 0.25], np.float32)
LOWS = np.array([-3.0, 0.5, 1.0], np.float32)
ALPHAS = np.array([0.5, 1.0, 7.0], np.float32)
COUNTS = np.array([3.0, 50.0, 1000.0], np.float32)
BIN_P = np.array([0.5, 0.3, 0.9], np.float32)

DRAWS = {
    "truncated_normal": lambda r, k, L: r.truncated_normal(k, -1.0, 2.0, (500,)),
    "truncated_normal_arr": lambda r, k, L: r.truncated_normal(k, L.asarray(LOWS), 2.0),
    "laplace": lambda r, k, L: r.laplace(k, (500,)),
    "logistic": lambda r, k, L: r.logistic(k, (500,)),
    "cauchy": lambda r, k, L: r.cauchy(k, (500,)),
    "rademacher": lambda r, k, L: r.rademacher(k, (100,)),
    "pareto": lambda r, k, L: r.pareto(k, 3.0, (200,)),
    "rayleigh": lambda r, k, L: r.rayleigh(k, 2.0, (200,)),
    "weibull_min": lambda r, k, L: r.weibull_min(k, 2.0, 1.5, (200,)),
    "lognormal": lambda r, k, L: r.lognormal(k, 0.5, (200,)),
    "triangular": lambda r, k, L: r.triangular(k, -1.0, 0.5, 2.0, (200,)),
    "wald": lambda r, k, L: r.wald(k, 1.5, (200,)),
    "geometric": lambda r, k, L: r.geometric(k, 0.3, (200,)),
    "maxwell": lambda r, k, L: r.maxwell(k, (50,)),
    "double_sided_maxwell": lambda r, k, L: r.double_sided_maxwell(k, 1.0, 2.0, (50,)),
    "choice_int": lambda r, k, L: r.choice(k, 10, (20,)),
    "choice_noreplace": lambda r, k, L: r.choice(k, 10, (5,), replace=False),
    "choice_arr_axis": lambda r, k, L: r.choice(k, L.asarray(COV), (2,), axis=1),
    "choice_p": lambda r, k, L: r.choice(k, 5, (50,), p=L.asarray(PROBS)),
    "choice_p_noreplace": lambda r, k, L: r.choice(k, 5, (3,), replace=False, p=L.asarray(PROBS)),
    "mvn": lambda r, k, L: r.multivariate_normal(k, L.asarray(M), L.asarray(COV), (100,)),
    "mvn_svd": lambda r, k, L:
        r.multivariate_normal(k, L.asarray(M), L.asarray(COV), (10,), method="svd"),
    "mvn_eigh": lambda r, k, L:
        r.multivariate_normal(k, L.asarray(M), L.asarray(COV), method="eigh"),
    "orthogonal": lambda r, k, L: r.orthogonal(k, 4),
    "orthogonal_nm": lambda r, k, L: r.orthogonal(k, 3, (2,), m=5),
    "gamma": lambda r, k, L: r.gamma(k, 2.5, (300,)),
    "gamma_small": lambda r, k, L: r.gamma(k, 0.3, (300,)),
    "gamma_arr": lambda r, k, L: r.gamma(k, L.asarray(ALPHAS)),
    "loggamma": lambda r, k, L: r.loggamma(k, 0.1, (100,)),
    "beta": lambda r, k, L: r.beta(k, 2.0, 3.0, (100,)),
    "dirichlet": lambda r, k, L: r.dirichlet(k, L.asarray(ALPHAS[::-1] / 2), (20,)),
    "t": lambda r, k, L: r.t(k, 4.0, (100,)),
    "chisquare": lambda r, k, L: r.chisquare(k, 3.0, (100,)),
    "f": lambda r, k, L: r.f(k, 3.0, 5.0, (100,)),
    "generalized_normal": lambda r, k, L: r.generalized_normal(k, 1.5, (100,)),
    "ball": lambda r, k, L: r.ball(k, 3, 2, (20,)),
    "poisson": lambda r, k, L: r.poisson(k, 3.0, (300,)),
    "poisson_big": lambda r, k, L: r.poisson(k, 40.0, (300,)),
}

DRAWS.update({
    "binomial": lambda r, k, L: r.binomial(k, 5.0, 0.3, (200,)),
    "binomial_big": lambda r, k, L: r.binomial(k, 100.0, 0.4, (200,)),
    "binomial_phigh": lambda r, k, L: r.binomial(k, 100.0, 0.8, (200,)),
    "binomial_mixed": lambda r, k, L: r.binomial(k, L.asarray(COUNTS), L.asarray(BIN_P), (20, 3)),
    "multinomial": lambda r, k, L: r.multinomial(k, 20.0, L.asarray(BIN_P / 1.7)),
    "multinomial_shape": lambda r, k, L:
        r.multinomial(k, L.asarray(COUNTS[:2] * 4), L.asarray(PROBS[:3] / 0.6), shape=(2, 3)),
})


@pytest.mark.parametrize("seed", [0, 42, -3])
@pytest.mark.parametrize("name", sorted(DRAWS))
def test_draws_match_jax(name: str, seed: int) -> None:
    want = np.asarray(DRAWS[name](jr, jr.PRNGKey(seed), jnp))
    got = DRAWS[name](pr, pr.PRNGKey(seed), pf).numpy()
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape,
                                                                  got.dtype, want.dtype)
    if want.dtype.kind in "iu" or name.startswith(("binomial", "multinomial", "choice",
                                                    "triangular")):
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=5e-5, atol=1e-6)


def _g(n):
    return jax.grad if n is jnp else pf.grad


def _a(n, v):
    return n.asarray(np.float32(v)) if np.ndim(v) == 0 else n.asarray(v)


GRADS = {
    "truncated_normal": lambda r, k, n: _g(n)(
        lambda lo, hi: n.sum(r.truncated_normal(k, lo, hi, (50,))), argnums=(0, 1))(
        _a(n, -1.0), _a(n, 2.0)),
    "multivariate_normal": lambda r, k, n: _g(n)(
        lambda m, c: n.sum(r.multivariate_normal(k, m, c, (20,)) ** 2), argnums=(0, 1))(
        _a(n, M), _a(n, COV)),
    "pareto": lambda r, k, n: _g(n)(lambda b: n.sum(r.pareto(k, b, (20,))))(_a(n, 3.0)),
    "rayleigh": lambda r, k, n: _g(n)(lambda s: n.sum(r.rayleigh(k, s, (20,))))(_a(n, 2.0)),
    "weibull_min": lambda r, k, n: _g(n)(
        lambda s, c: n.sum(r.weibull_min(k, s, c, (20,))), argnums=(0, 1))(
        _a(n, 2.0), _a(n, 1.5)),
    "lognormal": lambda r, k, n: _g(n)(lambda s: n.sum(r.lognormal(k, s, (20,))))(_a(n, 0.5)),
    "triangular": lambda r, k, n: _g(n)(
        lambda a, b, c: n.sum(r.triangular(k, a, b, c, (20,))), argnums=(0, 1, 2))(
        _a(n, -1.0), _a(n, 0.5), _a(n, 2.0)),
    "wald": lambda r, k, n: _g(n)(lambda m: n.sum(r.wald(k, m, (20,))))(_a(n, 1.5)),
    "double_sided_maxwell": lambda r, k, n: _g(n)(
        lambda a, b: n.sum(r.double_sided_maxwell(k, a, b, (20,))), argnums=(0, 1))(
        _a(n, 1.0), _a(n, 2.0)),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_parameter_gradients_match_jax(name: str) -> None:
    want = jax.tree_util.tree_leaves(GRADS[name](jr, jr.PRNGKey(0), jnp))
    got = pf.tree_util.tree_leaves(GRADS[name](pr, pr.PRNGKey(0), pf.numpy))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), np.asarray(w), rtol=5e-5, atol=1e-6)


GAMMA_GRADS = {
    "gamma": lambda r, k, n: _g(n)(lambda a: n.sum(r.gamma(k, a, (200,)) * n.arange(200.0)))(
        _a(n, 0.3)),
    "gamma_big": lambda r, k, n: _g(n)(lambda a: n.sum(r.gamma(k, a, (100,))))(_a(n, 30.0)),
    "gamma_vector": lambda r, k, n: _g(n)(lambda a: n.sum(r.gamma(k, a) ** 2))(
        _a(n, ALPHAS)),
    "loggamma": lambda r, k, n: _g(n)(lambda a: n.sum(r.loggamma(k, a, (100,))))(_a(n, 0.7)),
    "beta": lambda r, k, n: _g(n)(lambda a, b: n.sum(r.beta(k, a, b, (50,))), argnums=(0, 1))(
        _a(n, 3.0), _a(n, 2.0)),
    "dirichlet": lambda r, k, n: _g(n)(lambda a: n.sum(r.dirichlet(k, a)[..., 0]))(
        _a(n, np.stack([ALPHAS, ALPHAS[::-1]]))),
    "t": lambda r, k, n: _g(n)(lambda d: n.sum(r.t(k, d, (50,))))(_a(n, 3.0)),
    "chisquare": lambda r, k, n: _g(n)(lambda d: n.sum(r.chisquare(k, d, (50,))))(_a(n, 3.0)),
    "f": lambda r, k, n: _g(n)(lambda a, b: n.sum(r.f(k, a, b, (50,))), argnums=(0, 1))(
        _a(n, 3.0), _a(n, 5.0)),
}


@pytest.mark.parametrize("name", sorted(GAMMA_GRADS))
def test_gamma_reparameterization_gradients_match_jax(name: str) -> None:
    """JAX's implicit reparameterization gradient of the gamma draws (and of
    the samplers on them)."""
    want = jax.tree_util.tree_leaves(GAMMA_GRADS[name](jr, jr.PRNGKey(1), jnp))
    got = pf.tree_util.tree_leaves(GAMMA_GRADS[name](pr, pr.PRNGKey(1), pf.numpy))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g.numpy(), np.asarray(w), rtol=2e-5, atol=1e-6)


def test_gamma_second_derivative_raises() -> None:
    with pytest.raises(NotImplementedError, match="second derivative"):
        pf.grad(pf.grad(lambda a: pf.sum(pr.gamma(pr.PRNGKey(0), a, (3,)))))(pf.tensor(2.0))


def test_gamma_grad_against_finite_differences() -> None:
    """The same keys at a +- h give nearby draws (one accept path): their
    difference quotient is the reparameterization gradient."""
    h = 1e-2
    a = 2.5
    k = pr.PRNGKey(4)
    hi = pr.gamma(k, np.float32(a + h), (20,)).numpy().astype(np.float64)
    lo = pr.gamma(k, np.float32(a - h), (20,)).numpy().astype(np.float64)
    g = pf.grad(lambda t: pf.sum(pr.gamma(k, t, (20,)) * pf.arange(20.0)))(pf.tensor(a))
    np.testing.assert_allclose(g.item(), ((hi - lo) / (2 * h) * np.arange(20)).sum(), rtol=2e-2)


def test_mixed_poisson_statistics() -> None:
    """Knuth's elements and rejection's together: the rejection loop also runs
    JAX's lam=1e5 placeholders, whose acceptances hinge on float32 lgamma's
    last bits, so the draws are checked by their mean and variance."""
    lam = np.array([0.0, 0.5, 4.0, 12.0, 150.0], np.float32)
    draws = pr.poisson(pr.PRNGKey(3), pf.tensor(lam), (4000, 5)).numpy()
    assert draws.dtype == np.int32 and np.all(draws[:, 0] == 0)
    np.testing.assert_allclose(draws.mean(0)[1:], lam[1:], rtol=0.06)
    np.testing.assert_allclose(draws.var(0)[1:], lam[1:], rtol=0.12)


def test_gamma_statistics() -> None:
    for a in (0.3, 1.0, 4.5):
        g = pr.gamma(pr.PRNGKey(7), a, (3000,)).numpy()
        assert np.all(g > 0)
        np.testing.assert_allclose(g.mean(), a, rtol=0.1)  # (3000 draws: 3 standard errors)
        np.testing.assert_allclose(g.var(), a, rtol=0.3)


def test_choice_and_shape_errors() -> None:
    with pytest.raises(ValueError, match="larger sample"):
        pr.choice(pr.PRNGKey(0), 3, (4,), replace=False)
    with pytest.raises(ValueError, match="p must be None or a 1D vector"):
        pr.choice(pr.PRNGKey(0), 3, (2,), p=pf.tensor(PROBS))
    with pytest.raises(ValueError, match="broadcast-compatible"):
        pr.pareto(pr.PRNGKey(0), pf.tensor(M), (2,))
    with pytest.raises(ValueError, match="cov.shape"):
        pr.multivariate_normal(pr.PRNGKey(0), pf.tensor(M), pf.eye(2))
    np.testing.assert_array_equal(pr.clone(pr.PRNGKey(5)).numpy(), pr.PRNGKey(5).numpy())


def test_orthogonal_is_orthogonal() -> None:
    q = pr.orthogonal(pr.PRNGKey(1), 5, (2,)).numpy()
    np.testing.assert_allclose(q @ np.swapaxes(q, -1, -2), np.broadcast_to(np.eye(5), q.shape),
                               atol=1e-5)

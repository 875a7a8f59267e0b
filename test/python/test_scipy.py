"""pf.scipy against jax.scipy: special functions (SciPy's axis/b/return_sign
conventions), distributions' log densities and cdfs (values and gradients in
x and the parameters, out-of-support points), and linear algebra under
SciPy's conventions (upper Cholesky by default, p @ l @ u, 0-based pivots,
trans/lower/unit_diagonal)."""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf

jax = pytest.importorskip("jax", reason="jax (the bench extra) is the oracle here")
jsp = pytest.importorskip("jax.scipy")
for _sub in ("linalg", "special", "stats"):
    pytest.importorskip(f"jax.scipy.{_sub}")

R = np.random.default_rng(0)
X = R.standard_normal((3, 4)).astype(np.float32)
POS = (np.abs(X) + 0.3).astype(np.float32)
UNIT = (1 / (1 + np.exp(-X))).astype(np.float32)
SPD = (X @ X.T + 3 * np.eye(3)).astype(np.float32)
B = R.standard_normal((3, 2)).astype(np.float32)


def _close(got, want, tol=1e-4):
    for g, w in zip(pf.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        g = g.numpy() if hasattr(g, "numpy") else np.asarray(g)
        np.testing.assert_allclose(g, np.asarray(w), rtol=tol, atol=tol, equal_nan=True)


def _both(path: str, *args, grad_arg: int | None = 0, tol=1e-4, **kwargs):
    mod_j, mod_p = jsp, pf.scipy
    for part in path.split("."):
        mod_j, mod_p = getattr(mod_j, part), getattr(mod_p, part)
    _close(mod_p(*args, **kwargs), mod_j(*args, **kwargs), tol)
    if grad_arg is not None:
        def fj(a):
            call = list(args)
            call[grad_arg] = a
            return jax.numpy.sum(mod_j(*call, **kwargs))

        def fp(a):
            call = list(args)
            call[grad_arg] = a
            return mod_p(*call, **kwargs).sum()
        _close(pf.grad(fp)(pf.tensor(args[grad_arg])),
               jax.grad(fj)(jax.numpy.asarray(args[grad_arg])), 1e-3)


@pytest.mark.parametrize(("axis", "keepdims"), [(None, False), (1, False), (0, True),
                                                ((0, 1), False)])
def test_logsumexp_axes(axis, keepdims):
    _both("special.logsumexp", X, axis=axis, keepdims=keepdims)


def test_logsumexp_weights_and_sign():
    w = np.array([1.0, -2.0, 0.5, 0.0], np.float32)
    _both("special.logsumexp", X, axis=1, b=w, grad_arg=None)  # NaN rows where sum < 0
    _both("special.logsumexp", X, axis=1, b=w, return_sign=True, grad_arg=None)
    _both("special.logsumexp", X, axis=1, b=np.abs(w) + 0.1)


@pytest.mark.parametrize("name", ["erf", "erfc", "expit", "gammaln", "digamma", "ndtr",
                                  "log_ndtr", "i0e", "i1e", "entr"])
def test_unary_special(name):
    _both(f"special.{name}", POS if name in ("gammaln", "digamma", "entr") else X)


def test_more_special():
    _both("special.logit", UNIT)
    _both("special.erfinv", UNIT * 0.9)
    _both("special.ndtri", UNIT)
    _both("special.xlogy", POS, X)
    _both("special.xlog1py", X, POS)
    _both("special.softmax", X, axis=1)
    _both("special.log_softmax", X, axis=0)
    _both("special.betaln", POS, POS + 1)
    _both("special.gamma", np.array([-2.5, -1.5, -0.5, 0.5, 3.0], np.float32))
    _both("special.polygamma", 1, POS, grad_arg=1)
    _both("special.multigammaln", POS + 2, 2)
    _both("special.factorial", np.array([0.0, 1.0, 4.0, 5.5, -1.0], np.float32), grad_arg=None)
    _both("special.rel_entr", np.array([0.0, 0.5, 1.0, 0.2], np.float32),
          np.array([0.3, 0.5, 0.2, 0.0], np.float32), grad_arg=None)
    _both("special.kl_div", np.array([0.0, 0.5, 1.0, 0.2], np.float32),
          np.array([0.3, 0.5, 0.2, 0.0], np.float32), grad_arg=None)


@pytest.mark.parametrize("fn", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"])
def test_norm(fn):
    _both(f"stats.norm.{fn}", X, 0.5, 2.0)
    _both(f"stats.norm.{fn}", X, X.T[:3].T[:, :1], POS)


def test_norm_ppf_isf():
    _both("stats.norm.ppf", UNIT, 1.0, 2.0)
    _both("stats.norm.isf", UNIT)


def test_multivariate_normal():
    x = R.standard_normal((5, 3)).astype(np.float32)
    _both("stats.multivariate_normal.logpdf", x, np.zeros(3, np.float32), SPD)
    _both("stats.multivariate_normal.pdf", x[0], np.ones(3, np.float32), SPD, tol=1e-5)


@pytest.mark.parametrize(("dist", "fns", "args"), [
    ("logistic", ("logpdf", "pdf", "cdf", "sf"), (0.3, 1.5)),
    ("laplace", ("logpdf", "pdf", "cdf"), (0.3, 1.5)),
    ("cauchy", ("logpdf", "pdf", "cdf"), (0.3, 1.5)),
    ("t", ("logpdf", "pdf"), (3.0, 0.3, 1.5)),
])
def test_location_scale_families(dist, fns, args):
    for fn in fns:
        _both(f"stats.{dist}.{fn}", X, *args)


def test_supports_and_shape_parameters():
    xs = np.array([-0.5, 0.0, 0.25, 0.5, 1.0, 2.0], np.float32)
    _both("stats.uniform.logpdf", xs, 0.0, 1.0, grad_arg=None)
    _both("stats.expon.logpdf", xs, grad_arg=None)
    _both("stats.expon.pdf", POS, 0.1, 2.0)
    _both("stats.gamma.logpdf", POS, 2.5)
    _both("stats.gamma.logpdf", xs, 2.5, grad_arg=None)
    _both("stats.beta.logpdf", UNIT, 2.0, 3.0)
    _both("stats.beta.logpdf", xs, 2.0, 3.0, grad_arg=None)
    ks = np.array([0.0, 1.0, 2.0, 3.0, -1.0, 1.5], np.float32)
    _both("stats.poisson.logpmf", ks, 2.5, grad_arg=None)
    _both("stats.poisson.pmf", ks, 2.5, grad_arg=None)
    _both("stats.bernoulli.logpmf", np.array([0.0, 1.0, 2.0], np.float32), 0.3, grad_arg=None)


def test_linalg_conventions():
    _both("linalg.cholesky", SPD, grad_arg=None)
    _both("linalg.cholesky", SPD, lower=True, grad_arg=None)
    c = pf.scipy.linalg.cho_factor(SPD)
    _close(pf.scipy.linalg.cho_solve(c, B), jsp.linalg.cho_solve(jsp.linalg.cho_factor(SPD), B))
    _close(pf.scipy.linalg.cho_solve(c, B[:, 0]),
           jsp.linalg.cho_solve(jsp.linalg.cho_factor(SPD), B[:, 0]))
    tri = np.triu(SPD)
    for trans in (0, 1, "T"):
        for unit in (False, True):
            _both("linalg.solve_triangular", tri, B, trans=trans, unit_diagonal=unit)
    _both("linalg.solve_triangular", tri.T.copy(), B[:, 0], lower=True)
    _both("linalg.lu", X[:, :3] + 2 * np.eye(3, dtype=np.float32), grad_arg=None)
    a = X[:, :3] + np.eye(3, dtype=np.float32)
    lu_piv = pf.scipy.linalg.lu_factor(a)
    _close(lu_piv, jsp.linalg.lu_factor(a))
    _close(pf.scipy.linalg.lu_solve(lu_piv, B), jsp.linalg.lu_solve(jsp.linalg.lu_factor(a), B))
    _both("linalg.solve", SPD, B)
    _both("linalg.solve", SPD + np.triu(SPD), B, assume_a="sym")  # JAX: all of a
    _both("linalg.solve", np.triu(SPD), B, assume_a="pos", grad_arg=1)  # one triangle
    _both("linalg.det", SPD)
    _both("linalg.inv", SPD)
    _both("linalg.expm", X[:, :3] * 0.3, tol=1e-3)
    _both("linalg.eigh", SPD, eigvals_only=True)
    _both("linalg.block_diag", X[:2, :2], np.ones((1, 3), np.float32), grad_arg=None)
    q, r = pf.scipy.linalg.qr(X, mode="economic")
    np.testing.assert_allclose((q @ r).numpy(), X, rtol=1e-4, atol=1e-4)
    s = pf.scipy.linalg.svd(X, compute_uv=False)
    _close(s, jsp.linalg.svd(X, compute_uv=False))

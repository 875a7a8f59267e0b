"""``jnp.einsum_path`` and ``jnp.einsum(optimize=...)`` against JAX's: the
same paths and reports (opt_einsum's), the contractions done in that order
(values, shapes, dtypes, gradients), ``...`` and implicit outputs, explicit
paths (JAX's and numpy's forms), and numpy's greedy path when opt_einsum is
not installed."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import pyflame_mlir as pf
import pyflame_mlir.numpy as pnp

jax = pytest.importorskip("jax", reason="jax (the bench extra) is not installed")
jnp = pytest.importorskip("jax.numpy")

RNG = np.random.default_rng(0)
A = RNG.standard_normal((2, 30)).astype(np.float32)
B = RNG.standard_normal((30, 100)).astype(np.float32)
C = RNG.standard_normal((100, 5)).astype(np.float32)


@pytest.mark.parametrize("optimize", ["auto", "greedy", "optimal", True, False])
def test_paths_and_values(optimize):
    got_path, got_info = pnp.einsum_path("ij,jk,kl", A, B, C, optimize=optimize)
    want_path, want_info = jnp.einsum_path("ij,jk,kl", A, B, C, optimize=optimize)
    assert got_path == want_path and str(got_info) == str(want_info)
    got = pnp.einsum("ij,jk,kl", A, B, C, optimize=optimize)
    want = jnp.einsum("ij,jk,kl", A, B, C, optimize=optimize)
    assert got.dtype == pf.float32 and got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), np.asarray(want), rtol=1e-5, atol=1e-4)


def test_explicit_paths():
    path = jnp.einsum_path("ij,jk,kl", A, B, C, optimize="greedy")[0]
    np_path = np.einsum_path("ij,jk,kl", A, B, C, optimize="greedy")[0]
    want = np.einsum("ij,jk,kl", A.astype(np.float64), B, C)
    for p in (path, np_path, [(0, 2), (0, 1)]):
        np.testing.assert_allclose(pnp.einsum("ij,jk,kl", A, B, C, optimize=p).numpy(), want,
                                   rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="leaves 2 operands"):
        pnp.einsum("ij,jk,kl", A, B, C, optimize=[(0, 1)])


@pytest.mark.parametrize("eq, shapes", [
    ("...ij,jk,kl->...il", [(4, 2, 3), (3, 5), (5, 6)]),
    ("bij,jk,k...,l->", [(4, 2, 3), (3, 5), (5, 2, 7), (7,)]),
    ("bij,jk,klm,m", [(4, 2, 3), (3, 5), (5, 3, 2), (2,)]),
    ("bii,ij,jk", [(4, 3, 3), (3, 2), (2, 5)]),
    ("...ij,jk,kml->...ml", [(4, 2, 3), (3, 5), (5, 3, 2)]),
    ("i...,...,j...->ij...", [(3, 1, 4), (2, 4), (5, 2, 1)]),
])
def test_ellipsis_implicit_and_gradients(eq, shapes):
    ops_ = [RNG.standard_normal(s).astype(np.float32) for s in shapes]
    got, want = pnp.einsum(eq, *ops_), jnp.einsum(eq, *ops_)
    assert got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), np.asarray(want), rtol=1e-5, atol=1e-5)
    ct = RNG.standard_normal(want.shape).astype(np.float32)
    argnums = tuple(range(len(ops_)))
    gp = pf.grad(lambda *o: (pnp.einsum(eq, *o) * ct).sum(), argnums=argnums)(*ops_)
    gj = jax.grad(lambda *o: (jnp.einsum(eq, *o) * ct).sum(), argnums=argnums)(*ops_)
    for g, w in zip(gp, gj):
        np.testing.assert_allclose(g.numpy(), np.asarray(w), rtol=1e-4, atol=1e-4)


def test_numpy_path_without_opt_einsum(monkeypatch):
    monkeypatch.setitem(sys.modules, "opt_einsum", None)  # its import raises
    want = np.einsum("ij,jk,kl", A.astype(np.float64), B, C)
    np.testing.assert_allclose(pnp.einsum("ij,jk,kl", A, B, C).numpy(), want, rtol=1e-4,
                               atol=1e-4)
    with pytest.raises(ImportError, match="needs opt_einsum"):
        pnp.einsum_path("ij,jk,kl", A, B, C)

"""numpy's and JAX's negative slice steps (``x[::-1]``, ``x[::-2, 1]``,
``x[5:1:-1]``; torch refuses them) for reads, ``x.at[...]`` updates,
gradients, ``vmap`` and ``pf.compile``, against jax."""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf

jax = pytest.importorskip("jax", reason="jax (the bench extra) is not installed")
jnp = pytest.importorskip("jax.numpy")
pnp = pf.numpy

X = np.arange(4 * 5 * 6, dtype=np.float32).reshape(4, 5, 6)
INDICES = [np.s_[::-1], np.s_[::-2, 1], np.s_[..., ::-3], np.s_[1:3, ::-1, None, 4:0:-2],
           np.s_[[0, 2, 1], ::-1], np.s_[::-1, [1, 3]], np.s_[-1:-10:-1, :, -2::-4],
           np.s_[3:1:1, ::-1], np.s_[2:2:-1], np.s_[::-1, np.array([True, False, True, True,
                                                                     False])],
           np.s_[None, ..., ::-2], np.s_[::-1, 0, [5, 0]], np.s_[1, ::-1, ::-1]]


@pytest.mark.parametrize("ix", INDICES, ids=[str(i) for i in range(len(INDICES))])
def test_negative_steps_match_jax(ix: object) -> None:
    want = np.asarray(jnp.asarray(X)[ix])
    got = np.asarray(pnp.asarray(X)[ix])
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.asarray(pnp.asarray(X).at[ix].get()), want)
    np.testing.assert_array_equal(np.asarray(pnp.asarray(X).at[ix].set(-1.0)),
                                  np.asarray(jnp.asarray(X).at[ix].set(-1.0)))
    upd = np.arange(want.size, dtype=np.float32).reshape(want.shape)
    np.testing.assert_array_equal(np.asarray(pnp.asarray(X).at[ix].add(upd)),
                                  np.asarray(jnp.asarray(X).at[ix].add(upd)))
    c = np.random.RandomState(0).randn(*want.shape).astype(np.float32)
    gw = jax.grad(lambda a: (a[ix] * c).sum())(jnp.asarray(X))
    gp = pf.grad(lambda a: (a[ix] * pnp.asarray(c)).sum())(pnp.asarray(X))
    np.testing.assert_allclose(np.asarray(gp), np.asarray(gw))
    stacked = np.stack([X, X + 1])
    np.testing.assert_array_equal(np.asarray(pf.vmap(lambda a: a[ix])(pnp.asarray(stacked))),
                                  np.asarray(jax.vmap(lambda a: a[ix])(jnp.asarray(stacked))))
    np.testing.assert_array_equal(np.asarray(pf.compile(lambda a: a[ix] * 2)(pnp.asarray(X))),
                                  want * 2)


def test_negative_step_torch_tensor_and_forward_mode() -> None:
    t = pf.tensor(X[0, 0])
    np.testing.assert_array_equal(t[::-1].numpy(), X[0, 0][::-1])
    _, tangent = pf.jvp(lambda a: a[4:0:-3], (t,), (pf.ones_like(t),))
    np.testing.assert_array_equal(tangent.numpy(), np.ones(2, np.float32))

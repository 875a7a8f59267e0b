"""``pf.nn.softmax``/``log_softmax`` with ``where=`` (a mask), against
``jax.nn``: values (masked entries 0 / -inf, an all-masked row included)
and gradients, along either axis."""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf

jax = pytest.importorskip("jax")
jnp = jax.numpy
pnp = pf.numpy

R = np.random.RandomState(0)
X = R.randn(3, 5).astype(np.float32)
W = R.randn(3, 5).astype(np.float32)
MASK = R.rand(3, 5) > 0.4
MASK[2] = False
MASK[1, 0] = True


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("axis", [-1, 0])
def test_where_values_and_gradients(name, axis):
    fj, fp = getattr(jax.nn, name), getattr(pf.nn, name)
    want = np.asarray(fj(jnp.asarray(X), axis=axis, where=jnp.asarray(MASK)))
    got = fp(pnp.asarray(X), axis=axis, where=pnp.asarray(MASK)).numpy()
    np.testing.assert_allclose(got, want, atol=1e-6, equal_nan=True)

    def loss(lib, f, v):
        m = lib.asarray(MASK)
        return lib.sum(lib.where(m, f(v, axis=axis, where=m) * lib.asarray(W), 0.0))
    np.testing.assert_allclose(pf.grad(lambda v: loss(pnp, fp, v))(pnp.asarray(X)).numpy(),
                               np.asarray(jax.grad(lambda v: loss(jnp, fj, v))(jnp.asarray(X))),
                               atol=1e-5)

"""jax.nn's functions under pf.nn against jax.nn: values and gradients,
including the kinks (JAX's derivative conventions: relu6 is flat at 0 and 6,
clip's ties share), the axis forms of softmax/logsumexp, gelu's two forms."""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf
from pyflame_mlir.nn import jax_nn

jax = pytest.importorskip("jax", reason="jax (the bench extra) is the oracle here")
jnp = pytest.importorskip("jax.numpy")

# the kinks (-3, -1, 0, 1, 3, ...) are on the grid
X = np.concatenate([np.linspace(-4, 4, 17), [0.0, 0.3, -0.7]]).astype(np.float32).reshape(4, 5)
AXES = ("softmax", "log_softmax", "logsumexp", "logmeanexp")
CASES = [(n, {}) for n in jax_nn.__all__ if n not in ("one_hot", "dot_product_attention")]
# (dot_product_attention takes three arrays: test_jax_hunt4.py compares it with jax)
CASES += [("gelu", {"approximate": False}), ("glu", {"axis": 0}), ("standardize", {"axis": 0})]
CASES += [(n, {"axis": a}) for n in AXES for a in (0, (0, 1))]


@pytest.mark.parametrize(("name", "kwargs"), CASES, ids=[f"{n}{k}" for n, k in CASES])
def test_matches_jax_nn(name: str, kwargs: dict) -> None:
    x = np.abs(X) + 0.1 if name == "log1mexp" else X[:, :4] if name == "glu" and not kwargs \
        else X
    fj, fp = getattr(jax.nn, name), getattr(pf.nn, name)
    np.testing.assert_allclose(fp(pf.tensor(x), **kwargs).numpy(), np.asarray(fj(x, **kwargs)),
                               rtol=1e-5, atol=1e-6)
    gj = jax.grad(lambda v: jnp.sum(fj(v, **kwargs) ** 2))(x)
    gp = pf.grad(lambda v: pf.sum(fp(v, **kwargs) ** 2))(pf.tensor(x))
    np.testing.assert_allclose(gp.numpy(), np.asarray(gj), rtol=1e-4, atol=1e-5)


def test_one_hot_matches_jax() -> None:
    i = np.array([0, 2, 5, -1])
    for n, axis in ((4, -1), (3, 0)):
        np.testing.assert_array_equal(pf.nn.one_hot(pf.tensor(i), n, axis=axis).numpy(),
                                      np.asarray(jax.nn.one_hot(i, n, axis=axis)))
    assert pf.nn.one_hot(pf.tensor(i), 4, dtype=pf.int32).dtype is pf.int32

"""pf.nn.initializers against jax.nn.initializers: the same key gives the
same parameters (the variance-scaling family over dense and convolution
shapes, axes options), and the shape errors JAX gives. Uniform draws are
bit for bit; normal ones to the ulp (XLA's float32 erf_inv and log1p are
its own polynomials)."""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf

jax = pytest.importorskip("jax", reason="jax (the bench extra) is the oracle here")
jnp = pytest.importorskip("jax.numpy")

SHAPES = [(5, 7), (3, 3, 4, 8), (2, 6, 3)]
FAMILY = ["glorot_uniform", "glorot_normal", "lecun_uniform", "lecun_normal", "he_uniform",
          "he_normal", "xavier_uniform", "kaiming_normal"]


def _same(pf_init, jax_init, shape, dtype=np.float32, key=0) -> None:
    got = pf_init(pf.random.PRNGKey(key), shape, dtype)
    want = jax_init(jax.random.PRNGKey(key), shape, dtype)
    assert tuple(got.shape) == want.shape and got.numpy().dtype == np.asarray(want).dtype
    np.testing.assert_allclose(got.numpy(), np.asarray(want), rtol=3e-6, atol=3e-7)


@pytest.mark.parametrize("name", FAMILY)
@pytest.mark.parametrize("shape", SHAPES)
def test_variance_scaling_family(name, shape):
    _same(getattr(pf.nn.initializers, name)(), getattr(jax.nn.initializers, name)(), shape)


@pytest.mark.parametrize("mode", ["fan_in", "fan_out", "fan_avg", "fan_geo_avg"])
@pytest.mark.parametrize("distribution", ["truncated_normal", "normal", "uniform"])
def test_variance_scaling_options(mode, distribution):
    kw = dict(in_axis=(0, 1), out_axis=-1, batch_axis=2)
    _same(pf.nn.initializers.variance_scaling(0.7, mode, distribution, **kw),
          jax.nn.initializers.variance_scaling(0.7, mode, distribution, **kw), (3, 2, 4, 5), key=3)


def test_simple_initializers():
    for name, args in [("normal", (0.3,)), ("uniform", (2.0,)), ("truncated_normal", (0.5,)),
                       ("constant", (-7,)), ("orthogonal", ()), ("orthogonal", (2.0, 0))]:
        _same(getattr(pf.nn.initializers, name)(*args),
              getattr(jax.nn.initializers, name)(*args), (4, 6), key=5)
    _same(pf.nn.initializers.orthogonal(), jax.nn.initializers.orthogonal(), (2, 3, 5))
    _same(pf.nn.initializers.delta_orthogonal(), jax.nn.initializers.delta_orthogonal(),
          (3, 3, 4, 6))
    _same(lambda k, s, d: pf.nn.initializers.zeros(k, s, d),
          lambda k, s, d: jax.nn.initializers.zeros(k, s, d), (2, 3))
    _same(lambda k, s, d: pf.nn.initializers.ones(k, s, d),
          lambda k, s, d: jax.nn.initializers.ones(k, s, d), (2, 3))


def test_errors():
    with pytest.raises(ValueError, match="at least 2D"):
        pf.nn.initializers.glorot_uniform()(pf.random.PRNGKey(0), (4,))
    with pytest.raises(ValueError, match="invalid mode"):
        pf.nn.initializers.variance_scaling(1.0, "fan", "normal")
    with pytest.raises(ValueError, match="at least a 2D shape"):
        pf.nn.initializers.orthogonal()(pf.random.PRNGKey(0), (4,))

"""``x.at[idx]`` with negative and out-of-bounds indices, as JAX: ``get``
clamps by default (its gradient drops the out-of-bounds elements) or fills
(``mode="fill"``), the updates drop them by default or clamp
(``mode="clip"``); host and lazy indices (``pf.compile``, ``vmap``) alike,
values and gradients against jax."""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf

jax = pytest.importorskip("jax")
jnp = jax.numpy
pnp = pf.numpy

X = np.random.RandomState(0).randn(5).astype(np.float32)
I = np.array([0, -1, 7, 2, -9])
M = np.random.RandomState(1).randn(3, 4).astype(np.float32)

OPS = {
    "set": lambda a, k: a.at[k].set(10.0),
    "add": lambda a, k: a.at[k].add(pnp.arange(5.0) if isinstance(a, pf.Tensor)
                                    else jnp.arange(5.0)),
    "multiply": lambda a, k: a.at[k].multiply(3.0),
    "min": lambda a, k: a.at[k].min(-1.0),
    "max": lambda a, k: a.at[k].max(1.0),
    "set_clip": lambda a, k: a.at[k].set(10.0, mode="clip"),
    "add_drop": lambda a, k: a.at[k].add(1.0, mode="drop"),
    "get": lambda a, k: a.at[k].get(),
    "get_clip": lambda a, k: a.at[k].get(mode="clip"),
    "get_fill": lambda a, k: a.at[k].get(mode="fill"),
    "get_fill_value": lambda a, k: a.at[k].get(mode="fill", fill_value=-3.0),
}


def _close(got, want):
    assert tuple(got.shape) == want.shape
    np.testing.assert_allclose(got.numpy(), np.asarray(want), rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("name", sorted(OPS))
def test_host_index(name):
    f = OPS[name]
    _close(f(pnp.asarray(X), I), f(jnp.asarray(X), I))


@pytest.mark.parametrize("name", ["set", "add_drop", "get", "get_fill", "set_clip"])
def test_lazy_index_compiled_and_vmapped(name):
    f = OPS[name]
    want = f(jnp.asarray(X), jnp.asarray(I))
    c = pf.compile(f)
    for _ in range(2):
        _close(c(pnp.asarray(X), pnp.asarray(I)), want)
    _close(pf.vmap(f, in_axes=(None, 0))(pnp.asarray(X), pnp.asarray(I[:, None])),
           jax.vmap(f, in_axes=(None, 0))(jnp.asarray(X), jnp.asarray(I[:, None])))


@pytest.mark.parametrize("name", ["set", "add", "multiply", "get", "get_fill", "set_clip"])
@pytest.mark.parametrize("lazy", [False, True])
def test_gradients(name, lazy):
    f = OPS[name]

    def loss(lib, a):
        k = lib.asarray(I) if lazy else I
        return (f(a, k) ** 2 * lib.arange(5.0)).sum() if not name.startswith("get") else \
            lib.nansum(f(a, k) * lib.arange(5.0))
    _close(pf.grad(lambda a: loss(pnp, a))(pnp.asarray(X)),
           jax.grad(lambda a: loss(jnp, a))(jnp.asarray(X)))


def test_scalar_and_two_dimensional_indices():
    for f in (lambda m, a: a.at[7].set(1.0), lambda m, a: a.at[-9].add(1.0),
              lambda m, a: a.at[-2].multiply(3.0)):
        _close(f(pnp, pnp.asarray(X)), f(jnp, jnp.asarray(X)))
    for f in (lambda m, a: a.at[m.asarray(np.array([0, 5])), 1:].add(1.0),
              lambda m, a: a.at[1, m.asarray(np.array([0, 9]))].set(2.0),
              lambda m, a: a.at[m.asarray(np.array([0, 5])), m.asarray(np.array([1, 2]))]
              .get(mode="fill"),
              lambda m, a: a.at[:, m.asarray(np.array([0, -5, 5]))].get(),
              lambda m, a: a.at[..., m.asarray(np.array([0, 5]))].get(mode="fill")):
        _close(f(pnp, pnp.asarray(M)), f(jnp, jnp.asarray(M)))


def test_integer_fill_and_mul_alias():
    a = np.arange(5, dtype=np.int32)
    _close(pnp.asarray(a).at[I].get(mode="fill"), jnp.asarray(a).at[I].get(mode="fill"))
    _close(pnp.asarray(X).at[I].mul(2.0), jnp.asarray(X).at[I].mul(2.0))


def test_power_drops_out_of_bounds_and_refuses_repeats():
    k = np.array([0, 2, 9])
    _close(pnp.asarray(X).at[k].power(2.0), jnp.asarray(X).at[k].power(2.0))
    with pytest.raises(NotImplementedError, match="repeated"):
        pnp.asarray(X).at[np.array([1, 1])].power(2.0)

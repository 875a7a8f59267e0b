"""``vmap(f, axis_name=...)`` with ``lax.psum``/``pmean``/``pmax``/``pmin``/
``all_gather``/``axis_index`` inside: JAX's batched semantics, values and
gradients against jax; nested names; the errors of unbound names."""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf

jax = pytest.importorskip("jax")
jnp = jax.numpy
pnp, plax = pf.numpy, pf.lax

X = np.random.RandomState(0).randn(4, 3).astype(np.float32)


def _both(build, *args):
    want = build(jnp, jax.lax, jax.vmap, jax.grad)(*[jnp.asarray(a) for a in args])
    got = build(pnp, plax, pf.vmap, pf.grad)(*[pnp.asarray(a) for a in args])
    for w, g in zip(jax.tree_util.tree_leaves(want), pf.tree_util.tree_leaves(got)):
        assert tuple(g.shape) == w.shape
        np.testing.assert_allclose(g.numpy(), np.asarray(w), rtol=1e-5, atol=1e-6)


BODIES = {
    "psum": lambda m, lax: lambda v: lax.psum(v, "i"),
    "center": lambda m, lax: lambda v: v - lax.pmean(v, "i"),
    "pmax": lambda m, lax: lambda v: lax.pmax(v, "i"),
    "pmin": lambda m, lax: lambda v: lax.pmin(v.sum(), "i"),
    "all_gather": lambda m, lax: lambda v: lax.all_gather(v, "i"),
    "all_gather_axis1": lambda m, lax: lambda v: lax.all_gather(v, "i", axis=1),
    "axis_index": lambda m, lax: lambda v: v * lax.axis_index("i"),
    "psum_of_one": lambda m, lax: lambda v: v / lax.psum(1, "i"),
    "pytree": lambda m, lax: lambda v: lax.psum({"a": v, "b": v * 2}, "i"),
    "batch_softmax": lambda m, lax: lambda v: m.exp(v) / lax.psum(m.exp(v), "i"),
}


@pytest.mark.parametrize("name", sorted(BODIES))
def test_collective_values(name):
    _both(lambda m, lax, vmap, grad: vmap(BODIES[name](m, lax), axis_name="i"), X)


def test_out_axes_none_for_the_reduced_value():
    _both(lambda m, lax, vmap, grad: vmap(lambda v: lax.psum(v, "i"), axis_name="i",
                                          out_axes=None), X)


def test_gradient_through_pmean():
    _both(lambda m, lax, vmap, grad: grad(lambda xs: vmap(
        lambda v: (v - lax.pmean(v, "i")) ** 2 * v, axis_name="i")(xs).sum()), X)


def test_per_example_gradients_averaged():
    def build(m, lax, vmap, grad):
        def step(w, xs):
            return vmap(lambda v: lax.pmean(grad(lambda w: m.sum(m.tanh(v @ w)))(w), "i"),
                        axis_name="i")(xs)
        return step
    _both(build, np.ones((3, 2), np.float32), X)


def test_nested_names():
    _both(lambda m, lax, vmap, grad: vmap(vmap(lambda v: lax.psum(v, "j"), axis_name="j"),
                                          axis_name="i"), X)
    _both(lambda m, lax, vmap, grad: vmap(lambda r: vmap(lambda v: lax.psum(v, "i"))(r),
                                          axis_name="i"), X)


def test_unbound_name_raises():
    with pytest.raises(NameError, match="unbound axis name 'i'"):
        plax.psum(pnp.ones(3), "i")
    with pytest.raises(NameError, match="unbound axis name 'k'"):
        pf.vmap(lambda v: plax.psum(v, "k"), axis_name="i")(pnp.asarray(X))


def test_lax_collectives_inside_shard_map():
    mesh = pf.DeviceMesh(2, "d")
    f = pf.shard_map(lambda v: plax.psum(v, "d"), mesh, in_specs=pf.P("d"), out_specs=pf.P())
    np.testing.assert_allclose(f(pnp.asarray(X)).numpy(), X[:2] + X[2:], rtol=1e-6)

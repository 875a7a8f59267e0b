"""``vmap(axis_name=...)`` collectives batched (session 14): ``psum``/
``pmean``/``pmax``/``pmin``/``all_gather``/``axis_index``/``axis_size`` over
the vmap's own axis trace the function once (the collective is a reduction
over the batch of its operand's batched value) instead of running the
examples in lockstep; values and gradients against jax, nested names."""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf

jax = pytest.importorskip("jax")
jnp = jax.numpy
pnp, plax = pf.numpy, pf.lax

X = np.random.RandomState(0).randn(4, 3).astype(np.float32)

CASES = {
    "psum": lambda m, lax, vmap, grad: vmap(lambda v: lax.psum(v, "i"), axis_name="i"),
    "center": lambda m, lax, vmap, grad: vmap(lambda v: v - lax.pmean(v, "i"), axis_name="i"),
    "pmax_pmin": lambda m, lax, vmap, grad: vmap(
        lambda v: lax.pmax(v, "i") - lax.pmin(v.sum(), "i"), axis_name="i"),
    "axis_index": lambda m, lax, vmap, grad: vmap(lambda v: v * lax.axis_index("i"),
                                                  axis_name="i"),
    "axis_size": lambda m, lax, vmap, grad: vmap(lambda v: v / lax.axis_size("i"),
                                                 axis_name="i"),
    "all_gather": lambda m, lax, vmap, grad: vmap(lambda v: lax.all_gather(v, "i", axis=1),
                                                  axis_name="i"),
    "all_gather_tiled": lambda m, lax, vmap, grad: vmap(
        lambda v: lax.all_gather(v, "i", tiled=True), axis_name="i"),
    "int_psum": lambda m, lax, vmap, grad: vmap(
        lambda v: lax.psum((v > 0).astype(m.int32), "i"), axis_name="i"),
    "grad_of_vmap": lambda m, lax, vmap, grad: grad(lambda xs: vmap(
        lambda v: (v - lax.pmean(v, "i")) ** 2 * v, axis_name="i")(xs).sum()),
    "grad_softmax": lambda m, lax, vmap, grad: grad(lambda xs: vmap(
        lambda v: m.exp(v) / lax.psum(m.exp(v), "i"), axis_name="i")(xs)[:, 0].sum()),
    "vmap_of_grad": lambda m, lax, vmap, grad: vmap(lambda v: lax.pmean(grad(
        lambda w: m.sum(m.tanh(v * w)))(m.ones(3)), "i"), axis_name="i"),
    "outer_name_inside": lambda m, lax, vmap, grad: vmap(vmap(
        lambda v: v - lax.psum(v, "i"), axis_name="j"), axis_name="i"),
    "inner_name": lambda m, lax, vmap, grad: vmap(vmap(
        lambda v: v - lax.psum(v, "j"), axis_name="j"), axis_name="i"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_batched_collectives_match_jax(name: str) -> None:
    want = CASES[name](jnp, jax.lax, jax.vmap, jax.grad)(jnp.asarray(X))
    got = CASES[name](pnp, plax, pf.vmap, pf.grad)(pnp.asarray(X))
    assert tuple(got.shape) == want.shape and np.asarray(got).dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["psum", "center", "pmax_pmin", "axis_index", "all_gather",
                                  "grad_of_vmap", "vmap_of_grad"])
def test_collective_body_is_traced_once(name: str) -> None:
    # the lockstep run called the body once per example (4 here)
    calls = []

    def counting_vmap(f, **kw):
        def body(*a):
            calls.append(1)
            return f(*a)
        return pf.vmap(body, **kw)
    CASES[name](pnp, plax, counting_vmap, pf.grad)(pnp.asarray(X)).numpy()
    assert len(calls) == 1


def test_batched_collective_under_compile() -> None:
    f = pf.compile(pf.vmap(lambda v: v - plax.pmean(v, "i"), axis_name="i"))
    for k in range(2):
        x = X + k
        np.testing.assert_allclose(f(pnp.asarray(x)).numpy(), x - x.mean(0), rtol=1e-6,
                                   atol=1e-6)


def test_collective_of_a_custom_vjp_output_runs_in_lockstep() -> None:
    # (the batched form cannot carry a custom rule: _NeedsLoop escaped)
    @pf.custom_vjp
    def f(x):
        return x * 2
    f.defvjp(lambda x: (x * 2, None), lambda r, g: (g * 3,))

    @jax.custom_vjp
    def fj(x):
        return x * 2
    fj.defvjp(lambda x: (x * 2, None), lambda r, g: (g * 3,))
    want = jax.grad(lambda xs: jax.vmap(lambda v: jax.lax.pmean(fj(v), "i") * v,
                                        axis_name="i")(xs).sum())(X)
    got = pf.grad(lambda xs: pf.vmap(lambda v: plax.pmean(f(v), "i") * v,
                                     axis_name="i")(xs).sum())(pnp.asarray(X))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        np.asarray(pf.vmap(lambda v: plax.all_gather(f(v), "i"), axis_name="i")(pnp.asarray(X))),
        np.asarray(jax.vmap(lambda v: jax.lax.all_gather(fj(v), "i"), axis_name="i")(X)))


def test_stop_gradient_inside_a_batched_collective() -> None:
    def build(lax, vmap, grad):
        return grad(lambda xs: vmap(lambda v: lax.psum(lax.stop_gradient(v) * v, "i") * v,
                                    axis_name="i")(xs).sum())
    np.testing.assert_allclose(np.asarray(build(plax, pf.vmap, pf.grad)(pnp.asarray(X))),
                               np.asarray(build(jax.lax, jax.vmap, jax.grad)(X)),
                               rtol=1e-5, atol=1e-6)

"""A transform inside a differentiated function that closes over the outer
argument (``grad(lambda x: grad(lambda t: f(x, t))(t0))``, ``hessian`` of a
``custom_jvp`` function, whose reverse rule is the inner VJP of its JVP):
the outer derivative flows through the closed-over value, as in JAX (it was
silently zero: the inner trace went through the outer argument into its
history and captured the raw input instead)."""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf

jax = pytest.importorskip("jax")
jnp = jax.numpy
pnp = pf.numpy
X = np.array([0.3, -0.8, 1.2], np.float32)


def _close(got, want):
    np.testing.assert_allclose(got.numpy(), np.asarray(want), rtol=1e-5, atol=1e-6)


CASES = {
    "grad_of_grad_closure": lambda m, J: J.grad(
        lambda x: J.grad(lambda t: (m.cos(x) * t * t).sum())(m.ones(3)).sum()),
    "grad_of_vjp_closure": lambda m, J: J.grad(
        lambda x: J.vjp(lambda t: m.cos(x) * t, m.zeros(3))[1](m.ones(3))[0].sum()),
    "jacfwd_of_grad_closure": lambda m, J: J.jacfwd(
        lambda x: J.grad(lambda t: (m.cos(x) * t).sum())(m.ones(3))),
    "mixed_arg_and_closure": lambda m, J: J.grad(
        lambda x: J.grad(lambda t: (m.cos(t) * x).sum())(x).sum()),
    "jacrev_of_jvp_closure": lambda m, J: J.jacrev(
        lambda x: J.jvp(lambda t: m.sin(t * x), (m.ones(3),), (m.ones(3),))[1]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_closure_over_the_outer_argument(name):
    _close(CASES[name](pnp, pf)(pnp.asarray(X)), CASES[name](jnp, jax)(jnp.asarray(X)))


def _custom(m, J):
    @J.custom_jvp
    def f(x):
        return m.sin(x) * x

    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), (m.cos(x) * x + m.sin(x)) * t
    f.defjvp(f_jvp)
    return lambda x: f(x).sum()


@pytest.mark.parametrize("transform", ["hessian", "gradgrad", "jacrev_jacrev"])
def test_second_derivatives_of_custom_jvp(transform):
    def build(m, J):
        s = _custom(m, J)
        if transform == "hessian":
            return J.hessian(s)
        if transform == "gradgrad":
            return J.grad(lambda x: J.grad(s)(x).sum())
        return J.jacrev(J.jacrev(s))
    _close(build(pnp, pf)(pnp.asarray(X)), build(jnp, jax)(jnp.asarray(X)))

"""``lax.while_loop`` differentiates as JAX's: forward mode (``jvp``,
``jacfwd``) against jax, reverse mode raises JAX's error; ``fori_loop``
(static bounds) in reverse mode against jax; the torch-style
``pf.while_loop`` stays differentiable, as torch's."""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf

jax = pytest.importorskip("jax")
jnp = jax.numpy
pnp = pf.numpy
X = np.array([0.3, 0.7], np.float32)


def _f(lib, lax):
    def f(x):
        return lax.while_loop(lambda c: c[1] < 3,
                              lambda c: (c[0] * lib.sin(c[0]) + 1.0, c[1] + 1), (x, 0))[0].sum()
    return f


def test_while_loop_reverse_mode_raises():
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work"):
        pf.grad(_f(pnp, pf.lax))(pnp.asarray(X))
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work"):
        jax.grad(_f(jnp, jax.lax))(jnp.asarray(X))


def test_while_loop_forward_mode_matches_jax():
    f, g = _f(pnp, pf.lax), _f(jnp, jax.lax)
    np.testing.assert_allclose(pf.jacfwd(f)(pnp.asarray(X)).numpy(),
                               np.asarray(jax.jacfwd(g)(jnp.asarray(X))), rtol=1e-5)
    got = pf.jvp(f, (pnp.asarray(X),), (pnp.ones(2),))
    want = jax.jvp(g, (jnp.asarray(X),), (jnp.ones(2),))
    np.testing.assert_allclose(got[0].numpy(), np.asarray(want[0]), rtol=1e-6)
    np.testing.assert_allclose(got[1].numpy(), np.asarray(want[1]), rtol=1e-5)
    np.testing.assert_allclose(pf.vmap(f)(pnp.asarray(np.stack([X, 2 * X]))).numpy(),
                               np.asarray(jax.vmap(g)(jnp.asarray(np.stack([X, 2 * X])))),
                               rtol=1e-6)


def test_fori_loop_reverse_mode_matches_jax():
    def h(lib, lax):
        return lambda v: lax.fori_loop(0, 3, lambda i, c: c * lib.sin(c) + i, v).sum()
    np.testing.assert_allclose(pf.grad(h(pnp, pf.lax))(pnp.asarray(X)).numpy(),
                               np.asarray(jax.grad(h(jnp, jax.lax))(jnp.asarray(X))), rtol=1e-5)


def test_torch_style_while_loop_is_differentiable():
    torch = pytest.importorskip("torch")
    from torch._higher_order_ops.while_loop import while_loop

    def run(lib, x, i0):
        return lib(lambda i, c: i < 3, lambda i, c: (i + 1, c * (c.sin()) + 1.0), (i0, x))[1]
    xt = torch.tensor(X, requires_grad=True)
    run(while_loop, xt, torch.tensor(0)).sum().backward()
    xp = pf.tensor(X, requires_grad=True)
    run(pf.while_loop, xp, pf.tensor(0)).sum().backward()
    np.testing.assert_allclose(xp.grad.numpy(), xt.grad.numpy(), rtol=1e-5)


def test_loops_return_arrays_of_jax_dtypes_and_lax_reductions_keep_the_dtype():
    for lib, lax in ((pnp, pf.lax), (jnp, jax.lax)):
        out = (lax.fori_loop(0, 3, lambda i, c: c + i, 0),
               lax.while_loop(lambda c: c < 5, lambda c: c + 2, 0),
               lax.reduce_sum(lib.arange(4), (0,)),
               lax.reduce_prod(lib.ones(3, lib.int8), (0,)))
        if lib is pnp:
            got = out
        else:
            want = out
    for g, w in zip(got, want):
        assert isinstance(g, pf.Tensor) and g.dtype.np == np.dtype(w.dtype)
        assert g.item() == int(w)


@pytest.mark.parametrize("mode", [None, "fill", "clip"])
def test_numpy_take_and_take_along_axis_out_of_bounds(mode):
    x, i = np.arange(5.0, dtype=np.float32), np.array([0, 7, -1, -9])
    for name in ("take", "take_along_axis"):
        kw = {} if name == "take" else {"axis": 0}
        got = getattr(pnp, name)(pnp.asarray(x), pnp.asarray(i), mode=mode, **kw)
        want = getattr(jnp, name)(jnp.asarray(x), jnp.asarray(i), mode=mode, **kw)
        np.testing.assert_array_equal(got.numpy(), np.asarray(want))

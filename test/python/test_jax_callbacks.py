"""``pf.disable_jit``, ``pf.make_jaxpr`` and the host callbacks
(``pf.pure_callback``, ``pf.experimental.io_callback``): values against
numpy and jax, the derivative errors JAX gives, vmap per example."""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf

pnp = pf.numpy


def _host_sin(a):
    return np.sin(a).astype(np.float32)


def _sin_cb(a, **kw):
    return pf.pure_callback(_host_sin, pf.ShapeDtypeStruct(a.shape, a.dtype), a, **kw)


def test_disable_jit_runs_python_every_call():
    calls = []

    @pf.compile
    def f(x):
        calls.append(1)
        return x * 2

    x = pf.ones(3)
    f(x), f(x)
    assert len(calls) == 1
    with pf.disable_jit():
        assert pf.config.jax_disable_jit
        np.testing.assert_array_equal(f(x).numpy(), [2, 2, 2])
        f(x)
    assert len(calls) == 3 and not pf.config.jax_disable_jit
    f(x)
    assert len(calls) == 3


def test_make_jaxpr_avals_and_ir():
    jax = pytest.importorskip("jax")
    w = pnp.asarray(np.ones((3, 4), np.float32))  # host data: a captured input

    def g(a, b):
        return pnp.sin(a) @ b + w.sum(), a.sum()

    args = (np.ones((2, 3), np.float32), np.ones((3, 4), np.float32))
    closed = pf.make_jaxpr(g)(*args)
    ref = jax.make_jaxpr(lambda a, b: (jax.numpy.sin(a) @ b, a.sum()))(*args)
    assert [(s.shape, s.dtype.name) for s in closed.in_avals] == \
        [(a.shape, a.dtype.name) for a in ref.in_avals]
    assert [(s.shape, s.dtype.name) for s in closed.out_avals] == \
        [(a.shape, a.dtype.name) for a in ref.out_avals]
    text = str(closed)
    assert closed.pretty_print() == text and closed.jaxpr is closed
    assert "pyflame.sin" in text and "pyflame.matmul" in text
    assert len(closed.consts) == 1 and closed.consts[0] is w
    _, shapes = pf.make_jaxpr(g, return_shape=True)(*args)
    assert shapes[0].shape == (2, 4) and shapes[1].shape == ()


def test_pure_callback_values_compile_and_vmap():
    a = pnp.arange(4.0)
    np.testing.assert_allclose((_sin_cb(a) * 2).numpy(), 2 * np.sin(np.arange(4.0)), rtol=1e-6)
    np.testing.assert_allclose(pf.compile(_sin_cb)(a).numpy(), np.sin(np.arange(4.0)), rtol=1e-6)
    xs = pnp.asarray(np.arange(6.0).reshape(2, 3))
    got = pf.vmap(lambda r: _sin_cb(r, vmap_method="sequential"))(xs)
    np.testing.assert_allclose(got.numpy(), np.sin(np.arange(6.0)).reshape(2, 3), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="vmap_method"):
        pf.vmap(_sin_cb)(xs)


def test_pure_callback_checks_the_declared_result():
    a = pnp.arange(4.0)
    with pytest.raises(ValueError, match=r"shape \(4,\), declared \(5,\)"):
        pf.pure_callback(_host_sin, pf.ShapeDtypeStruct((5,), pnp.float32), a)
    with pytest.raises(ValueError, match="dtype float64"):
        pf.pure_callback(lambda v: v.astype(np.float64), pf.ShapeDtypeStruct((4,), pnp.float32), a)


def test_pure_callback_is_not_differentiable_unless_wrapped():
    a = pnp.arange(4.0)
    with pytest.raises(ValueError, match="do not support transpose"):
        pf.grad(lambda v: _sin_cb(v).sum())(a)
    with pytest.raises(ValueError, match="do not support JVP"):
        pf.jvp(_sin_cb, (a,), (a,))

    @pf.custom_jvp
    def s(v):
        return _sin_cb(v)

    def s_jvp(primals, tangents):
        (v,), (t,) = primals, tangents
        return s(v), pnp.cos(v) * t

    s.defjvp(s_jvp)

    np.testing.assert_allclose(pf.grad(lambda v: s(v).sum())(a).numpy(),
                               np.cos(np.arange(4.0)), rtol=1e-6)


def test_io_callback_runs_in_order():
    seen = []

    def log(v):
        seen.append(np.asarray(v).copy())
        return np.float32(v.sum())

    xs = pnp.asarray(np.arange(6.0).reshape(3, 2))
    out = pf.vmap(lambda r: pf.experimental.io_callback(
        log, pf.ShapeDtypeStruct((), pnp.float32), r))(xs)
    np.testing.assert_array_equal(out.numpy(), [1, 5, 9])
    assert [s.tolist() for s in seen] == [[0, 1], [2, 3], [4, 5]]

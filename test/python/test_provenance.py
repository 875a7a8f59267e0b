"""Looking at a value never changes a gradient (issue #13): a realized tensor
keeps the history a gradient may still need (``Tensor._hist``), in the
functional (JAX) and imperative (PyTorch) API alike, at any nesting of
transforms, in lazy and eager mode; memory stays bounded; cache keys exact.

Every case runs with and without a value looked at in the middle, and
against torch (imperative) or closed-form / JAX semantics (functional)."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyflame_mlir as pf


def _look(how: str, t: pf.Tensor) -> None:
    """Look at a value the ways a user does."""
    if how == "print":
        repr(t)
    elif how == "item":
        t.sum().item()
    elif how == "numpy":
        t.numpy()
    elif how == "bool":
        bool(t.sum() > 0)
    elif how == "eval":
        pf.eval(t)


LOOKS = ["none", "print", "item", "numpy", "bool", "eval"]


def _maybe_look(how: str, t: pf.Tensor) -> None:
    if how != "none":
        _look(how, t)


# ---- the snippets of the issue ----

def test_issue_snippet_grad_with_print(mode, capsys):
    def f(w):
        y = (w ** 3).sum()
        print(y)
        return y
    g = pf.grad(f)(pf.tensor([1., 2.]))
    np.testing.assert_allclose(g.numpy(), [3., 12.])
    assert "9." in capsys.readouterr().out


def test_issue_snippet_item_before_backward(mode):
    w = pf.tensor([1., 2.], requires_grad=True)
    loss = (w * w).sum()
    assert loss.item() == 5.0
    loss.backward()
    np.testing.assert_allclose(w.grad.numpy(), [2., 4.])


@pytest.mark.parametrize("how", LOOKS)
def test_control_flow_on_values_inside_grad(mode, how):
    def f(x):
        y = (x * x).sum()
        _maybe_look(how, y)
        if y > 3:  # Python control flow on a value
            return y * 2
        return y
    np.testing.assert_allclose(pf.grad(f)(pf.tensor([1., 2.])).numpy(), [4., 8.])
    np.testing.assert_allclose(pf.grad(f)(pf.tensor([1., 1.])).numpy(), [2., 2.])


# ---- functional transforms, at any nesting ----

def _f(x: pf.Tensor, how: str) -> pf.Tensor:
    h = pf.sin(x) * x
    _maybe_look(how, h)
    y = (h * h).sum() + pf.exp(x).sum()
    _maybe_look(how, y)
    return y


def _torch_grad(x: np.ndarray) -> np.ndarray:
    xt = torch.tensor(x, requires_grad=True)
    y = ((torch.sin(xt) * xt) ** 2).sum() + torch.exp(xt).sum()
    y.backward()
    return xt.grad.numpy()


X = np.array([0.3, -1.2, 2.0])


@pytest.mark.parametrize("how", LOOKS)
def test_grad_vjp_value_and_grad(mode, how):
    want = _torch_grad(X)
    np.testing.assert_allclose(pf.grad(lambda x: _f(x, how))(pf.tensor(X)).numpy(), want,
                               rtol=1e-5)
    v, g = pf.value_and_grad(lambda x: _f(x, how))(pf.tensor(X))
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-5)
    out, vjp_fn = pf.vjp(lambda x: _f(x, how), pf.tensor(X))
    _maybe_look(how, out)
    np.testing.assert_allclose(vjp_fn(pf.tensor(1.0))[0].numpy(), want, rtol=1e-5)


@pytest.mark.parametrize("how", LOOKS)
def test_jvp_jacrev_jacfwd_hessian(mode, how):
    def f(x):
        h = x * x * x
        _maybe_look(how, h)
        return pf.sin(h)
    xt = torch.tensor(X)
    jac = torch.autograd.functional.jacobian(lambda z: torch.sin(z ** 3), xt).numpy()
    np.testing.assert_allclose(pf.jacrev(f)(pf.tensor(X)).numpy(), jac, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(pf.jacfwd(f)(pf.tensor(X)).numpy(), jac, rtol=1e-5, atol=1e-8)
    _, tan = pf.jvp(f, (pf.tensor(X),), (pf.tensor(np.ones(3)),))
    np.testing.assert_allclose(tan.numpy(), jac.sum(1), rtol=1e-5, atol=1e-8)
    hes = torch.autograd.functional.hessian(lambda z: torch.sin(z ** 3).sum(), xt).numpy()
    np.testing.assert_allclose(pf.hessian(lambda x: f(x).sum())(pf.tensor(X)).numpy(), hes,
                               rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("how", LOOKS)
def test_grad_of_grad_with_a_look_inside_each(mode, how):
    def f(x):
        y = (x ** 3).sum()
        _maybe_look(how, y)
        return y

    def g(x):
        d = pf.grad(f)(x)  # 3 x^2
        _maybe_look(how, d)
        return (d * x).sum()  # d/dx: 9 x^2

    def h(x):
        d = pf.grad(g)(x)
        _maybe_look(how, d)
        return d.sum()  # d/dx: 18 x
    x = pf.tensor([1., 2.])
    np.testing.assert_allclose(pf.grad(g)(x).numpy(), [9., 36.])
    np.testing.assert_allclose(pf.grad(h)(x).numpy(), [18., 36.])


def test_a_closed_over_value_is_a_constant_as_in_jax(mode):
    """JAX: only what the function computes from its argument is
    differentiated; a tensor it closes over is a constant, even the very
    tensor passed, looked at or not."""
    x = pf.tensor([1., 2.])
    for how in ("none", "numpy"):
        c = x * x
        _maybe_look(how, c)
        np.testing.assert_allclose(pf.grad(lambda z, c=c: (z * c).sum())(x).numpy(), [1., 4.])
        np.testing.assert_allclose(pf.grad(lambda z: (z * x).sum())(x).numpy(), [1., 2.])


# ---- the imperative API ----

@pytest.mark.parametrize("how", LOOKS)
def test_backward_with_a_look_in_the_middle(mode, how):
    rng = np.random.default_rng(1)
    wn, xn = rng.standard_normal((2, 4, 3))
    w = pf.tensor(wn, requires_grad=True)
    h = pf.tanh(pf.tensor(xn) * w)
    _maybe_look(how, h)
    h2 = h * h
    h2.retain_grad()
    _maybe_look(how, h2)
    loss = h2.sum() + (w * 0.5).sum()
    _maybe_look(how, loss)
    assert loss.requires_grad and h.requires_grad and not h.is_leaf
    loss.backward()
    tw = torch.tensor(wn, requires_grad=True)
    th2 = torch.tanh(torch.tensor(xn) * tw) ** 2
    th2.retain_grad()
    (th2.sum() + (tw * 0.5).sum()).backward()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(h2.grad.numpy(), th2.grad.numpy(), rtol=1e-10)
    (gw,) = pf.autograd.grad((pf.tanh(pf.tensor(xn) * w) ** 2).sum(), [w])
    np.testing.assert_allclose(gw.numpy(), tw.grad.numpy() - 0.5, rtol=1e-10)


def test_no_grad_results_and_detached_values_stay_constants(mode):
    w = pf.tensor([1., 2.], requires_grad=True)
    with pf.no_grad():
        s = w * 3
    s.numpy()
    d = (w * 2).detach()
    d.numpy()
    assert not s.requires_grad and not d.requires_grad
    (w * s + w * d).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [5., 10.])


def test_a_second_backward_needs_retain_graph(mode):
    w = pf.tensor([1., 2.], requires_grad=True)
    loss = (w * w).sum()
    loss.item()
    loss.backward(retain_graph=True)
    loss.backward()
    np.testing.assert_allclose(w.grad.numpy(), [4., 8.])
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()


def test_requires_grad_is_set_at_record_time_as_in_pytorch(mode):
    x = pf.tensor([1., 2.])
    y = x * 2
    x.requires_grad_()
    assert not y.requires_grad  # recorded before: not part of x's graph (PyTorch)
    z = y * x
    assert z.requires_grad
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2., 4.])


# ---- memory and the cache ----

def _train(steps: int, look: bool) -> None:
    rng = np.random.default_rng(0)
    w = pf.tensor(rng.standard_normal((8, 4)) * 0.1, dtype=pf.float32, requires_grad=True)
    x = pf.tensor(rng.standard_normal((16, 8)), dtype=pf.float32)
    for _ in range(steps):
        loss = (pf.tanh(x @ w) ** 2).mean()
        if look:
            loss.item()
        loss.backward()
        with pf.no_grad():
            w = w - 0.01 * w.grad
        pf.eval(loss, w)
        w.requires_grad_()


def test_memory_stays_flat_over_a_training_loop():
    """10,000 steps, the loss looked at in each (its history kept until
    backward frees it): the traced memory does not grow."""
    _train(200, True)  # warm the caches
    gc.collect()
    tracemalloc.start()
    try:
        _train(100, True)
        gc.collect()
        first, _ = tracemalloc.get_traced_memory()
        _train(10_000, True)
        gc.collect()
        last, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert last - first < 200_000, f"grew by {last - first} bytes over 10,000 steps"


def test_histories_kept_for_a_trace_are_dropped_after_it(mode):
    kept = []

    def f(x):
        y = x * x
        y.numpy()
        kept.append(y)
        return y.sum()
    pf.grad(f)(pf.tensor([1., 2.])).numpy()
    assert kept[0]._hist is None  # nothing can differentiate through it any more
    w = pf.tensor([1., 2.], requires_grad=True)
    y = w * w
    y.numpy()
    assert y._hist is not None and y.requires_grad  # a gradient may still need it


def test_a_realized_tensor_is_a_leaf_of_evaluation_and_traces_keep_their_history(lazy):
    """The evaluation key of ``y + 1`` does not depend on how a realized y
    was computed (it is a leaf); a traced function's key does, so two
    functions equal in value but not in derivative never share an entry.
    Lazy mode: in eager mode the gradients are realized values, leaves whose
    keys are equal by design (the values, checked last, differ)."""
    w = pf.tensor([2., 3.], requires_grad=True)
    y1, y2 = w * w, w + w
    pf.eval(y1, y2)
    assert pf.structural_hash(y1 + 1) == pf.structural_hash(y2 + 1)

    def f(op: Callable) -> Callable:
        def fn(x):
            y = op(x)
            y.numpy()
            return y.sum()
        return fn
    a = pf.grad(f(lambda x: x * x))(pf.tensor([2., 2.]))
    b = pf.grad(f(lambda x: x + x))(pf.tensor([2., 2.]))
    assert pf.structural_hash(a) != pf.structural_hash(b)
    np.testing.assert_allclose(a.numpy(), [4., 4.])
    np.testing.assert_allclose(b.numpy(), [2., 2.])


# ---- a random differentiable program, looked at in random places ----

_UNARY = [pf.sin, pf.tanh, lambda t: t * t, lambda t: t * 0.5 + 1.0, pf.exp]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(prog=st.lists(st.tuples(st.integers(0, len(_UNARY) - 1), st.integers(0, 3),
                               st.booleans()), min_size=1, max_size=6),
       eager=st.booleans())
def test_looking_at_values_never_changes_the_gradient(prog, eager):
    def f(x, look: bool):
        vals = [x]
        for op, other, numpy_here in prog:
            v = _UNARY[op](vals[-1]) * 0.5 + vals[other % len(vals)] * 0.25
            if look and numpy_here:
                v.numpy()
            vals.append(v)
        return vals[-1].sum()
    prev = pf.CONFIG.eager
    pf.CONFIG.eager = eager
    try:
        x0 = np.array([0.1, -0.4, 0.7])
        want = pf.grad(lambda x: f(x, False))(pf.tensor(x0)).numpy()
        got = pf.grad(lambda x: f(x, True))(pf.tensor(x0)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-12)
        w = pf.tensor(x0, requires_grad=True)
        f(w, True).backward()
        np.testing.assert_allclose(w.grad.numpy(), want, rtol=1e-12)
    finally:
        pf.CONFIG.eager = prev


# ---- JAX's semantics (the bench extra installs jax) ----

@pytest.fixture
def jax_x64():
    """jax with float64 on, for one test only (a global switch would change what
    later tests in the same process get from jax.random)."""
    jax = pytest.importorskip("jax", reason="jax is not installed (the bench extra)")
    prev = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield jax
    jax.config.update("jax_enable_x64", prev)


@pytest.mark.parametrize("how", LOOKS)
def test_functional_transforms_match_jax(mode, how, jax_x64):
    jax = jax_x64
    jnp = jax.numpy

    def jf(x):
        h = jnp.sin(x) * x
        return (h * h).sum() + jnp.exp(x).sum()

    def jv(x):
        return jnp.sin(x * x * x)

    def pv(x):
        h = x * x * x
        _maybe_look(how, h)
        return pf.sin(h)
    x = pf.tensor(X)
    np.testing.assert_allclose(pf.grad(lambda z: _f(z, how))(x).numpy(),
                               np.asarray(jax.grad(jf)(X)), rtol=1e-10)
    np.testing.assert_allclose(pf.jacrev(pv)(x).numpy(), np.asarray(jax.jacrev(jv)(X)),
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(pf.jacfwd(pv)(x).numpy(), np.asarray(jax.jacfwd(jv)(X)),
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(pf.hessian(lambda z: _f(z, how))(x).numpy(),
                               np.asarray(jax.hessian(jf)(X)), rtol=1e-8, atol=1e-10)
    scalar = pf.tensor(np.array(0.7))  # grad of grad, looked at in both
    got = pf.grad(lambda z: pf.grad(lambda u: pv(u).sum())(z) * 1.0)(scalar)
    np.testing.assert_allclose(got.numpy(), float(jax.grad(jax.grad(jv))(0.7)), rtol=1e-10)

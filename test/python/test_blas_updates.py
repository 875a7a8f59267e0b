"""SGD updates on the reference backend: ``dialects/blas.py`` (GEMM with
beta, axpy through numpy's OpenBLAS), the plan's ``GemmUpdate`` and
``ScaledUpdate`` steps (``lowering/reference.py``), a ``.grad`` only the graph
holds not made an output (``compiler.evaluate``), and a donated parameter's
buffer taking its update in place (``pf.compile(donate_argnums=...)``).
Oracles: numpy in float64 and torch; BLAS rounds ``w + alpha * acc`` once, so
comparisons allow a few ulps."""

from __future__ import annotations

import gc
import warnings

import numpy as np
import pytest
import torch
from pyflame_mlir.dialects import blas

import pyflame_mlir as pf
from pyflame_mlir.runtime.reference import ReferenceExecutable

needs_blas = pytest.mark.skipif(not blas.available(np.float32),
                                reason="numpy's OpenBLAS entry points were not found")


def _f64(*xs):
    return [np.asarray(x, np.float64) for x in xs]


@needs_blas
@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_gemm_acc_matches_numpy(dt, ta, tb):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((7, 5)).astype(dt).T if ta else \
        rng.standard_normal((5, 9)).astype(dt)[:, :7]
    b = rng.standard_normal((4, 7)).astype(dt).T if tb else \
        rng.standard_normal((7, 6)).astype(dt)[:, :4]
    c = rng.standard_normal((5, 4)).astype(dt)
    a64, b64, c64 = _f64(a, b, c)
    want = c64 - 0.3 * (a64 @ b64)
    assert blas.gemm_acc(a, b, c, -0.3)
    tol = 1e-5 if dt == np.float32 else 1e-12
    np.testing.assert_allclose(c, want, rtol=tol, atol=tol)


@needs_blas
def test_gemm_acc_declines_what_it_cannot_take():
    a = np.ones((3, 4), np.float32)
    b = np.ones((4, 2), np.float32)
    c = np.zeros((3, 2), np.float32)
    before = c.copy()
    assert not blas.gemm_acc(a, b, np.zeros((3, 2), np.float16), 1.0)  # dtype
    assert not blas.gemm_acc(a.astype(np.float64), b, c, 1.0)  # mixed dtypes
    assert not blas.gemm_acc(a, b, np.zeros((2, 3), np.float32).T, 1.0)  # c not C-order
    assert not blas.gemm_acc(np.ones((6, 8), np.float32)[::2, ::2], b, c, 1.0)  # strides
    big = np.zeros((4, 4), np.float32)
    assert not blas.gemm_acc(big[:3, :], big, big[:3, :], 1.0)  # c overlaps a
    np.testing.assert_array_equal(c, before)


@needs_blas
def test_axpy_matches_numpy_and_declines_overlap():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((30, 7)).astype(np.float32)
    y = rng.standard_normal((30, 7)).astype(np.float32)
    want = y.astype(np.float64) - 0.1 * x
    assert blas.axpy(-0.1, x, y)
    np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)
    assert not blas.axpy(1.0, y, y)
    assert not blas.axpy(1.0, x[:, ::2], y[:, ::2])


def _mlp(params, x, y):
    w1, b1, w2, b2 = params
    logits = pf.relu(x @ w1 + b1) @ w2 + b2
    return logits, -(pf.log_softmax(logits, dim=1) * y).sum(dim=1).mean()


def _torch_steps(init, x, y, lr, n):
    ps = [torch.tensor(p, dtype=torch.float64, requires_grad=True) for p in init]
    xt, yt = torch.tensor(x, dtype=torch.float64), torch.tensor(y, dtype=torch.float64)
    losses = []
    for _ in range(n):
        w1, b1, w2, b2 = ps
        loss = -(torch.log_softmax(torch.relu(xt @ w1 + b1) @ w2 + b2, 1) * yt).sum(1).mean()
        loss.backward()
        with torch.no_grad():
            for p in ps:
                p -= lr * p.grad
                p.grad = None
        losses.append(loss.item())
    return losses, [p.detach().numpy() for p in ps]


def _data(d=300, h=128, c=10, b=16):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((b, d)).astype(np.float32)
    y = np.eye(c, dtype=np.float32)[rng.integers(0, c, b)]
    init = [(rng.standard_normal((d, h)) * 0.05).astype(np.float32), np.zeros(h, np.float32),
            (rng.standard_normal((h, c)) * 0.05).astype(np.float32), np.zeros(c, np.float32)]
    return x, y, init


def _plans():
    with warnings.catch_warnings():  # isinstance on every object: deprecated modules warn
        warnings.simplefilter("ignore")
        return [o.plan for o in gc.get_objects() if isinstance(o, ReferenceExecutable)]


@pytest.mark.parametrize("with_blas", [True, False])
def test_in_place_idiom_folds_the_weight_gradient_into_its_update(monkeypatch, with_blas,
                                                                  lazy):
    """``p -= lr * p.grad; p.grad = None``: W1's gradient is used only by its
    update, so the plan computes ``W1 - lr * (x^T @ g)`` as one GemmUpdate step
    (with BLAS or, without it, numpy's chain); the losses and parameters
    follow torch's (float64) over several steps. (Lazy mode: eager mode runs
    each op on its own, nothing to fold.)"""
    if not with_blas:
        monkeypatch.setattr(blas, "_FUNCS", {np.dtype(np.float32): (None, None),
                                             np.dtype(np.float64): (None, None)})
    pf.clear_cache()
    x, y, init = _data()
    params = [pf.tensor(p.copy(), requires_grad=True) for p in init]
    xt, yt = pf.tensor(x), pf.tensor(y)
    losses = []
    for _ in range(4):
        _, loss = _mlp(params, xt, yt)
        loss.backward()
        with pf.no_grad():
            for p in params:
                p -= 0.1 * p.grad
                p.grad = None
        losses.append(loss.item())
    want_losses, want_params = _torch_steps(init, x, y, 0.1, 4)
    np.testing.assert_allclose(losses, want_losses, rtol=2e-5)
    for p, w in zip(params, want_params):
        np.testing.assert_allclose(p.numpy(), w, rtol=1e-4, atol=1e-5)
    names = [st.name for plan in _plans() for st in plan.steps]
    assert "gemm_update" in names  # (300, 128): above BLAS_MIN


def test_a_gradient_still_held_is_computed_and_right():
    """A ``.grad`` the user keeps a reference to (or does not reset) stays an
    output of the graph; one held elsewhere after ``p.grad = None`` is still
    right when read later (recomputed from its graph if it was not an output)."""
    x, y, init = _data()
    params = [pf.tensor(p.copy(), requires_grad=True) for p in init]
    xt, yt = pf.tensor(x), pf.tensor(y)
    tp = [torch.tensor(p, dtype=torch.float64, requires_grad=True) for p in init]
    _, loss = _mlp(params, xt, yt)
    loss.backward()
    held = params[0].grad
    kept = params[2].grad
    with pf.no_grad():
        for p in params:
            p -= 0.1 * p.grad
    params[0].grad = None
    loss.item()
    w1, b1, w2, b2 = tp
    tl = -(torch.log_softmax(torch.relu(torch.tensor(x, dtype=torch.float64) @ w1 + b1) @ w2
                             + b2, 1) * torch.tensor(y, dtype=torch.float64)).sum(1).mean()
    tl.backward()
    np.testing.assert_allclose(held.numpy(), tp[0].grad.numpy(), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(kept.numpy(), tp[2].grad.numpy(), rtol=1e-4, atol=1e-6)
    assert params[2].grad is kept


def test_a_forward_value_held_across_the_update_keeps_the_old_weights():
    """``logits`` recorded before ``p -= ...`` and read after ``loss.item()``
    is the forward of the old weights (torch computes it before the update)."""
    x, y, init = _data()
    params = [pf.tensor(p.copy(), requires_grad=True) for p in init]
    logits, loss = _mlp(params, pf.tensor(x), pf.tensor(y))
    loss.backward()
    with pf.no_grad():
        for p in params:
            p -= 0.1 * p.grad
            p.grad = None
    loss.item()
    w1, b1, w2, b2 = _f64(*init)
    want = np.maximum(x @ w1 + b1, 0) @ w2 + b2
    np.testing.assert_allclose(logits.numpy(), want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape", [(300, 128), (10, 10)])  # axpy; numpy (below BLAS_MIN)
def test_a_donated_parameter_takes_its_update_in_place(shape):
    """``pf.compile(..., donate_argnums=0)`` on the parameters: the update
    ``w - s * g`` (g a live gradient) is written into w's donated buffer
    (ScaledUpdate), and the values follow numpy's float64 step."""
    rng = np.random.default_rng(4)
    w0 = rng.standard_normal(shape).astype(np.float32)
    g0 = rng.standard_normal(shape).astype(np.float32)

    def update(w, g):
        return w - g * 0.1

    f = pf.compile(update, donate_argnums=0)
    w = pf.tensor(w0.copy())
    g = pf.tensor(g0)
    f(pf.tensor(w0.copy()), g)  # traced
    address = w.numpy().ctypes.data  # (a held array would not be reused)
    out = f(w, g)
    np.testing.assert_allclose(out.numpy(), w0.astype(np.float64) - 0.1 * g0, rtol=1e-6,
                               atol=1e-6)
    assert out.numpy().ctypes.data == address  # the donated memory holds the result
    np.testing.assert_array_equal(g.numpy(), g0)

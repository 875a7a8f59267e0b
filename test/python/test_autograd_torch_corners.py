"""Autograd corners against torch (lazy and eager): requires_grad_ turned on
after a use, the grad-mode decorators without the call, autograd.grad /
backward(inputs=) of non-leaf inputs (computed from each other, read through
views), an unrolled-SGD hypergradient, and a second backward that leaves
unreached parameters' .grad None."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf


@pytest.mark.parametrize("how", ["requires_grad_", "attribute"])
def test_requires_grad_turned_on_after_a_use_is_no_edge_of_that_use(mode, how) -> None:
    """``y = x * w`` with w not requiring grad, then ``w.requires_grad_()``:
    torch's graph of y has no edge to w, so w's gradient comes from its later
    uses only (pf counted the earlier one too: twice the gradient)."""
    a = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
    b = np.array([[1.0, 2.0, -0.5], [0.3, -0.2, 0.7]])

    def run(L):  # noqa: N803
        x = L.tensor(a, requires_grad=True)
        w = L.tensor(b)
        y = x * w
        if how == "attribute":
            w.requires_grad = True
        else:
            w.requires_grad_(True)
        (y * w + x).sum().backward()
        return x.grad.numpy(), w.grad.numpy()
    for got, want in zip(run(pf), run(torch)):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_grad_mode_decorators_without_the_call_as_torch() -> None:
    for L in (pf, torch):  # noqa: N806
        x = L.tensor([1.0, 2.0], requires_grad=True)

        @L.no_grad
        def f(v):
            return v * 2

        @L.enable_grad
        def g(v):
            return v * 3

        @L.inference_mode
        def h(v, lib=L):
            assert lib.is_inference_mode_enabled()
            return v + 1

        with L.no_grad():
            inner = g(x).requires_grad
        assert (f(x).requires_grad, inner, h(x).requires_grad) == (False, True, False)
        assert f.__name__ == "f" and not L.is_inference_mode_enabled()
        with L.inference_mode():
            assert L.is_inference_mode_enabled()
            with L.inference_mode(False):
                assert not L.is_inference_mode_enabled()


def _nested_grad(L, inputs):  # noqa: N802
    x = L.tensor(np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]), requires_grad=True)
    w = L.tensor(np.array([0.3, -0.2, 0.7]), requires_grad=True)
    y = (x * w).exp()
    z = (y * x).sum() + (y.sum(0) * w).sum()
    names = {"x": x, "w": w, "y": y}
    if inputs.startswith("backward:"):
        ts = [names[k] for k in inputs[9:].split(",")]
        z.backward(inputs=ts)
        return [t.grad.numpy() for t in ts]
    ts = [names[k] for k in inputs.split(",")]
    return [g.numpy() for g in L.autograd.grad(z, ts)]


@pytest.mark.parametrize("inputs", ["y,x", "x,y", "y,w", "y,x,w", "y", "backward:y,x",
                                    "backward:y,w"])
def test_grad_of_an_input_computed_from_another_flows_on_to_it(mode, inputs) -> None:
    """autograd.grad(z, [y, x]) / z.backward(inputs=[y, x]) with y = f(x):
    x's gradient is the whole of it, through y too (pf stopped at y: x got
    only its direct part, or none)."""
    for got, want in zip(_nested_grad(pf, inputs), _nested_grad(torch, inputs), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def _through_views(L, how):  # noqa: N802
    x = L.tensor(np.array([[1.0, 2.0], [3.0, -4.0]]), requires_grad=True)
    h = x * 2
    y = (h.T @ h).sum() + h[0].sum() + h.view(4).sum()
    if how == "grad":
        return [g.numpy() for g in L.autograd.grad(y, [h, x])]
    y.backward(inputs=[h])
    return [h.grad.numpy()]


@pytest.mark.parametrize("how", ["grad", "backward_inputs"])
def test_a_non_leaf_input_read_through_views_gets_its_gradient(mode, how) -> None:
    """autograd.grad(y, h) / y.backward(inputs=[h]) where y reads h through
    h.T, h[0], h.view(...): pf raised 'not used' / left h.grad None."""
    for got, want in zip(_through_views(pf, how), _through_views(torch, how), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_unrolled_sgd_hypergradient_as_torch(mode) -> None:
    """Three SGD steps with create_graph on x @ w.T + b, then the gradient of
    a validation loss to the learning rate and the initial weights."""
    data = np.random.default_rng(9).standard_normal((8, 2)) + 2

    def run(L):  # noqa: N803
        w0 = L.tensor(np.array([[0.3, -0.2]]), requires_grad=True)
        b0 = L.tensor(np.array([0.1]), requires_grad=True)
        lr = L.tensor(np.array([0.1]), requires_grad=True)
        x, y = L.tensor(data), L.tensor(data[:, :1] * 0.5)
        w, b = w0, b0
        for _ in range(3):
            loss = ((x @ w.T + b - y) ** 2).mean()
            gw, gb = L.autograd.grad(loss, (w, b), create_graph=True)
            w, b = w - lr * gw, b - lr * gb
        ((x @ w.T + b - y * 1.1) ** 2).mean().backward()
        return lr.grad.numpy(), w0.grad.numpy(), b0.grad.numpy()
    for got, want in zip(run(pf), run(torch), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-10)


def _lazy_r1(L):  # noqa: N802
    """StyleGAN's lazy R1: every other step only the gradient penalty is
    backwarded; the last bias is not in torch's graph of the input gradient,
    so its .grad is None then and Adam skips it (pf gave zeros: Adam moved
    it, with weight decay and momentum)."""
    rng = np.random.default_rng(0)
    w1, b1 = rng.standard_normal((5, 3)) * 0.5, rng.standard_normal(5) * 0.1
    w2, b2 = rng.standard_normal((1, 5)) * 0.5, np.array([0.2])
    ps = [L.tensor(v, requires_grad=True) for v in (w1, b1, w2, b2)]
    opt = L.optim.Adam(ps, lr=0.01, weight_decay=0.1)
    x = L.tensor(rng.standard_normal((4, 3)))

    def d(v):
        return L.tanh(v @ ps[0].T + ps[1]) @ ps[2].T + ps[3]
    grads_none = []
    for step in range(4):
        opt.zero_grad()
        if step % 2 == 0:
            loss = L.nn.functional.softplus(d(x)).mean()
        else:
            xr = x.detach().requires_grad_(True)
            (g,) = L.autograd.grad(d(xr).sum(), xr, create_graph=True)
            loss = g.pow(2).sum() * 5
        loss.backward()
        grads_none.append([p.grad is None for p in ps])
        opt.step()
    return [p.detach().numpy() for p in ps], grads_none


def test_a_second_backward_leaves_unreached_parameters_grad_none(mode) -> None:
    (got, got_none), (want, want_none) = _lazy_r1(pf), _lazy_r1(torch)
    assert got_none == want_none
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-10)
    x = pf.tensor(np.ones((2, 3)), requires_grad=True)
    w = pf.tensor(np.full((1, 3), 0.5), requires_grad=True)
    b = pf.tensor(np.zeros(1), requires_grad=True)
    (g,) = pf.autograd.grad((pf.tanh(x @ w.T) + b).sum(), x, create_graph=True)
    assert pf.autograd.grad(g.sum(), [w, b], allow_unused=True, retain_graph=True)[1] is None
    with pytest.raises(RuntimeError, match="not used"):
        pf.autograd.grad(g.sum(), [w, b])


def test_an_intermediate_used_inside_a_create_graph_gradient_is_refused(mode) -> None:
    """grad(g.sum(), h) where g = grad(f(h), x, create_graph=True) used h
    inside: torch differentiates its backward graph's use of h; pf would miss
    it (None, or a part), so it raises, naming the input."""
    x = pf.tensor(np.array([0.3, 1.1, -0.7]), requires_grad=True)
    h = x.sin()
    (g,) = pf.autograd.grad((h * h * x).sum(), x, create_graph=True)
    with pytest.raises(NotImplementedError, match="input 0 .* used inside a gradient"):
        pf.autograd.grad((g * g).sum(), [h], allow_unused=True)
    # a leaf, and an intermediate the gradient did not compute from inside, are fine
    y = x * 2
    (g2,) = pf.autograd.grad((y.exp()).sum(), y, create_graph=True)
    (gx,) = pf.autograd.grad(g2.sum(), x)
    xt = torch.tensor([0.3, 1.1, -0.7], dtype=torch.float64, requires_grad=True)
    yt = xt * 2
    (g2t,) = torch.autograd.grad(yt.exp().sum(), yt, create_graph=True)
    np.testing.assert_allclose(gx.numpy(), torch.autograd.grad(g2t.sum(), xt)[0].numpy())


@pytest.mark.parametrize("create_graph", [False, True])
def test_hooks_and_retain_grad_registered_after_a_view_read_the_tensor(mode, create_graph):
    """h = (x.view(2, 3).T * 1.5).reshape(6) read by ops, then h.retain_grad()
    and h.register_hook(...): torch runs them (pf's view ops had read a frozen
    state of h: h.grad stayed None and the hook did not scale x.grad)."""
    def run(L):  # noqa: N803
        x = L.tensor(np.array([0.3, 1.1, -0.7, 0.9, 0.2, -1.3]), requires_grad=True)
        h = (x.view(2, 3).T * 1.5).reshape(6)
        out = (h * h).sum() + (h[1:4] * x[:3]).sum()
        h.retain_grad()
        h.register_hook(lambda g: g * 1.5)
        out.backward(create_graph=create_graph)
        return h.grad.detach().numpy(), x.grad.detach().numpy()
    for got, want in zip(run(pf), run(torch), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)

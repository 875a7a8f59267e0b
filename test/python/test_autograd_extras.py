"""Autograd extras (issue 13 part 4) against torch, lazy and eager: gradient
hooks on leaves, post-accumulate hooks, ``grad_fn`` inspection."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf


@pytest.mark.parametrize("look", [False, True])
def test_gradient_hooks_replace_and_observe_like_torch(mode, look):
    wn = np.array([1., -2., 3.])
    results = []
    for lib in (pf, torch):
        w = lib.tensor(wn, requires_grad=True)
        seen: list = []
        h1 = w.register_hook(lambda g: g * 10)
        w.register_hook(lambda g, seen=seen: seen.append(1))  # None: keeps the gradient
        posts: list = []
        w.register_post_accumulate_grad_hook(lambda t, posts=posts: posts.append(t.grad * 1))
        y = (w * w).sum()
        if look and lib is pf:
            y.item()
        y.backward()
        first = np.array(w.grad.numpy())
        h1.remove()
        w.grad = None
        (w * 3).sum().backward()
        (gw,) = lib.autograd.grad((w * w).sum(), [w])
        results.append((first, np.array(w.grad.numpy()), np.array(gw.detach().numpy()),
                        len(seen), len(posts), np.array(posts[0].detach().numpy())))
    ours, theirs = results
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b)


def test_hooks_need_a_leaf_that_requires_grad(mode):
    with pytest.raises(RuntimeError, match="doesn't require"):
        pf.tensor([1.]).register_hook(lambda g: g)
    w = pf.tensor([1.], requires_grad=True)
    with pytest.raises(RuntimeError, match="non-leaf"):  # as torch
        (w * 2).register_post_accumulate_grad_hook(lambda t: None)


@pytest.mark.parametrize("look", [False, True])
def test_grad_fn_names_and_next_functions_like_torch(mode, look):
    names = []
    for lib in (pf, torch):
        w = lib.tensor([1., 2.], requires_grad=True)
        x = lib.tensor([3., 4.])
        y = (w * x).sum()
        if look and lib is pf:
            y.item()
        assert w.grad_fn is None and x.grad_fn is None
        (mul, _), = y.grad_fn.next_functions
        acc = [f for f, _ in mul.next_functions]
        names.append((y.grad_fn.name(), mul.name(), [f and f.name() for f in acc]))
        with lib.no_grad():
            assert (w * 2).grad_fn is None
        assert (w * 2).detach().grad_fn is None
    assert names[0] == names[1]


@pytest.mark.parametrize("look", [False, True])
def test_non_leaf_hooks_and_retain_grad_like_torch(mode, look):
    results = []
    for lib in (pf, torch):
        w = lib.tensor([1., -2., 3.], requires_grad=True)
        h = w * w
        seen: list = []
        h.register_hook(lambda g, seen=seen: seen.append(g.detach() * 1))
        handle = h.register_hook(lambda g: g * 10)  # replaces what flows on to w
        h.retain_grad()
        y = (h * w).sum()
        if look and lib is pf:
            y.item()
        y.backward(retain_graph=True)
        first = (np.array(w.grad.numpy()), np.array(h.grad.detach().numpy()),
                 np.array(seen[0].numpy()))
        handle.remove()
        w.grad = None
        y.backward(retain_graph=True)  # the replacing hook is gone; h.grad accumulates
        (gh,) = lib.autograd.grad((h * 2).sum(), [w])  # hooks run in autograd.grad too
        results.append((*first, np.array(w.grad.numpy()), np.array(h.grad.detach().numpy()),
                        np.array(gh.detach().numpy()), h.is_leaf, h.retains_grad,
                        w.retains_grad, len(seen)))
    ours, theirs = results
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b)


def test_hook_on_the_loss_and_a_chain_of_hooked_tensors(mode):
    results = []
    for lib in (pf, torch):
        w = lib.tensor([0.5, 2.], requires_grad=True)
        a = w.exp()
        b = a * 3
        a.register_hook(lambda g: g + 1)
        b.register_hook(lambda g: g * 2)
        loss = (b * a).sum()
        loss.register_hook(lambda g: g * 0.5)
        loss.retain_grad()
        loss.backward()
        results.append((np.array(w.grad.numpy()), float(loss.grad)))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-5)
    assert results[0][1] == results[1][1]


@pytest.mark.filterwarnings("ignore::UserWarning")  # torch prints the forward's stack
def test_detect_anomaly_names_the_op_and_where_it_was_recorded(mode):
    messages = []
    for lib in (pf, torch):
        w = lib.tensor([-1., 4.], requires_grad=True)
        with lib.autograd.detect_anomaly():
            y = (w.sqrt() * 2).sum()  # sqrt of -1: its backward gives NaN
            with pytest.raises(RuntimeError) as err:
                y.backward()
        messages.append(str(err.value))
    assert "Function 'SqrtBackward0' returned nan values in its 0th output." in messages[1]
    assert "Function 'SqrtBackward0' returned nan values in its 0th output." in messages[0]
    assert "test_autograd_extras.py" in messages[0] and "w.sqrt()" in messages[0]
    assert not pf.autograd.is_anomaly_enabled()
    pf.autograd.set_detect_anomaly(True)
    try:
        w = pf.tensor([1., 4.], requires_grad=True)
        (w.sqrt() * 2).sum().backward()  # no NaN: the gradient as without
        np.testing.assert_allclose(w.grad.numpy(), [1., 0.5])
    finally:
        pf.autograd.set_detect_anomaly(False)


def test_repr_shows_requires_grad_and_grad_fn_as_torch():
    import torch

    for L in (torch, pf):
        p = L.nn.Parameter(L.tensor([1.0, 2.0]))
        got = [repr(p).split("\n")[1], repr(p * 2), repr((p * 2).detach()),
               repr(L.tensor([1.0, 2.0], requires_grad=True).sum())]
        with L.no_grad():
            got.append(repr(p * 2))
        if L is torch:
            want = got
    assert got == want


def test_grad_mode_spellings_as_torch():
    import torch

    seen = {}
    for L in (torch, pf):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        L.set_grad_enabled(False)  # a statement: takes effect at once
        r = x * 3
        L.set_grad_enabled(True)
        with L.set_grad_enabled(False):
            a = x * 2

        @L.set_grad_enabled(False)
        def f(t):
            return t * 2

        after_decorating = x * 2

        @L.no_grad()
        def g(t):
            return t * 2

        with L.no_grad():
            with L.set_grad_enabled(True):
                d = x * 2
            with L.enable_grad():
                e = x * 2
            h = x * 2
        with L.inference_mode():
            i = x * 2
        seen[L.__name__] = [t.requires_grad for t in (r, a, f(x), after_decorating, g(x), d, e,
                                                     h, i)] + [L.is_grad_enabled()]
    assert seen["pyflame_mlir"] == seen["torch"]


def test_post_accumulate_grad_hook_must_return_none():
    """A post-accumulate hook that returns a tensor (expecting it to replace
    .grad) raises as torch's, instead of being silently ignored."""
    for lib in (torch, pf):
        w = lib.ones(2, requires_grad=True)
        w.register_post_accumulate_grad_hook(lambda p: p.grad * 0.5)
        with pytest.raises(RuntimeError, match="post accumulate grad hooks should return None"):
            (w * 3).sum().backward()


def test_autograd_grad_is_grads_batched_matches_torch() -> None:
    """One gradient per leading entry of grad_outputs (the rows of a
    Jacobian with the identity), stacked; the graph kept as asked."""
    x0 = np.array([1.0, 2.0, -0.5])
    got = []
    for L in (torch, pf):
        x = L.tensor(x0, requires_grad=True)
        w = L.tensor(x0[::-1].copy(), requires_grad=True)
        y = x.sin() * w
        jx, jw = L.autograd.grad(y, (x, w), grad_outputs=L.eye(3, dtype=L.float64),
                                 is_grads_batched=True, retain_graph=True)
        (g2,) = L.autograd.grad(y.sum(), x)
        got.append([jx.numpy(), jw.numpy(), g2.numpy()])
    for p, q in zip(got[1], got[0]):
        np.testing.assert_allclose(p, q, rtol=1e-12)


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

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

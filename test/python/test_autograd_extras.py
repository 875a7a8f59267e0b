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

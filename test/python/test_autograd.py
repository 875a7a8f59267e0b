"""PyTorch-style autograd semantics, training against torch, and the cache
behaviour of training loops (forward + backward + update = one graph).

``make test`` runs this file a second time with PYFLAME_EAGER=1; the tests
that check laziness or caching take the ``lazy`` fixture (lazy in both runs)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf


def test_requires_grad_propagates_and_stops():
    w = pf.randn(3).requires_grad_()
    x = pf.randn(3)
    assert w.requires_grad and w.is_leaf and not x.requires_grad
    y = w * x
    assert y.requires_grad and not y.is_leaf
    with pf.no_grad():
        z = w * x
    assert not z.requires_grad and z.is_leaf
    assert not y.detach().requires_grad
    with pytest.raises(RuntimeError, match="floating point"):
        pf.arange(3).requires_grad_()
    with pytest.raises(RuntimeError, match="leaf"):
        y.requires_grad_(False)


def test_creation_requires_grad_keyword():
    for t in (pf.randn(2, requires_grad=True), pf.zeros(2, requires_grad=True),
              pf.tensor([1.0, 2.0], requires_grad=True), pf.ones(2, requires_grad=True)):
        assert t.requires_grad and t.is_leaf


def test_backward_matches_torch_and_accumulates(lazy):
    xn, wn = np.random.default_rng(0).standard_normal((2, 5, 3))
    w = pf.tensor(wn, requires_grad=True)
    loss = (pf.tanh(pf.tensor(xn) * w) ** 2).sum()
    loss.backward()
    assert pf.is_lazy(w.grad)  # gradients are promises too
    tw = torch.tensor(wn, requires_grad=True)
    (torch.tanh(torch.tensor(xn) * tw) ** 2).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-12)
    loss2 = (pf.tanh(pf.tensor(xn) * w) ** 2).sum()
    loss2.backward()  # accumulates into .grad
    np.testing.assert_allclose(w.grad.numpy(), 2 * tw.grad.numpy(), rtol=1e-12)
    w.grad = None
    (w * 3).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), np.full((5, 3), 3.0))


def test_gradients_from_several_paths_are_summed():
    w = pf.tensor([1.0, -2.0, 3.0], requires_grad=True)
    (w * w + w.exp() + w).sum().backward()
    wn = np.array([1.0, -2.0, 3.0])
    np.testing.assert_allclose(w.grad.numpy(), 2 * wn + np.exp(wn) + 1, rtol=1e-6)


def test_backward_with_gradient_argument_and_errors():
    w = pf.randn(4, requires_grad=True)
    y = w * 2
    with pytest.raises(RuntimeError, match="only for scalar outputs"):
        y.backward()
    y.backward(pf.tensor([1.0, 0.0, 2.0, 0.0]))
    np.testing.assert_allclose(w.grad.numpy(), [2, 0, 4, 0])
    with pytest.raises(RuntimeError, match="does not require grad"):
        pf.randn(3).sum().backward()


def test_autograd_grad_leaves_dot_grad_alone():
    a = pf.tensor([1.0, 2.0], requires_grad=True)
    b = pf.tensor([3.0, 4.0], requires_grad=True)
    loss = (a * b).sum()
    (ga,) = pf.autograd.grad(loss, [a], retain_graph=True)  # (torch frees it by default)
    np.testing.assert_allclose(ga.numpy(), [3.0, 4.0])
    assert a.grad is None and b.grad is None
    unused = pf.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="not used"):
        pf.autograd.grad(loss, [a, unused], retain_graph=True)
    ga, gu = pf.autograd.grad(loss, [a, unused], allow_unused=True)
    assert gu is None
    with pytest.raises(RuntimeError, match="does not require grad"):
        pf.autograd.grad(loss, [pf.randn(2)])


def test_non_leaf_grad_needs_retain_grad():
    w = pf.tensor([1.0, 2.0], requires_grad=True)
    h = w * 3
    h.retain_grad()
    h2 = w * 5
    (h * h + h2).sum().backward()
    assert h2.grad is None
    np.testing.assert_allclose(h.grad.numpy(), 2 * np.array([3.0, 6.0]))
    np.testing.assert_allclose(w.grad.numpy(), 6 * np.array([3.0, 6.0]) + 5)


def test_detach_and_no_grad_block_gradients():
    w = pf.tensor([2.0, 3.0], requires_grad=True)
    with pf.no_grad():
        scale = w * 10
    (w * scale).sum().backward()  # scale is a constant here
    np.testing.assert_allclose(w.grad.numpy(), [20.0, 30.0])
    w.grad = None
    (w * w.detach()).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [2.0, 3.0])


def test_second_order_through_create_graph():
    x = pf.tensor([1.5, -0.5], requires_grad=True)
    (g,) = pf.autograd.grad((x ** 3).sum(), [x], create_graph=True)
    (h,) = pf.autograd.grad(g.sum(), [x])
    np.testing.assert_allclose(h.numpy(), 6 * np.array([1.5, -0.5]), rtol=1e-6)


# ---- training ----

def make_data(n=64, d=20, classes=3, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((classes, d)) * 2
    y = rng.integers(0, classes, n)
    x = centers[y] + rng.standard_normal((n, d))
    return x.astype(np.float32), np.eye(classes, dtype=np.float32)[y]


def init_params(d=20, h=32, classes=3, seed=1):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((d, h)) * (1 / d) ** 0.5).astype(np.float32),
            np.zeros(h, np.float32),
            (rng.standard_normal((h, classes)) * (1 / h) ** 0.5).astype(np.float32),
            np.zeros(classes, np.float32)]


def pf_loss(params, x, onehot):
    w1, b1, w2, b2 = params
    logits = pf.relu(x @ w1 + b1) @ w2 + b2
    return -(pf.log_softmax(logits, dim=1) * onehot).sum(dim=1).mean()


def test_mlp_training_matches_torch_step_by_step():
    x, onehot = make_data()
    init = init_params()
    params = [pf.tensor(p, requires_grad=True) for p in init]
    tparams = [torch.tensor(p, requires_grad=True) for p in init]
    tx, ty = torch.tensor(x), torch.tensor(onehot)
    ours, theirs = [], []
    for _ in range(25):
        loss = pf_loss(params, pf.tensor(x), pf.tensor(onehot))
        loss.backward()
        with pf.no_grad():
            params = [p - 0.2 * p.grad for p in params]
        pf.eval(loss, *params)
        params = [p.requires_grad_() for p in params]
        ours.append(loss.item())

        tl = -(torch.log_softmax(torch.relu(tx @ tparams[0] + tparams[1]) @ tparams[2]
                                 + tparams[3], 1) * ty).sum(1).mean()
        tl.backward()
        with torch.no_grad():
            for p in tparams:
                p -= 0.2 * p.grad
                p.grad = None
        theirs.append(tl.item())
    np.testing.assert_allclose(ours, theirs, rtol=2e-4, atol=1e-5)
    assert ours[-1] < 0.5 * ours[0]


def test_sgd_loop_of_100_steps_compiles_once(lazy):
    pf.clear_cache()
    init = init_params()
    params = [pf.tensor(p, requires_grad=True) for p in init]
    builds = pf.counters()["ir_builds"]
    for step in range(100):
        x, onehot = make_data(seed=step)
        loss = pf_loss(params, pf.tensor(x), pf.tensor(onehot))
        loss.backward()
        with pf.no_grad():
            params = [p - 0.1 * p.grad for p in params]
        pf.eval(loss, *params)
        params = [p.requires_grad_() for p in params]
    stats = pf.cache_stats()
    assert (stats["misses"], stats["hits"]) == (1, 99)
    assert pf.counters()["ir_builds"] == builds + 1


def test_functional_training_step_is_one_graph(lazy):
    init = init_params()
    x, onehot = make_data()
    step = pf.value_and_grad(lambda ps: pf_loss(ps, pf.tensor(x), pf.tensor(onehot)))
    params = [pf.tensor(p) for p in init]
    loss, grads = step(params)
    new = [p - 0.2 * g for p, g in zip(params, grads)]
    before = pf.counters()["executions"]
    pf.eval(loss, *new)
    assert pf.counters()["executions"] == before + 1
    tparams = [torch.tensor(p, requires_grad=True) for p in init]
    tl = -(torch.log_softmax(torch.relu(torch.tensor(x) @ tparams[0] + tparams[1])
                             @ tparams[2] + tparams[3], 1) * torch.tensor(onehot)).sum(1).mean()
    tl.backward()
    for p, t in zip(grads, tparams):
        np.testing.assert_allclose(p.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_grads_become_values_with_the_graph_that_computes_them(lazy):
    """After backward(), evaluating anything that uses ``.grad`` realizes every
    ``.grad`` of that backward too (PyTorch: they are values), so reading one
    later runs nothing, and an old parameter is freed without the cycle
    collector (no cycle runs through ``.grad``)."""
    import gc
    import weakref

    init = init_params()
    x, onehot = make_data()
    params = [pf.tensor(p, requires_grad=True) for p in init]
    loss = pf_loss(params, pf.tensor(x), pf.tensor(onehot))
    loss.backward()
    assert all(p.grad.is_lazy for p in params)
    with pf.no_grad():
        new = [p - 0.1 * p.grad for p in params]
    pf.eval(loss, *new)
    assert not any(p.grad.is_lazy for p in params)
    runs = pf.counters()["executions"]
    tparams = [torch.tensor(p, requires_grad=True) for p in init]
    tw1, tb1, tw2, tb2 = tparams
    (-(torch.log_softmax(torch.relu(torch.tensor(x) @ tw1 + tb1) @ tw2 + tb2, 1)
       * torch.tensor(onehot)).sum(1).mean()).backward()
    for p, t in zip(params, tparams):
        np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-6)
    assert pf.counters()["executions"] == runs

    old = weakref.ref(params[0])
    gc.disable()
    try:
        del params, p, new
        assert old() is None
    finally:
        gc.enable()


def test_evaluating_the_forward_alone_leaves_grads_lazy(lazy):
    params = [pf.tensor(p, requires_grad=True) for p in init_params()]
    x, onehot = make_data()
    loss = pf_loss(params, pf.tensor(x), pf.tensor(onehot))
    loss.backward()
    loss.item()  # needs no gradient: nothing more is computed
    assert all(p.grad.is_lazy for p in params)


def test_jvp_tangents_must_match_the_primals_tree():
    x, y = pf.tensor([1.0, 2.0]), pf.tensor([3.0])
    f = lambda a, bc: a.sum() * bc[0].sum()  # noqa: E731
    out, t = pf.jvp(f, (x, (y,)), (pf.ones([2]), (pf.ones([1]),)))
    assert float(t) == pytest.approx(2 * 3.0 + 3.0)
    with pytest.raises(ValueError, match="same tree structure"):
        pf.jvp(f, (x, (y,)), ((pf.ones([2]), pf.ones([1])),))  # same count, other nesting


# ---- backward()'s plain path (autodiff._plain_backward) and its fallbacks ----

def _two_layer(lib, w, b, x):
    return (lib.tanh(x @ w + b) ** 2).sum()


def test_plain_backward_matches_torch_with_retain_graph_and_a_number_seed():
    rng = np.random.default_rng(3)
    wv, bv, xv = rng.standard_normal((4, 3)), rng.standard_normal(3), rng.standard_normal((2, 4))
    w, b = pf.tensor(wv, requires_grad=True), pf.tensor(bv, requires_grad=True)
    tw, tb = torch.tensor(wv, requires_grad=True), torch.tensor(bv, requires_grad=True)
    loss, tloss = _two_layer(pf, w, b, pf.tensor(xv)), _two_layer(torch, tw, tb, torch.tensor(xv))
    loss.backward(retain_graph=True)
    tloss.backward(retain_graph=True)
    loss.backward(2.0)  # a second backward through the retained graph: grads accumulate
    tloss.backward(torch.tensor(2.0, dtype=torch.float64))
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()  # the second one freed it
    with pytest.raises(RuntimeError, match="only for scalar outputs"):
        (w * 2).backward()


def test_plain_backward_falls_back_at_a_split_point_and_checks_versions():
    w = pf.tensor([1.0, -2.0, 3.0], requires_grad=True)
    tw = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    seen = []
    h, th = w * 3, tw * 3
    h.register_hook(lambda g: seen.append(g.numpy().copy()) or g * 2)
    th.register_hook(lambda g: g * 2)
    (h * h).sum().backward()
    (th * th).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy())
    np.testing.assert_allclose(seen[0], 2 * 3 * np.array([1.0, -2.0, 3.0]))  # d(h*h)/dh
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1.0
    z = (y * y).sum()
    with pf.no_grad():
        y.sub_(pf.tensor([1.0, 1.0]))  # the plain path's _check_versions sees it
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward()
def test_grad_accumulates_in_place_like_torch() -> None:
    """PyTorch's AccumulateGrad sums into the existing ``.grad`` in place
    (without create_graph): a reference taken to ``p.grad`` sees the sum;
    with create_graph the sum is a new tensor (it has history)."""
    for lib in (torch, pf):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        (w * 3).sum().backward()
        g = w.grad
        (w * 5).sum().backward()
        assert w.grad is g
        np.testing.assert_array_equal(np.asarray(g.numpy()), [8.0, 8.0])
        (w * w).sum().backward(inputs=[w])
        assert w.grad is g
        np.testing.assert_array_equal(np.asarray(g.numpy()), [10.0, 12.0])
        (w * w).sum().backward(create_graph=True)
        assert w.grad is not g and w.grad.requires_grad
        np.testing.assert_array_equal(np.asarray(g.numpy()), [10.0, 12.0])


def test_detach_then_requires_grad_makes_a_leaf_like_torch() -> None:
    """``x.detach().requires_grad_()`` (adversarial examples, truncated
    backprop): a new leaf that requires grad; gradients reach it and stop
    there. It used to stay ``requires_grad=False`` silently."""
    got = []
    for lib in (torch, pf):
        w = lib.tensor([[1.0, -2.0], [0.5, 3.0]], dtype=lib.float64, requires_grad=True)
        x = lib.tensor([[0.3, -0.7]], dtype=lib.float64)
        h = x @ w
        z = h.detach().requires_grad_()
        assert z.requires_grad and z.is_leaf and z.grad_fn is None
        y = (z.tanh() * h).sum()
        y.backward()
        d = x @ w
        d.detach_()
        d.requires_grad_(True)
        (d * d).sum().backward()
        got.append([np.asarray(t.grad.numpy()) for t in (z, w, d)])
    for a, b in zip(*got):
        np.testing.assert_allclose(b, a, rtol=1e-12)


def test_integer_and_bool_results_never_require_grad() -> None:
    """``w > 0``, ``w.argmax()``, ``w.long()`` of a tensor that requires grad
    are leaves without grad_fn that do not require grad, as PyTorch's (so
    ``mask.requires_grad_(False)`` is allowed)."""
    for lib in (torch, pf):
        w = lib.tensor([1.0, -2.0], requires_grad=True)
        for t in (w > 0, w.argmax(), w.long(), (w * 2).to(lib.int32)):
            assert not t.requires_grad and t.is_leaf and t.grad_fn is None
            t.requires_grad_(False)
        assert (w > 0).float().requires_grad is False
        assert (w * 2).requires_grad and (w * 2).grad_fn is not None


def test_copy_and_fill_from_a_leaf_that_requires_grad() -> None:
    """``buf.copy_(param)`` / ``buf.fill_(scalar_param)``: the gradient
    reaches the leaf (it was silently cut: the buffer took the value only)."""
    got = []
    for lib in (torch, pf):
        w = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        s = lib.tensor(0.5, dtype=lib.float64, requires_grad=True)
        buf = lib.zeros(2, dtype=lib.float64)
        buf.copy_(w)
        assert buf.requires_grad and not buf.is_leaf
        full = lib.zeros(3, dtype=lib.float64)
        full.fill_(s)
        ((buf * buf).sum() + (full * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum()
         ).backward()
        with lib.no_grad():
            quiet = lib.zeros(2, dtype=lib.float64).copy_(w)
        assert not quiet.requires_grad
        got.append((np.asarray(w.grad.numpy()), float(s.grad)))
    np.testing.assert_allclose(got[1][0], got[0][0], rtol=1e-12)
    assert got[1][1] == got[0][1]

"""``pf.autograd.Function`` against torch (imperative) and by hand (the
functional transforms), lazy and eager, with and without a value looked at
in the middle. The backwards are deliberately not the true derivatives, so a
gradient that went through forward's ops instead would fail."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf

X = np.array([0.5, -1.0, 2.0])


def exp_twice(lib):
    """exp with a backward of 2 * g * exp(x) (not the derivative)."""
    class Exp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y * 2
    return Exp


def scaled_split(lib, seen):
    """New style: two outputs, a non-tensor argument, a None gradient."""
    class Split(lib.autograd.Function):
        @staticmethod
        def forward(x, w, k):
            return x * w * k, (x + w).sum()

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, w, k = inputs
            ctx.save_for_backward(x, w)
            ctx.k = k
            seen.append(ctx.needs_input_grad)

        @staticmethod
        def backward(ctx, ga, gb):
            x, w = ctx.saved_tensors
            seen.append(gb is None)
            gx = ga * w * ctx.k + gb * 3
            return gx, None, None
    return Split


def _np(t):
    return np.array(t.detach().numpy() if hasattr(t, "detach") else t.numpy())


@pytest.mark.parametrize("look", [False, True])
def test_backward_calls_the_user_backward_like_torch(mode, look):
    res = []
    for lib in (pf, torch):
        x = lib.tensor(X, requires_grad=True)
        y = exp_twice(lib).apply(x * 3)
        if look and lib is pf:
            y.numpy()
        z = (y * y).sum()
        z.backward()
        res.append((_np(x.grad), y.grad_fn.name() if lib is pf else type(y.grad_fn).__name__,
                    y.requires_grad, y.is_leaf))
    (g1, n1, r1, l1), (g2, n2, r2, l2) = res
    np.testing.assert_allclose(g1, g2, rtol=1e-5)
    assert (n1, r1, l1) == (n2, r2, l2) == ("ExpBackward", True, False)


@pytest.mark.parametrize("look", [False, True])
def test_multiple_outputs_none_grads_and_needs_input_grad_like_torch(mode, look):
    res = []
    for lib in (pf, torch):
        seen: list = []
        x = lib.tensor(X, requires_grad=True)
        w = lib.tensor([1., 2., 3.])
        a, b = scaled_split(lib, seen).apply(x, w, 2.0)
        if look and lib is pf:
            a.numpy()
        (a * a).sum().backward(retain_graph=True)  # b unused: materialized as zeros
        g_one = _np(x.grad)
        x.grad = None
        (a.sum() + b * b).backward()
        res.append((g_one, _np(x.grad), seen))
    for p, t in zip(*res):
        if isinstance(p, list):
            assert p == t
        else:
            np.testing.assert_allclose(p, t, rtol=1e-5)


def test_materialize_grads_off_passes_none(mode):
    got = []
    for lib in (pf, torch):
        seen: list = []

        class Two(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, ga, gb, seen=seen):
                seen.append((ga is None, gb is None))
                return ga * 5
        x = lib.tensor(X, requires_grad=True)
        a, _ = Two.apply(x)
        a.sum().backward()
        got.append((seen, _np(x.grad)))
    assert got[0][0] == got[1][0] == [(False, True)]
    np.testing.assert_allclose(got[0][1], got[1][1])


def test_mark_non_differentiable_like_torch(mode):
    flags = []
    for lib in (pf, torch):
        class SortLike(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                idx = x * 0
                ctx.mark_non_differentiable(idx)
                return x * 1, idx

            @staticmethod
            def backward(ctx, g, _g_idx):
                return g * 7
        x = lib.tensor(X, requires_grad=True)
        y, idx = SortLike.apply(x)
        y.sum().backward()
        flags.append((y.requires_grad, idx.requires_grad, _np(x.grad).tolist()))
    assert flags[0] == flags[1]


@pytest.mark.parametrize("look", [False, True])
def test_autograd_grad_and_double_backward_like_torch(mode, look):
    res = []
    for lib in (pf, torch):
        class Cube(lib.autograd.Function):  # backward differentiable: 3 x^2 g (true)
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x * x

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 3 * x * x * g
        x = lib.tensor(X, requires_grad=True)
        y = Cube.apply(x).sum()
        if look and lib is pf:
            y.item()
        (g,) = lib.autograd.grad(y, [x], create_graph=True)
        g.sum().backward()
        res.append((_np(g), _np(x.grad)))
    for p, t in zip(*res):
        np.testing.assert_allclose(p, t, rtol=1e-5)


@pytest.mark.parametrize("look", [False, True])
def test_functional_transforms_call_the_user_backward(mode, look):
    Exp = exp_twice(pf)

    def f(x):
        y = Exp.apply(x * 3)
        if look:
            print(y)
        return (y * y).sum()
    x = pf.tensor(X)
    e = np.exp(3 * X)
    # d/dx sum(y^2) with the custom rule: 2 y * (2 y) * 3
    np.testing.assert_allclose(pf.grad(f)(x).numpy(), 12 * e * e, rtol=1e-5)
    out, vjp_fn = pf.vjp(lambda x: Exp.apply(x), x)
    (ct,) = vjp_fn(pf.tensor([1., 2., 3.]))
    np.testing.assert_allclose(ct.numpy(), 2 * np.exp(X) * [1, 2, 3], rtol=1e-5)
    np.testing.assert_allclose(pf.jacrev(lambda x: Exp.apply(x))(x).numpy(),
                               np.diag(2 * np.exp(X)), rtol=1e-5)
    # grad of grad: the inner gradient is made of the backward's ops
    gg = pf.grad(lambda x: pf.grad(lambda x: Exp.apply(x).sum())(x).sum())(x)
    np.testing.assert_allclose(gg.numpy(), 4 * np.exp(X), rtol=1e-5)


def test_forward_mode_raises_without_jvp(mode):
    Exp = exp_twice(pf)
    with pytest.raises(NotImplementedError, match="implement the jvp"):
        pf.jacfwd(lambda x: Exp.apply(x))(pf.tensor(X))
    with pytest.raises(NotImplementedError, match="implement the jvp"):
        pf.jvp(lambda x: Exp.apply(x).sum(), (pf.tensor(X),), (pf.tensor(X),))


def test_saved_tensor_modified_in_place_raises_like_torch(mode):
    for lib in (pf, torch):
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 2 * x * g
        w = lib.tensor(X, requires_grad=True)
        x = w * 1
        y = Square.apply(x).sum()
        with lib.no_grad():
            x.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.backward()


def test_second_backward_needs_retain_graph_like_torch(mode):
    for lib in (pf, torch):
        Exp = exp_twice(lib)
        x = lib.tensor(X, requires_grad=True)
        y = Exp.apply(x).sum()
        y.backward(retain_graph=True)
        y.backward()
        np.testing.assert_allclose(_np(x.grad), 4 * np.exp(X), rtol=1e-5)
        with pytest.raises(RuntimeError, match="second time"):
            y.backward()


def test_bad_backward_results_raise(mode):
    class Wrong(pf.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, g):
            return g
    x = pf.tensor(X, requires_grad=True)
    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        Wrong.apply(x, x * 2).sum().backward()

    class BadShape(pf.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, g):
            return g
    with pytest.raises(RuntimeError, match="invalid gradient at index 0"):
        BadShape.apply(x).backward()


def test_no_grad_apply_records_plain_ops(mode):
    Exp = exp_twice(pf)
    x = pf.tensor(X, requires_grad=True)
    with pf.no_grad():
        y = Exp.apply(x)
    assert not y.requires_grad and y.grad_fn is None


def test_hooks_and_retain_grad_on_function_outputs_like_torch():
    """A gradient hook or ``retain_grad()`` on the output of a Function (and
    so on a module's output under full backward hooks) sees the output's
    summed gradient and may replace it before the Function's backward; they
    were silently skipped."""
    got = []
    for lib in (torch, pf):
        class Half(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 0.5

        class Two(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                return g1 * 2 + g2 * 3

        w = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        h = Half.apply(w * 1)
        h.register_hook(lambda g: -g)
        h.retain_grad()
        (h * h).sum().backward()
        v = lib.tensor([1.0, -1.0], dtype=lib.float64, requires_grad=True)
        a, b = Two.apply(v * 1)
        b.register_hook(lambda g: g * 10)
        a.retain_grad()
        (a.sum() + (b * b).sum() + a.sum()).backward()
        lin = lib.nn.Linear(2, 2).double()
        with lib.no_grad():
            lin.weight.copy_(lib.tensor([[1.0, -2.0], [0.5, 3.0]], dtype=lib.float64))
            lin.bias.copy_(lib.tensor([0.1, -0.2], dtype=lib.float64))
        lin.register_full_backward_pre_hook(lambda m, go: (go[0] * 0.5,))
        x = lib.tensor([[0.3, 0.7]], dtype=lib.float64, requires_grad=True)
        out = lin(x)
        out.register_hook(lambda g: -g)
        out.retain_grad()
        (out * out).sum().backward()
        got.append([t.numpy() for t in (w.grad, h.grad, v.grad, a.grad, x.grad, out.grad,
                                        lin.weight.grad)])
    for t, p in zip(*got):
        np.testing.assert_allclose(p, t, rtol=1e-12)


def test_once_differentiable_as_torch() -> None:
    """Backward runs under no_grad; differentiating its result again (after
    create_graph) raises torch's error; a plain backward gives the gradient."""
    from torch.autograd.function import once_differentiable as torch_once

    def run(L, double):  # noqa: N803
        once = torch_once if L is torch else pf.autograd.function.once_differentiable

        class Sq(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            @once
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 2 * x * g
        x = L.tensor([0.5, -1.0, 2.0], dtype=L.float64, requires_grad=True)
        if not double:
            Sq.apply(x.sin()).sum().backward()
            return x.grad.numpy()
        (g,) = L.autograd.grad((Sq.apply(x.sin()) * x).sum(), x, create_graph=True)
        with pytest.raises(RuntimeError, match="differentiate twice"):
            g.sum().backward()
        return g.detach().numpy()
    for double in (False, True):
        np.testing.assert_allclose(run(pf, double), run(torch, double), rtol=1e-12)

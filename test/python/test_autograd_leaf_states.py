"""A leaf updated in place (under no_grad, or through ``.data``) after a graph
read it: that graph's backward still reaches ``.grad`` when the old value is
not needed, and raises PyTorch's version error when it was saved; a
same-shape ``reshape``/``view`` of a tensor that requires grad is a tensor of
its own (a hook on it is not a hook on its base). Against torch, lazy and
eager mode."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf


def _update(L, w, how: str) -> None:
    if how == "data":
        w.data.add_(1)
    else:
        with L.no_grad():
            w.add_(1) if how == "add_" else w.mul_(2)


@pytest.mark.parametrize("how", ["add_", "mul_", "data"])
@pytest.mark.parametrize("prog", ["scaled", "plus_later", "twice"])
def test_a_graph_reading_a_leaf_before_its_update_reaches_grad(mode, how, prog) -> None:
    def run(L):
        w = L.tensor([1.0, 2.0, 3.0], dtype=L.float64, requires_grad=True)
        y = (w * 2).sum()
        _update(L, w, how)
        if prog == "plus_later":
            y = y + (w * w).sum()
        if prog == "twice":
            y = y + (w * 3).sum()
            _update(L, w, how)
            y = y + (w * 5).sum()
        y.backward()
        return w.grad.numpy(), w.detach().numpy(), y.item()
    for got, want in zip(run(pf), run(torch)):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_a_saved_leaf_updated_before_backward_raises_torchs_error(mode) -> None:
    w = pf.tensor([1.0, 2.0], requires_grad=True)
    y = (w * w).sum()
    with pf.no_grad():
        w.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_the_optimizer_idiom_still_steps(mode) -> None:
    w, tw = pf.tensor([1.0, -2.0], requires_grad=True), torch.tensor([1.0, -2.0],
                                                                      requires_grad=True)
    for p, L in ((w, pf), (tw, torch)):
        for _ in range(3):
            loss = (p * p * 3).sum()
            loss.backward()
            with L.no_grad():
                p -= 0.1 * p.grad
            p.grad = None
    np.testing.assert_allclose(w.detach().numpy(), tw.detach().numpy(), rtol=1e-6)
    assert w.is_leaf and w.requires_grad


@pytest.mark.parametrize("make", ["reshape", "view"])
def test_a_same_shape_view_of_a_tensor_that_requires_grad_is_its_own_tensor(mode, make) -> None:
    def run(L):
        w = L.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        e = getattr(w, make)(2, 3)
        e.register_hook(lambda g: g * 10)
        (w * 1).sum().backward()
        a = w.grad.clone()
        w.grad = None
        (e * w).sum().backward()
        return a.numpy(), w.grad.numpy(), e is w, e.is_leaf
    got, want = run(pf), run(torch)
    for g, t in zip(got, want):
        np.testing.assert_array_equal(g, t)


_READERS = {
    "clone": lambda h: h.clone(), "add": lambda h: h + 1, "sub": lambda h: h - 1,
    "neg": lambda h: -h, "sum": lambda h: h.sum(), "mean": lambda h: h.mean(),
    "div_by_constant": lambda h: h / 2, "relu": lambda h: h.relu(), "exp": lambda h: h.exp(),
    "sigmoid": lambda h: h.sigmoid(), "tanh": lambda h: h.tanh(), "sqrt": lambda h: h.sqrt(),
    "softmax": lambda h: h.softmax(0), "cumsum": lambda h: h.cumsum(0),
    "square": lambda h: h * h, "pow": lambda h: h ** 2, "log": lambda h: h.log(),
    # the reverse-scalar ops: torch's rtruediv is reciprocal(h) * 2 (saves its result)
    "rtruediv": lambda h: 2 / h, "rsub": lambda h: 2 - h,
    "rdiv_tensor": lambda h: h.new_ones(3) / h,
    "rpow": lambda h: 2 ** h,
    "rmul": lambda h: 2 * h, "radd": lambda h: 2 + h,
}


@pytest.mark.parametrize("reader", list(_READERS))
def test_updating_an_input_after_an_op_errs_only_where_torch_saved_it(mode, reader) -> None:
    """PyTorch saves an op's input only where its backward needs it (exp, relu,
    sigmoid save the result; add, clone, sum nothing): updating the input in
    place afterwards is an error exactly where it saved it."""
    def run(L):
        x = L.tensor([0.3, 1.7, 2.5], dtype=L.float64, requires_grad=True)
        h = x * 2
        y = _READERS[reader](h)
        h.add_(1)
        try:
            (y * y).sum().backward()
        except RuntimeError as e:
            assert "modified by an inplace operation" in str(e)
            return None
        return x.grad.numpy()
    got, want = run(pf), run(torch)
    assert (got is None) == (want is None), (got, want)
    if want is not None:
        np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("hook", ["pre", "post"])
def test_a_leaf_read_in_two_states_runs_its_hooks_once_on_the_sum(mode, hook) -> None:
    """One backward reaching a leaf before and after an in-place update under
    no_grad accumulates once into ``.grad`` (PyTorch: one AccumulateGrad): a
    gradient hook sees the summed gradient once (a clamping hook clamps the
    sum, not each part), a post-accumulate hook fires once."""
    def run(L):
        w = L.tensor([1.0, 2.0], dtype=L.float64, requires_grad=True)
        seen = []
        if hook == "pre":
            w.register_hook(lambda g: (seen.append(g.numpy().copy()), g.clamp(max=5.0))[1])
        else:
            w.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.numpy().copy()))
        y = w * 2
        with L.no_grad():
            w.add_(1)
        (y + w * w).sum().backward()
        return seen, w.grad.numpy()
    (got_seen, got), (want_seen, want) = run(pf), run(torch)
    assert len(got_seen) == len(want_seen) == 1
    np.testing.assert_allclose(got_seen[0], want_seen[0], rtol=1e-12)
    np.testing.assert_allclose(got, want, rtol=1e-12)

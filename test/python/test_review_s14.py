"""Session 14's review: silent differences found in this session's autograd
and indexing changes, each against an independent oracle (numpy, torch)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf


@pytest.mark.parametrize("key", [np.s_[::-1], np.s_[5:1:-2], np.s_[::-2, 1:],
                                 np.s_[1:, ::-3], np.s_[::-1, ::-1]])
def test_a_negative_step_result_is_a_view_as_numpys(key) -> None:
    a = np.arange(30.0).reshape(6, 5)
    want = a.copy()
    want[key] *= 2  # numpy: x[::-1] is a view, the update reaches x
    x = pf.tensor(a)
    x[key].mul_(2)
    np.testing.assert_array_equal(x.numpy(), want)
    x = pf.tensor(a)
    v = x[key]
    x.add_(1)  # and the view sees an update of x
    np.testing.assert_array_equal(v.numpy(), (a + 1)[key])


def test_a_negative_step_view_of_a_view_updated_in_place_has_torchs_gradient() -> None:
    # x[::-1][::2] is x[-1::-2]; torch has no negative steps: x.flip(0)[::2] is
    # a copy there, so the oracle writes the same positions through x[1::2]
    a = np.arange(1.0, 7.0)
    x = pf.tensor(a, requires_grad=True)
    h = x * 1
    h[::-1][::2].mul_(h[::2].clone())
    (h * h).sum().backward()
    tx = torch.tensor(a, requires_grad=True)
    th = tx * 1
    th[1::2].mul_(th[::2].flip(0).clone())
    (th * th).sum().backward()
    np.testing.assert_allclose(h.detach().numpy(), th.detach().numpy(), rtol=1e-15)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-15)


@pytest.mark.parametrize("how", ["grad", "inputs"])
def test_a_leaf_target_read_in_two_states_gets_both_parts(how) -> None:
    # w read, updated in place under no_grad, read again: one leaf to torch, so
    # autograd.grad(loss, w) / backward(inputs=[w]) sum both states' parts (pf
    # gave only the current state's part, silently)
    def run(L):
        w = L.tensor([1.0, -2.0, 3.0], dtype=L.float64, requires_grad=True)
        v = L.tensor([0.5, 1.0, 2.0], dtype=L.float64, requires_grad=True)
        h = w * 1.5
        with L.no_grad():
            w.mul_(1.1)
        loss = (h * h * v).sum() + (w * w * w).sum()
        if how == "grad":
            return L.autograd.grad(loss, [w, v])
        loss.backward(inputs=[w])
        return w.grad, v.grad
    for got, want in zip(run(pf), run(torch)):
        assert (got is None) == (want is None)
        if want is not None:
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-14)


def _hooked_targets(L):
    out = []
    w = L.tensor([1.0, 2.0, 3.0], dtype=L.float64, requires_grad=True)
    w.register_hook(lambda g: g * 2)
    (w * w).sum().backward(inputs=[w])  # the leaf's hook once (pf: twice)
    out.append(w.grad)
    w = L.tensor([1.0, 2.0, 3.0], dtype=L.float64, requires_grad=True)
    w.register_hook(lambda g: g * 2)
    h = w.sin()
    h.register_hook(lambda g: g * 3)
    (h * h).sum().backward(inputs=[h, w])  # h's hooked gradient flows on to w (pf: None)
    out += [w.grad, h.grad]
    w = L.tensor([1.0, 2.0, 3.0], dtype=L.float64, requires_grad=True)
    h = w * 3
    h.register_hook(lambda g: g * 5)
    k = h.cos()
    k.register_hook(lambda g: g + 7)
    # autograd.grad: a non-leaf input's gradient before its hooks, which still flow on
    out += list(L.autograd.grad((k * h).sum(), [k, h, w]))
    return out


def test_gradient_targets_with_hooks_as_torchs() -> None:
    for got, want in zip(_hooked_targets(pf), _hooked_targets(torch)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-14)


def _off_path(L):
    w = L.tensor([1.0, 2.0], dtype=L.float64, requires_grad=True)
    v = L.tensor([3.0, 4.0], dtype=L.float64, requires_grad=True)
    calls = []
    c = v * 2
    c.retain_grad()
    c.register_hook(lambda g: calls.append("c"))
    g = L.autograd.grad((c * w).sum(), w)[0]
    d = v * 2
    d.retain_grad()
    d.register_hook(lambda g: calls.append("d"))
    (d * w).sum().backward(inputs=[w])
    return g, w.grad, c.grad, d.grad, v.grad, calls


def test_hooks_and_retain_grad_off_the_path_to_the_inputs_do_not_run() -> None:
    # torch runs only the graph's part leading to autograd.grad's inputs
    got, want = _off_path(pf), _off_path(torch)
    for a, b in zip(got[:2], want[:2]):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-15)
    assert got[2:] == want[2:] == (None, None, None, [])


def test_data_at_a_weight_updated_in_place_then_read_again_is_no_version_error() -> None:
    # torch's mm saves an operand only for the other's gradient: data @ w needs
    # no w, so updating w under no_grad and reading it again is fine (pf raised)
    def run(L):
        w = L.tensor([0.5, -1.0, 2.0], dtype=L.float64, requires_grad=True)
        x = L.tensor([[1.0, 2.0, 3.0], [0.0, -1.0, 1.0]], dtype=L.float64)
        y = (x @ w).tanh().sum()
        with L.no_grad():
            w.mul_(0.9)
        (y + (w * w).sum()).backward()
        return w.grad
    np.testing.assert_allclose(run(pf).numpy(), run(torch).numpy(), rtol=1e-14)


def test_a_weight_a_matmul_needs_still_raises_torchs_version_error() -> None:
    x = pf.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    w = pf.tensor([[1.0, -1.0], [2.0, 0.5]], requires_grad=True)
    y = (x @ w).sum()
    with pf.no_grad():
        w.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_a_retained_tensor_off_the_path_is_not_version_checked() -> None:
    # torch neither runs nor checks c * v's backward in grad(..., w): pf raised
    def run(L):
        w = L.tensor([1.0, 2.0], dtype=L.float64, requires_grad=True)
        v = L.tensor([3.0, 4.0], dtype=L.float64, requires_grad=True)
        c = v * 2
        c.retain_grad()
        d = c * v
        with L.no_grad():
            v.mul_(2)
        return L.autograd.grad((d * w).sum() + (w * w).sum(), w)[0], c.grad
    (got, cg), (want, tcg) = run(pf), run(torch)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-15)
    assert cg is None and tcg is None


@pytest.mark.parametrize("first", [True, False])
def test_backward_under_an_open_dual_level_stores_grad_without_a_tangent(first) -> None:
    # torch's AccumulateGrad keeps no forward-AD tangent: a training step run
    # with a dual input open must not give the parameters a tangent through
    # w -= lr * w.grad (pf's .grad carried one: the next loss's tangent differed)
    def run(L):
        fa = L.autograd.forward_ad
        w = L.tensor([1.0, -2.0, 3.0], dtype=L.float64, requires_grad=True)
        if not first:
            w.grad = L.zeros(3, dtype=L.float64)
        out = []
        with fa.dual_level():
            x = fa.make_dual(L.tensor([0.1, 0.2, 0.3], dtype=L.float64),
                             L.tensor([1.0, 1.0, 1.0], dtype=L.float64))
            for _ in range(3):
                loss = ((w * x).tanh() ** 2).sum()
                loss.backward()
                t = fa.unpack_dual(w.grad).tangent  # (torch: only a sum into .grad has one)
                out += [w.grad.clone(), fa.unpack_dual(loss).tangent,
                        L.zeros(3, dtype=L.float64) if t is None else t.clone()]
                with L.no_grad():
                    w -= 0.5 * w.grad
                w.grad.zero_()
        return out
    for got, want in zip(run(pf), run(torch)):
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-13)

"""In-place updates with PyTorch's semantics (issue 13 part 3), recorded
lazily by rebinding the tensor's promise; lazy and eager mode, against torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf


def test_sgd_update_keeps_the_same_leaf(mode):
    p = pf.tensor([1., 2.], requires_grad=True)
    ident = id(p)
    (p * p).sum().backward()
    with pf.no_grad():
        p -= 0.1 * p.grad
    assert id(p) == ident and p.requires_grad and p.is_leaf and p._version == 1
    np.testing.assert_allclose(p.numpy(), [0.8, 1.6], rtol=1e-6)
    p.grad.zero_()
    np.testing.assert_allclose(p.grad.numpy(), [0., 0.])
    p.grad = None
    (p * p).sum().backward()
    np.testing.assert_allclose(p.grad.numpy(), [1.6, 3.2], rtol=1e-6)


def test_a_leaf_that_requires_grad_cannot_be_modified_outside_no_grad(mode):
    p = pf.tensor([1., 2.], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        p += 1
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        p.mul_(2)
    assert p._version == 0
    np.testing.assert_allclose(p.numpy(), [1., 2.])


@pytest.mark.parametrize("look", [False, True])
def test_earlier_readers_see_the_old_value(mode, look):
    x = pf.tensor([1., 2., 3., 4.])
    y = x * 2
    if look:
        x.numpy()
    x.add_(1)
    x *= 2
    z = x + 0
    x.sub_(1, alpha=2)
    x /= 2
    np.testing.assert_allclose(y.numpy(), [2., 4., 6., 8.])
    np.testing.assert_allclose(z.numpy(), [4., 6., 8., 10.])
    np.testing.assert_allclose(x.numpy(), [1., 2., 3., 4.])
    assert x._version == 4


def test_every_in_place_op_against_torch(mode):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4))
    b = rng.standard_normal((3, 4))
    mask = a > 0
    cases = [
        ("add_", lambda t, o: t.add_(o, alpha=0.5)), ("sub_", lambda t, o: t.sub_(o)),
        ("mul_", lambda t, o: t.mul_(o)), ("div_", lambda t, o: t.div_(o + 3)),
        ("zero_", lambda t, o: t.zero_()), ("fill_", lambda t, o: t.fill_(2.5)),
        ("copy_", lambda t, o: t.copy_(o)), ("clamp_", lambda t, o: t.clamp_(-0.5, 0.5)),
        ("setitem", lambda t, o: t.__setitem__((slice(1, 3), slice(None, None, 2)),
                                               o[0:2, 0:2])),
        ("setitem_row", lambda t, o: t.__setitem__(1, 7.0)),
        ("iadd", lambda t, o: t.__iadd__(o)), ("isub", lambda t, o: t.__isub__(o)),
        ("imul", lambda t, o: t.__imul__(o)), ("idiv", lambda t, o: t.__itruediv__(o + 3)),
    ]
    for name, fn in cases:
        t, o = pf.tensor(a), pf.tensor(b)
        tt, to = torch.tensor(a), torch.tensor(b)
        out = fn(t, o)
        tout = fn(tt, to)
        assert out is t or out is None, name
        np.testing.assert_allclose(t.numpy(), tt.numpy(), rtol=1e-12, err_msg=name)
        del tout
    t = pf.tensor(a)
    t.masked_fill_(pf.tensor(mask), -1.0)
    np.testing.assert_allclose(t.numpy(), np.where(mask, -1.0, a))
    t = pf.zeros(1000)
    t.normal_(2.0, 0.5)
    assert abs(float(t.mean()) - 2.0) < 0.1 and abs(float(t.numpy().std()) - 0.5) < 0.1
    t.uniform_(-1, 3)
    v = t.numpy()
    assert v.min() >= -1 and v.max() <= 3 and abs(v.mean() - 1) < 0.2


@pytest.mark.parametrize("look", [False, True])
def test_gradients_through_in_place_ops_match_torch(mode, look):
    wn = np.array([1., -2., 3., 0.5])
    w = pf.tensor(wn, requires_grad=True)
    h = w * 1.5
    if look:
        h.numpy()
    h.add_(w)
    h[0] = 5.0
    h *= h.detach() * 0 + 2
    h.clamp_(-4, 8)
    (h * w).sum().backward()
    tw = torch.tensor(wn, requires_grad=True)
    th = tw * 1.5
    th.add_(tw)
    th[0] = 5.0
    th *= th.detach() * 0 + 2
    th.clamp_(-4, 8)
    (th * tw).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-12)


def test_a_value_saved_for_backward_modified_before_backward_raises(mode):
    w = pf.tensor([1., 2.], requires_grad=True)
    y = w * 2
    z = y * y  # reads y
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()
    tw = torch.tensor([1., 2.], requires_grad=True)
    ty = tw * 2
    tz = ty * ty
    ty.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        tz.sum().backward()


def test_augmented_assignment_mutates_the_object(mode):
    t = pf.tensor([1., 2.])
    alias = t
    t += 1
    t *= 3
    assert alias is t
    np.testing.assert_allclose(alias.numpy(), [6., 9.])


def test_in_place_training_loop_matches_torch_and_hits_the_cache(mode):
    rng = np.random.default_rng(3)
    init = [rng.standard_normal((6, 5)) * 0.3, np.zeros(5)]
    xn = rng.standard_normal((8, 6))
    params = [pf.tensor(p, requires_grad=True) for p in init]
    tparams = [torch.tensor(p, requires_grad=True) for p in init]
    x, tx = pf.tensor(xn), torch.tensor(xn)
    pf.clear_cache()
    for _ in range(30):
        loss = (pf.tanh(x @ params[0] + params[1]) ** 2).mean()
        loss.backward()
        with pf.no_grad():
            for p in params:
                p -= 0.5 * p.grad
                p.grad = None
        tl = (torch.tanh(tx @ tparams[0] + tparams[1]) ** 2).mean()
        tl.backward()
        with torch.no_grad():
            for p in tparams:
                p -= 0.5 * p.grad
                p.grad = None
        np.testing.assert_allclose(loss.item(), tl.item(), rtol=1e-10)
        # loss.item() also ran the update recorded before it (one graph per step)
        assert not any(p.is_lazy for p in params)
    for p, t in zip(params, tparams):
        np.testing.assert_allclose(p.numpy(), t.detach().numpy(), rtol=1e-10)
        assert p.is_leaf and p.requires_grad
    if mode == "lazy":
        assert pf.cache_stats()["misses"] <= 5  # not one per step: the graph does not grow


@pytest.mark.parametrize("eager", ["0", "1"])
def test_train_mlp_example_runs_in_both_modes(eager):
    import os
    import subprocess
    import sys
    from pathlib import Path

    example = Path(__file__).parents[2] / "examples" / "train_mlp.py"
    src = example.read_text()
    assert "requires_grad_() for" not in src and "pf.eval(" not in src  # no bookkeeping
    out = subprocess.run([sys.executable, str(example)], capture_output=True, text=True,
                         env={**os.environ, "PYFLAME_EAGER": eager}, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "epoch 4: loss 0.4549" in out.stdout


@pytest.mark.parametrize("reshape_", ["unsqueeze_", "t_", "transpose_", "squeeze_"])
def test_detach_of_a_tensor_reshaped_in_place(reshape_):
    args = {"unsqueeze_": (0,), "t_": (), "transpose_": (0, 1), "squeeze_": ()}[reshape_]
    out = []
    for L in (torch, pf):
        x = L.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        y = (x * 2)
        getattr(y, reshape_)(*args)
        d = y.detach()
        (y * y).sum().backward()
        out.append((d.numpy().copy(), x.grad.numpy().copy()))
    for a, b in zip(*out):
        np.testing.assert_allclose(b, a)


def test_same_shape_add_and_sub_fast_path_keeps_torch_semantics(mode):
    # p -= t and p.add_(t) with t of p's shape and dtype: recorded directly
    p, tp = pf.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.0, 3.0])
    g, tg = pf.tensor([0.5, 0.25, 2.0]), torch.tensor([0.5, 0.25, 2.0])
    before = p * 1  # reads the old state
    p -= g
    tp -= tg
    p.add_(g * 4)
    tp.add_(tg * 4)
    assert p._version == 2
    np.testing.assert_allclose(p.numpy(), tp.numpy())
    np.testing.assert_allclose(before.numpy(), [1.0, 2.0, 3.0])
    w = pf.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w -= pf.tensor([1.0, 1.0])
    assert w._version == 0
    d = pf.tensor([1.0, 2.0]).detach()
    d.add_(w)  # PyTorch: the detached tensor takes the value and its history
    assert d.requires_grad and not d.is_leaf
    (d * d).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [4.0, 8.0])
    b = pf.tensor([True, False])
    with pytest.raises(Exception, match="bool"):
        b -= pf.tensor([True, True])
    i = pf.tensor([1, 2])
    i += pf.tensor([3, 4])
    np.testing.assert_array_equal(i.numpy(), [4, 6])
@pytest.mark.parametrize("op", ["//=", "%=", "**="])
def test_floordiv_mod_pow_assignment_write_through_a_view(op):
    """``v //= 2``, ``v %= 3``, ``v **= 2`` on a view update its base, as
    PyTorch's (Python's fallback ``v = v // 2`` would leave the base stale)."""
    got = []
    for lib in (torch, pf):
        x = lib.tensor([[6.0, -7.0], [8.0, 9.0]]) if op == "**=" else lib.tensor([[6, -7], [8, 9]])
        alias, v = x, x[0]
        scope = {"v": v}
        exec(f"v {op} 3", scope)
        assert scope["v"] is v and alias is x
        got.append(np.asarray(x.numpy()))
    np.testing.assert_array_equal(got[1], got[0])
    assert got[1].dtype == got[0].dtype


def test_mask_from_a_tensor_then_masked_fill_in_place_backward(mode):
    """``scores.masked_fill_(scores > t, -inf)`` (attention masking in place):
    the comparison saves nothing for backward, so the version check does not
    count its read of ``scores``; gradients equal torch's."""
    rng = np.random.default_rng(3)
    w0, v0, x0 = rng.standard_normal((3, 4)), rng.standard_normal((4, 4)), rng.standard_normal(
        (2, 3))
    got = []
    for lib in (torch, pf):
        w = lib.tensor(w0, requires_grad=True)
        v = lib.tensor(v0, requires_grad=True)
        s = (lib.tensor(x0) @ w) @ v
        s.masked_fill_(s > 0.5, float("-inf"))
        out = s.softmax(-1)
        (out * lib.arange(4.0, dtype=lib.float64)).sum().backward()
        got.append([np.asarray(t.numpy()) for t in (out.detach(), w.grad, v.grad)])
    for a, b in zip(*got):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)
